//! SIGHUP (reload), SIGTERM/SIGINT (stop): flags set by handlers, delivered only while
//! the loop waits in ppoll, so a signal is never lost between a check and the wait.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{NetemError, Result};

static RELOAD: AtomicBool = AtomicBool::new(false);
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int) {
    if sig == libc::SIGHUP {
        RELOAD.store(true, Ordering::SeqCst);
    } else {
        STOP.store(true, Ordering::SeqCst);
    }
}

pub fn take_reload() -> bool {
    RELOAD.swap(false, Ordering::SeqCst)
}

pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// Install handlers and block the signals; returns the mask to use while waiting.
pub fn install() -> Result<libc::sigset_t> {
    // SAFETY: plain libc signal set manipulation on zeroed, owned sigset_t values; the
    // handler only stores to atomics, which is async-signal-safe.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGHUP, libc::SIGTERM, libc::SIGINT] {
            libc::sigaddset(&mut set, sig);
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(sig, &sa, std::ptr::null_mut()) != 0 {
                return Err(NetemError::Os {
                    step: "sigaction",
                    source: std::io::Error::last_os_error(),
                });
            }
        }
        let mut old: libc::sigset_t = std::mem::zeroed();
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) != 0 {
            return Err(NetemError::Os {
                step: "pthread_sigmask",
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(old)
    }
}
