//! HdrHistogram interval log (the Java `HistogramLogWriter` format, readable by
//! `HistogramLogProcessor`, HdrHistogram's plotter and `hdrhistogram`'s
//! `IntervalLogIterator`). Values are microseconds; `Interval_Max` is in
//! milliseconds (max value divisor 1000). Tags: `<op>` for latency from the
//! intended start, `<op>-svc` for service time; `part-<op>` and `part-<op>-svc`
//! for the same operation done inside another (the read and update of a YCSB
//! read-modify-write), kept apart so a merge can count them as the summary does.

use super::report::histogram_base64;
use super::StatsSet;
use crate::error::{LoadError, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// An open interval log file.
pub struct HdrLog {
    path: PathBuf,
    out: std::io::BufWriter<std::fs::File>,
}

impl HdrLog {
    /// Creates `path` and writes the header with the run's start time.
    pub fn create(path: &Path, start: SystemTime) -> Result<Self> {
        let file = std::fs::File::create(path).map_err(|source| LoadError::WriteFile {
            path: path.to_path_buf(),
            source,
        })?;
        let mut log = HdrLog {
            path: path.to_path_buf(),
            out: std::io::BufWriter::new(file),
        };
        let secs = start
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        let header = format!(
            "#[casslab-load {} interval log; values in microseconds]\n\
             #[Histogram log format version 1.3]\n\
             #[StartTime: {secs:.3} (seconds since epoch)]\n\
             \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
            env!("CARGO_PKG_VERSION")
        );
        log.write(header.as_bytes())?;
        Ok(log)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.out
            .write_all(bytes)
            .map_err(|source| LoadError::WriteFile {
                path: self.path.clone(),
                source,
            })
    }

    /// Appends one interval: `start_s` seconds after the start time, `len_s` long.
    pub fn interval(
        &mut self,
        start_s: f64,
        len_s: f64,
        names: &[String],
        stats: &StatsSet,
    ) -> Result<()> {
        let mut text = String::new();
        let ops = names.iter().map(String::clone).zip(stats.ops.iter());
        let parts = names
            .iter()
            .map(|n| format!("part-{n}"))
            .zip(stats.parts.iter());
        for (tag, o) in ops.chain(parts) {
            if o.latency.is_empty() {
                continue;
            }
            for (tag, h) in [
                (tag.clone(), &o.latency),
                (format!("{tag}-svc"), &o.service),
            ] {
                text.push_str(&format!(
                    "Tag={tag},{start_s:.3},{len_s:.3},{:.3},{}\n",
                    h.max() as f64 / 1000.0,
                    histogram_base64(h)
                ));
            }
        }
        self.write(text.as_bytes())?;
        self.out.flush().map_err(|source| LoadError::WriteFile {
            path: self.path.clone(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Outcome;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    #[test]
    fn log_parses_back() {
        let dir = std::env::temp_dir().join(format!("casslab-hdrlog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.hlog");
        let mut log = HdrLog::create(&path, SystemTime::now()).unwrap();
        let mut s = StatsSet::new(1);
        s.ops[0].record(2000, 1000, Outcome::Ok);
        log.interval(0.0, 1.0, &["read".to_string()], &s).unwrap();
        log.interval(1.0, 1.0, &["read".to_string()], &s).unwrap();
        drop(log);
        let text = std::fs::read(&path).unwrap();
        let hists: Vec<_> = IntervalLogIterator::new(&text)
            .filter_map(|e| match e {
                Ok(LogEntry::Interval(h)) => Some((h.tag().map(|t| t.to_string()), h.max())),
                _ => None,
            })
            .collect();
        assert_eq!(hists.len(), 4);
        assert_eq!(hists[0].0.as_deref(), Some("read"));
        assert_eq!(hists[1].0.as_deref(), Some("read-svc"));
        assert!((hists[0].1 - 2.0).abs() < 0.01);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn parts_go_under_their_own_tags() {
        let dir = std::env::temp_dir().join(format!("casslab-hdrlog-p-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.hlog");
        let mut log = HdrLog::create(&path, SystemTime::now()).unwrap();
        let names = ["read".to_string(), "rmw".to_string()];
        let mut s = StatsSet::new(2);
        s.ops[1].record(3000, 3000, Outcome::Ok); // an rmw, whose read is a part
        s.parts[0].record(1000, 1000, Outcome::Ok);
        log.interval(0.0, 1.0, &names, &s).unwrap();
        drop(log);
        let text = std::fs::read(&path).unwrap();
        let tags: Vec<String> = IntervalLogIterator::new(&text)
            .filter_map(|e| match e {
                Ok(LogEntry::Interval(h)) => h.tag().map(|t| t.to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(tags, ["rmw", "rmw-svc", "part-read", "part-read-svc"]);
        std::fs::remove_dir_all(&dir).ok();
    }
}
