//! Execution: what a workload must provide ([`Workload`]), how a run is
//! planned ([`RunPlan`], [`StagePlan`], [`OpMix`]) and the scheduler that runs
//! it ([`runner::run`]). Nothing here knows about Cassandra, so the scheduler
//! is tested with fake workloads.

pub mod runner;
pub mod stages;

use crate::error::{LoadError, Result};
use crate::stats::{Outcome, Part};
use serde::Serialize;
use std::future::Future;
use std::time::Duration;

/// Which phase a stage belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Populate: cycle `i` writes record `i`.
    Load,
    /// The measured workload mix.
    Run,
}

/// Per-stage parameters an operation sees.
#[derive(Clone, Debug)]
pub struct OpCtx {
    /// Load or run.
    pub phase: Phase,
    /// TTL for writes in seconds; `None` leaves the table default.
    pub ttl_s: Option<i32>,
}

/// A workload: a fixed list of operation types and a way to run one.
pub trait Workload: Send + Sync + 'static {
    /// Names of the operation types (indices are op ids), e.g. `["read", "update"]`.
    fn op_names(&self) -> &[String];

    /// Runs op `op` for cycle `cycle`. Must not panic on server errors: they
    /// are returned as [`Outcome::Error`].
    fn run_op(&self, op: usize, cycle: u64, ctx: &OpCtx) -> impl Future<Output = Outcome> + Send;

    /// Like [`Workload::run_op`], also pushing into `parts` the sub-operations
    /// that are reported on their own (YCSB times the read and the update of a
    /// read-modify-write separately as well). `parts` arrives empty.
    fn run_op_parts<'a>(
        &'a self,
        op: usize,
        cycle: u64,
        ctx: &'a OpCtx,
        parts: &'a mut Vec<Part>,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        let _ = parts;
        self.run_op(op, cycle, ctx)
    }

    /// Called before a stage's first operation: a stage that changes the schema
    /// (its `table_ttl_s`) does it here. An error ends the run (`stage_failed`).
    fn stage_begins(&self, stage: &StagePlan) -> impl Future<Output = Result<()>> + Send {
        let _ = stage;
        async { Ok(()) }
    }

    /// Driver retries so far per op id (cumulative).
    fn retries(&self) -> Vec<u64> {
        vec![0; self.op_names().len()]
    }
}

/// Relative frequencies of operation types, picked per cycle.
#[derive(Clone, Debug, PartialEq)]
pub struct OpMix {
    cumulative: Vec<f64>,
    weights: Vec<f64>,
}

impl OpMix {
    /// From non-negative weights (any scale); at least one must be positive.
    pub fn from_weights(weights: &[f64]) -> Result<Self> {
        if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
            return Err(LoadError::option(
                "--mix",
                "weights must be non-negative numbers",
            ));
        }
        let sum: f64 = weights.iter().sum();
        if sum <= 0.0 {
            return Err(LoadError::option(
                "--mix",
                "at least one weight must be positive",
            ));
        }
        let mut acc = 0.0;
        let cumulative = weights
            .iter()
            .map(|w| {
                acc += w / sum;
                acc
            })
            .collect();
        Ok(OpMix {
            cumulative,
            weights: weights.iter().map(|w| w / sum).collect(),
        })
    }

    /// Parses `name=weight,name=weight` against the workload's op names;
    /// ops not named get weight 0.
    pub fn parse(text: &str, names: &[String]) -> Result<Self> {
        let mut weights = vec![0.0; names.len()];
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, w) = part.split_once('=').ok_or_else(|| {
                LoadError::option("--mix", format!("{part:?} is not NAME=WEIGHT"))
            })?;
            let idx = names.iter().position(|n| n == name.trim()).ok_or_else(|| {
                LoadError::option(
                    "--mix",
                    format!(
                        "unknown operation {:?}; this workload has {}",
                        name.trim(),
                        names.join(", ")
                    ),
                )
            })?;
            weights[idx] = w.trim().parse::<f64>().map_err(|_| {
                LoadError::option("--mix", format!("weight {:?} is not a number", w.trim()))
            })?;
        }
        Self::from_weights(&weights)
    }

    /// Mix with a single op.
    pub fn only(op: usize, n: usize) -> Self {
        let mut w = vec![0.0; n];
        w[op] = 1.0;
        // One positive weight: cannot fail.
        Self::from_weights(&w).unwrap_or(OpMix {
            cumulative: vec![1.0; n],
            weights: w,
        })
    }

    /// Op id for a uniform draw `u` in `[0, 1)`.
    #[inline]
    pub fn pick(&self, u: f64) -> usize {
        for (i, c) in self.cumulative.iter().enumerate() {
            if u < *c && self.weights[i] > 0.0 {
                return i;
            }
        }
        // Rounding at the top end: last op with a positive weight.
        self.weights.iter().rposition(|w| *w > 0.0).unwrap_or(0)
    }

    /// Normalised weights per op id.
    #[cfg(test)]
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }
}

/// One stage of a run: how long, how fast, which mix.
#[derive(Clone, Debug)]
pub struct StagePlan {
    /// Shown in interval lines.
    pub name: String,
    /// Load or run.
    pub phase: Phase,
    /// Stop after this many operations.
    pub ops: Option<u64>,
    /// Stop after this much time.
    pub duration: Option<Duration>,
    /// Fixed target rate over all workers; `None` = as fast as possible.
    pub rate_ops_s: Option<f64>,
    /// Operation mix.
    pub mix: OpMix,
    /// TTL for writes.
    pub ttl_s: Option<i32>,
    /// The table's default TTL, set (ALTER TABLE) when the stage begins; only a
    /// workload with one table of its own has it (iot).
    pub table_ttl_s: Option<i32>,
    /// False for warm-up: reported per interval but not in the summary.
    pub record: bool,
}

/// Most `--threads` clients: the CQL stream ids of one connection (the
/// driver keeps one per node and cannot send more requests at once on it).
pub const MAX_THREADS: usize = 32_768;

/// How many requests a run keeps outstanding, and on how many tasks. Each
/// slot is a closed loop (send, wait for the answer, send the next), so both
/// forms are N closed loops; they differ in how N is spelled and spread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Concurrency {
    /// `--workers` tasks with `--in-flight` slots each.
    Workers { workers: usize, in_flight: usize },
    /// `--threads` clients of one request each (YCSB's -threads,
    /// cassandra-stress's -rate threads=N), spread over `tasks` tasks so that
    /// every runtime thread has clients (one task per `--io-threads`).
    Threads { threads: usize, tasks: usize },
}

impl Concurrency {
    /// Slots of each worker task: `threads` spread as evenly as possible.
    pub fn slots(&self) -> Vec<usize> {
        match *self {
            Concurrency::Workers { workers, in_flight } => vec![in_flight; workers],
            Concurrency::Threads { threads, tasks } => {
                let tasks = tasks.clamp(1, threads.max(1));
                (0..tasks)
                    .map(|i| threads / tasks + usize::from(i < threads % tasks))
                    .collect()
            }
        }
    }

    /// Requests outstanding at most (clients).
    pub fn clients(&self) -> usize {
        self.slots().iter().sum()
    }

    /// The summary's `concurrency` block: the client count however it was
    /// spelled, so runs of either form compare on one number.
    pub fn summary(&self) -> serde_json::Value {
        let mode = match self {
            Concurrency::Workers { .. } => "workers",
            Concurrency::Threads { .. } => "threads",
        };
        serde_json::json!({
            "mode": mode,
            "clients": self.clients(),
            "tasks": self.slots().len(),
        })
    }

    fn validate(&self) -> Result<()> {
        match *self {
            Concurrency::Workers { workers, in_flight } => {
                if workers == 0 {
                    return Err(LoadError::option("--workers", "must be at least 1"));
                }
                if in_flight == 0 {
                    return Err(LoadError::option("--in-flight", "must be at least 1"));
                }
            }
            Concurrency::Threads { threads, .. } => {
                if !(1..=MAX_THREADS).contains(&threads) {
                    return Err(LoadError::option(
                        "--threads",
                        format!(
                            "{threads} clients: give 1..={MAX_THREADS} (the requests one \
                             CQL connection can have outstanding)"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Client `index` of `count` clients of one run (`--client I/K`, I from 0).
///
/// Slices are interleaved: client I takes cycles I, I+K, I+2K, ... of the run
/// one client would do, so the K clients together do exactly that run's
/// operations (the same keys loaded, the same draws), each cycle once. An
/// interleaved slice of a stage of N operations has N/K of them, give or take one,
/// whether the stage counts records (load) or operations (run).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ClientSlice {
    /// This client, 0-based.
    pub index: u64,
    /// Clients of the run.
    pub count: u64,
}

impl ClientSlice {
    /// The only client of a run.
    pub const ALONE: ClientSlice = ClientSlice { index: 0, count: 1 };

    /// The run-wide cycle of this client's `i`-th operation of a stage starting at `base`.
    #[inline]
    pub fn cycle(&self, base: u64, i: u64) -> u64 {
        base + self.index + self.count * i
    }

    /// This client's share of a stage of `total` operations: the cycles below
    /// `total` that are its own.
    pub fn share(&self, total: u64) -> u64 {
        if total <= self.index {
            0
        } else {
            (total - self.index).div_ceil(self.count)
        }
    }
}

impl std::str::FromStr for ClientSlice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let usage = || format!("{s:?}: give I/K with 0 <= I < K, e.g. 0/2 (the first of two)");
        let (i, k) = s.trim().split_once('/').ok_or_else(usage)?;
        let index: u64 = i.trim().parse().map_err(|_| usage())?;
        let count: u64 = k.trim().parse().map_err(|_| usage())?;
        if count == 0 || index >= count {
            return Err(usage());
        }
        Ok(ClientSlice { index, count })
    }
}

/// A whole run.
#[derive(Clone, Debug)]
pub struct RunPlan {
    /// Outstanding requests and their worker tasks.
    pub concurrency: Concurrency,
    /// Pause of each slot between an answer and its next request.
    pub think_time: Option<Duration>,
    /// Reporting interval.
    pub interval: Duration,
    /// Stages, in order.
    pub stages: Vec<StagePlan>,
    /// Seed for op choice (workloads hold their own seed for keys and values).
    pub seed: u64,
    /// Which cycles of the run are this process's (all of them when alone).
    pub client: ClientSlice,
    /// End the run when no operation succeeded for this long while errors occur.
    pub unreachable_after: Duration,
    /// Client-side timeout of one operation (retries included); `None` = none.
    pub op_timeout: Option<Duration>,
    /// Scheduler tick at a fixed rate: operations intended within one tick
    /// are released together at its start.
    pub tick: Duration,
    /// End each recorded stage once its throughput has converged (see `Converge`).
    pub converge: Option<Converge>,
}

/// cassandra-stress's stop on convergence (`err<F n>MIN n<MAX`): a recorded stage
/// ends once the standard error of the mean of its per-interval throughput is
/// below `max_rel_se` of that mean, after at least `min_intervals` intervals, and
/// after `max_intervals` at the latest.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Converge {
    pub max_rel_se: f64,
    pub min_intervals: usize,
    pub max_intervals: usize,
}

impl Converge {
    /// True when a stage with these per-interval throughputs (ops/s) should end.
    pub fn reached(&self, rates: &[f64]) -> bool {
        let n = rates.len();
        if n >= self.max_intervals {
            return true;
        }
        if n < self.min_intervals || n < 2 {
            return false;
        }
        let mean = rates.iter().sum::<f64>() / n as f64;
        if mean <= 0.0 {
            return false;
        }
        let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        (var / n as f64).sqrt() / mean < self.max_rel_se
    }
}

impl RunPlan {
    /// Checks counts and that every stage ends.
    pub fn validate(&self) -> Result<()> {
        self.concurrency.validate()?;
        if self.tick < Duration::from_millis(1) || self.tick > Duration::from_secs(1) {
            return Err(LoadError::option("--tick", "must be between 1ms and 1s"));
        }
        if self.interval < Duration::from_millis(10) {
            return Err(LoadError::option("--interval", "must be at least 10ms"));
        }
        if let Some(c) = &self.converge {
            if !(c.max_rel_se > 0.0 && c.max_rel_se < 1.0) {
                return Err(LoadError::option(
                    "--converge",
                    "must be > 0 and < 1, e.g. 0.02",
                ));
            }
            if c.min_intervals < 2 || c.max_intervals < c.min_intervals {
                return Err(LoadError::option(
                    "--converge-min",
                    "must be at least 2 and at most --converge-max",
                ));
            }
        }
        for s in &self.stages {
            // A recorded stage may end on convergence alone.
            if s.ops.is_none() && s.duration.is_none() && !(s.record && self.converge.is_some()) {
                return Err(LoadError::option(
                    "--stages",
                    format!("stage {:?} has neither ops nor duration", s.name),
                ));
            }
            if let Some(r) = s.rate_ops_s {
                if !(r.is_finite() && r > 0.0) {
                    return Err(LoadError::option(
                        "--rate",
                        format!("stage {:?}: rate must be > 0", s.name),
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_slices_cover_every_cycle_once() {
        for total in [0u64, 1, 5, 100, 1001] {
            for count in 1..=7u64 {
                let mut seen = vec![0u32; total as usize];
                let mut shares = 0;
                for index in 0..count {
                    let c = ClientSlice { index, count };
                    shares += c.share(total);
                    for i in 0..c.share(total) {
                        seen[c.cycle(0, i) as usize] += 1;
                    }
                }
                assert_eq!(shares, total, "{total} over {count}");
                assert!(seen.iter().all(|n| *n == 1), "{total} over {count}");
            }
        }
        // Later stages start at a multiple of K, so slices stay disjoint there too.
        let (a, b) = (
            ClientSlice { index: 0, count: 2 },
            ClientSlice { index: 1, count: 2 },
        );
        assert_ne!(a.cycle(10, 3), b.cycle(10, 3));
        assert_eq!(ClientSlice::ALONE.cycle(7, 3), 10);
    }

    #[test]
    fn client_slices_parse_and_name_bad_forms() {
        assert_eq!(
            "1/4".parse::<ClientSlice>().unwrap(),
            ClientSlice { index: 1, count: 4 }
        );
        for bad in ["4/4", "0/0", "1", "a/2", "-1/2"] {
            let e = bad.parse::<ClientSlice>().unwrap_err();
            assert!(e.contains("0 <= I < K"), "{bad}: {e}");
        }
    }

    #[test]
    fn convergence_waits_for_the_minimum_then_the_relative_standard_error() {
        let c = Converge {
            max_rel_se: 0.02,
            min_intervals: 3,
            max_intervals: 6,
        };
        assert!(!c.reached(&[100.0, 100.0]));
        assert!(c.reached(&[100.0, 100.0, 100.0]));
        // mean 100, sd 20: se 11.5 % at n = 3, still 8.2 % at n = 5.
        assert!(!c.reached(&[80.0, 100.0, 120.0]));
        assert!(!c.reached(&[80.0, 100.0, 120.0, 80.0, 120.0]));
        assert!(c.reached(&[80.0, 100.0, 120.0, 80.0, 120.0, 100.0]));
        assert!(!c.reached(&[0.0, 0.0, 0.0]));
    }

    #[test]
    fn mix_parse_and_pick() {
        let names: Vec<String> = ["read", "update", "insert"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let m = OpMix::parse("read=3, insert=1", &names).unwrap();
        assert_eq!(m.weights(), &[0.75, 0.0, 0.25]);
        assert_eq!(m.pick(0.0), 0);
        assert_eq!(m.pick(0.7499), 0);
        assert_eq!(m.pick(0.75), 2);
        assert_eq!(m.pick(0.999_999_999), 2);
        assert!(OpMix::parse("scan=1", &names)
            .unwrap_err()
            .to_string()
            .contains("unknown operation"));
        assert!(OpMix::parse("read=x", &names).is_err());
        assert!(OpMix::parse("read=0", &names).is_err());
        assert_eq!(OpMix::only(1, 3).pick(0.3), 1);
    }

    #[test]
    fn threads_are_spread_evenly_over_the_tasks() {
        let c = |threads, tasks| Concurrency::Threads { threads, tasks };
        assert_eq!(c(450, 1).slots(), vec![450]);
        assert_eq!(c(10, 4).slots(), vec![3, 3, 2, 2]);
        // Never a task without a client.
        assert_eq!(c(2, 8).slots(), vec![1, 1]);
        assert_eq!(c(150, 2).clients(), 150);
        let w = Concurrency::Workers {
            workers: 3,
            in_flight: 16,
        };
        assert_eq!((w.slots(), w.clients()), (vec![16; 3], 48));
        assert_eq!(
            c(50, 1).summary(),
            serde_json::json!({"mode": "threads", "clients": 50, "tasks": 1})
        );
    }

    #[test]
    fn thread_counts_outside_one_connection_are_refused() {
        let msg = |threads| {
            Concurrency::Threads { threads, tasks: 1 }
                .validate()
                .map_err(|e| e.to_string())
        };
        assert!(msg(1).is_ok() && msg(MAX_THREADS).is_ok());
        let e = msg(0).unwrap_err();
        assert!(e.contains("--threads") && e.contains("1..=32768"), "{e}");
        assert!(msg(MAX_THREADS + 1).is_err());
    }
}
