//! Measurement: one pair of HdrHistograms (latency from the intended start,
//! and service time) plus counters per operation type. Each worker records
//! into its own `StatsSet` (behind a mutex only the reporter also takes, once
//! per interval, so it is uncontended); the reporter merges them per interval.

pub mod hdrlog;
pub mod prometheus;
pub mod report;

use hdrhistogram::Histogram;
use serde::Serialize;

/// How many error messages are kept per operation type.
pub const MAX_FIRST_ERRORS: usize = 5;

/// Class of a failed operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Coordinator read/write timeout reported by Cassandra.
    ServerTimeout,
    /// No answer within the client request timeout.
    ClientTimeout,
    /// Not enough replicas alive for the consistency level.
    Unavailable,
    /// The node said it is overloaded (or rate limited).
    Overloaded,
    /// No connection, broken connection, empty plan.
    Connection,
    /// Anything else (invalid query, server error, ...).
    Other,
}

impl ErrorKind {
    /// All kinds, in the order of [`OpStats::by_kind`].
    pub const ALL: [ErrorKind; 6] = [
        ErrorKind::ServerTimeout,
        ErrorKind::ClientTimeout,
        ErrorKind::Unavailable,
        ErrorKind::Overloaded,
        ErrorKind::Connection,
        ErrorKind::Other,
    ];

    /// Name used in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::ServerTimeout => "server_timeout",
            ErrorKind::ClientTimeout => "client_timeout",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Overloaded => "overloaded",
            ErrorKind::Connection => "connection",
            ErrorKind::Other => "other",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// A part of an operation timed on its own (see [`StatsSet::parts`]).
#[derive(Debug)]
pub struct Part {
    /// Operation type of the part (e.g. read inside a read-modify-write).
    pub op: usize,
    /// When the part was sent.
    pub start: tokio::time::Instant,
    /// When its answer came.
    pub end: tokio::time::Instant,
    /// How it ended.
    pub outcome: Outcome,
}

/// Result of one operation as the workload reports it.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Success.
    Ok,
    /// Success, but the read found no row (a never-written key): not an error.
    NotFound,
    /// Failure of the given kind with the driver's message.
    Error(ErrorKind, String),
}

fn new_histogram() -> Histogram<u64> {
    // Auto-resizing, 3 significant digits: starts small, grows to the largest value seen.
    Histogram::new(3).expect("3 significant digits is a valid HdrHistogram precision")
}

/// Histograms (microseconds) and counters for one operation type.
#[derive(Clone, Debug)]
pub struct OpStats {
    /// Latency from the intended start (coordinated-omission corrected), us.
    pub latency: Histogram<u64>,
    /// Service time: from the actual send to the answer, us.
    pub service: Histogram<u64>,
    /// Successful operations.
    pub ok: u64,
    /// Reads that found nothing.
    pub not_found: u64,
    /// Failed operations.
    pub errors: u64,
    /// Failed operations by [`ErrorKind`] (index = `ErrorKind as usize`).
    pub by_kind: [u64; 6],
    /// The first few error messages.
    pub first_errors: Vec<String>,
}

impl Default for OpStats {
    fn default() -> Self {
        OpStats {
            latency: new_histogram(),
            service: new_histogram(),
            ok: 0,
            not_found: 0,
            errors: 0,
            by_kind: [0; 6],
            first_errors: Vec::new(),
        }
    }
}

impl OpStats {
    /// Records one finished operation. Latencies of failed operations are not
    /// put in the histograms (they are counted by kind instead).
    #[inline]
    pub fn record(&mut self, latency_us: u64, service_us: u64, outcome: Outcome) {
        match outcome {
            Outcome::Ok => self.ok += 1,
            Outcome::NotFound => self.not_found += 1,
            Outcome::Error(kind, msg) => {
                self.errors += 1;
                self.by_kind[kind.index()] += 1;
                if self.first_errors.len() < MAX_FIRST_ERRORS {
                    self.first_errors.push(msg);
                }
                return;
            }
        }
        // Auto-resizing histograms only fail for values beyond u64 range.
        let _ = self.latency.record(latency_us.max(service_us));
        let _ = self.service.record(service_us);
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &OpStats) {
        // Both are auto-resizing, so `add` cannot fail on range.
        let _ = self.latency.add(&other.latency);
        let _ = self.service.add(&other.service);
        self.ok += other.ok;
        self.not_found += other.not_found;
        self.errors += other.errors;
        for (a, b) in self.by_kind.iter_mut().zip(other.by_kind.iter()) {
            *a += b;
        }
        for m in &other.first_errors {
            if self.first_errors.len() >= MAX_FIRST_ERRORS {
                break;
            }
            self.first_errors.push(m.clone());
        }
    }

    /// Clears counts, keeping the allocated histograms.
    pub fn reset(&mut self) {
        self.latency.reset();
        self.service.reset();
        self.ok = 0;
        self.not_found = 0;
        self.errors = 0;
        self.by_kind = [0; 6];
        self.first_errors.clear();
    }

    /// Operations finished, whatever their outcome.
    pub fn count(&self) -> u64 {
        self.ok + self.not_found + self.errors
    }
}

/// One [`OpStats`] per operation type of a workload.
#[derive(Clone, Debug)]
pub struct StatsSet {
    /// Indexed like the workload's operation names.
    pub ops: Vec<OpStats>,
    /// Operations done as a part of another one, by their own type (YCSB's read
    /// and update inside a read-modify-write). Reported beside `ops`, never
    /// counted in the totals: the operation they belong to is.
    pub parts: Vec<OpStats>,
}

impl StatsSet {
    /// Empty stats for `n` operation types.
    pub fn new(n: usize) -> Self {
        StatsSet {
            ops: (0..n).map(|_| OpStats::default()).collect(),
            parts: (0..n).map(|_| OpStats::default()).collect(),
        }
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &StatsSet) {
        for (a, b) in self.ops.iter_mut().zip(other.ops.iter()) {
            a.merge(b);
        }
        for (a, b) in self.parts.iter_mut().zip(other.parts.iter()) {
            if b.count() > 0 {
                a.merge(b);
            }
        }
    }

    /// Clears all counts.
    pub fn reset(&mut self) {
        self.ops.iter_mut().for_each(OpStats::reset);
        self.parts
            .iter_mut()
            .filter(|p| p.count() > 0)
            .for_each(OpStats::reset);
    }

    /// Operation `i` together with the parts of other operations of its type
    /// (what YCSB reports as `[READ]` in a workload with read-modify-writes).
    pub fn with_parts(&self, i: usize) -> OpStats {
        let mut o = self.ops[i].clone();
        o.merge(&self.parts[i]);
        o
    }

    /// True when nothing was recorded since the last reset.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.ops
            .iter()
            .chain(self.parts.iter())
            .all(|o| o.count() == 0)
    }

    /// Every operation type merged into one: the histograms that the run's and each
    /// interval's overall percentiles come from (the one place they are computed).
    /// Parts are left out, as in the totals: their operation is already in.
    pub fn all(&self) -> OpStats {
        let mut all = OpStats::default();
        self.ops.iter().for_each(|o| all.merge(o));
        all
    }

    /// (finished ops, ok, not found, errors) over all types.
    pub fn totals(&self) -> (u64, u64, u64, u64) {
        self.ops.iter().fold((0, 0, 0, 0), |t, o| {
            (
                t.0 + o.count(),
                t.1 + o.ok,
                t.2 + o.not_found,
                t.3 + o.errors,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_gives_percentiles_of_the_merged_histograms_not_of_the_types() {
        // 995 reads of 1 ms, 5 writes of 100 ms: the mean of the types' p50s would be
        // 1.495 ms and the worst p99 100 ms; over all operations p50 and p99 are 1 ms.
        let mut s = StatsSet::new(2);
        for _ in 0..995 {
            s.ops[0].record(1000, 900, Outcome::Ok);
        }
        for _ in 0..5 {
            s.ops[1].record(100_000, 90_000, Outcome::Ok);
        }
        s.parts[0].record(5_000_000, 5_000_000, Outcome::Ok);
        let all = s.all();
        assert_eq!(all.count(), 1000);
        let (lat, svc) = (&all.latency, &all.service);
        assert!(lat.equivalent(lat.value_at_quantile(0.5), 1000));
        assert!(lat.equivalent(lat.value_at_quantile(0.99), 1000));
        assert!(lat.equivalent(lat.value_at_quantile(0.999), 100_000));
        assert!(svc.equivalent(svc.value_at_quantile(0.99), 900));
        assert!(
            all.latency.max() < 5_000_000,
            "parts are not operations of their own"
        );
    }

    #[test]
    fn merge_adds_histograms_and_counters() {
        let mut a = StatsSet::new(2);
        let mut b = StatsSet::new(2);
        for v in 1..=1000 {
            a.ops[0].record(v, v, Outcome::Ok);
        }
        for v in 1001..=2000 {
            b.ops[0].record(v * 10, v, Outcome::Ok);
        }
        b.ops[1].record(5, 5, Outcome::NotFound);
        b.ops[1].record(0, 0, Outcome::Error(ErrorKind::Overloaded, "busy".into()));
        a.merge(&b);
        let o = &a.ops[0];
        assert_eq!(o.ok, 2000);
        assert_eq!(o.latency.len(), 2000);
        assert_eq!(o.service.len(), 2000);
        assert!(o.latency.max() >= 19_990 && o.latency.max() <= 20_030);
        let median = o.service.value_at_quantile(0.5);
        assert!((995..=1005).contains(&median), "{median}");
        assert_eq!(a.ops[1].not_found, 1);
        assert_eq!(a.ops[1].errors, 1);
        assert_eq!(a.ops[1].by_kind[ErrorKind::Overloaded as usize], 1);
        assert_eq!(a.ops[1].first_errors, vec!["busy".to_string()]);
        assert_eq!(a.totals(), (2002, 2000, 1, 1));
        a.parts[0].record(7, 7, Outcome::Ok);
        assert_eq!(
            a.totals(),
            (2002, 2000, 1, 1),
            "parts are not counted twice"
        );
        assert_eq!(a.with_parts(0).ok, 2001);
        a.reset();
        assert!(a.is_empty());
    }

    #[test]
    fn latency_never_below_service() {
        let mut s = OpStats::default();
        s.record(10, 50, Outcome::Ok);
        assert!(s.latency.min() >= 49);
    }

    #[test]
    fn first_errors_are_capped() {
        let mut s = OpStats::default();
        for i in 0..20 {
            s.record(1, 1, Outcome::Error(ErrorKind::Other, format!("e{i}")));
        }
        assert_eq!(s.first_errors.len(), MAX_FIRST_ERRORS);
        assert_eq!(s.errors, 20);
    }
}
