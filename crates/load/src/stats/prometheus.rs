//! Live metrics for Prometheus: `--prometheus ADDR` serves the run's counters
//! and latency summaries as Prometheus/OpenMetrics text on `/metrics`.
//!
//! A plain std thread with a blocking listener: one scrape every few seconds
//! costs nothing beside the load, and no HTTP crate is needed for one GET.
//! The reporter adds each recorded interval into a shared [`StatsSet`]; a
//! scrape renders it, so the counters end equal to the summary's.

use super::StatsSet;
use crate::error::{LoadError, Result};
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Quantiles of the latency summaries (as YCSB and cassandra-stress report).
const QUANTILES: [f64; 5] = [0.5, 0.9, 0.95, 0.99, 0.999];

/// The run's totals so far, shared between the reporter and the server thread.
#[derive(Clone)]
pub struct Live {
    inner: Arc<Mutex<LiveState>>,
}

struct LiveState {
    workload: String,
    names: Vec<String>,
    total: StatsSet,
}

impl Live {
    /// Empty totals for a workload's operation types.
    pub fn new(workload: &str, names: &[String]) -> Self {
        Live {
            inner: Arc::new(Mutex::new(LiveState {
                workload: workload.to_string(),
                names: names.to_vec(),
                total: StatsSet::new(names.len()),
            })),
        }
    }

    /// Adds one recorded interval.
    pub fn add(&self, iv: &StatsSet) {
        if let Ok(mut s) = self.inner.lock() {
            s.total.merge(iv);
        }
    }

    /// The exposition text of the totals so far.
    pub fn render(&self) -> String {
        match self.inner.lock() {
            Ok(s) => render(&s.workload, &s.names, &s.total),
            Err(_) => String::new(),
        }
    }
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// One counter family `casslab_load_<name>` with its help, a sample per operation type.
fn counter(
    out: &mut String,
    (name, help): (&str, &str),
    wl: &str,
    names: &[String],
    values: impl Iterator<Item = u64>,
) {
    let _ = writeln!(
        out,
        "# HELP casslab_load_{name} {help}\n# TYPE casslab_load_{name} counter"
    );
    for (n, v) in names.iter().zip(values) {
        let _ = writeln!(
            out,
            "casslab_load_{name}{{workload=\"{wl}\",op=\"{}\"}} {v}",
            escape(n)
        );
    }
}

/// Prometheus text format 0.0.4: counters per operation type and a summary of
/// latency from the intended start (seconds) per operation type.
pub fn render(workload: &str, names: &[String], stats: &StatsSet) -> String {
    let wl = escape(workload);
    let mut out = String::new();
    counter(
        &mut out,
        (
            "operations_total",
            "Operations finished (ok, not found or failed), recorded stages only.",
        ),
        &wl,
        names,
        stats.ops.iter().map(|o| o.count()),
    );
    counter(
        &mut out,
        ("errors_total", "Failed operations, recorded stages only."),
        &wl,
        names,
        stats.ops.iter().map(|o| o.errors),
    );
    let _ = writeln!(
        out,
        "# HELP casslab_load_latency_seconds Latency from the intended start (coordinated-omission corrected) of successful operations.\n\
         # TYPE casslab_load_latency_seconds summary"
    );
    for (n, o) in names.iter().zip(stats.ops.iter()) {
        let h = &o.latency;
        let labels = format!("workload=\"{wl}\",op=\"{}\"", escape(n));
        for q in QUANTILES {
            let v = if h.is_empty() {
                0
            } else {
                h.value_at_quantile(q)
            };
            let _ = writeln!(
                out,
                "casslab_load_latency_seconds{{{labels},quantile=\"{q}\"}} {}",
                v as f64 / 1e6
            );
        }
        let sum_s = h.mean() * h.len() as f64 / 1e6;
        let _ = writeln!(out, "casslab_load_latency_seconds_sum{{{labels}}} {sum_s}");
        let _ = writeln!(
            out,
            "casslab_load_latency_seconds_count{{{labels}}} {}",
            h.len()
        );
    }
    out
}

/// Binds `addr` for [`serve`]; a busy port is an error naming the address.
pub fn bind(addr: &str) -> Result<TcpListener> {
    TcpListener::bind(addr).map_err(|e| {
        LoadError::option(
            "--prometheus",
            format!("cannot listen on {addr}: {e} (give a free HOST:PORT)"),
        )
    })
}

/// Serves `live` on `listener` from a background thread for the rest of the process.
pub fn serve(listener: TcpListener, live: Live) -> Result<()> {
    std::thread::Builder::new()
        .name("prometheus".into())
        .spawn(move || {
            for conn in listener.incoming().flatten() {
                // A broken scrape must not end the run: answer the next one.
                let _ = answer(conn, &live);
            }
        })
        .map_err(LoadError::Runtime)?;
    Ok(())
}

fn answer(mut conn: TcpStream, live: &Live) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut buf = [0u8; 4096];
    let mut req = Vec::new();
    // Read the request head only; a GET has no body.
    while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < 65536 {
        let n = conn.read(&mut buf)?;
        if n == 0 {
            break;
        }
        req.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&req);
    let path = head.split_whitespace().nth(1).unwrap_or("");
    let (status, ctype, body) = if path == "/metrics" || path.starts_with("/metrics?") {
        (
            "200 OK",
            "text/plain; version=0.0.4; charset=utf-8",
            live.render(),
        )
    } else {
        (
            "404 Not Found",
            "text/plain; charset=utf-8",
            "casslab-load serves /metrics\n".to_string(),
        )
    };
    write!(
        conn,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    conn.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{ErrorKind, Outcome};

    fn get(addr: std::net::SocketAddr, path: &str) -> String {
        let mut c = TcpStream::connect(addr).unwrap();
        write!(c, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut s = String::new();
        c.read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn serves_counters_and_quantiles_of_what_was_added() {
        let names = vec!["read".to_string(), "update".to_string()];
        let live = Live::new("ycsb-a", &names);
        let mut iv = StatsSet::new(2);
        for v in 1..=1000 {
            iv.ops[0].record(v, v, Outcome::Ok);
        }
        iv.ops[1].record(5, 5, Outcome::Error(ErrorKind::Other, "x".into()));
        live.add(&iv);
        live.add(&iv);
        let listener = bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        serve(listener, live).unwrap();
        let text = get(addr, "/metrics");
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        assert!(
            text.contains("casslab_load_operations_total{workload=\"ycsb-a\",op=\"read\"} 2000\n")
        );
        assert!(text.contains("casslab_load_errors_total{workload=\"ycsb-a\",op=\"update\"} 2\n"));
        assert!(text.contains(
            "casslab_load_latency_seconds_count{workload=\"ycsb-a\",op=\"read\"} 2000\n"
        ));
        let p50 = text
            .lines()
            .find(|l| l.contains("op=\"read\",quantile=\"0.5\""))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap();
        assert!((p50 - 0.0005).abs() < 0.00001, "{p50}");
        assert!(get(addr, "/").starts_with("HTTP/1.1 404"));
    }

    #[test]
    fn a_busy_port_is_one_error_naming_the_address() {
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap().to_string();
        let e = bind(&addr).unwrap_err().to_string();
        assert!(e.contains("--prometheus") && e.contains(&addr), "{e}");
        assert!(!e.contains('\n'));
    }
}
