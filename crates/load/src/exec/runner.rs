//! The scheduler: worker tasks, each with a number of slots (`--in-flight`,
//! or its share of the `--threads` clients), every slot a closed loop with one
//! operation outstanding, pulling cycle numbers from a shared counter. With a target
//! rate, cycle `i` of a stage is due at `start + i / rate`; its latency is
//! measured from that intended start, so a stalled server delays (and shows
//! up in) every operation queued behind it, while service time only counts
//! from the actual send.
//!
//! Scheduling at a fixed rate: each worker has one timer that ticks on a
//! grid of [`RunPlan::tick`] (1 ms by default, tokio's timer resolution) and
//! releases, in one burst, every queued operation intended before the next
//! tick, so the driver writes them to the socket together and the process
//! wakes once per tick instead of once per operation. An operation sent
//! before its intended time has its latency measured from its actual send
//! (never less than service time); one sent at or after it, from the
//! intended start, exactly.

use super::{ClientSlice, OpCtx, RunPlan, StagePlan, Workload};
use crate::generator::{hash3, unit};
use crate::stats::report::{IntervalInfo, StageSummary};
use crate::stats::{ErrorKind, Outcome, Part, StatsSet};
use futures::stream::{FuturesUnordered, StreamExt};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

/// Stream id for the op-choice draw of a cycle.
const MIX_STREAM: u64 = 0x004D_4958;

/// Receives interval results while the run goes on.
pub trait Sink {
    /// One interval finished. `start_s` is its start in seconds since the run began.
    fn interval(&mut self, info: &IntervalInfo, start_s: f64, names: &[String], stats: &StatsSet);
}

/// Why the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// All stages reached their op count or duration.
    Completed,
    /// Stopped from outside (Ctrl-C).
    Interrupted,
    /// No operation succeeded for `unreachable_after` while errors occurred.
    ClusterLost,
    /// A stage's set-up (its schema change) failed; the error went to stderr.
    StageFailed,
}

impl EndReason {
    /// Name used in the summary.
    pub fn name(self) -> &'static str {
        match self {
            EndReason::Completed => "completed",
            EndReason::Interrupted => "interrupted",
            EndReason::ClusterLost => "cluster_lost",
            EndReason::StageFailed => "stage_failed",
        }
    }
}

/// What a run produced.
pub struct RunResult {
    /// Stats over recorded stages.
    pub total: StatsSet,
    /// Seconds spent in recorded stages.
    pub recorded_s: f64,
    /// Seconds of the whole run.
    pub wall_s: f64,
    /// Why it ended.
    pub ended: EndReason,
    /// Per stage.
    pub stages: Vec<StageSummary>,
    /// Retries per op id over recorded stages.
    pub retries: Vec<u64>,
    /// Worker tasks that panicked (a bug; reported, not hidden).
    pub worker_panics: usize,
}

struct Shared {
    slots: Vec<Mutex<StatsSet>>,
    abort: Arc<AtomicBool>,
}

struct StageRt {
    start: Instant,
    end: Option<Instant>,
    /// Set when the stage's throughput has converged: no new operations.
    stop: AtomicBool,
    ops: Option<u64>,
    ns_per_op: Option<f64>,
    next: AtomicU64,
    base: u64,
    client: ClientSlice,
    plan: StagePlan,
    ctx: OpCtx,
    seed: u64,
}

impl StageRt {
    /// Next (cycle, intended start), or `None` when the stage is over.
    #[inline]
    fn next_cycle(&self, now: Instant) -> Option<(u64, Instant)> {
        if self.stop.load(Ordering::Relaxed) {
            return None;
        }
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        if self.ops.is_some_and(|n| i >= n) {
            return None;
        }
        let intended = match self.ns_per_op {
            Some(ns) => self.start + Duration::from_nanos((i as f64 * ns) as u64),
            None => now,
        };
        if self.end.is_some_and(|end| intended >= end) {
            return None;
        }
        Some((self.client.cycle(self.base, i), intended))
    }

    fn used(&self) -> u64 {
        let n = self.next.load(Ordering::Relaxed);
        self.ops.map_or(n, |o| n.min(o))
    }
}

/// Longest sleep of a worker's scheduler, so an abort is noticed quickly
/// even at low rates.
const MAX_NAP: Duration = Duration::from_millis(100);

#[inline]
fn micros(d: Duration) -> u64 {
    d.as_micros() as u64
}

/// Nanoseconds since the stage start (saturating at 0 before it).
#[inline]
fn ns_since(start: Instant, t: Instant) -> u64 {
    t.saturating_duration_since(start).as_nanos() as u64
}

/// Per-worker release gate of a fixed-rate stage. A slot whose operation is
/// not yet due queues itself here instead of arming a timer of its own; the
/// worker's single timer fires at the grid tick at or before the earliest
/// queued operation (so at most once per tick) and releases every queued
/// operation intended before the following tick in one burst, which the
/// driver then writes to the socket together.
///
/// Slots of one worker take cycles from the stage counter in increasing
/// order and queue right away, so the queue is sorted by due time.
struct Gate {
    /// Operations intended to start before this many ns after the stage
    /// start may be sent: the end of the current tick (set at each tick).
    horizon_ns: AtomicU64,
    /// Queued slots: (intended start in ns since the stage start, waker).
    /// Only this worker's task touches it, so the lock is uncontended.
    queue: Mutex<VecDeque<(u64, Waker)>>,
}

impl Gate {
    fn new(slots: usize, tick_ns: u64) -> Self {
        Gate {
            horizon_ns: AtomicU64::new(tick_ns),
            queue: Mutex::new(VecDeque::with_capacity(slots)),
        }
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, VecDeque<(u64, Waker)>> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Intended start of the earliest queued operation.
    fn earliest(&self) -> Option<u64> {
        self.queue().front().map(|(due, _)| *due)
    }

    /// Releases every queued operation intended before `horizon_ns` (all of
    /// them when `all`), waking their slots.
    fn release(&self, horizon_ns: u64, all: bool) {
        self.horizon_ns.fetch_max(horizon_ns, Ordering::Relaxed);
        let mut q = self.queue();
        while let Some((due, _)) = q.front() {
            if !all && *due >= horizon_ns {
                break;
            }
            if let Some((_, waker)) = q.pop_front() {
                waker.wake();
            }
        }
    }
}

/// Waits until the gate releases the operation intended at `due_ns` (or the
/// run is aborted).
struct GateWait<'a> {
    gate: &'a Gate,
    abort: &'a AtomicBool,
    due_ns: u64,
    queued: bool,
}

impl Future for GateWait<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.due_ns < self.gate.horizon_ns.load(Ordering::Relaxed)
            || self.abort.load(Ordering::Relaxed)
        {
            return Poll::Ready(());
        }
        if !self.queued {
            // A slot's waker (from `FuturesUnordered`) is the same on every
            // poll, so queuing once is enough; the release pops and wakes it.
            self.gate
                .queue()
                .push_back((self.due_ns, cx.waker().clone()));
            self.queued = true;
        }
        Poll::Pending
    }
}

/// Runs `op` with a client-side timeout without arming a timer per
/// operation: each slot owns one `Sleep`, armed for some earlier operation's
/// deadline. Deadlines only grow, so when it fires before the current
/// operation's deadline it is simply re-armed; it fires at most once per
/// timeout period per slot.
struct WithTimeout<'a, F> {
    op: Pin<&'a mut F>,
    timer: Pin<&'a mut Sleep>,
    deadline: Instant,
}

impl<F: Future<Output = Outcome>> Future for WithTimeout<'_, F> {
    type Output = Option<Outcome>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Outcome>> {
        if let Poll::Ready(o) = self.op.as_mut().poll(cx) {
            return Poll::Ready(Some(o));
        }
        let deadline = self.deadline;
        if self.timer.deadline() > deadline {
            self.timer.as_mut().reset(deadline);
        }
        while self.timer.as_mut().poll(cx).is_ready() {
            if Instant::now() >= deadline {
                return Poll::Ready(None);
            }
            self.timer.as_mut().reset(deadline);
        }
        Poll::Pending
    }
}

/// Outcome of an operation that did not finish within `timeout`, worded
/// like the driver's own client timeout error.
fn timed_out(timeout: Duration) -> Outcome {
    Outcome::Error(
        ErrorKind::ClientTimeout,
        format!(
            "Request execution exceeded a client timeout of {}ms",
            timeout.as_millis()
        ),
    )
}

/// One in-flight slot: takes the next cycle, waits for its intended start,
/// runs it, records it into the worker's stats and, with a think time,
/// pauses before the next. The slot future lives for
/// the whole stage, so an operation's future is built inside it instead of
/// being allocated and moved per op.
async fn slot<W: Workload>(
    w: &W,
    stats: &Mutex<StatsSet>,
    st: &StageRt,
    abort: &AtomicBool,
    gate: &Gate,
    timeout: Option<Duration>,
    think: Option<Duration>,
) {
    // Armed lazily (first poll) for a deadline no later than any operation's.
    let timer = tokio::time::sleep_until(st.start + timeout.unwrap_or(MAX_NAP));
    tokio::pin!(timer);
    let mut parts: Vec<Part> = Vec::with_capacity(2);
    let mut now = Instant::now();
    loop {
        if abort.load(Ordering::Relaxed) {
            return;
        }
        let Some((cycle, intended)) = st.next_cycle(now) else {
            return;
        };
        let due_ns = ns_since(st.start, intended);
        if intended > now && due_ns >= gate.horizon_ns.load(Ordering::Relaxed) {
            GateWait {
                gate,
                abort,
                due_ns,
                queued: false,
            }
            .await;
            if abort.load(Ordering::Relaxed) {
                return;
            }
        }
        let op = st.plan.mix.pick(unit(hash3(st.seed, cycle, MIX_STREAM)));
        let start = Instant::now();
        parts.clear();
        let outcome = {
            let fut = w.run_op_parts(op, cycle, &st.ctx, &mut parts);
            tokio::pin!(fut);
            match timeout {
                None => fut.await,
                Some(t) => WithTimeout {
                    op: fut,
                    timer: timer.as_mut(),
                    deadline: start + t,
                }
                .await
                .unwrap_or_else(|| timed_out(t)),
            }
        };
        let end = Instant::now();
        let latency_us = micros(end - intended.min(start));
        let service_us = micros(end - start);
        {
            // Uncontended: only this worker's slots and, once per interval, the reporter.
            let mut s = stats.lock().unwrap_or_else(|p| p.into_inner());
            s.ops[op].record(latency_us, service_us, outcome);
            // As YCSB: a part's latency runs from the whole operation's intended start.
            for p in parts.drain(..) {
                let lat = micros(p.end - intended.min(p.start));
                s.parts[p.op].record(lat, micros(p.end - p.start), p.outcome);
            }
        }
        now = end;
        if let Some(t) = think {
            // A client that thinks is idle, as a YCSB thread between operations.
            tokio::time::sleep(t).await;
            now = Instant::now();
        }
    }
}

async fn worker<W: Workload>(
    w: Arc<W>,
    sh: Arc<Shared>,
    st: Arc<StageRt>,
    id: usize,
    plan: (usize, Duration, Option<Duration>, Option<Duration>),
) {
    let (in_flight, tick, timeout, think) = plan;
    let tick_ns = (tick.as_nanos() as u64).max(1);
    let stats = &sh.slots[id];
    let gate = Gate::new(in_flight, tick_ns);
    let mut slots: FuturesUnordered<_> = (0..in_flight)
        .map(|_| slot(&*w, stats, &st, &sh.abort, &gate, timeout, think))
        .collect();
    if st.ns_per_op.is_none() {
        // Unthrottled: no slot ever waits at the gate.
        while slots.next().await.is_some() {}
        return;
    }
    // Fixed rate: one timer for the whole worker, armed for the grid tick at
    // or before the earliest queued operation, or MAX_NAP after the last tick.
    let timer = tokio::time::sleep_until(st.start);
    tokio::pin!(timer);
    let mut armed: Option<Instant> = None;
    let mut last_tick = st.start;
    std::future::poll_fn(|cx| loop {
        match slots.poll_next_unpin(cx) {
            Poll::Ready(Some(())) => continue,
            Poll::Ready(None) => return Poll::Ready(()),
            Poll::Pending => {}
        }
        let Some(due_ns) = gate.earliest() else {
            // Every slot is running an operation; its completion wakes us.
            return Poll::Pending;
        };
        let release_at =
            (st.start + Duration::from_nanos(due_ns / tick_ns * tick_ns)).min(last_tick + MAX_NAP);
        if armed != Some(release_at) {
            timer.as_mut().reset(release_at);
            armed = Some(release_at);
        }
        if timer.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        armed = None;
        let now = Instant::now();
        last_tick = now;
        let now_ns = ns_since(st.start, now);
        gate.release(
            (now_ns / tick_ns + 1) * tick_ns,
            sh.abort.load(Ordering::Relaxed),
        );
    })
    .await
}

fn collect(sh: &Shared, into: &mut StatsSet) {
    for slot in &sh.slots {
        let mut s = slot.lock().unwrap_or_else(|p| p.into_inner());
        into.merge(&s);
        s.reset();
    }
}

/// Runs all stages of `plan` against `w`, reporting each interval to `sink`.
/// Setting `abort` stops issuing new operations; in-flight ones finish.
pub async fn run<W: Workload>(
    w: Arc<W>,
    plan: &RunPlan,
    abort: Arc<AtomicBool>,
    sink: &mut dyn Sink,
) -> RunResult {
    let names: Vec<String> = w.op_names().to_vec();
    let n = names.len();
    let slots_per_worker = plan.concurrency.slots();
    let sh = Arc::new(Shared {
        slots: slots_per_worker
            .iter()
            .map(|_| Mutex::new(StatsSet::new(n)))
            .collect(),
        abort: abort.clone(),
    });
    let run_start = Instant::now();
    let mut total = StatsSet::new(n);
    let mut iv = StatsSet::new(n);
    let mut base = 0u64;
    let mut last_retries = w.retries();
    let mut total_retries = vec![0u64; n];
    let mut ended = EndReason::Completed;
    let mut recorded_s = 0.0;
    let mut stages = Vec::new();
    let mut last_ok = Instant::now();
    let mut errors_since_ok = 0u64;
    let mut worker_panics = 0;
    for plan_stage in &plan.stages {
        if abort.load(Ordering::Relaxed) {
            break;
        }
        // Before the stage's clock starts: its schema change is not its load.
        if let Err(e) = w.stage_begins(plan_stage).await {
            eprintln!("error: stage {:?}: {}", plan_stage.name, e);
            ended = EndReason::StageFailed;
            break;
        }
        let start = Instant::now();
        let st = Arc::new(StageRt {
            start,
            end: plan_stage.duration.map(|d| start + d),
            stop: AtomicBool::new(false),
            ops: plan_stage.ops,
            ns_per_op: plan_stage.rate_ops_s.map(|r| 1e9 / r),
            next: AtomicU64::new(0),
            base,
            client: plan.client,
            ctx: OpCtx {
                phase: plan_stage.phase,
                ttl_s: plan_stage.ttl_s,
            },
            plan: plan_stage.clone(),
            seed: plan.seed,
        });
        let handles: Vec<_> = slots_per_worker
            .iter()
            .enumerate()
            .map(|(id, &in_flight)| {
                tokio::spawn(worker(
                    w.clone(),
                    sh.clone(),
                    st.clone(),
                    id,
                    (in_flight, plan.tick, plan.op_timeout, plan.think_time),
                ))
            })
            .collect();
        let mut all = futures::future::join_all(handles);
        let mut tick = start + plan.interval;
        let mut iv_start = start;
        let (mut stage_ops, mut stage_errors) = (0u64, 0u64);
        let mut rates: Vec<f64> = Vec::new();
        loop {
            let finished = tokio::select! {
                res = &mut all => {
                    worker_panics += res.iter().filter(|r| r.is_err()).count();
                    true
                }
                _ = tokio::time::sleep_until(tick) => false,
            };
            let iv_end = if finished { Instant::now() } else { tick };
            collect(&sh, &mut iv);
            let now_retries = w.retries();
            let delta: Vec<u64> = now_retries
                .iter()
                .zip(last_retries.iter())
                .map(|(a, b)| a.saturating_sub(*b))
                .collect();
            last_retries = now_retries;
            let (ops, ok, nf, errs) = iv.totals();
            stage_ops += ops;
            stage_errors += errs;
            if plan_stage.record {
                total.merge(&iv);
                for (t, d) in total_retries.iter_mut().zip(delta.iter()) {
                    *t += d;
                }
            }
            let len = iv_end.saturating_duration_since(iv_start).as_secs_f64();
            if let (Some(c), true, false) = (&plan.converge, plan_stage.record, finished) {
                if len > 0.0 {
                    rates.push(ops as f64 / len);
                }
                if c.reached(&rates) {
                    st.stop.store(true, Ordering::Relaxed);
                }
            }
            if !finished || ops > 0 {
                let info = IntervalInfo {
                    stage: &plan_stage.name,
                    recorded: plan_stage.record,
                    t_s: (iv_end - run_start).as_secs_f64(),
                    interval_s: len,
                    retries: &delta,
                };
                sink.interval(&info, (iv_start - run_start).as_secs_f64(), &names, &iv);
            }
            if ok + nf > 0 {
                last_ok = iv_end;
                errors_since_ok = 0;
            } else {
                errors_since_ok += errs;
            }
            if errors_since_ok > 0
                && iv_end.saturating_duration_since(last_ok) >= plan.unreachable_after
                && !abort.load(Ordering::Relaxed)
            {
                ended = EndReason::ClusterLost;
                abort.store(true, Ordering::Relaxed);
            }
            iv.reset();
            if finished {
                break;
            }
            tick += plan.interval;
            iv_start = iv_end;
        }
        let elapsed = start.elapsed().as_secs_f64();
        if plan_stage.record {
            recorded_s += elapsed;
        }
        stages.push(StageSummary {
            name: plan_stage.name.clone(),
            recorded: plan_stage.record,
            elapsed_s: elapsed,
            ops: stage_ops,
            errors: stage_errors,
        });
        // A multiple of the client count, so every client's next stage starts on
        // its own residue and the slices stay disjoint.
        base += st.used() * plan.client.count;
    }
    if ended == EndReason::Completed && abort.load(Ordering::Relaxed) {
        ended = EndReason::Interrupted;
    }
    RunResult {
        total,
        recorded_s,
        wall_s: run_start.elapsed().as_secs_f64(),
        ended,
        stages,
        retries: total_retries,
        worker_panics,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::{Concurrency, Converge, OpMix, Phase};
    use crate::stats::{ErrorKind, Outcome};

    /// A fake "session": every request takes 1 ms, except cycle `stall_at`,
    /// which hangs for `stall`.
    struct FakeServer {
        names: Vec<String>,
        stall_at: u64,
        stall: Duration,
        fail_all: bool,
    }

    impl FakeServer {
        fn new(stall_at: u64, stall: Duration) -> Self {
            FakeServer {
                names: vec!["read".into(), "write".into()],
                stall_at,
                stall,
                fail_all: false,
            }
        }
    }

    impl Workload for FakeServer {
        fn op_names(&self) -> &[String] {
            &self.names
        }
        async fn run_op(&self, _op: usize, cycle: u64, _ctx: &OpCtx) -> Outcome {
            let d = if cycle == self.stall_at {
                self.stall
            } else {
                Duration::from_millis(1)
            };
            tokio::time::sleep(d).await;
            if self.fail_all {
                Outcome::Error(ErrorKind::Connection, "gone".into())
            } else {
                Outcome::Ok
            }
        }
    }

    /// Refuses the set-up of stages whose table TTL is set, as a failed ALTER would.
    struct RefusesTableTtl(FakeServer);

    impl Workload for RefusesTableTtl {
        fn op_names(&self) -> &[String] {
            self.0.op_names()
        }
        async fn run_op(&self, op: usize, cycle: u64, ctx: &OpCtx) -> Outcome {
            self.0.run_op(op, cycle, ctx).await
        }
        async fn stage_begins(&self, stage: &StagePlan) -> crate::error::Result<()> {
            match stage.table_ttl_s {
                Some(_) => Err(crate::error::LoadError::Schema {
                    cql: "ALTER TABLE".into(),
                    reason: "refused".into(),
                }),
                None => Ok(()),
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_stage_set_up_ends_the_run_before_that_stage_runs() {
        let w = Arc::new(RefusesTableTtl(FakeServer::new(u64::MAX, Duration::ZERO)));
        let mut second = stage("second", Some(10), None, None, true);
        second.table_ttl_s = Some(60);
        let p = plan(
            1,
            1,
            vec![stage("first", Some(10), None, None, true), second],
        );
        let r = run_to_end(w, &p).await;
        assert_eq!(r.ended, EndReason::StageFailed);
        assert_eq!(r.ended.name(), "stage_failed");
        let names: Vec<&str> = r.stages.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["first"]);
        assert_eq!(r.total.ops[0].count(), 10);
    }

    /// Runs `p` to its end without interruption, discarding the interval lines.
    async fn run_to_end<W: Workload>(w: Arc<W>, p: &RunPlan) -> RunResult {
        let abort = Arc::new(AtomicBool::new(false));
        run(w, p, abort, &mut Collect(Vec::new())).await
    }

    struct Collect(Vec<(String, bool, u64)>);
    impl Sink for Collect {
        fn interval(&mut self, info: &IntervalInfo, _s: f64, _n: &[String], stats: &StatsSet) {
            self.0
                .push((info.stage.to_string(), info.recorded, stats.totals().0));
        }
    }

    fn stage(
        name: &str,
        ops: Option<u64>,
        dur: Option<Duration>,
        rate: Option<f64>,
        record: bool,
    ) -> StagePlan {
        StagePlan {
            name: name.into(),
            phase: Phase::Run,
            ops,
            duration: dur,
            rate_ops_s: rate,
            mix: OpMix::from_weights(&[1.0, 0.0]).unwrap(),
            ttl_s: None,
            table_ttl_s: None,
            record,
        }
    }

    fn plan(workers: usize, in_flight: usize, stages: Vec<StagePlan>) -> RunPlan {
        RunPlan {
            concurrency: Concurrency::Workers { workers, in_flight },
            think_time: None,
            interval: Duration::from_secs(1),
            stages,
            seed: 1,
            client: ClientSlice::ALONE,
            unreachable_after: Duration::from_secs(3),
            op_timeout: None,
            tick: Duration::from_millis(1),
            converge: None,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn stall_shows_in_corrected_latency_not_service_time() {
        // 200 ops/s, one op in flight, each op 1 ms; op 50 stalls for 300 ms,
        // so the ~60 ops due during the stall queue behind it.
        let w = Arc::new(FakeServer::new(50, Duration::from_millis(300)));
        let p = plan(
            1,
            1,
            vec![stage("main", Some(1000), None, Some(200.0), true)],
        );
        let mut sink = Collect(Vec::new());
        let r = run(w, &p, Arc::new(AtomicBool::new(false)), &mut sink).await;
        let read = &r.total.ops[0];
        assert_eq!(read.ok, 1000);
        assert_eq!(r.ended, EndReason::Completed);
        // Service time: one slow op out of 1000 does not reach p99.
        assert!(
            read.service.value_at_quantile(0.99) <= 3_000,
            "svc p99 {}",
            read.service.value_at_quantile(0.99)
        );
        assert!(read.service.max() >= 300_000);
        // Corrected latency: the queued ops carry the stall.
        assert!(
            read.latency.value_at_quantile(0.99) >= 150_000,
            "lat p99 {}",
            read.latency.value_at_quantile(0.99)
        );
        assert!(read.latency.value_at_quantile(0.95) >= 10_000);
        assert!(read.latency.max() >= 300_000);
        // The schedule catches up: 1000 ops at 200/s take ~5 s.
        assert!((4.9..5.5).contains(&r.recorded_s), "{}", r.recorded_s);
    }

    #[tokio::test(start_paused = true)]
    async fn stall_is_corrected_with_a_coarse_tick_too() {
        // Same as above with 5 ms ticks (ops released up to one tick early):
        // the stall still shows in corrected latency, not in service time.
        let w = Arc::new(FakeServer::new(50, Duration::from_millis(300)));
        let mut p = plan(
            1,
            1,
            vec![stage("main", Some(1000), None, Some(200.0), true)],
        );
        p.tick = Duration::from_millis(5);
        let r = run_to_end(w, &p).await;
        let read = &r.total.ops[0];
        assert_eq!(read.ok, 1000);
        assert!(read.service.value_at_quantile(0.99) <= 3_000);
        assert!(read.latency.value_at_quantile(0.99) >= 150_000);
        assert!(read.latency.max() >= 300_000);
        assert!((4.9..5.5).contains(&r.recorded_s), "{}", r.recorded_s);
    }

    #[tokio::test(start_paused = true)]
    async fn rate_holds_with_many_slots_and_workers() {
        // 2 workers x 32 slots at 1000 ops/s for 2 s: the gate releases
        // exactly the scheduled ops, no more.
        let w = Arc::new(FakeServer::new(u64::MAX, Duration::ZERO));
        let p = plan(
            2,
            32,
            vec![stage(
                "main",
                None,
                Some(Duration::from_secs(2)),
                Some(1000.0),
                true,
            )],
        );
        let r = run_to_end(w, &p).await;
        let n = r.total.ops[0].count();
        assert!((1995..=2005).contains(&n), "{n}");
        // 1 ms per op, never queued behind another: latency ~ service time.
        assert!(r.total.ops[0].latency.value_at_quantile(0.99) <= 3_000);
    }

    #[tokio::test(start_paused = true)]
    async fn slow_ops_time_out_on_the_client() {
        // Cycle 5 hangs for 10 s; with a 500 ms timeout it fails as a client
        // timeout and the run goes on.
        let w = Arc::new(FakeServer::new(5, Duration::from_secs(10)));
        let mut p = plan(1, 2, vec![stage("main", Some(100), None, None, true)]);
        p.op_timeout = Some(Duration::from_millis(500));
        let r = run_to_end(w, &p).await;
        let read = &r.total.ops[0];
        assert_eq!(read.ok, 99);
        assert_eq!(read.errors, 1);
        assert_eq!(read.by_kind[ErrorKind::ClientTimeout as usize], 1);
        assert!(read.first_errors[0].contains("client timeout of 500ms"));
        assert!(r.recorded_s < 2.0, "{}", r.recorded_s);
        assert!(read.service.max() < 5_000);
    }

    #[tokio::test(start_paused = true)]
    async fn unthrottled_latency_equals_service_time() {
        let w = Arc::new(FakeServer::new(u64::MAX, Duration::ZERO));
        let p = plan(2, 4, vec![stage("main", Some(800), None, None, true)]);
        let r = run_to_end(w, &p).await;
        let read = &r.total.ops[0];
        assert_eq!(read.count(), 800);
        assert_eq!(read.latency.max(), read.service.max());
        // 8 in flight, 1 ms each: ~100 ms
        assert!(r.recorded_s < 0.2, "{}", r.recorded_s);
    }

    #[tokio::test(start_paused = true)]
    async fn a_steady_stage_ends_on_convergence_after_its_minimum() {
        // 100 ops/s, steady: every interval the same, so the standard error is 0 and
        // the stage ends right after its 5th interval, not at its 60 s duration.
        let w = Arc::new(FakeServer::new(u64::MAX, Duration::ZERO));
        let mut p = plan(
            1,
            1,
            vec![stage(
                "main",
                None,
                Some(Duration::from_secs(60)),
                Some(100.0),
                true,
            )],
        );
        p.converge = Some(Converge {
            max_rel_se: 0.02,
            min_intervals: 5,
            max_intervals: 50,
        });
        let mut sink = Collect(Vec::new());
        let r = run(w, &p, Arc::new(AtomicBool::new(false)), &mut sink).await;
        assert!((4.9..6.1).contains(&r.recorded_s), "{}", r.recorded_s);
        let n = r.total.ops[0].count();
        assert!((495..=605).contains(&n), "{n}");
    }

    #[tokio::test(start_paused = true)]
    async fn warmup_and_duration_stages() {
        let w = Arc::new(FakeServer::new(u64::MAX, Duration::ZERO));
        let p = plan(
            2,
            1,
            vec![
                stage(
                    "warmup",
                    None,
                    Some(Duration::from_secs(2)),
                    Some(100.0),
                    false,
                ),
                stage(
                    "main",
                    None,
                    Some(Duration::from_secs(3)),
                    Some(100.0),
                    true,
                ),
            ],
        );
        let mut sink = Collect(Vec::new());
        let r = run(w, &p, Arc::new(AtomicBool::new(false)), &mut sink).await;
        let n = r.total.ops[0].count();
        assert!((295..=305).contains(&n), "{n}");
        assert!(sink.0.iter().any(|(s, rec, _)| s == "warmup" && !rec));
        let warm: u64 = sink.0.iter().filter(|x| x.0 == "warmup").map(|x| x.2).sum();
        assert!((195..=205).contains(&warm), "{warm}");
        assert_eq!(r.stages.len(), 2);
        assert!((r.recorded_s - 3.0).abs() < 0.1);
    }

    #[tokio::test(start_paused = true)]
    async fn mix_is_followed_and_load_cycles_are_exact() {
        let w = Arc::new(FakeServer::new(u64::MAX, Duration::ZERO));
        let mut s = stage("main", Some(10_000), None, None, true);
        s.mix = OpMix::from_weights(&[0.25, 0.75]).unwrap();
        let p = plan(3, 8, vec![s]);
        let r = run_to_end(w, &p).await;
        let reads = r.total.ops[0].count();
        assert_eq!(reads + r.total.ops[1].count(), 10_000);
        assert!((2300..2700).contains(&reads), "{reads}");
    }

    #[tokio::test(start_paused = true)]
    async fn lost_cluster_ends_the_run() {
        let mut f = FakeServer::new(u64::MAX, Duration::ZERO);
        f.fail_all = true;
        let p = plan(
            1,
            1,
            vec![stage(
                "main",
                None,
                Some(Duration::from_secs(60)),
                Some(100.0),
                true,
            )],
        );
        let r = run_to_end(Arc::new(f), &p).await;
        assert_eq!(r.ended, EndReason::ClusterLost);
        assert!(r.recorded_s < 6.0);
        assert!(r.total.ops[0].errors > 0);
        assert_eq!(r.total.ops[0].first_errors[0], "gone");
    }

    /// A server that counts the requests it holds at once, each for 10 ms.
    struct Counting {
        names: Vec<String>,
        now: AtomicU64,
        most: AtomicU64,
    }

    impl Workload for Counting {
        fn op_names(&self) -> &[String] {
            &self.names
        }
        async fn run_op(&self, _op: usize, _cycle: u64, _ctx: &OpCtx) -> Outcome {
            let held = self.now.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(held, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(10)).await;
            self.now.fetch_sub(1, Ordering::SeqCst);
            Outcome::Ok
        }
    }

    fn counting() -> Arc<Counting> {
        Arc::new(Counting {
            names: vec!["read".into(), "write".into()],
            now: AtomicU64::new(0),
            most: AtomicU64::new(0),
        })
    }

    #[tokio::test(start_paused = true)]
    async fn threads_are_closed_loops_of_one_request_each() {
        // 450 clients over 2 tasks, 10 ms per request: never more than 450
        // outstanding, all of them busy, so 4,500 ops take ~100 ms.
        let w = counting();
        let mut p = plan(1, 1, vec![stage("main", Some(4_500), None, None, true)]);
        p.concurrency = Concurrency::Threads {
            threads: 450,
            tasks: 2,
        };
        let r = run_to_end(w.clone(), &p).await;
        assert_eq!(r.total.ops[0].count(), 4_500);
        assert_eq!(w.most.load(Ordering::SeqCst), 450);
        assert!((0.09..0.13).contains(&r.recorded_s), "{}", r.recorded_s);
    }

    #[tokio::test(start_paused = true)]
    async fn think_time_pauses_each_client_between_requests() {
        // 10 clients, 10 ms per request and 40 ms thinking: 20 ops/s per client,
        // so 1 s gives ~200 ops (without thinking it would be ~1,000).
        let w = counting();
        let mut p = plan(
            1,
            1,
            vec![stage(
                "main",
                None,
                Some(Duration::from_secs(1)),
                None,
                true,
            )],
        );
        p.concurrency = Concurrency::Threads {
            threads: 10,
            tasks: 1,
        };
        p.think_time = Some(Duration::from_millis(40));
        let r = run_to_end(w, &p).await;
        let n = r.total.ops[0].count();
        assert!((190..=210).contains(&n), "{n}");
        // Thinking is not latency.
        assert!(r.total.ops[0].latency.max() < 12_000);
    }
}
