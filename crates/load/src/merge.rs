//! `casslab-load merge`: adds the HdrHistogram interval logs of several runs
//! (several clients of one trial) by absolute time into one log and one summary.
//!
//! Each log's intervals are placed on the wall clock (its `StartTime` plus the
//! interval's offset), cut into slots of the logs' interval length counted from
//! the earliest start, and the histograms of one tag that fall in one slot are
//! added. Counts are therefore conserved: the merged count is the sum.

use crate::error::{LoadError, Result};
use crate::stats::report::histogram_base64;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Offsets above this are absolute times, not offsets from `StartTime` (the
/// rule of Java's `HistogramLogReader`: a year in seconds).
const ABSOLUTE_AFTER_S: f64 = 365.0 * 24.0 * 3600.0;

/// One interval of one log, placed on the wall clock.
#[derive(Debug)]
pub struct Entry {
    /// Tag (`read`, `read-svc`, ...); empty for an untagged interval.
    pub tag: String,
    /// Start, seconds since the epoch.
    pub start_s: f64,
    /// Length, seconds.
    pub len_s: f64,
    /// The interval's histogram (microseconds).
    pub hist: Histogram<u64>,
}

fn bad(path: &Path, reason: impl Into<String>) -> LoadError {
    LoadError::option("merge", format!("{}: {}", path.display(), reason.into()))
}

/// Reads one interval log into wall-clock entries.
pub fn read_log(path: &Path) -> Result<Vec<Entry>> {
    let bytes = std::fs::read(path).map_err(|source| LoadError::ReadFile {
        path: path.to_path_buf(),
        source,
    })?;
    let mut start = 0.0;
    let mut base: Option<f64> = None;
    let mut out = Vec::new();
    let mut de = Deserializer::new();
    for (i, e) in IntervalLogIterator::new(&bytes).enumerate() {
        match e.map_err(|e| {
            bad(
                path,
                format!("entry {}: not an interval log line ({e:?})", i + 1),
            )
        })? {
            LogEntry::StartTime(d) => start = d.as_secs_f64(),
            LogEntry::BaseTime(d) => base = Some(d.as_secs_f64()),
            LogEntry::Interval(h) => {
                let raw = std::str::from_utf8(h.encoded_histogram().as_bytes()).unwrap_or("");
                use base64::Engine as _;
                let bin = base64::engine::general_purpose::STANDARD
                    .decode(raw)
                    .map_err(|e| {
                        bad(path, format!("interval {}: bad base64: {e}", out.len() + 1))
                    })?;
                let hist: Histogram<u64> =
                    de.deserialize(&mut std::io::Cursor::new(bin))
                        .map_err(|e| {
                            bad(
                                path,
                                format!("interval {}: bad histogram: {e:?}", out.len() + 1),
                            )
                        })?;
                let offset = h.start_timestamp().as_secs_f64();
                let start_s = if offset > ABSOLUTE_AFTER_S {
                    offset
                } else {
                    base.unwrap_or(start) + offset
                };
                out.push(Entry {
                    tag: h.tag().map(|t| t.as_str().to_string()).unwrap_or_default(),
                    start_s,
                    len_s: h.duration().as_secs_f64(),
                    hist,
                });
            }
        }
    }
    if start == 0.0 && base.is_none() {
        return Err(bad(
            path,
            "no #[StartTime: ...] line, so its intervals cannot be placed in time",
        ));
    }
    Ok(out)
}

/// The merged log: per slot and tag one histogram.
pub struct Merged {
    /// Earliest start of all logs, seconds since the epoch.
    pub start_s: f64,
    /// Slot length, seconds.
    pub slot_s: f64,
    /// (slot index, tag) -> summed histogram.
    pub slots: BTreeMap<(u64, String), Histogram<u64>>,
    /// Per tag, all intervals of all logs added.
    pub totals: BTreeMap<String, Histogram<u64>>,
}

/// The most common interval length (ms resolution): a run's last interval is
/// shorter, the others are `--interval`.
fn slot_length(entries: &[Entry]) -> f64 {
    let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
    for e in entries {
        *counts.entry((e.len_s * 1000.0).round() as u64).or_default() += 1;
    }
    let ms = counts
        .iter()
        .max_by_key(|(ms, n)| (**n, **ms))
        .map(|(ms, _)| *ms)
        .unwrap_or(1000);
    (ms.max(1)) as f64 / 1000.0
}

/// Adds the entries of all logs by absolute time.
pub fn merge(entries: &[Entry]) -> Merged {
    let start_s = entries
        .iter()
        .map(|e| e.start_s)
        .fold(f64::INFINITY, f64::min);
    let slot_s = slot_length(entries);
    let mut slots: BTreeMap<(u64, String), Histogram<u64>> = BTreeMap::new();
    let mut totals: BTreeMap<String, Histogram<u64>> = BTreeMap::new();
    for e in entries {
        // The slot holding the interval's midpoint, so a few ms of clock skew
        // between clients do not push an interval into its neighbour.
        let mid = e.start_s + e.len_s / 2.0 - start_s;
        let slot = (mid / slot_s).floor().max(0.0) as u64;
        for target in [
            slots.entry((slot, e.tag.clone())).or_insert_with(new_hist),
            totals.entry(e.tag.clone()).or_insert_with(new_hist),
        ] {
            // Both auto-resize, so adding cannot fail on range.
            let _ = target.add(&e.hist);
        }
    }
    Merged {
        start_s: if start_s.is_finite() { start_s } else { 0.0 },
        slot_s,
        slots,
        totals,
    }
}

fn new_hist() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant digits is a valid HdrHistogram precision")
}

/// Writes the merged log in the format `HdrLog` writes.
pub fn write_log(m: &Merged, path: &Path) -> Result<()> {
    let werr = |source| LoadError::WriteFile {
        path: path.to_path_buf(),
        source,
    };
    let mut text = format!(
        "#[casslab-load {} merged interval log; values in microseconds]\n\
         #[Histogram log format version 1.3]\n\
         #[StartTime: {:.3} (seconds since epoch)]\n\
         \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
        env!("CARGO_PKG_VERSION"),
        m.start_s
    );
    for ((slot, tag), h) in &m.slots {
        let tag = if tag.is_empty() {
            String::new()
        } else {
            format!("Tag={tag},")
        };
        text.push_str(&format!(
            "{tag}{:.3},{:.3},{:.3},{}\n",
            *slot as f64 * m.slot_s,
            m.slot_s,
            h.max() as f64 / 1000.0,
            histogram_base64(h)
        ));
    }
    let mut f = std::fs::File::create(path).map_err(werr)?;
    f.write_all(text.as_bytes()).map_err(werr)
}

/// Prefix of the tags of operations done inside others (see `HdrLog`).
const PART: &str = "part-";

/// The merged summary: counts and percentiles (us) per tag; `ops` sums the
/// operation tags (not the `-svc` service-time ones, nor the parts, which
/// `parts` gives per operation as a run's summary does).
pub fn summary(m: &Merged, logs: usize) -> Value {
    let mut by_tag = Map::new();
    let mut ops = 0u64;
    for (tag, h) in &m.totals {
        if !tag.ends_with("-svc") && !tag.starts_with(PART) {
            ops += h.len();
        }
        let mut block = percentiles(h);
        block["count"] = json!(h.len());
        by_tag.insert(tag.clone(), block);
    }
    let slots: std::collections::BTreeSet<u64> = m.slots.keys().map(|(s, _)| *s).collect();
    let span_s = slots.len() as f64 * m.slot_s;
    let (by_op, all, _) = blocks(m.totals.iter(), span_s);
    let parts = m
        .totals
        .iter()
        .filter_map(|(t, h)| Some((t.strip_prefix(PART)?, h)));
    let parts: BTreeMap<String, &Histogram<u64>> = parts.map(|(t, h)| (t.to_string(), h)).collect();
    let (parts, _, _) = blocks(parts.iter().map(|(t, h)| (t, *h)), span_s);
    json!({
        "by_op": by_op,
        "all": all,
        "parts": parts,
        "type": "merged",
        "tool": "casslab-load",
        "logs": logs,
        "start_s": (m.start_s * 1000.0).round() / 1000.0,
        "interval_s": m.slot_s,
        "intervals": slots.len(),
        "ops": ops,
        "by_tag": by_tag,
    })
}

/// Percentiles of one histogram, as the summary's `latency` / `service` blocks (us).
fn percentiles(h: &Histogram<u64>) -> Value {
    let q = |p: f64| {
        if h.is_empty() {
            0
        } else {
            h.value_at_quantile(p)
        }
    };
    json!({
        "mean_us": (h.mean() * 1000.0).round() / 1000.0,
        "p50_us": q(0.5),
        "p95_us": q(0.95),
        "p99_us": q(0.99),
        "p999_us": q(0.999),
        "max_us": h.max(),
    })
}

/// One operation block in the shape of a run's summary and interval lines:
/// count, rate over `len_s`, latency and service percentiles and both
/// histograms (so the merged result can itself be merged or re-read).
fn op_block(lat: &Histogram<u64>, svc: &Histogram<u64>, len_s: f64) -> Value {
    let n = lat.len();
    json!({
        "ops": n,
        "ops_s": if len_s > 0.0 { (n as f64 / len_s * 1000.0).round() / 1000.0 } else { 0.0 },
        "latency": percentiles(lat),
        "service": percentiles(svc),
        "hist": {
            "encoding": "hdrhistogram-v2-deflate-base64",
            "unit": "us",
            "latency": histogram_base64(lat),
            "service": histogram_base64(svc),
        },
    })
}

/// Per operation (tags without `-svc`) and over all operations, from histograms by
/// tag; parts (`part-` tags) are left out, as they are of a run's `by_op` and `all`.
fn blocks<'a>(
    tags: impl Iterator<Item = (&'a String, &'a Histogram<u64>)>,
    len_s: f64,
) -> (Map<String, Value>, Value, u64) {
    let by_tag: BTreeMap<&String, &Histogram<u64>> =
        tags.filter(|(t, _)| !t.starts_with(PART)).collect();
    let (mut all_lat, mut all_svc) = (new_hist(), new_hist());
    let mut by_op = Map::new();
    let empty = new_hist();
    for (tag, lat) in by_tag.iter().filter(|(t, _)| !t.ends_with("-svc")) {
        let svc = by_tag.get(&format!("{tag}-svc")).copied().unwrap_or(&empty);
        let _ = all_lat.add(*lat);
        let _ = all_svc.add(svc);
        by_op.insert((*tag).clone(), op_block(lat, svc, len_s));
    }
    let ops = all_lat.len();
    (by_op, op_block(&all_lat, &all_svc, len_s), ops)
}

/// The merged intervals, one JSON line each in the shape of a run's interval
/// lines (`t_s` is the slot's end in seconds after the earliest start), without
/// the counts a log does not hold (ok, not found, errors, retries).
pub fn interval_lines(m: &Merged) -> Vec<Value> {
    let slots: std::collections::BTreeSet<u64> = m.slots.keys().map(|(s, _)| *s).collect();
    slots
        .into_iter()
        .map(|slot| {
            let tags = m
                .slots
                .range((slot, String::new())..(slot + 1, String::new()))
                .map(|((_, tag), h)| (tag, h));
            let (by_op, all, ops) = blocks(tags, m.slot_s);
            json!({
                "type": "interval",
                "t_s": ((slot + 1) as f64 * m.slot_s * 1000.0).round() / 1000.0,
                "interval_s": m.slot_s,
                "ops": ops,
                "ops_s": ((ops as f64 / m.slot_s) * 1000.0).round() / 1000.0,
                "by_op": by_op,
                "all": all,
            })
        })
        .collect()
}

#[cfg(test)]
/// Reads `logs`, writes the merged log to `output` (if given) and returns the summary.
pub fn run(logs: &[PathBuf], output: Option<&Path>) -> Result<Value> {
    run_lines(logs, output, false).map(|mut v| v.pop().unwrap_or(Value::Null))
}

/// Reads `logs`, writes the merged log to `output` (if given) and returns the
/// merged interval lines (with `intervals`) followed by the summary.
pub fn run_lines(logs: &[PathBuf], output: Option<&Path>, intervals: bool) -> Result<Vec<Value>> {
    let mut entries = Vec::new();
    for p in logs {
        entries.extend(read_log(p)?);
    }
    let m = merge(&entries);
    if let Some(out) = output {
        write_log(&m, out)?;
    }
    let mut lines = if intervals {
        interval_lines(&m)
    } else {
        Vec::new()
    };
    lines.push(summary(&m, logs.len()));
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::hdrlog::HdrLog;
    use crate::stats::{Outcome, StatsSet};
    use std::time::{Duration, SystemTime};

    fn write_run(path: &Path, start: SystemTime, per_interval: &[u64], latency_us: u64) {
        let mut log = HdrLog::create(path, start).unwrap();
        for (i, n) in per_interval.iter().enumerate() {
            let mut s = StatsSet::new(1);
            for _ in 0..*n {
                s.ops[0].record(latency_us, latency_us, Outcome::Ok);
            }
            log.interval(i as f64, 1.0, &["read".to_string()], &s)
                .unwrap();
        }
    }

    #[test]
    fn merged_counts_are_the_sum_and_intervals_line_up_by_absolute_time() {
        let dir = std::env::temp_dir().join(format!("casslab-merge-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        // The second client started 2 s later: its first interval is the
        // first one's third.
        let (a, b, out) = (dir.join("a.hlog"), dir.join("b.hlog"), dir.join("m.hlog"));
        write_run(&a, t0, &[10, 20, 30], 1000);
        write_run(&b, t0 + Duration::from_secs(2), &[5, 7], 9000);
        let s = run(&[a, b], Some(&out)).unwrap();
        assert_eq!(s["ops"], 72);
        assert_eq!(s["by_tag"]["read"]["count"], 72);
        assert_eq!(s["by_tag"]["read-svc"]["count"], 72);
        assert_eq!(s["intervals"], 4);
        // The summary's `all` block adds every operation; p99 of 72 ops of which
        // 12 at 9 ms: 9 ms.
        assert_eq!(s["all"]["ops"], 72);
        assert_eq!(s["by_op"]["read"]["ops"], 72);
        let p99 = s["all"]["latency"]["p99_us"].as_u64().unwrap();
        assert!((8990..=9010).contains(&p99), "{p99}");
        let lines = run_lines(&[dir.join("a.hlog"), dir.join("b.hlog")], None, true).unwrap();
        let counts: Vec<u64> = lines[..4]
            .iter()
            .map(|l| l["all"]["ops"].as_u64().unwrap())
            .collect();
        assert_eq!(counts, vec![10, 20, 35, 7]);
        assert_eq!(lines[2]["t_s"], 3.0);
        assert_eq!(lines[4]["type"], "merged");
        let merged = read_log(&out).unwrap();
        let reads: Vec<(f64, u64)> = merged
            .iter()
            .filter(|e| e.tag == "read")
            .map(|e| (e.start_s - 1_700_000_000.0, e.hist.len()))
            .collect();
        assert_eq!(reads, vec![(0.0, 10), (1.0, 20), (2.0, 35), (3.0, 7)]);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn parts_are_merged_apart_from_the_operations() {
        let dir = std::env::temp_dir().join(format!("casslab-merge-p-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let names = ["read".to_string(), "rmw".to_string()];
        let mut logs = Vec::new();
        for (i, read_us) in [(0u64, 1000u64), (1, 5000)] {
            let path = dir.join(format!("{i}.hlog"));
            let mut log = HdrLog::create(&path, t0).unwrap();
            let mut s = StatsSet::new(2);
            for _ in 0..10 {
                s.ops[1].record(9000, 9000, Outcome::Ok);
                s.parts[0].record(read_us, read_us, Outcome::Ok);
            }
            log.interval(0.0, 1.0, &names, &s).unwrap();
            logs.push(path);
        }
        let s = run(&logs, None).unwrap();
        assert_eq!(s["ops"], 20, "parts are not operations of their own");
        assert_eq!(s["all"]["ops"], 20);
        assert!(s["by_op"].get("part-read").is_none());
        assert_eq!(s["parts"]["read"]["ops"], 20);
        let p99 = s["parts"]["read"]["latency"]["p99_us"].as_u64().unwrap();
        assert!((4990..=5010).contains(&p99), "{p99}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_file_that_is_not_a_log_is_named() {
        let dir = std::env::temp_dir().join(format!("casslab-merge-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.hlog");
        std::fs::write(&p, "hello\n").unwrap();
        let e = run(std::slice::from_ref(&p), None).unwrap_err().to_string();
        assert!(e.contains(&p.display().to_string()), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
