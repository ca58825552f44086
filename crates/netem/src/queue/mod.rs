//! The daemon loop: NFQUEUE in, scheduler, verdicts out.
//!
//! One thread: wait in ppoll until the next due time or a new packet, release what is
//! due, read what arrived. The nfq crate (0.2) does not expose its socket, so the
//! socket's fd is found as the NETLINK_NETFILTER socket that Queue::open adds.

pub mod signals;

use std::collections::BTreeSet;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::Instant;

use nfq::{Message, Queue, Verdict};
use serde::Serialize;

use crate::config::RunCommand;
use crate::error::{NetemError, Result};
use crate::links;
use crate::sched::{Admit, Counters, Scheduler};

/// At most this many packets are read between two release passes, so a flood of new
/// packets cannot make held ones late.
const RECV_BATCH: usize = 256;
/// Packets are classified by their mark (packet metadata), not their bytes: copy only
/// a header's worth to user space.
const COPY_RANGE: u16 = 64;
const NETLINK_RCVBUF: libc::c_int = 32 * 1024 * 1024;

#[derive(Serialize)]
struct Stats<'a> {
    event: &'a str,
    pid: u32,
    queue: u16,
    links: usize,
    seen: u64,
    passed: u64,
    dropped: u64,
    medium_dropped: u64,
    released: u64,
    held_now: u64,
    held_max: u64,
    late_mean_us: f64,
    late_max_us: f64,
    spin_us: f64,
    recv_errors: u64,
    verdict_errors: u64,
}

struct Daemon {
    queue: Queue,
    fd: libc::c_int,
    queue_num: u16,
    sched: Scheduler<Message>,
    config_path: PathBuf,
    links: usize,
    origin: Instant,
    recv_errors: u64,
    verdict_errors: u64,
    /// How late ppoll wakes after its timeout (EWMA, ns): the loop wakes this much early
    /// and polls without sleeping for the rest, so packets leave on time.
    spin_ns: u64,
    /// Keeps kernel receive timestamps on (see `enable_rx_timestamps`).
    _tstamp_socket: Option<std::net::UdpSocket>,
}

/// Ask the kernel to timestamp received packets (a global switch that any socket with
/// SO_TIMESTAMP turns on). NFQUEUE then reports when a packet arrived, and its delay
/// counts from then, not from when this daemon got to read it.
fn enable_rx_timestamps() -> Option<std::net::UdpSocket> {
    use std::os::fd::AsRawFd;
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").ok()?;
    let on: libc::c_int = 1;
    // SAFETY: setsockopt on a socket we own with a pointer to a live c_int.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMP,
            &on as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    (rc == 0).then_some(sock)
}

const MAX_SPIN_NS: u64 = 300_000;

/// Open NETLINK_NETFILTER sockets of this process.
fn netfilter_sockets() -> BTreeSet<i32> {
    let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    fds.into_iter()
        .filter(|&fd| is_netfilter_socket(fd))
        .collect()
}

fn is_netfilter_socket(fd: i32) -> bool {
    let get = |opt: libc::c_int| -> Option<libc::c_int> {
        let mut v: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt writes at most `len` bytes into a live c_int; on a
        // descriptor that is not a socket it fails with ENOTSOCK.
        let rc = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                opt,
                &mut v as *mut libc::c_int as *mut libc::c_void,
                &mut len,
            )
        };
        (rc == 0).then_some(v)
    };
    get(libc::SO_DOMAIN) == Some(libc::AF_NETLINK)
        && get(libc::SO_PROTOCOL) == Some(libc::NETLINK_NETFILTER)
}

fn open_queue(cmd: &RunCommand) -> Result<(Queue, libc::c_int)> {
    let q = cmd.queue_num;
    let qerr = |step: &'static str| {
        move |source: std::io::Error| NetemError::Queue {
            queue: q,
            step,
            source,
        }
    };
    let before = netfilter_sockets();
    let mut queue = Queue::open().map_err(qerr("open netlink socket"))?;
    let after = netfilter_sockets();
    let fd = after
        .difference(&before)
        .copied()
        .max()
        .ok_or_else(|| NetemError::Queue {
            queue: q,
            step: "find netlink socket",
            source: std::io::Error::other("no new file descriptor after Queue::open"),
        })?;
    queue.bind(q).map_err(qerr("bind"))?;
    queue
        .set_copy_range(q, COPY_RANGE)
        .map_err(qerr("set copy range"))?;
    queue
        .set_queue_max_len(q, cmd.queue_max_len)
        .map_err(qerr("set queue length"))?;
    // A full queue drops (as a full router buffer would) rather than passing packets
    // undelayed and out of order.
    queue
        .set_fail_open(q, false)
        .map_err(qerr("set fail-open"))?;
    // SAFETY: setsockopt on a socket we own with a pointer to a live c_int.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            &NETLINK_RCVBUF as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(qerr("enlarge receive buffer")(
            std::io::Error::last_os_error(),
        ));
    }
    queue.set_nonblocking(true);
    Ok((queue, fd))
}

impl Daemon {
    fn now_ns(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }

    /// When the packet reached the queue on our clock: the kernel's timestamp when it
    /// has one (at most 1 s old), else now.
    fn arrival_ns(&self, msg: &Message) -> u64 {
        let now = self.now_ns();
        let Some(ts) = msg.get_timestamp() else {
            return now;
        };
        match std::time::SystemTime::now().duration_since(ts) {
            Ok(age) if age.as_nanos() < 1_000_000_000 => now.saturating_sub(age.as_nanos() as u64),
            _ => now,
        }
    }

    fn verdict(&mut self, mut msg: Message, verdict: Verdict) {
        msg.set_verdict(verdict);
        if self.queue.verdict(msg).is_err() {
            self.verdict_errors += 1;
        }
    }

    fn release(&mut self, out: &mut Vec<Message>) {
        let now = self.now_ns();
        self.sched.release_due(now, out);
        for msg in out.drain(..) {
            self.verdict(msg, Verdict::Accept);
        }
    }

    fn receive(&mut self) -> Result<()> {
        for _ in 0..RECV_BATCH {
            let msg = match self.queue.recv() {
                Ok(m) => m,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => return Ok(()),
                Err(e) => {
                    self.recv_errors += 1;
                    if self.recv_errors > 1000 {
                        return Err(NetemError::Queue {
                            queue: self.queue_num,
                            step: "recv",
                            source: e,
                        });
                    }
                    return Ok(());
                }
            };
            // The link is the packet's mark, set by casslab's mangle OUTPUT rules.
            let mark = msg.get_nfmark();
            let now = self.arrival_ns(&msg);
            // The whole packet's length: only the first COPY_RANGE bytes are copied to us.
            let bytes = u32::try_from(msg.get_original_len()).unwrap_or(u32::MAX);
            match self.sched.admit(now, mark, bytes, msg) {
                Admit::Pass(m) => self.verdict(m, Verdict::Accept),
                Admit::Drop(m) => self.verdict(m, Verdict::Drop),
                Admit::Held => {}
            }
        }
        Ok(())
    }

    /// Wait until `deadline_ns`, a readable socket or a signal. Sleeps until `spin_ns`
    /// before the deadline, then only polls (timeout 0) so the release is not late.
    fn wait(&mut self, deadline_ns: u64, mask: &libc::sigset_t) -> Result<()> {
        let now = self.now_ns();
        let wake = deadline_ns.saturating_sub(self.spin_ns);
        let left = wake.saturating_sub(now);
        let rc = self.ppoll(left, mask)?;
        if rc == 0 && left > 0 {
            // Timed out: learn how late the wake-up was.
            let late = self.now_ns().saturating_sub(wake);
            let target = (late + late / 4).min(MAX_SPIN_NS);
            self.spin_ns = (self.spin_ns * 15 + target) / 16;
        }
        Ok(())
    }

    fn ppoll(&self, left: u64, mask: &libc::sigset_t) -> Result<libc::c_int> {
        let ts = libc::timespec {
            tv_sec: (left / 1_000_000_000) as libc::time_t,
            tv_nsec: (left % 1_000_000_000) as libc::c_long,
        };
        let mut pfd = libc::pollfd {
            fd: self.fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, a live timespec and sigset for the call's duration.
        let rc = unsafe { libc::ppoll(&mut pfd, 1, &ts, mask) };
        if rc < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != ErrorKind::Interrupted {
                return Err(NetemError::Os {
                    step: "ppoll",
                    source: e,
                });
            }
        }
        Ok(rc)
    }

    fn reload(&mut self) {
        match links::load(&self.config_path) {
            Ok(cfg) => {
                self.sched.reconfigure(&cfg);
                self.links = cfg.links.len();
                event(&serde_json::json!({"event": "reloaded", "links": self.links}));
            }
            Err(e) => {
                event(&serde_json::json!({"event": "reload_failed", "error": e.to_string()}));
            }
        }
    }

    fn stats(&self, event_name: &str) -> Stats<'static> {
        let c: Counters = self.sched.counters;
        let name: &'static str = if event_name == "stopped" {
            "stopped"
        } else {
            "stats"
        };
        Stats {
            event: name,
            pid: std::process::id(),
            queue: self.queue_num,
            links: self.links,
            seen: c.seen,
            passed: c.passed,
            dropped: c.dropped,
            medium_dropped: c.medium_dropped,
            released: c.released,
            held_now: c.held_now,
            held_max: c.held_max,
            late_mean_us: if c.released > 0 {
                c.late_sum_ns as f64 / c.released as f64 / 1000.0
            } else {
                0.0
            },
            late_max_us: c.late_max_ns as f64 / 1000.0,
            spin_us: self.spin_ns as f64 / 1000.0,
            recv_errors: self.recv_errors,
            verdict_errors: self.verdict_errors,
        }
    }
}

fn event<T: Serialize>(value: &T) {
    if let Ok(line) = serde_json::to_string(value) {
        println!("{line}");
    }
}

fn write_stats(path: &Path, stats: &Stats<'_>) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let text = serde_json::to_string(stats).unwrap_or_default();
    let err = |source| NetemError::Stats {
        path: path.to_path_buf(),
        source,
    };
    std::fs::write(&tmp, text).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

/// Run until SIGTERM/SIGINT; on the way out every held packet is accepted.
pub fn run(cmd: &RunCommand) -> Result<()> {
    let cfg = links::load(&cmd.config)?;
    let mask = signals::install()?;
    // SAFETY: prctl with integer arguments only. 1 ns timer slack: wake-ups on time.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
    let (queue, fd) = open_queue(cmd)?;
    let mut d = Daemon {
        queue,
        fd,
        queue_num: cmd.queue_num,
        sched: Scheduler::new(&cfg),
        config_path: cmd.config.clone(),
        links: cfg.links.len(),
        origin: Instant::now(),
        recv_errors: 0,
        verdict_errors: 0,
        spin_ns: 50_000,
        _tstamp_socket: enable_rx_timestamps(),
    };
    event(
        &serde_json::json!({"event": "ready", "pid": std::process::id(),
                              "queue": cmd.queue_num, "links": d.links}),
    );
    let mut out: Vec<Message> = Vec::with_capacity(1024);
    let mut next_stats = 0u64;
    const SECOND: u64 = 1_000_000_000;
    loop {
        if signals::stop_requested() {
            break;
        }
        if signals::take_reload() {
            d.reload();
        }
        d.release(&mut out);
        let now = d.now_ns();
        if let Some(path) = &cmd.stats_file {
            if now >= next_stats {
                write_stats(path, &d.stats("stats"))?;
                next_stats = now + SECOND;
            }
        }
        let deadline = d.sched.next_due().unwrap_or(now + SECOND).min(now + SECOND);
        d.wait(deadline, &mask)?;
        d.receive()?;
    }
    d.sched.drain_all(&mut out);
    for msg in std::mem::take(&mut out) {
        d.verdict(msg, Verdict::Accept);
    }
    let last = d.stats("stopped");
    if let Some(path) = &cmd.stats_file {
        write_stats(path, &last)?;
    }
    event(&last);
    Ok(())
}
