//! Turning stats into output: interval JSON lines, the summary JSON line and
//! YCSB's text format. Pure functions: data in, text or JSON out.

use super::{ErrorKind, OpStats, StatsSet};
use crate::config::MeasurementInterval;
use base64::Engine;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde_json::{json, Map, Value};

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Percentiles of one histogram (microseconds); all zero when empty.
pub fn percentiles(h: &Histogram<u64>) -> Value {
    if h.is_empty() {
        return json!({"mean_us": 0.0, "p50_us": 0, "p95_us": 0, "p99_us": 0,
                      "p999_us": 0, "max_us": 0, "min_us": 0});
    }
    json!({
        "mean_us": round3(h.mean()),
        "p50_us": h.value_at_quantile(0.5),
        "p95_us": h.value_at_quantile(0.95),
        "p99_us": h.value_at_quantile(0.99),
        "p999_us": h.value_at_quantile(0.999),
        "max_us": h.max(),
        "min_us": h.min(),
    })
}

/// Base64 of the V2 deflate HdrHistogram encoding (the Java tools' format).
pub fn histogram_base64(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut buf) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(&buf),
        Err(e) => format!("serialization failed: {e}"),
    }
}

fn op_json(o: &OpStats, elapsed_s: f64, retries: u64, full: bool) -> Value {
    let mut m = Map::new();
    m.insert("ops".into(), json!(o.count()));
    m.insert("ops_s".into(), json!(round3(rate(o.count(), elapsed_s))));
    m.insert("ok".into(), json!(o.ok));
    m.insert("not_found".into(), json!(o.not_found));
    m.insert("errors".into(), json!(o.errors));
    m.insert("retries".into(), json!(retries));
    m.insert("latency".into(), percentiles(&o.latency));
    m.insert("service".into(), percentiles(&o.service));
    if o.errors > 0 || full {
        let kinds: Map<String, Value> = ErrorKind::ALL
            .iter()
            .map(|k| (k.name().to_string(), json!(o.by_kind[*k as usize])))
            .collect();
        m.insert("error_kinds".into(), Value::Object(kinds));
        m.insert("first_errors".into(), json!(o.first_errors));
    }
    if full {
        m.insert("hist".into(), hist_json(o));
    }
    Value::Object(m)
}

/// Both histograms of `o`, encoded, so that runs and clients can be merged later.
fn hist_json(o: &OpStats) -> Value {
    json!({
        "encoding": "hdrhistogram-v2-deflate-base64",
        "unit": "us",
        "latency": histogram_base64(&o.latency),
        "service": histogram_base64(&o.service),
    })
}

/// The `all` block: every operation type merged (percentiles of all operations),
/// always with its encoded histograms.
fn all_json(stats: &StatsSet, elapsed_s: f64, retries: &[u64]) -> Value {
    let all = stats.all();
    let mut v = op_json(&all, elapsed_s, retries.iter().sum(), false);
    if let Value::Object(m) = &mut v {
        m.insert("hist".into(), hist_json(&all));
    }
    v
}

fn rate(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

/// What an interval line describes.
pub struct IntervalInfo<'a> {
    /// Stage name.
    pub stage: &'a str,
    /// Whether this stage goes into the summary (false for warm-up).
    pub recorded: bool,
    /// Seconds since the run started, at the end of the interval.
    pub t_s: f64,
    /// Length of this interval in seconds.
    pub interval_s: f64,
    /// Retries per op type during the interval.
    pub retries: &'a [u64],
}

/// The JSON object of one interval line (`"type": "interval"`).
pub fn interval_json(info: &IntervalInfo, names: &[String], stats: &StatsSet) -> Value {
    let (ops, ok, not_found, errors) = stats.totals();
    // Interval lines list only the op types that finished something (or retried).
    let by_op: Map<String, Value> = names
        .iter()
        .zip(stats.ops.iter())
        .enumerate()
        .filter(|(i, (_, o))| o.count() > 0 || info.retries.get(*i).copied().unwrap_or(0) > 0)
        .map(|(i, (n, o))| {
            let r = info.retries.get(i).copied().unwrap_or(0);
            (n.clone(), op_json(o, info.interval_s, r, false))
        })
        .collect();
    json!({
        "type": "interval",
        "stage": info.stage,
        "recorded": info.recorded,
        "t_s": round3(info.t_s),
        "interval_s": round3(info.interval_s),
        "ops": ops,
        "ops_s": round3(rate(ops, info.interval_s)),
        "ok": ok,
        "not_found": not_found,
        "errors": errors,
        "retries": info.retries.iter().sum::<u64>(),
        "by_op": by_op,
        "all": all_json(stats, info.interval_s, info.retries),
    })
}

/// Per-stage facts kept for the summary.
#[derive(Clone, Debug, serde::Serialize)]
pub struct StageSummary {
    /// Stage name.
    pub name: String,
    /// Whether its ops are in the summary histograms.
    pub recorded: bool,
    /// Wall time of the stage in seconds.
    pub elapsed_s: f64,
    /// Operations finished in the stage.
    pub ops: u64,
    /// Errors in the stage.
    pub errors: u64,
}

/// Everything the summary line needs besides the stats.
pub struct SummaryInfo<'a> {
    /// e.g. "ycsb-a", "stress-mixed", "iot", "user:profile.yaml".
    pub workload: &'a str,
    /// "completed", "interrupted", "cluster_lost".
    pub ended_by: &'a str,
    /// Seconds of recorded (non-warm-up) stages.
    pub recorded_s: f64,
    /// Seconds of the whole run including warm-up.
    pub wall_s: f64,
    /// Total retries per op type over recorded stages.
    pub retries: &'a [u64],
    /// Run seed.
    pub seed: u64,
    /// Stages as they ran.
    pub stages: &'a [StageSummary],
    /// Outstanding requests and the tasks that carried them
    /// (`exec::Concurrency::summary`).
    pub concurrency: Value,
    /// The full configuration.
    pub config: Value,
}

/// The JSON object of the final summary line (`"type": "summary"`).
pub fn summary_json(info: &SummaryInfo, names: &[String], stats: &StatsSet) -> Value {
    let (ops, ok, not_found, errors) = stats.totals();
    let by_op: Map<String, Value> = names
        .iter()
        .zip(stats.ops.iter())
        .enumerate()
        .map(|(i, (n, o))| {
            let r = info.retries.get(i).copied().unwrap_or(0);
            (n.clone(), op_json(o, info.recorded_s, r, true))
        })
        .collect();
    // Operations done inside others (the read and update of a YCSB rmw), by type.
    let parts: Map<String, Value> = names
        .iter()
        .zip(stats.parts.iter())
        .filter(|(_, p)| p.count() > 0)
        .map(|(n, p)| (n.clone(), op_json(p, info.recorded_s, 0, true)))
        .collect();
    json!({
        "type": "summary",
        "tool": "casslab-load",
        "version": env!("CARGO_PKG_VERSION"),
        "workload": info.workload,
        "seed": info.seed,
        "ended_by": info.ended_by,
        "elapsed_s": round3(info.recorded_s),
        "wall_s": round3(info.wall_s),
        "ops": ops,
        "ops_s": round3(rate(ops, info.recorded_s)),
        "ok": ok,
        "not_found": not_found,
        "errors": errors,
        "retries": info.retries.iter().sum::<u64>(),
        "by_op": by_op,
        "all": all_json(stats, info.recorded_s, info.retries),
        "parts": parts,
        "stages": info.stages,
        "concurrency": info.concurrency,
        "config": info.config,
    })
}

/// YCSB's name for an operation (`read` -> `READ`, `rmw` -> `READ-MODIFY-WRITE`).
pub fn ycsb_op_name(name: &str) -> String {
    match name {
        "rmw" => "READ-MODIFY-WRITE".to_string(),
        other => other.to_ascii_uppercase().replace('_', "-"),
    }
}

/// What YCSB's end-of-run text shows of each operation.
#[derive(Clone, Debug, PartialEq)]
pub struct YcsbBlocks {
    /// `[READ]`: service time, from the actual send.
    pub op: bool,
    /// `[Intended-READ]`: latency from the intended start.
    pub intended: bool,
    /// Percentiles printed per block (YCSB's `hdrhistogram.percentiles`).
    pub percentiles: Vec<f64>,
}

impl YcsbBlocks {
    /// YCSB's `measurement.interval` (op, intended, both); without one, both
    /// when the run had a target rate, else op.
    pub fn new(interval: Option<MeasurementInterval>, rated: bool, percentiles: &[f64]) -> Self {
        let (op, intended) = match interval {
            Some(MeasurementInterval::Op) => (true, false),
            Some(MeasurementInterval::Intended) => (false, true),
            Some(MeasurementInterval::Both) => (true, true),
            None => (true, rated),
        };
        YcsbBlocks {
            op,
            intended,
            percentiles: percentiles.to_vec(),
        }
    }
}

/// YCSB's name of a percentile line: an integral percentile as an English
/// ordinal (`95th`, `1st`, `11th`), any other as Java prints the double (`99.9`).
pub fn ycsb_ordinal(p: f64) -> String {
    if p.fract() != 0.0 {
        return format!("{p}");
    }
    let j = p as u64;
    let suffix = match (j % 100, j % 10) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    };
    format!("{j}{suffix}")
}

fn ycsb_block(
    out: &mut String,
    label: &str,
    h: &Histogram<u64>,
    o: &OpStats,
    percentiles: &[f64],
    returns: bool,
) {
    use std::fmt::Write;
    let (avg, min, max) = if h.is_empty() {
        (0.0, 0, 0)
    } else {
        (h.mean(), h.min(), h.max())
    };
    let _ = writeln!(out, "[{label}], Operations, {}", o.count());
    let _ = writeln!(out, "[{label}], AverageLatency(us), {avg}");
    let _ = writeln!(out, "[{label}], MinLatency(us), {min}");
    let _ = writeln!(out, "[{label}], MaxLatency(us), {max}");
    for &p in percentiles {
        let v = if h.is_empty() {
            0
        } else {
            h.value_at_percentile(p)
        };
        let _ = writeln!(
            out,
            "[{label}], {}PercentileLatency(us), {v}",
            ycsb_ordinal(p)
        );
    }
    if !returns {
        return;
    }
    let _ = writeln!(out, "[{label}], Return=OK, {}", o.ok);
    if o.not_found > 0 {
        let _ = writeln!(out, "[{label}], Return=NOT_FOUND, {}", o.not_found);
    }
    if o.errors > 0 {
        let _ = writeln!(out, "[{label}], Return=ERROR, {}", o.errors);
    }
}

/// YCSB's end-of-run text: `[READ]` etc. give service times, `[Intended-READ]`
/// the latency from the intended start, as `blocks` asks.
pub fn ycsb_text(
    names: &[String],
    stats: &StatsSet,
    recorded_s: f64,
    blocks: &YcsbBlocks,
) -> String {
    use std::fmt::Write;
    let (ops, ..) = stats.totals();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "[OVERALL], RunTime(ms), {}",
        (recorded_s * 1000.0).round() as u64
    );
    let _ = writeln!(
        out,
        "[OVERALL], Throughput(ops/sec), {}",
        rate(ops, recorded_s)
    );
    for (i, n) in names.iter().enumerate() {
        // YCSB's [READ] also holds the reads inside read-modify-writes.
        let o = stats.with_parts(i);
        if o.count() == 0 {
            continue;
        }
        let label = ycsb_op_name(n);
        if blocks.op {
            ycsb_block(&mut out, &label, &o.service, &o, &blocks.percentiles, true);
        }
        if blocks.intended {
            let l = format!("Intended-{label}");
            // YCSB counts return codes on the op measurement; with intended
            // alone they stay here so the text still says how many failed.
            let returns = !blocks.op;
            ycsb_block(&mut out, &l, &o.latency, &o, &blocks.percentiles, returns);
        }
    }
    out
}

/// A number as Java's `DecimalFormat("#.##")` prints it (YCSB's status line):
/// at most two decimals, no trailing zeros, no trailing point.
fn decimal2(v: f64) -> String {
    let t = format!("{v:.2}");
    let t = t.trim_end_matches('0').trim_end_matches('.');
    if t.is_empty() || t == "-" {
        "0".into()
    } else {
        t.to_string()
    }
}

/// `yyyy-MM-dd HH:mm:ss:SSS` (UTC) of `ms` milliseconds since the epoch, as YCSB's
/// status thread stamps its lines (YCSB uses the local zone; casslab labs run in UTC).
pub fn ycsb_timestamp(ms: u64) -> String {
    let (days, rem) = (ms / 86_400_000, ms % 86_400_000);
    // Days since 1970-01-01 to a civil date (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s, milli) = (
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000,
    );
    format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{s:02}:{milli:03}")
}

/// What YCSB's status line needs besides the interval's stats.
pub struct YcsbStatus {
    /// Wall clock at the end of the interval, milliseconds since the epoch.
    pub now_ms: u64,
    /// Seconds since the run started.
    pub elapsed_s: f64,
    /// Operations finished since the run started, this interval included.
    pub total_ops: u64,
    /// Length of the interval in seconds.
    pub interval_s: f64,
}

/// One line of YCSB's status thread: `DATE N sec: T operations; R current ops/sec;
/// [OP: Count=, Max=, Min=, Avg=, 90=, 99=, 99.9=, 99.99=] ...`, the interval's
/// service times in microseconds per operation type (YCSB's default measurement).
pub fn ycsb_status(st: &YcsbStatus, names: &[String], stats: &StatsSet) -> String {
    use std::fmt::Write;
    let (ops, ..) = stats.totals();
    let mut out = format!(
        "{} {} sec: {} operations; {} current ops/sec;",
        ycsb_timestamp(st.now_ms),
        st.elapsed_s.max(0.0) as u64,
        st.total_ops,
        decimal2(rate(ops, st.interval_s))
    );
    for (i, n) in names.iter().enumerate() {
        let o = stats.with_parts(i);
        if o.count() == 0 {
            continue;
        }
        let h = &o.service;
        let q = |x: f64| {
            if h.is_empty() {
                0
            } else {
                h.value_at_quantile(x)
            }
        };
        let (max, min, avg) = if h.is_empty() {
            (0, 0, 0.0)
        } else {
            (h.max(), h.min(), h.mean())
        };
        let _ = write!(
            out,
            " [{}: Count={}, Max={max}, Min={min}, Avg={}, 90={}, 99={}, 99.9={}, 99.99={}]",
            ycsb_op_name(n),
            o.count(),
            decimal2(avg),
            q(0.90),
            q(0.99),
            q(0.999),
            q(0.9999)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Outcome;
    use hdrhistogram::serialization::Deserializer;

    fn sample() -> (Vec<String>, StatsSet) {
        let names = vec!["read".to_string(), "rmw".to_string()];
        let mut s = StatsSet::new(2);
        for v in 1..=100 {
            s.ops[0].record(v * 2, v, Outcome::Ok);
        }
        s.ops[0].record(7, 7, Outcome::NotFound);
        s.ops[1].record(300, 300, Outcome::Ok);
        (names, s)
    }

    #[test]
    fn interval_line_fields() {
        let (names, s) = sample();
        let v = interval_json(
            &IntervalInfo {
                stage: "main",
                recorded: true,
                t_s: 1.0,
                interval_s: 1.0,
                retries: &[0, 2],
            },
            &names,
            &s,
        );
        assert_eq!(v["type"], "interval");
        assert_eq!(v["ops"], 102);
        assert_eq!(v["not_found"], 1);
        assert_eq!(v["retries"], 2);
        assert_eq!(v["by_op"]["read"]["service"]["max_us"], 100);
        assert!(v["by_op"]["read"]["latency"]["p99_us"].as_u64().unwrap() >= 196);
        // 101 reads up to 200 us and one rmw of 300 us: p99 of all is a read's.
        assert_eq!(v["all"]["ops"], 102);
        assert_eq!(v["all"]["latency"]["max_us"], 300);
        assert!(v["all"]["latency"]["p99_us"].as_u64().unwrap() < 300);
        assert!(v["all"]["hist"]["latency"].as_str().unwrap().len() > 10);
    }

    #[test]
    fn summary_histograms_round_trip() {
        let (names, s) = sample();
        let v = summary_json(
            &SummaryInfo {
                workload: "ycsb-f",
                ended_by: "completed",
                recorded_s: 2.0,
                wall_s: 3.0,
                retries: &[0, 0],
                seed: 1,
                stages: &[],
                concurrency: json!({"mode": "threads", "clients": 50, "tasks": 2}),
                config: json!({"x": 1}),
            },
            &names,
            &s,
        );
        assert_eq!(v["ops_s"], 51.0);
        assert_eq!(v["concurrency"]["clients"], 50);
        let b64 = v["by_op"]["read"]["hist"]["latency"].as_str().unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        let h: Histogram<u64> = Deserializer::new()
            .deserialize(&mut std::io::Cursor::new(bytes))
            .unwrap();
        assert_eq!(h.len(), 101);
        assert_eq!(h.max(), s.ops[0].latency.max());
        assert_eq!(v["all"]["ops"], 102);
        assert_eq!(v["all"]["ops_s"], 51.0);
        assert_eq!(v["all"]["latency"]["max_us"], 300);
    }

    #[test]
    fn ycsb_format() {
        let (names, s) = sample();
        let both = YcsbBlocks::new(Some(MeasurementInterval::Both), false, &[95.0, 99.0]);
        let t = ycsb_text(&names, &s, 2.0, &both);
        assert!(t.starts_with("[OVERALL], RunTime(ms), 2000\n"));
        assert!(t.contains("[OVERALL], Throughput(ops/sec), 51\n"));
        assert!(t.contains("[READ], Operations, 101\n"));
        assert!(t.contains("[READ], Return=OK, 100\n"));
        assert!(t.contains("[READ], Return=NOT_FOUND, 1\n"));
        assert!(t.contains("[READ-MODIFY-WRITE], 99thPercentileLatency(us), 300\n"));
        assert!(t.contains("[Intended-READ], MaxLatency(us), 200\n"));
        assert!(!t.contains("[Intended-READ], Return=OK"));
    }

    #[test]
    fn ycsb_percentiles_and_measurement_interval_as_ycsb_names_them() {
        let (names, s) = sample();
        let pct = [50.0, 99.9, 1.0, 12.0, 22.0, 100.0];
        let t = ycsb_text(&names, &s, 2.0, &YcsbBlocks::new(None, false, &pct));
        for line in [
            "[READ], 50thPercentileLatency(us), ",
            "[READ], 99.9PercentileLatency(us), ",
            "[READ], 1stPercentileLatency(us), ",
            "[READ], 12thPercentileLatency(us), ",
            "[READ], 22ndPercentileLatency(us), ",
            "[READ], 100thPercentileLatency(us), 100\n",
        ] {
            assert!(t.contains(line), "{line} in {t}");
        }
        assert!(!t.contains("95thPercentile") && !t.contains("Intended-"));
        // Without an interval, a rated run shows both; `intended` alone drops [READ].
        let rated = ycsb_text(&names, &s, 2.0, &YcsbBlocks::new(None, true, &[99.0]));
        assert!(rated.contains("[READ], Operations") && rated.contains("[Intended-READ]"));
        let only = YcsbBlocks::new(Some(MeasurementInterval::Intended), false, &[99.0]);
        let t = ycsb_text(&names, &s, 2.0, &only);
        assert!(!t.contains("[READ], ") && t.contains("[Intended-READ], Return=OK, 100\n"));
        let op = YcsbBlocks::new(Some(MeasurementInterval::Op), true, &[99.0]);
        assert!(!ycsb_text(&names, &s, 2.0, &op).contains("Intended-"));
    }

    #[test]
    fn ycsb_read_and_update_include_the_parts_of_rmw_but_throughput_does_not() {
        let names: Vec<String> = ["read", "update", "rmw"].map(String::from).to_vec();
        let mut s = StatsSet::new(3);
        for v in 1..=101 {
            s.ops[0].record(v, v, Outcome::Ok);
        }
        s.ops[2].record(100, 100, Outcome::Ok); // one rmw: its read and update are parts
        s.parts[0].record(40, 40, Outcome::Ok);
        s.parts[1].record(60, 60, Outcome::Ok);
        let t = ycsb_text(
            &names,
            &s,
            2.0,
            &YcsbBlocks::new(None, false, &[95.0, 99.0]),
        );
        assert!(t.contains("[OVERALL], Throughput(ops/sec), 51\n"), "{t}");
        assert!(t.contains("[READ], Operations, 102\n"));
        assert!(t.contains("[UPDATE], Operations, 1\n"));
        assert!(t.contains("[READ-MODIFY-WRITE], Operations, 1\n"));
        let v = summary_json(
            &SummaryInfo {
                workload: "ycsb-f",
                ended_by: "completed",
                recorded_s: 2.0,
                wall_s: 2.0,
                retries: &[0, 0, 0],
                seed: 1,
                stages: &[],
                concurrency: json!({"mode": "workers", "clients": 16, "tasks": 1}),
                config: json!({}),
            },
            &names,
            &s,
        );
        assert_eq!(v["ops"], 102);
        assert_eq!(v["parts"]["read"]["ops"], 1);
        assert_eq!(v["parts"]["update"]["ops"], 1);
        assert!(v["parts"].get("rmw").is_none());
    }

    #[test]
    fn ycsb_status_line_as_ycsb_prints_it() {
        let (names, s) = sample();
        let st = YcsbStatus {
            now_ms: 1_795_452_458_123,
            elapsed_s: 10.4,
            total_ops: 12_345,
            interval_s: 1.0,
        };
        let line = ycsb_status(&st, &names, &s);
        assert!(
            line.starts_with("2026-11-23 16:47:38:123 10 sec: 12345 operations; 102 current ops/sec; [READ: Count=101, Max=100, Min=1, Avg="),
            "{line}"
        );
        assert!(
            line.contains(", 90=90, 99=99, 99.9=100, 99.99=100]"),
            "{line}"
        );
        assert!(line.ends_with("[READ-MODIFY-WRITE: Count=1, Max=300, Min=300, Avg=300, 90=300, 99=300, 99.9=300, 99.99=300]"), "{line}");
        assert_eq!(decimal2(1234.5), "1234.5");
        assert_eq!(decimal2(3.0), "3");
        assert_eq!(decimal2(0.004), "0");
        assert_eq!(ycsb_timestamp(0), "1970-01-01 00:00:00:000");
        assert_eq!(ycsb_timestamp(951_782_400_000), "2000-02-29 00:00:00:000");
    }
}
