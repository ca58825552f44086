//! Live metrics for Prometheus: `--prometheus ADDR` serves the run's counters
//! and a latency histogram as Prometheus text (format 0.0.4) on `/metrics`.
//!
//! Latency is a histogram with fixed bucket bounds (see [`bounds_us`]), not a
//! summary: bucket counts of K clients add up (`sum by (le)`), and `rate()`
//! over them gives any window's distribution, which precomputed quantiles do
//! not. Every series is cumulative since the process started and carries the
//! labels `workload`, `client` (I of `--client I/K`, 0 for a lone client),
//! `stage`, `op`, and those given with `--prometheus-label KEY=VALUE`.
//! Recorded stages only (no warm-up), so the counts end equal to the summary's.
//!
//! A plain std thread with a blocking listener: one scrape every few seconds
//! costs nothing beside the load, and no HTTP crate is needed for one GET.

use super::StatsSet;
use crate::error::{LoadError, Result};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Labels casslab-load sets itself; `--prometheus-label` may not give them.
const RESERVED: [&str; 6] = ["workload", "client", "stage", "op", "le", "quantile"];

/// Upper bounds of the latency buckets in microseconds: 100 us x 1.2^k rounded
/// to whole microseconds, k = 0..=72 (100 us .. 50.2 s), then `+Inf`. Steps of
/// 20 %: a quantile read from the histogram is within one step of the exact
/// one, fine enough to compare clients, stages or nodes, and 74 buckets per
/// operation type stay cheap to scrape.
pub fn bounds_us() -> Vec<u64> {
    (0..)
        .map(|k| (100.0 * 1.2f64.powi(k)).round() as u64)
        .take_while(|&b| b <= 60_000_000)
        .collect()
}

/// One `--prometheus-label KEY=VALUE`, added to every series.
#[derive(Clone, Debug, Serialize)]
pub struct Label {
    /// Label name (Prometheus rules: `[a-zA-Z_][a-zA-Z0-9_]*`, no leading `__`).
    pub key: String,
    /// Label value (any text).
    pub value: String,
}

/// Parses `KEY=VALUE` for `--prometheus-label`.
pub fn parse_label(s: &str) -> std::result::Result<Label, String> {
    let Some((key, value)) = s.split_once('=') else {
        return Err(format!("{s:?} is not KEY=VALUE, e.g. lab=edge"));
    };
    let mut chars = key.chars();
    let name_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !key.starts_with("__");
    if !name_ok {
        return Err(format!(
            "{key:?} is not a label name: give letters, digits and _ (not first a digit, \
             not a leading __), e.g. lab=edge"
        ));
    }
    if RESERVED.contains(&key) {
        return Err(format!(
            "{key} is set by casslab-load itself (its own labels: {}); give another name",
            RESERVED.join(", ")
        ));
    }
    Ok(Label {
        key: key.to_string(),
        value: value.to_string(),
    })
}

/// One operation type's totals in one stage.
#[derive(Clone)]
struct Series {
    ops: u64,
    errors: u64,
    /// Latencies per bucket (not cumulative), the last one above all bounds.
    buckets: Vec<u64>,
    sum_us: f64,
    count: u64,
}

/// The run's totals so far, shared between the reporter and the server thread.
#[derive(Clone)]
pub struct Live {
    inner: Arc<Mutex<LiveState>>,
}

struct LiveState {
    /// `workload="...",<labels>,client="..."`, the start of every label set.
    base: String,
    names: Vec<String>,
    bounds: Vec<u64>,
    /// Per stage in the order first seen: one [`Series`] per operation type.
    stages: Vec<(String, Vec<Series>)>,
}

impl Live {
    /// Empty totals for a workload's operation types; `client` is I of `--client I/K`.
    pub fn new(workload: &str, names: &[String], labels: &[Label], client: u64) -> Self {
        let mut base = format!("workload=\"{}\"", escape(workload));
        for l in labels {
            let _ = write!(base, ",{}=\"{}\"", l.key, escape(&l.value));
        }
        let _ = write!(base, ",client=\"{client}\"");
        Live {
            inner: Arc::new(Mutex::new(LiveState {
                base,
                names: names.to_vec(),
                bounds: bounds_us(),
                stages: Vec::new(),
            })),
        }
    }

    /// Adds one recorded interval of stage `stage`.
    pub fn add(&self, stage: &str, iv: &StatsSet) {
        if let Ok(mut s) = self.inner.lock() {
            s.add(stage, iv);
        }
    }

    /// The exposition text of the totals so far.
    pub fn render(&self) -> String {
        match self.inner.lock() {
            Ok(s) => s.render(),
            Err(_) => String::new(),
        }
    }
}

impl LiveState {
    fn add(&mut self, stage: &str, iv: &StatsSet) {
        let pos = match self.stages.iter().position(|(n, _)| n == stage) {
            Some(p) => p,
            None => {
                let empty = Series {
                    ops: 0,
                    errors: 0,
                    buckets: vec![0; self.bounds.len() + 1],
                    sum_us: 0.0,
                    count: 0,
                };
                self.stages
                    .push((stage.to_string(), vec![empty; self.names.len()]));
                self.stages.len() - 1
            }
        };
        let bounds = &self.bounds;
        for (s, o) in self.stages[pos].1.iter_mut().zip(iv.ops.iter()) {
            s.ops += o.count();
            s.errors += o.errors;
            add_latencies(s, &o.latency, bounds);
        }
    }

    fn render(&self) -> String {
        let mut out = String::new();
        let families = [
            (
                "operations_total",
                "Operations finished (ok, not found or failed), recorded stages only.",
            ),
            ("errors_total", "Failed operations, recorded stages only."),
        ];
        for (i, (name, help)) in families.into_iter().enumerate() {
            let _ = writeln!(
                out,
                "# HELP casslab_load_{name} {help}\n# TYPE casslab_load_{name} counter"
            );
            for (s, labels) in self.series() {
                let v = if i == 0 { s.ops } else { s.errors };
                let _ = writeln!(out, "casslab_load_{name}{{{labels}}} {v}");
            }
        }
        let _ = writeln!(
            out,
            "# HELP casslab_load_latency_seconds Latency from the intended start \
             (coordinated-omission corrected) of successful operations, recorded stages only; \
             buckets 100 us x 1.2^k.\n\
             # TYPE casslab_load_latency_seconds histogram"
        );
        for (s, labels) in self.series() {
            let mut cum = 0u64;
            for (i, n) in s.buckets.iter().enumerate() {
                cum += n;
                let le = match self.bounds.get(i) {
                    Some(&b) => format!("{}", b as f64 / 1e6),
                    None => "+Inf".to_string(),
                };
                let _ = writeln!(
                    out,
                    "casslab_load_latency_seconds_bucket{{{labels},le=\"{le}\"}} {cum}"
                );
            }
            let _ = writeln!(
                out,
                "casslab_load_latency_seconds_sum{{{labels}}} {}\n\
                 casslab_load_latency_seconds_count{{{labels}}} {}",
                s.sum_us / 1e6,
                s.count
            );
        }
        out
    }

    /// Every (stage, operation type) with its label set.
    fn series(&self) -> impl Iterator<Item = (&Series, String)> {
        self.stages.iter().flat_map(move |(stage, ops)| {
            self.names.iter().zip(ops.iter()).map(move |(op, s)| {
                let labels = format!(
                    "{},stage=\"{}\",op=\"{}\"",
                    self.base,
                    escape(stage),
                    escape(op)
                );
                (s, labels)
            })
        })
    }
}

/// Adds an interval's latencies (us) to `s`'s buckets. A value counts in the
/// first bucket whose bound is >= it, taken as HdrHistogram's highest value
/// equivalent to it (what its quantiles return, so the buckets agree with the
/// summary's percentiles).
fn add_latencies(s: &mut Series, h: &Histogram<u64>, bounds: &[u64]) {
    if h.is_empty() {
        return;
    }
    for v in h.iter_recorded() {
        let i = bounds.partition_point(|&b| b < v.value_iterated_to());
        s.buckets[i] += v.count_at_value();
    }
    s.sum_us += h.mean() * h.len() as f64;
    s.count += h.len();
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Binds `addr` for [`serve`]; a busy port is an error naming the address.
/// `labels` are checked here too, before anything connects: a key given twice
/// is an error.
pub fn bind(addr: &str, labels: &[Label]) -> Result<TcpListener> {
    for (i, l) in labels.iter().enumerate() {
        if labels[..i].iter().any(|o| o.key == l.key) {
            return Err(LoadError::option(
                "--prometheus-label",
                format!("{} given twice: give each label once", l.key),
            ));
        }
    }
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

    fn value(text: &str, series: &str) -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(series))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {series} in {text}"))
    }

    #[test]
    fn serves_counters_and_cumulative_buckets_of_what_was_added() {
        let names = vec!["read".to_string(), "update".to_string()];
        let lab = parse_label("lab=edge").unwrap();
        let live = Live::new("ycsb-a", &names, &[lab], 1);
        let mut iv = StatsSet::new(2);
        for v in 1..=1000 {
            iv.ops[0].record(v, v, Outcome::Ok);
        }
        iv.ops[1].record(5, 5, Outcome::Error(ErrorKind::Other, "x".into()));
        live.add("main", &iv);
        live.add("main", &iv);
        let listener = bind("127.0.0.1:0", &[]).unwrap();
        let addr = listener.local_addr().unwrap();
        serve(listener, live).unwrap();
        let text = get(addr, "/metrics");
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        let read = "workload=\"ycsb-a\",lab=\"edge\",client=\"1\",stage=\"main\",op=\"read\"";
        let upd = read.replace("read", "update");
        assert_eq!(
            value(&text, &format!("casslab_load_operations_total{{{read}}}")),
            2000.0
        );
        assert_eq!(
            value(&text, &format!("casslab_load_errors_total{{{upd}}}")),
            2.0
        );
        assert_eq!(
            value(
                &text,
                &format!("casslab_load_latency_seconds_count{{{read}}}")
            ),
            2000.0
        );
        // 1..=1000 us twice: 200 at or below the first bound (100 us), 1032 at or
        // below the tenth (100 x 1.2^9 = 516 us), all 2000 below +Inf.
        let le = |b: &str| {
            value(
                &text,
                &format!("casslab_load_latency_seconds_bucket{{{read},le=\"{b}\"}}"),
            )
        };
        assert_eq!(le("0.0001"), 200.0);
        assert_eq!(le("0.000516"), 1032.0);
        assert_eq!(le("+Inf"), 2000.0);
        let sum = value(
            &text,
            &format!("casslab_load_latency_seconds_sum{{{read}}}"),
        );
        assert!((sum - 2.0 * 500_500e-6).abs() < 0.01, "{sum}");
        assert!(get(addr, "/").starts_with("HTTP/1.1 404"));
    }

    #[test]
    fn buckets_are_log_spaced_from_100_us_to_a_minute() {
        let b = bounds_us();
        assert_eq!((b[0], b.len()), (100, 73));
        assert!(*b.last().unwrap() <= 60_000_000 && b.last().unwrap() * 12 / 10 > 60_000_000);
        assert!(b
            .windows(2)
            .all(|w| (w[1] as f64 / w[0] as f64 - 1.2).abs() < 0.01));
    }

    #[test]
    fn stages_are_series_of_their_own() {
        let names = vec!["write".to_string()];
        let live = Live::new("stress", &names, &[], 0);
        let mut iv = StatsSet::new(1);
        iv.ops[0].record(2_000_000, 2_000_000, Outcome::Ok);
        live.add("a", &iv);
        live.add("b", &iv);
        live.add("b", &iv);
        let text = live.render();
        let count = |st: &str| {
            value(&text, &format!("casslab_load_latency_seconds_count{{workload=\"stress\",client=\"0\",stage=\"{st}\",op=\"write\"}}"))
        };
        assert_eq!((count("a"), count("b")), (1.0, 2.0));
    }

    #[test]
    fn labels_must_be_prometheus_names_and_not_casslab_loads_own() {
        assert_eq!(parse_label("lab=a=b").unwrap().value, "a=b");
        for bad in [
            "lab", "1lab=x", "la-b=x", "__x=y", "op=read", "client=3", "=x",
        ] {
            let e = parse_label(bad).unwrap_err();
            assert!(!e.contains('\n'), "{e}");
        }
        let twice = [parse_label("lab=a").unwrap(), parse_label("lab=b").unwrap()];
        let e = bind("127.0.0.1:0", &twice).unwrap_err().to_string();
        assert!(
            e.contains("--prometheus-label") && e.contains("lab given twice"),
            "{e}"
        );
    }

    #[test]
    fn a_busy_port_is_one_error_naming_the_address() {
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap().to_string();
        let e = bind(&addr, &[]).unwrap_err().to_string();
        assert!(e.contains("--prometheus") && e.contains(&addr), "{e}");
        assert!(!e.contains('\n'));
    }
}
