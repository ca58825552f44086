//! Wiring one command: plan the stages, connect, create the schema, build the
//! workload, run it, and write interval lines, the HdrHistogram log and the
//! summary. Returns why the run ended; never exits the process.

use crate::config::{BatchKind, Cli, Command, Format, PhaseArg, RunArgs, Warmup};
use crate::db;
use crate::error::{LoadError, Result};
use crate::exec::runner::{self, EndReason, Sink};
use crate::exec::stages::{parse_stages, StageDefaults};
use crate::exec::{ClientSlice, Concurrency, Converge, OpMix, Phase, RunPlan, StagePlan, Workload};
use crate::generator::Dist;
use crate::stats::hdrlog::HdrLog;
use crate::stats::prometheus::{self, Live};
use crate::stats::report::{
    interval_json, summary_json, ycsb_status, ycsb_text, IntervalInfo, SummaryInfo, YcsbBlocks,
    YcsbStatus,
};
use crate::stats::StatsSet;
use crate::workload::{iot, profile, stress, user, ycsb};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

/// Static facts of a workload needed before connecting.
struct Shape {
    names: Vec<String>,
    default_mix: Vec<f64>,
    load_op: usize,
    load_count: u64,
    default_ops: u64,
    /// The workload has one table of its own whose TTL a stage may set (iot).
    table_ttl: bool,
}

/// The run's concurrency: `--threads` clients spread over one task per
/// `--io-threads` runtime thread, or `--workers` x `--in-flight`.
fn concurrency(run: &RunArgs, io_threads: usize) -> Concurrency {
    match run.threads {
        Some(threads) => Concurrency::Threads {
            threads,
            tasks: io_threads.max(1),
        },
        None => Concurrency::Workers {
            workers: run.workers,
            in_flight: run.in_flight,
        },
    }
}

/// Builds the stages of a run from the command line; `io_threads` is the
/// runtime's thread count.
fn plan(run: &RunArgs, shape: &Shape, io_threads: usize) -> Result<RunPlan> {
    let names = &shape.names;
    let mix = match &run.mix {
        Some(t) => OpMix::parse(t, names)?,
        None => OpMix::from_weights(&shape.default_mix)?,
    };
    let mut stages = Vec::new();
    if matches!(run.phase, PhaseArg::Load | PhaseArg::Both) {
        stages.push(StagePlan {
            name: "load".into(),
            phase: Phase::Load,
            ops: Some(shape.load_count),
            duration: if run.phase == PhaseArg::Load {
                run.duration.as_ref().map(|d| d.0)
            } else {
                None
            },
            rate_ops_s: run.rate,
            mix: OpMix::only(shape.load_op, names.len()),
            ttl_s: run.ttl_s,
            table_ttl_s: None,
            record: true,
        });
    }
    if matches!(run.phase, PhaseArg::Run | PhaseArg::Both) {
        if let Some(w) = &run.warmup {
            let (ops, duration) = match w {
                Warmup::Ops(n) => (Some(*n), None),
                Warmup::Time(d) => (None, Some(d.0)),
            };
            stages.push(StagePlan {
                name: "warmup".into(),
                phase: Phase::Run,
                ops,
                duration,
                rate_ops_s: run.rate,
                mix: mix.clone(),
                ttl_s: run.ttl_s,
                table_ttl_s: None,
                record: false,
            });
        }
        match &run.stages {
            // clap refuses --ops/--duration with --stages (conflicts_with_all).
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| LoadError::ReadFile {
                    path: path.clone(),
                    source,
                })?;
                let defaults = StageDefaults {
                    rate_ops_s: run.rate,
                    mix: &mix,
                    ttl_s: run.ttl_s,
                    table_ttl: shape.table_ttl,
                };
                stages.extend(parse_stages(&text, path, names, &defaults)?);
            }
            None => stages.push(StagePlan {
                name: "run".into(),
                phase: Phase::Run,
                ops: run
                    .ops
                    .or(if run.duration.is_none() && run.converge.is_none() {
                        Some(shape.default_ops)
                    } else {
                        None
                    }),
                duration: run.duration.as_ref().map(|d| d.0),
                rate_ops_s: run.rate,
                mix,
                ttl_s: run.ttl_s,
                table_ttl_s: None,
                record: true,
            }),
        }
    }
    // With --client I/K the counts and rates above are the K clients' totals.
    let client = run.client.unwrap_or(ClientSlice::ALONE);
    for s in &mut stages {
        s.ops = s.ops.map(|n| client.share(n));
        s.rate_ops_s = s.rate_ops_s.map(|r| r / client.count as f64);
    }
    let p = RunPlan {
        concurrency: concurrency(run, io_threads),
        think_time: run.think_time.as_ref().map(|d| d.0),
        interval: run.interval.0,
        stages,
        seed: run.seed,
        client,
        unreachable_after: run.unreachable_after.0,
        op_timeout: None,
        tick: run.tick.0,
        converge: run.converge.map(|max_rel_se| Converge {
            max_rel_se,
            min_intervals: run.converge_min,
            max_intervals: run.converge_max,
        }),
    };
    p.validate()?;
    Ok(p)
}

fn ttls(p: &RunPlan) -> Vec<Option<i32>> {
    p.stages.iter().map(|s| s.ttl_s).collect()
}

struct Output {
    format: Format,
    hdr: Option<HdrLog>,
    hdr_error: Option<LoadError>,
    /// Operations finished so far (YCSB's status lines count from the start).
    total_ops: u64,
    live: Option<Live>,
    /// `--format ycsb`: the load stage's stats apart from the run's, so that
    /// `--phase both` prints two YCSB outputs, as YCSB's `load` and `run` do.
    ycsb_load: Option<StatsSet>,
    ycsb_run: Option<StatsSet>,
}

fn print_line(to_stderr: bool, line: &str) {
    // A closed stdout (e.g. `| head`) must not crash the run: ignore write errors.
    if to_stderr {
        let mut e = std::io::stderr().lock();
        let _ = writeln!(e, "{line}");
    } else {
        let mut o = std::io::stdout().lock();
        let _ = writeln!(o, "{line}");
        let _ = o.flush();
    }
}

impl Sink for Output {
    fn interval(&mut self, info: &IntervalInfo, start_s: f64, names: &[String], stats: &StatsSet) {
        let v = interval_json(info, names, stats);
        print_line(self.format == Format::Ycsb, &v.to_string());
        self.total_ops += stats.totals().0;
        if self.format == Format::Ycsb && info.recorded {
            let part = if info.stage == "load" {
                &mut self.ycsb_load
            } else {
                &mut self.ycsb_run
            };
            part.get_or_insert_with(|| StatsSet::new(names.len()))
                .merge(stats);
        }
        if self.format == Format::Ycsb {
            // YCSB's status thread: one line per interval on stderr (YCSB's status
            // thread writes there), the final report alone on stdout.
            let now_ms = SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0);
            let st = YcsbStatus {
                now_ms,
                elapsed_s: info.t_s,
                total_ops: self.total_ops,
                interval_s: info.interval_s,
            };
            print_line(true, &ycsb_status(&st, names, stats));
        }
        if let (Some(live), true) = (self.live.as_ref(), info.recorded) {
            live.add(info.stage, stats);
        }
        if let (Some(log), true) = (self.hdr.as_mut(), info.recorded) {
            if let Err(e) = log.interval(start_s, info.interval_s, names, stats) {
                self.hdr_error.get_or_insert(e);
                self.hdr = None;
            }
        }
    }
}

/// How far in the past `--start-at` may be (clients started a little late still
/// start at once; a stale time is a mistake).
const START_AT_SLACK_S: f64 = 5.0;

fn now_unix_s() -> f64 {
    SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Refuses a `--start-at` more than [`START_AT_SLACK_S`] in the past.
fn check_start_at(run: &RunArgs, now_s: f64) -> Result<()> {
    match run.start_at {
        Some(t) if !t.is_finite() || t < now_s - START_AT_SLACK_S => Err(LoadError::option(
            "--start-at",
            format!(
                "{t} is {:.1} s in the past: give a time (seconds since the epoch) at most \
                 {START_AT_SLACK_S} s ago, e.g. now + 10",
                now_s - t
            ),
        )),
        _ => Ok(()),
    }
}

/// Several clients share one data set: only a drop before they start is safe.
fn check_client_drop(run: &RunArgs, drop: bool) -> Result<()> {
    match run.client {
        Some(c) if drop && c.count > 1 => Err(LoadError::option(
            "--drop",
            "cannot be used with --client I/K, K > 1 (each client would drop the others' \
             data): drop once before the clients start",
        )),
        _ => Ok(()),
    }
}

async fn drive<W: Workload>(
    w: W,
    plan: RunPlan,
    run: &RunArgs,
    label: &str,
    config: serde_json::Value,
    abort: Arc<AtomicBool>,
    listener: Option<std::net::TcpListener>,
) -> Result<EndReason> {
    if let Some(t) = run.start_at {
        let wait_s = t - now_unix_s();
        if wait_s > 0.0 {
            tokio::time::sleep(std::time::Duration::from_secs_f64(wait_s)).await;
        }
    }
    // Created after the wait: the log's StartTime is the run's start, which is
    // what `merge` places the clients' intervals by.
    let hdr = match &run.hdr_log {
        Some(p) => Some(HdrLog::create(p, SystemTime::now())?),
        None => None,
    };
    let w = Arc::new(w);
    let names = w.op_names().to_vec();
    let live = match listener {
        Some(l) => {
            let client = run.client.map_or(0, |c| c.index);
            let live = Live::new(label, &names, &run.prometheus_label, client);
            prometheus::serve(l, live.clone())?;
            Some(live)
        }
        None => None,
    };
    let mut out = Output {
        format: run.format,
        hdr,
        hdr_error: None,
        total_ops: 0,
        live,
        ycsb_load: None,
        ycsb_run: None,
    };
    let r = runner::run(w, &plan, abort, &mut out).await;
    let info = SummaryInfo {
        workload: label,
        ended_by: r.ended.name(),
        recorded_s: r.recorded_s,
        wall_s: r.wall_s,
        retries: &r.retries,
        seed: run.seed,
        stages: &r.stages,
        concurrency: plan.concurrency.summary(),
        config,
    };
    let summary = summary_json(&info, &names, &r.total).to_string();
    if run.format == Format::Ycsb {
        let rated = plan.stages.iter().any(|s| s.rate_ops_s.is_some());
        let blocks = YcsbBlocks::new(run.measurement_interval, rated, &run.percentiles);
        let load_s: f64 = r
            .stages
            .iter()
            .filter(|s| s.recorded && s.name == "load")
            .map(|s| s.elapsed_s)
            .sum();
        match (&out.ycsb_load, &out.ycsb_run) {
            // --phase both: YCSB's load output, then its run output.
            (Some(load), Some(run_stats)) => {
                print!("{}", ycsb_text(&names, load, load_s, &blocks));
                print!(
                    "{}",
                    ycsb_text(&names, run_stats, r.recorded_s - load_s, &blocks)
                );
            }
            _ => print!("{}", ycsb_text(&names, &r.total, r.recorded_s, &blocks)),
        }
        print_line(true, &summary);
    } else {
        print_line(false, &summary);
    }
    if r.worker_panics > 0 {
        eprintln!(
            "casslab-load: {} worker task(s) panicked; results are incomplete",
            r.worker_panics
        );
    }
    if out.live.is_some() && !run.prometheus_linger.0.is_zero() {
        tokio::time::sleep(run.prometheus_linger.0).await;
    }
    if let Some(e) = out.hdr_error {
        return Err(e);
    }
    Ok(r.ended)
}

/// Runs the command `cli`. `abort` stops the run early (set on Ctrl-C).
pub async fn run(cli: Cli, abort: Arc<AtomicBool>) -> Result<EndReason> {
    let config = serde_json::to_value(&cli).unwrap_or(serde_json::Value::Null);
    if let Some(r) = run_args(&cli.command) {
        check_start_at(r, now_unix_s())?;
    }
    // Bound before connecting, so a busy port fails at once.
    let listener = match run_args(&cli.command) {
        Some(RunArgs {
            prometheus: Some(addr),
            prometheus_label,
            ..
        }) => Some(prometheus::bind(addr, prometheus_label)?),
        _ => None,
    };
    match &cli.command {
        Command::Ycsb(c) => {
            // Checked before connecting: a range outside --records is the user's mistake.
            let load_keys = ycsb::InsertRange::of(c)?;
            let shape = Shape {
                names: ycsb::names(),
                default_mix: ycsb::mix_for(c.workload),
                load_op: ycsb::INSERT,
                load_count: load_keys.count,
                default_ops: 1000,
                table_ttl: false,
            };
            check_client_drop(&c.run, c.schema.drop)?;
            let mut p = plan(&c.run, &shape, c.conn.io_threads)?;
            // The runner enforces --timeout per operation (cheaper than the
            // driver's timer per request, see db::connect).
            p.op_timeout = Some(c.conn.timeout.0);
            let session = db::connect(&c.conn).await?;
            ycsb::Ycsb::create_schema(&session, c).await?;
            // All clients' run-phase operations: the keys they may insert.
            let expected: u64 = p
                .stages
                .iter()
                .filter(|s| s.phase == Phase::Run)
                .filter_map(|s| s.ops)
                .sum::<u64>()
                * p.client.count;
            let w = ycsb::Ycsb::new(session, c, &ttls(&p), expected).await?;
            let label = format!("ycsb-{}", format!("{:?}", c.workload).to_lowercase());
            drive(w, p, &c.run, &label, config, abort, listener).await
        }
        Command::Stress(c) => {
            let shape = Shape {
                names: stress::names(),
                default_mix: stress::mix_for(c.mode),
                load_op: 0,
                load_count: stress::population_size(c),
                default_ops: stress::population_size(c),
                table_ttl: false,
            };
            check_client_drop(&c.run, c.schema.drop)?;
            let mut p = plan(&c.run, &shape, c.conn.io_threads)?;
            // The runner enforces --timeout per operation (cheaper than the
            // driver's timer per request, see db::connect).
            p.op_timeout = Some(c.conn.timeout.0);
            stress::population(c)?;
            let session = db::connect(&c.conn).await?;
            stress::Stress::create_schema(&session, c).await?;
            let w = stress::Stress::new(session, c, &ttls(&p)).await?;
            let label = format!("stress-{}", format!("{:?}", c.mode).to_lowercase());
            drive(w, p, &c.run, &label, config, abort, listener).await
        }
        Command::Iot(c) => {
            let shape = Shape {
                names: iot::names(),
                default_mix: iot::default_mix(),
                load_op: 0,
                load_count: c.devices * c.series,
                default_ops: 10_000,
                table_ttl: true,
            };
            check_client_drop(&c.run, c.schema.drop)?;
            let mut p = plan(&c.run, &shape, c.conn.io_threads)?;
            // The runner enforces --timeout per operation (cheaper than the
            // driver's timer per request, see db::connect).
            p.op_timeout = Some(c.conn.timeout.0);
            // Checked before connecting: a bad value is the user's, not the cluster's.
            if let Some(text) = &c.compaction {
                iot::compaction_map(text)?;
            }
            let session = db::connect(&c.conn).await?;
            iot::Iot::create_schema(&session, c).await?;
            let w = iot::Iot::new(session, c, &ttls(&p)).await?;
            drive(w, p, &c.run, "iot", config, abort, listener).await
        }
        Command::User(c) => {
            let mut prof = profile::load(&c.profile)?;
            if let Some(b) = c.batchtype {
                prof.insert.logged = b == BatchKind::Logged;
            }
            let names = user::names(&prof);
            let mut default_mix = vec![0.0; names.len()];
            default_mix[0] = 1.0;
            let shape = Shape {
                names,
                default_mix,
                load_op: 0,
                load_count: c.records.unwrap_or(1_000_000),
                default_ops: 10_000,
                table_ttl: false,
            };
            let mut p = plan(&c.run, &shape, c.conn.io_threads)?;
            // The runner enforces --timeout per operation (cheaper than the
            // driver's timer per request, see db::connect).
            p.op_timeout = Some(c.conn.timeout.0);
            // Checked before connecting: a bad value is the user's, not the cluster's.
            if let Some(text) = &c.pop {
                Dist::parse(text)?;
            }
            let session = db::connect(&c.conn).await?;
            user::create_schema(&session, &prof, c.rf).await?;
            let label = format!("user:{}.{}", prof.keyspace, prof.table);
            let w = user::User::new(session, prof, c, &ttls(&p)).await?;
            drive(w, p, &c.run, &label, config, abort, listener).await
        }
        Command::Merge(_) | Command::Options(_) => Err(LoadError::option(
            "merge",
            "merge and options run no workload (main handles them before the runtime)",
        )),
    }
}

fn run_args(c: &Command) -> Option<&RunArgs> {
    match c {
        Command::Ycsb(c) => Some(&c.run),
        Command::Stress(c) => Some(&c.run),
        Command::Iot(c) => Some(&c.run),
        Command::User(c) => Some(&c.run),
        Command::Merge(_) | Command::Options(_) => None,
    }
}

/// Installs a Ctrl-C handler that sets `abort` (the run then ends with a summary).
pub fn on_interrupt(abort: Arc<AtomicBool>) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            abort.store(true, Ordering::Relaxed);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn shape() -> Shape {
        Shape {
            names: ycsb::names(),
            default_mix: ycsb::mix_for(crate::config::YcsbWorkload::A),
            load_op: 2,
            load_count: 500,
            default_ops: 1000,
            table_ttl: false,
        }
    }

    fn run_args(args: &[&str]) -> RunArgs {
        let mut v = vec!["casslab-load", "ycsb", "-w", "a"];
        v.extend_from_slice(args);
        match Cli::try_parse_from(v).unwrap().command {
            Command::Ycsb(c) => c.run,
            _ => unreachable!(),
        }
    }

    #[test]
    fn plans_phases_and_warmup() {
        let p = plan(
            &run_args(&[
                "--phase",
                "both",
                "--warmup",
                "5s",
                "--duration",
                "30s",
                "--rate",
                "100",
            ]),
            &shape(),
            1,
        )
        .unwrap();
        let names: Vec<&str> = p.stages.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["load", "warmup", "run"]);
        assert_eq!(p.stages[0].ops, Some(500));
        assert_eq!(p.stages[0].duration, None);
        assert!(!p.stages[1].record);
        assert_eq!(p.stages[2].ops, None);
        let p = plan(&run_args(&[]), &shape(), 1).unwrap();
        assert_eq!(p.stages.len(), 1);
        assert_eq!(p.stages[0].ops, Some(1000));
        assert_eq!(p.stages[0].mix.weights(), &[0.5, 0.5, 0.0, 0.0, 0.0]);
        assert!(plan(&run_args(&["--mix", "read=1,nope=2"]), &shape(), 1).is_err());
        // Zero workers never gets this far: the command line refuses it.
        assert!(
            Cli::try_parse_from(["casslab-load", "ycsb", "-w", "a", "--workers", "0"]).is_err()
        );
    }

    #[test]
    fn a_client_of_k_runs_its_share_of_the_counts_and_rate() {
        let args = [
            "--phase", "both", "--ops", "1001", "--rate", "300", "--client",
        ];
        let shares: Vec<(u64, u64, f64)> = (0..3)
            .map(|i| {
                let slice = format!("{i}/3");
                let mut a = args.to_vec();
                a.push(&slice);
                let p = plan(&run_args(&a), &shape(), 1).unwrap();
                assert_eq!(p.client.index, i);
                (
                    p.stages[0].ops.unwrap(),
                    p.stages[1].ops.unwrap(),
                    p.stages[1].rate_ops_s.unwrap(),
                )
            })
            .collect();
        // 500 records and 1001 operations in all, at 100 ops/s each.
        assert_eq!(shares.iter().map(|s| s.0).sum::<u64>(), 500);
        assert_eq!(shares.iter().map(|s| s.1).sum::<u64>(), 1001);
        assert!(shares.iter().all(|s| (s.2 - 100.0).abs() < 1e-9));
        let drop = check_client_drop(&run_args(&["--client", "1/2"]), true).unwrap_err();
        assert!(drop.to_string().contains("--drop"), "{drop}");
        assert!(check_client_drop(&run_args(&["--client", "0/1"]), true).is_ok());
    }

    #[test]
    fn a_start_time_long_past_is_refused_in_one_line() {
        let run = run_args(&["--start-at", "1000.5"]);
        let e = check_start_at(&run, 1010.0).unwrap_err().to_string();
        assert!(
            e.contains("--start-at") && e.contains("9.5 s in the past"),
            "{e}"
        );
        assert!(!e.contains('\n'));
        assert!(check_start_at(&run, 1003.0).is_ok());
        assert!(check_start_at(&run_args(&[]), 1e9).is_ok());
    }

    #[test]
    fn threads_plan_one_task_per_io_thread() {
        let p = plan(&run_args(&["--threads", "450"]), &shape(), 1).unwrap();
        assert_eq!(p.concurrency.slots(), vec![450]);
        let p = plan(&run_args(&["--threads", "150"]), &shape(), 4).unwrap();
        assert_eq!(p.concurrency.slots(), vec![38, 38, 37, 37]);
        // Without --threads: the defaults, 1 worker x 16 in flight.
        let p = plan(&run_args(&[]), &shape(), 4).unwrap();
        assert_eq!(p.concurrency.slots(), vec![16]);
        let e = Cli::try_parse_from(["casslab-load", "ycsb", "-w", "a", "--threads", "0"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--threads") && e.contains("1..=32768"), "{e}");
    }
}
