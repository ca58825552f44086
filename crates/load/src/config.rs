//! Command line: one struct per subcommand; doc comments are the `--help` text.
//! Everything here is `Serialize` so the full configuration goes into the
//! summary line (the password comes from the environment and never appears).

use crate::exec::ClientSlice;
use crate::exec::MAX_THREADS;
use crate::ranges::{dur, int, num, ArgRules as _, End, End::Closed, End::Open, MAX_TTL_S};
use crate::units::Dur;
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde::Serialize;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// No upper bound (of a whole number option).
const MAX: u64 = u64::MAX;
/// Most tokio worker threads (`--io-threads`): far more than any machine casslab runs on.
const MAX_IO_THREADS: u64 = 1024;
/// Most fields of a YCSB record (`--field-count`).
const MAX_FIELDS: u64 = crate::workload::ycsb::MAX_FIELDS as u64;
/// Most bytes of one generated value (`--field-length`, `--column-size`): 1 MiB.
pub const MAX_VALUE_BYTES: u64 = 1 << 20;
/// Series per IoT device (`--series`): one per service name.
const IOT_SERIES: u64 = crate::workload::iot::SERVICES.len() as u64;

/// casslab-load: a native Cassandra load generator (YCSB, cassandra-stress,
/// IoT and user-profile workloads) with coordinated-omission-corrected
/// HdrHistogram latency, JSON lines on stdout.
///
/// Example: casslab-load ycsb --workload a --phase load --records 100000 --hosts 127.0.1.1:9042
#[derive(Parser, Debug, Serialize)]
#[command(name = "casslab-load", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Workload families.
#[derive(Subcommand, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Command {
    Ycsb(YcsbCommand),
    Stress(StressCommand),
    Iot(IotCommand),
    User(UserCommand),
    Merge(MergeCommand),
    Options(OptionsCommand),
}

/// Describe every subcommand's options (names, value kinds, defaults, valid values,
/// ranges, conflicts and requirements), read from these definitions. casslab checks
/// workload options by this description.
///
/// Example: casslab-load options --json
///
/// Example: casslab-load options
#[derive(Args, Debug, Serialize)]
pub struct OptionsCommand {
    /// Print the description as JSON (default: one line per option).
    #[arg(long)]
    pub json: bool,
}

/// Add HdrHistogram interval logs of several runs (e.g. several clients of one
/// trial) by absolute time into one log and one summary (JSON on stdout).
///
/// Example: casslab-load merge client1.hlog client2.hlog --output trial.hlog
#[derive(Args, Debug, Serialize)]
pub struct MergeCommand {
    /// Interval logs written with --hdr-log (or any HdrHistogram log with a StartTime).
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    /// Write the merged interval log here.
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    /// Before the summary, print one JSON line per merged interval (the shape of a
    /// run's interval lines, without ok / not found / errors, which logs do not hold).
    #[arg(long)]
    pub intervals: bool,
}

/// A count of operations: a whole number >= 0, a negative one named as such.
pub fn parse_count(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!("{t} is negative: give a whole number >= 0"));
    }
    t.parse()
        .map_err(|_| format!("{t:?} is not a whole number >= 0"))
}

/// Warm-up length: a duration (`10s`) or a bare op count (`5000`).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Warmup {
    Ops(u64),
    Time(Dur),
}

impl FromStr for Warmup {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) {
            return t.parse().map(Warmup::Ops).map_err(|e| e.to_string());
        }
        Dur::from_str(t).map(Warmup::Time)
    }
}

/// Consistency level; accepts `LOCAL_QUORUM`, `local-quorum`, `local_quorum` (the
/// options take it with `ignore_case`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ValueEnum)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Cl {
    #[value(name = "ANY")]
    Any,
    #[value(name = "ONE")]
    One,
    #[value(name = "TWO")]
    Two,
    #[value(name = "THREE")]
    Three,
    #[value(name = "QUORUM")]
    Quorum,
    #[value(name = "ALL")]
    All,
    #[value(name = "LOCAL_QUORUM", alias = "LOCAL-QUORUM")]
    LocalQuorum,
    #[value(name = "EACH_QUORUM", alias = "EACH-QUORUM")]
    EachQuorum,
    #[value(name = "LOCAL_ONE", alias = "LOCAL-ONE")]
    LocalOne,
}

/// One contact point of `--hosts`: an empty one (`--hosts ''`, `--hosts ,`) is a
/// command-line error, not a connection failure.
fn host_arg(text: &str) -> std::result::Result<String, String> {
    if text.trim().is_empty() {
        return Err("a contact point is empty (e.g. --hosts 127.0.1.1:9042,127.0.1.2:9042)".into());
    }
    Ok(text.trim().to_string())
}

/// Where to connect and how requests behave.
#[derive(Args, Debug, Serialize)]
pub struct ConnArgs {
    /// Contact points, comma separated (lab nodes listen on 127.0.1.N:9042).
    #[arg(long, value_delimiter = ',', default_value = "127.0.0.1:9042", value_parser = host_arg)]
    pub hosts: Vec<String>,
    /// Prefer this datacenter (DC-aware, token-aware load balancing).
    #[arg(long)]
    pub dc: Option<String>,
    /// Consistency of reads (default: the source tool's, ONE or LOCAL_ONE).
    #[arg(long, value_enum, ignore_case = true)]
    pub cl_read: Option<Cl>,
    /// Consistency of writes (default: the source tool's, ONE or LOCAL_ONE).
    #[arg(long, value_enum, ignore_case = true)]
    pub cl_write: Option<Cl>,
    /// Client-side request timeout.
    #[arg(long, default_value = "12s", allow_hyphen_values = true, range = dur(Open(Duration::ZERO), End::None))]
    pub timeout: Dur,
    /// Disable driver retries (by default the driver's default retry policy; retries are counted).
    #[arg(long)]
    pub no_retry: bool,
    /// Re-issue a request up to N times when it fails the way a busy cluster fails:
    /// a server read or write timeout, unavailable, overloaded or bootstrapping (to the
    /// same node), or a broken connection (to the next node), as cassandra-stress's
    /// `-errors retries=N`. Only idempotent requests: casslab-load's own statements
    /// (they write fixed values) and a user profile's queries except those with IF or
    /// that add to a column (counters, list appends), which are never retried. The
    /// operation is timed from its first attempt's
    /// intended start, so retries show in its latency; each re-issue adds to `retries`;
    /// the --timeout still bounds the whole operation. 0: failures count as errors.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, range = int::<u32>(0, u32::MAX.into()))]
    pub error_retries: u32,
    /// Tokio worker threads that send and receive (1 = a single-threaded runtime,
    /// the cheapest per op). Not the client count: that is --threads or
    /// --workers x --in-flight.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, range = int::<usize>(1, MAX_IO_THREADS))]
    pub io_threads: usize,
    /// Connect with TLS (client_encryption_options on the nodes); needs --tls-ca or
    /// --tls-insecure.
    #[arg(long)]
    pub tls: bool,
    /// PEM file of the CA (or self-signed node certificate) that signed the nodes'
    /// certificates; implies --tls. The certificate must name the node's IP address.
    #[arg(long)]
    pub tls_ca: Option<PathBuf>,
    /// PEM client certificate chain for mutual TLS (with --tls-key).
    #[arg(long, needs = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, needs = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// TLS without verifying the nodes' certificates (encryption only; anyone in the
    /// path can impersonate a node). For labs with throwaway certificates.
    #[arg(long, conflicts_with = "tls_ca")]
    pub tls_insecure: bool,
}

/// Which phases to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PhaseArg {
    /// Populate the records.
    Load,
    /// Run the workload mix.
    Run,
    /// Load, then run.
    Both,
}

/// Output format of stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// JSON lines: one per interval, then one summary.
    Json,
    /// YCSB's text on stdout (a status line per interval, then the end-of-run
    /// sections); the JSON lines (intervals, summary) go to stderr.
    Ycsb,
}

/// Which latency YCSB's end-of-run blocks report (YCSB's `measurement.interval`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MeasurementInterval {
    /// `[READ]` etc.: from the actual send (service time).
    Op,
    /// `[Intended-READ]` etc.: from the intended start under --rate (without
    /// --rate the intended start is the send, as in YCSB without a target).
    Intended,
    /// Both blocks.
    Both,
}

/// How long, how fast, how concurrent, and where results go.
#[derive(Args, Debug, Serialize)]
pub struct RunArgs {
    /// Phase: `load` populates the records, `run` runs the mix, `both` does both.
    #[arg(long, value_enum, default_value_t = PhaseArg::Run)]
    pub phase: PhaseArg,
    /// Stop the run phase after this many operations.
    // allow_negative_numbers: `--ops -1` reaches the parser, which names it as negative
    // (clap alone reports "unexpected argument '-1'").
    #[arg(long, allow_negative_numbers = true, value_parser = parse_count)]
    pub ops: Option<u64>,
    /// Stop the run phase after this long (e.g. 60s); with --ops, whichever comes first.
    // allow_hyphen_values: `-5s` is not a number to clap, so it takes it as a value only so.
    #[arg(long, allow_hyphen_values = true, range = dur(Open(Duration::ZERO), End::None))]
    pub duration: Option<Dur>,
    /// Stop the run phase once the standard error of the mean per-interval
    /// throughput is below this fraction of the mean, e.g. 0.02 (cassandra-stress
    /// err<); with --ops/--duration, whichever comes first.
    #[arg(long, allow_negative_numbers = true, range = num(Open(0.0), Open(1.0)))]
    pub converge: Option<f64>,
    /// With --converge: intervals to run before convergence counts (cassandra-stress n>).
    #[arg(long, default_value_t = 30, needs = "converge", allow_negative_numbers = true, range = int::<usize>(2, MAX))]
    pub converge_min: usize,
    /// With --converge: the most intervals to run (cassandra-stress n<).
    #[arg(long, default_value_t = 200, needs = "converge", allow_negative_numbers = true, range = int::<usize>(2, MAX))]
    pub converge_max: usize,
    /// Unrecorded warm-up before the run phase: a duration (10s) or an op count (5000).
    #[arg(long, allow_hyphen_values = true)]
    pub warmup: Option<Warmup>,
    /// Concurrent worker tasks.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, range = int::<usize>(1, MAX))]
    pub workers: usize,
    /// Operations in flight per worker.
    #[arg(long, default_value_t = 16, allow_negative_numbers = true, range = int::<usize>(1, MAX))]
    pub in_flight: usize,
    /// Closed-loop clients, as YCSB's -threads and cassandra-stress's
    /// -rate threads=N: each sends one request, waits for its answer, then sends
    /// the next. Instead of --workers x --in-flight.
    // conflicts_with: defaults do not count, only --workers/--in-flight given.
    #[arg(long, conflicts_with_all = ["workers", "in_flight"], allow_negative_numbers = true, range = int::<usize>(1, MAX_THREADS as u64))]
    pub threads: Option<usize>,
    /// Pause of each --threads client between an answer and its next request
    /// (YCSB and cassandra-stress: none).
    #[arg(long, needs = "threads", conflicts_with = "rate")]
    pub think_time: Option<Dur>,
    /// Fixed target rate in ops/s over all workers; latency is measured from each
    /// operation's intended start (coordinated-omission corrected).
    #[arg(long, allow_negative_numbers = true, range = num(Open(0.0), End::None))]
    pub rate: Option<f64>,
    /// Scheduler tick with --rate: operations intended within one tick are sent
    /// together at its start (at most one tick early; such an operation's latency
    /// counts from its actual send). Longer ticks wake the client less often
    /// (less CPU per op) but make the offered load burstier.
    #[arg(long, default_value = "1ms", allow_hyphen_values = true, range = dur(Closed(Duration::from_millis(1)), Closed(Duration::from_secs(1))))]
    pub tick: Dur,
    /// YAML/JSON stages file (list of {name, duration|ops, rate, mix, ttl_s, table_ttl_s
    /// (iot: the table TTL, set as the stage begins), record});
    /// its stages say how long each runs, so not with --ops or --duration.
    #[arg(long, conflicts_with_all = ["ops", "duration"])]
    pub stages: Option<PathBuf>,
    /// Operation mix, e.g. `read=0.95,update=0.05` (names as in the output).
    #[arg(long)]
    pub mix: Option<String>,
    /// TTL in seconds for writes (USING TTL); default: the table's default TTL.
    #[arg(long, allow_negative_numbers = true, range = int::<i32>(0, MAX_TTL_S))]
    pub ttl_s: Option<i32>,
    /// Reporting interval.
    #[arg(long, default_value = "1s", allow_hyphen_values = true, range = dur(Closed(Duration::from_millis(10)), End::None))]
    pub interval: Dur,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    pub format: Format,
    /// With --format ycsb: the latency percentiles of each operation's lines
    /// (YCSB's `hdrhistogram.percentiles`), e.g. 50,95,99,99.9.
    #[arg(long, value_delimiter = ',', default_value = "95,99", range = num(Open(0.0), Closed(100.0)))]
    pub percentiles: Vec<f64>,
    /// With --format ycsb: the latency of the end-of-run blocks (YCSB's
    /// `measurement.interval`); default: both with --rate, op without.
    #[arg(long, value_enum)]
    pub measurement_interval: Option<MeasurementInterval>,
    /// Also write an HdrHistogram interval log to this file (tags: `<op>` latency,
    /// `<op>-svc` service time, `part-<op>` an operation done inside another).
    #[arg(long)]
    pub hdr_log: Option<PathBuf>,
    /// Serve live metrics for Prometheus on HOST:PORT (`/metrics`: operations,
    /// errors and a latency histogram per stage and operation type, cumulative
    /// since the start), e.g. 127.0.0.1:9470.
    #[arg(long, value_name = "ADDR")]
    pub prometheus: Option<String>,
    /// With --prometheus: a label KEY=VALUE on every series (repeatable), e.g.
    /// lab=edge. casslab-load sets workload, client (I of --client I/K), stage and op.
    #[arg(long, value_name = "KEY=VALUE", needs = "prometheus",
          value_parser = crate::stats::prometheus::parse_label)]
    pub prometheus_label: Vec<crate::stats::prometheus::Label>,
    /// With --prometheus: keep serving this long after the run ends, so a last
    /// scrape sees the final counts (the summary's).
    #[arg(long, default_value = "0s", needs = "prometheus")]
    pub prometheus_linger: Dur,
    /// Seed of all key, value and op choices.
    #[arg(long, default_value_t = 1, range = int::<u64>(0, MAX))]
    pub seed: u64,
    /// This process is client I of K (0 <= I < K) of one run: every client gets the
    /// same options and --seed (keys and values derive from the seed, so all see one
    /// data set), and takes the cycles I, I+K, I+2K, ... of the run one client would
    /// do. --ops, --rate, --warmup ops, the stages' ops and rates, and the load
    /// phase's records are the totals of the K clients; each does its share, so
    /// together they do exactly the one-client run. Per family: the load phase
    /// writes an interleaved slice of the records (ycsb keys, or of the
    /// --insert-start/--insert-count keys, stress population
    /// seeds, iot device-series, user partitions), disjoint from the others';
    /// reads and updates of the run phase draw from the whole population (ycsb:
    /// the one --insert-start/--insert-count give, as for one client); inserts
    /// of the run phase (ycsb d, e, i) take new keys records+I, records+I+K, ...;
    /// stress `seq(...)` populations follow the cycles, so a K-client `stress
    /// write` writes each key once. --drop is refused: drop once before the
    /// clients start.
    #[arg(long, value_name = "I/K")]
    pub client: Option<ClientSlice>,
    /// Wait until this time (seconds since the epoch, fractional) before the first
    /// operation, after connecting and preparing, so K clients start together; the
    /// HdrHistogram log's StartTime is then this time. A time more than 5 s in the
    /// past is refused.
    #[arg(long, value_name = "UNIX_S", allow_negative_numbers = true, range = num(Open(0.0), End::None))]
    pub start_at: Option<f64>,
    /// End the run when no operation succeeded for this long while errors occur.
    #[arg(long, default_value = "20s", allow_hyphen_values = true, range = dur(Open(Duration::ZERO), End::None))]
    pub unreachable_after: Dur,
}

/// Schema options of built-in workloads.
#[derive(Args, Debug, Serialize)]
pub struct SchemaArgs {
    /// Replication factor of the keyspace created if missing (SimpleStrategy).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, range = int::<u32>(1, u32::MAX.into()))]
    pub rf: u32,
    /// Drop the keyspace first (all data is lost).
    #[arg(long)]
    pub drop: bool,
}

/// YCSB core workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum YcsbWorkload {
    /// 50 % read, 50 % update, zipfian.
    A,
    /// 95 % read, 5 % update, zipfian.
    B,
    /// 100 % read, zipfian.
    C,
    /// 95 % read, 5 % insert, latest.
    D,
    /// 95 % scan (up to 100 rows), 5 % insert, zipfian.
    E,
    /// 50 % read, 50 % read-modify-write, zipfian.
    F,
    /// 99 % insert, 1 % read (insert-heavy workload I), zipfian.
    I,
}

/// YCSB request distributions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyDist {
    Zipfian,
    Latest,
    Uniform,
    Hotspot,
}

/// YCSB core workloads A-F and I on ycsb.usertable (y_id varchar key, field0..9).
///
/// Example: casslab-load ycsb --workload a --phase load --records 100000 --hosts 127.0.1.1:9042
///
/// Example: casslab-load ycsb --workload a --records 100000 --duration 60s --rate 2000 --format ycsb
#[derive(Args, Debug, Serialize)]
pub struct YcsbCommand {
    /// Core workload.
    #[arg(long, short = 'w', value_enum)]
    pub workload: YcsbWorkload,
    /// Records loaded (YCSB recordcount): the key numbers 0..N-1.
    #[arg(long, default_value_t = 1000, allow_negative_numbers = true, range = int::<u64>(1, MAX))]
    pub records: u64,
    /// First key number the load phase inserts (YCSB insertstart), so that several
    /// machines can each load a part of the --records keys: with --insert-count C this
    /// client inserts key numbers S..S+C-1. As YCSB's CoreWorkload, the run phase's
    /// uniform, zipfian and hotspot choices then draw from S..S+C-1 too (zipfian: up to
    /// S+C plus the expected new keys), latest from every key; run-phase inserts take
    /// new keys from --records on.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, range = int::<u64>(0, MAX))]
    pub insert_start: u64,
    /// Keys the load phase inserts from --insert-start (YCSB insertcount; default: the
    /// rest of --records). --insert-start + --insert-count must not exceed --records.
    /// With --client I/K the K clients split these keys as they split a whole load.
    #[arg(long, allow_negative_numbers = true, range = int::<u64>(1, MAX))]
    pub insert_count: Option<u64>,
    /// Override the workload's request distribution.
    #[arg(long, value_enum)]
    pub distribution: Option<KeyDist>,
    /// Fields per record.
    #[arg(long, default_value_t = 10, allow_negative_numbers = true, range = int::<usize>(1, MAX_FIELDS))]
    pub field_count: usize,
    /// Bytes per field.
    #[arg(long, default_value_t = 100, allow_negative_numbers = true, range = int::<usize>(0, MAX_VALUE_BYTES))]
    pub field_length: usize,
    /// Longest scan (uniform 1..N rows).
    #[arg(long, default_value_t = 100, allow_negative_numbers = true, range = int::<u64>(1, MAX))]
    pub max_scan_length: u64,
    /// Zipfian constant.
    #[arg(long, default_value_t = 0.99, allow_negative_numbers = true, range = num(Open(0.0), Open(1.0)))]
    pub zipfian_constant: f64,
    /// Hotspot: fraction of keys that are hot.
    #[arg(long, default_value_t = 0.2, allow_negative_numbers = true, range = num(Closed(0.0), Closed(1.0)))]
    pub hotspot_data_fraction: f64,
    /// Hotspot: fraction of operations on hot keys.
    #[arg(long, default_value_t = 0.8, allow_negative_numbers = true, range = num(Closed(0.0), Closed(1.0)))]
    pub hotspot_opn_fraction: f64,
    /// Keyspace.
    #[arg(long, default_value = "ycsb")]
    pub keyspace: String,
    #[command(flatten)]
    pub schema: SchemaArgs,
    #[command(flatten)]
    pub conn: ConnArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

/// cassandra-stress command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StressMode {
    Write,
    Read,
    Mixed,
}

/// cassandra-stress write / read / mixed on keyspace1.standard1 (key blob, C0..C4 blob).
///
/// Example: casslab-load stress write --ops 100000 --hosts 127.0.1.1:9042
///
/// Example: casslab-load stress write --ops 100000 --hosts 10.0.0.5:9042 --tls-ca ca.pem
///
/// Example: casslab-load stress mixed --records 100000 --duration 60s --pop 'uniform(1..100000)'
#[derive(Args, Debug, Serialize)]
pub struct StressCommand {
    /// write, read or mixed (ratio write=1,read=3 unless --mix).
    #[arg(value_enum)]
    pub mode: StressMode,
    /// Size of the key population N (default: --ops, else 1000000), as cassandra-stress.
    #[arg(long, allow_negative_numbers = true, range = int::<u64>(1, MAX))]
    pub records: Option<u64>,
    /// Population distribution: seq(1..N) (write default), uniform(1..N), gaussian(1..N[,stdvrng]) (read/mixed default).
    #[arg(long)]
    pub pop: Option<String>,
    /// Bytes per column (cassandra-stress FIXED(34)).
    #[arg(long, default_value_t = 34, allow_negative_numbers = true, range = int::<usize>(1, MAX_VALUE_BYTES))]
    pub column_size: usize,
    /// Bytes per column drawn from a distribution, per key and column
    /// (cassandra-stress `-col size=DIST`, e.g. uniform(10..100)); instead of --column-size.
    #[arg(long, conflicts_with = "column_size", value_name = "DIST")]
    pub column_size_dist: Option<String>,
    /// Columns written per row, drawn per key (cassandra-stress `-col n=DIST`): the
    /// table has as many as the distribution's largest value (C0, C1, ...; at most 64)
    /// and a write fills the first N of them.
    #[arg(long, default_value = "fixed(5)", value_name = "DIST")]
    pub columns: String,
    /// Replication of the keyspace created if missing, as a CQL map, e.g.
    /// `{'class': 'NetworkTopologyStrategy', 'dc1': 3}` (cassandra-stress
    /// `-schema replication(strategy=...,dc1=3)`); instead of --rf.
    #[arg(long, conflicts_with = "rf")]
    pub replication: Option<String>,
    /// Compaction of the table created if missing: stcs, lcs, ucs, twcs[:SIZE:UNIT]
    /// or a CQL map '{...}' (cassandra-stress `-schema compaction(strategy=...)`).
    #[arg(long)]
    pub compaction: Option<String>,
    /// Keyspace.
    #[arg(long, default_value = "keyspace1")]
    pub keyspace: String,
    #[command(flatten)]
    pub schema: SchemaArgs,
    #[command(flatten)]
    pub conn: ConnArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

/// How the IoT reads devdat and lesrow are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IotReads {
    /// As seed 003 (C*DynaConf) wrote them: devdat and lesrow read at most 500 rows.
    Study,
    /// devdat reads every row of the device (paged), lesrow the latest row of a series.
    FullLatest,
}

/// IoT time series: devices with 5 series each; inserts of 60 values per
/// series; reads devdat (a device's rows), lesrow (a series' rows), avgdat (series average).
///
/// Example: casslab-load iot --phase load --devices 1000 --table-ttl-s 86400 --compaction twcs:1:MINUTES
///
/// Example: casslab-load iot --devices 1000 --duration 60s --mix insert=50,devdat=20,lesrow=15,avgdat=15
#[derive(Args, Debug, Serialize)]
pub struct IotCommand {
    /// Number of devices.
    #[arg(long, default_value_t = 100, allow_negative_numbers = true, range = int::<u64>(1, MAX))]
    pub devices: u64,
    /// Series (service names) per device (at most 5).
    #[arg(long, default_value_t = 5, allow_negative_numbers = true, range = int::<u64>(1, IOT_SERIES))]
    pub series: u64,
    /// Values per series per insert (one unlogged single-partition batch).
    #[arg(long, default_value_t = 60, allow_negative_numbers = true, range = int::<usize>(1, 10_000))]
    pub values_per_insert: usize,
    /// Reads: study (devdat and lesrow with LIMIT 500, as seed 003) or full-latest (devdat every row of the device, lesrow the latest row).
    #[arg(long, value_enum, default_value_t = IotReads::Study)]
    pub reads: IotReads,
    /// Table default_time_to_live in seconds (set on create; ALTERed if given and the table exists).
    #[arg(long, allow_negative_numbers = true, range = int::<u32>(0, MAX_TTL_S))]
    pub table_ttl_s: Option<u32>,
    /// Compaction: stcs, lcs, ucs, twcs[:SIZE:UNIT] (e.g. twcs:1:MINUTES) or a CQL map '{...}'.
    #[arg(long)]
    pub compaction: Option<String>,
    /// Keyspace.
    #[arg(long, default_value = "iot")]
    pub keyspace: String,
    #[command(flatten)]
    pub schema: SchemaArgs,
    #[command(flatten)]
    pub conn: ConnArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

/// Batch type of a user profile's multi-row inserts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum BatchKind {
    #[value(name = "LOGGED", alias = "logged")]
    Logged,
    #[value(name = "UNLOGGED", alias = "unlogged")]
    Unlogged,
}

/// cassandra-stress user profile (YAML), documented subset; see `profile` docs.
///
/// Example: casslab-load user --profile stress.yaml --phase load --records 10000
///
/// Example: casslab-load user --profile stress.yaml --mix insert=1,simple1=9 --duration 60s
#[derive(Args, Debug, Serialize)]
pub struct UserCommand {
    /// Profile file.
    #[arg(long)]
    pub profile: PathBuf,
    /// Partition population size N (default 1000000).
    #[arg(long, allow_negative_numbers = true, range = int::<u64>(1, MAX))]
    pub records: Option<u64>,
    /// Partition population distribution (default: seq(1..N) for load, gaussian(1..N) for run).
    #[arg(long)]
    pub pop: Option<String>,
    /// Replication factor used when the profile has no keyspace_definition.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, range = int::<u32>(1, u32::MAX.into()))]
    pub rf: u32,
    /// Batch type of inserts of several rows, instead of the profile's
    /// insert.batchtype (cassandra-stress `-insert batchtype=`).
    #[arg(long, value_enum)]
    pub batchtype: Option<BatchKind>,
    #[command(flatten)]
    pub conn: ConnArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use std::time::Duration;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn parses_common_forms() {
        let c = Cli::try_parse_from([
            "casslab-load",
            "ycsb",
            "-w",
            "a",
            "--hosts",
            "127.0.1.1:9042,127.0.1.2:9042",
            "--cl-read",
            "local_quorum",
            "--warmup",
            "5000",
            "--duration",
            "30s",
            "--rate",
            "100",
        ])
        .unwrap();
        let Command::Ycsb(y) = c.command else {
            panic!()
        };
        assert_eq!(y.conn.hosts.len(), 2);
        assert_eq!(y.conn.cl_read, Some(Cl::LocalQuorum));
        assert!(matches!(y.run.warmup, Some(Warmup::Ops(5000))));
        assert_eq!(y.run.duration.unwrap().0, Duration::from_secs(30));
    }

    #[test]
    fn negative_ops_and_durations_are_named_as_negative() {
        for (opt, value) in [("--ops", "-1"), ("--duration", "-5s"), ("--warmup", "-10s")] {
            let err = Cli::try_parse_from(["casslab-load", "ycsb", "--workload", "a", opt, value])
                .unwrap_err();
            let text = err.to_string();
            assert!(text.contains("is negative"), "{opt} {value}: {text}");
        }
        let j = serde_json::to_value(
            Cli::try_parse_from(["casslab-load", "stress", "mixed", "--warmup", "10s"]).unwrap(),
        )
        .unwrap();
        assert_eq!(j["command"]["stress"]["run"]["warmup"]["time"], "10s");
        assert!(Cli::try_parse_from(["casslab-load", "ycsb", "-w", "z"]).is_err());
        // A bare number is no duration (it was seconds here and ms elsewhere).
        let e = Cli::try_parse_from(["casslab-load", "stress", "write", "--duration", "60"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("add a unit, e.g. 60ms or 60s"), "{e}");
        assert!(
            Cli::try_parse_from(["casslab-load", "stress", "read", "--cl-read", "most"]).is_err()
        );
    }

    fn parse(args: &[&str]) -> Result<RunArgs, String> {
        let mut v = vec!["casslab-load", "stress", "write"];
        v.extend_from_slice(args);
        match Cli::try_parse_from(v).map_err(|e| e.to_string())?.command {
            Command::Stress(c) => Ok(c.run),
            _ => unreachable!(),
        }
    }

    #[test]
    fn threads_is_a_client_count_and_io_threads_the_runtime() {
        let run = parse(&["--threads", "450"]).unwrap();
        assert_eq!(run.threads, Some(450));
        assert!(run.think_time.is_none());
        let c = Cli::try_parse_from(["casslab-load", "iot", "--threads", "4", "--io-threads", "2"])
            .unwrap();
        let Command::Iot(iot) = c.command else {
            panic!()
        };
        assert_eq!((iot.run.threads, iot.conn.io_threads), (Some(4), 2));
        let run = parse(&["--threads", "10", "--think-time", "5ms"]).unwrap();
        assert_eq!(run.think_time.unwrap().0, Duration::from_millis(5));
        // Both forms go into the summary's config.
        let j = serde_json::to_value(
            Cli::try_parse_from(["casslab-load", "stress", "read", "--threads", "150"]).unwrap(),
        )
        .unwrap();
        assert_eq!(j["command"]["stress"]["run"]["threads"], 150);
        assert_eq!(j["command"]["stress"]["conn"]["io_threads"], 1);
    }

    #[test]
    fn threads_and_workers_or_in_flight_are_exclusive() {
        for other in ["--workers", "--in-flight"] {
            let e = parse(&["--threads", "50", other, "2"]).unwrap_err();
            let line = casslab_errline::clap_line(&e);
            assert!(
                line.contains("'--threads <THREADS>' cannot be used with") && line.contains(other),
                "{line}"
            );
            assert!(!line.contains('\n'));
        }
        // Alone, each form keeps working; defaults do not conflict.
        assert!(parse(&["--workers", "2", "--in-flight", "8"]).is_ok());
        let e = parse(&["--think-time", "1ms"]).unwrap_err();
        assert!(e.contains("--threads"), "{e}");
        assert!(parse(&["--threads", "5", "--think-time", "1ms", "--rate", "10"]).is_err());
        assert!(parse(&["--threads", "-1"]).is_err());
    }
}
