//! YCSB core workloads A-F and I against YCSB's Cassandra schema
//! (`usertable (y_id varchar PRIMARY KEY, field0..N varchar)`), following
//! `CoreWorkload` and the `cassandra-cql` binding:
//! keys `"user" + fnvhash64(keynum)` (insertorder=hashed), reads of all
//! fields, updates of one random field (writeallfields=false), inserts of all
//! fields, scans `WHERE token(y_id) >= token(?) LIMIT len` with len uniform
//! in 1..=max_scan_length, read-modify-write = read then update (recorded as
//! one `rmw` op, and its read and update also as parts, as YCSB reports them). Request distributions as YCSB: scrambled zipfian over
//! records + expected new keys (with rejection of keys not inserted yet),
//! latest, uniform, hotspot. `--insert-start S --insert-count C` (YCSB's
//! insertstart/insertcount) load key numbers S..S+C-1 only and bound the
//! uniform, zipfian and hotspot choices of the run phase to them, as
//! `CoreWorkload.init` builds its key chooser.

use super::{ttl_clause, ttl_set, ByTtl, Cls};
use crate::config::{Cl, KeyDist, YcsbCommand, YcsbWorkload};
use crate::db::{self, read_outcome, write_outcome, RetryCounters};
use crate::error::{LoadError, Result};
use crate::exec::{ClientSlice, OpCtx, Phase, Workload};
use crate::generator::{
    fnvhash64, hash3, write_key, BytePool, Hotspot, Latest, Rng, ScrambledZipfian,
};
use crate::stats::{Outcome, Part};
use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use tokio::time::Instant;

const READ: usize = 0;
const UPDATE: usize = 1;
/// Op id of insert (the load phase op).
pub const INSERT: usize = 2;
const SCAN: usize = 3;
const RMW: usize = 4;
pub const MAX_FIELDS: usize = 32;
const TABLE: &str = "usertable";

/// Op names of YCSB workloads (index = op id).
pub fn names() -> Vec<String> {
    ["read", "update", "insert", "scan", "rmw"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// YCSB's proportions per core workload (read, update, insert, scan, rmw).
pub fn mix_for(w: YcsbWorkload) -> Vec<f64> {
    match w {
        YcsbWorkload::A => vec![0.5, 0.5, 0.0, 0.0, 0.0],
        YcsbWorkload::B => vec![0.95, 0.05, 0.0, 0.0, 0.0],
        YcsbWorkload::C => vec![1.0, 0.0, 0.0, 0.0, 0.0],
        YcsbWorkload::D => vec![0.95, 0.0, 0.05, 0.0, 0.0],
        YcsbWorkload::E => vec![0.0, 0.0, 0.05, 0.95, 0.0],
        YcsbWorkload::F => vec![0.5, 0.0, 0.0, 0.0, 0.5],
        YcsbWorkload::I => vec![0.01, 0.0, 0.99, 0.0, 0.0],
    }
}

/// YCSB's request distribution per core workload.
pub fn distribution_for(w: YcsbWorkload) -> KeyDist {
    match w {
        YcsbWorkload::D => KeyDist::Latest,
        _ => KeyDist::Zipfian,
    }
}

/// YCSB's key of key number `keynum` (insertorder=hashed): `"user"` followed by
/// the FNV-1a 64 hash of the number, written into `buf`.
fn key_name(buf: &mut [u8; 32], keynum: u64) -> &str {
    write_key(buf, "user", fnvhash64(keynum as i64) as u64)
}

/// The key numbers a load phase inserts, `start..start + count` of the
/// `--records` key space (YCSB's insertstart and insertcount): cycle `c` of the
/// load stage, counted over all `--client` slices, inserts key `start + c`, so
/// K clients given the same range split it as they split a whole load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InsertRange {
    pub start: u64,
    pub count: u64,
}

impl InsertRange {
    /// The range `cmd` asks for; refuses one that does not fit in `--records`
    /// (YCSB's CoreWorkload refuses `recordcount < insertstart + insertcount`).
    /// Without `--insert-count`, the rest of the records (CoreWorkload's default).
    pub fn of(cmd: &YcsbCommand) -> Result<Self> {
        let (start, records) = (cmd.insert_start, cmd.records);
        let Some(count) = cmd.insert_count else {
            if start >= records {
                return Err(LoadError::option(
                    "--insert-start",
                    format!(
                        "{start} is not below --records {records}: the load inserts key \
                         numbers --insert-start..--records-1"
                    ),
                ));
            }
            return Ok(InsertRange {
                start,
                count: records - start,
            });
        };
        match start.checked_add(count) {
            Some(end) if end <= records => Ok(InsertRange { start, count }),
            _ => Err(LoadError::option(
                "--insert-count",
                format!(
                    "--insert-start {start} + --insert-count {count} is more than --records \
                     {records}: the load inserts key numbers --insert-start..--insert-start + \
                     --insert-count - 1 of the --records keys"
                ),
            )),
        }
    }

    /// The key number cycle `cycle` of the load stage inserts.
    #[inline]
    pub fn keynum(&self, cycle: u64) -> u64 {
        self.start + cycle
    }

    /// The last key number the load inserts.
    fn last(&self) -> u64 {
        self.start + self.count - 1
    }
}

enum Chooser {
    Uniform { lb: u64, ub: u64 },
    Zipf(ScrambledZipfian),
    Hotspot(Hotspot),
    Latest(Mutex<Latest>),
}

impl Chooser {
    /// YCSB's `nextKeynum`: draw until the key is at most `last`, the highest key
    /// inserted (after 100 draws, a uniform one of 0..=last).
    fn next_keynum(&self, rng: &mut Rng, last: u64) -> u64 {
        for _ in 0..100 {
            let k = match self {
                Chooser::Uniform { lb, ub } => lb + rng.below(ub - lb + 1),
                Chooser::Zipf(z) => z.sample(rng.next_f64()),
                Chooser::Hotspot(h) => h.sample(rng),
                Chooser::Latest(l) => {
                    let u = rng.next_f64();
                    return l.lock().unwrap_or_else(|p| p.into_inner()).sample(last, u);
                }
            };
            if k <= last {
                return k;
            }
        }
        rng.below(last + 1)
    }
}

struct Writes {
    insert: PreparedStatement,
    updates: Vec<PreparedStatement>,
}

/// YCSB's AcknowledgedCounterGenerator: the highest key such that it and every key
/// below it have been inserted, so reads never pick a key whose insert is still in
/// flight (inserts finish out of order with many requests in flight).
///
/// This client inserts keys `first`, `first + stride`, ... (`stride` = the client
/// count of `--client I/K`); the others' keys in between are taken as inserted
/// when this client's own are (they start together at the same rate), so with
/// K > 1 a read may rarely find a key not yet inserted (counted as not found).
struct AckCounter {
    limit: AtomicU64,
    first: u64,
    stride: u64,
    /// This client's next key index not yet acknowledged, and those acknowledged above it.
    pending: std::sync::Mutex<(u64, std::collections::BTreeSet<u64>)>,
}

impl AckCounter {
    fn new(first: u64, stride: u64) -> Self {
        AckCounter {
            limit: AtomicU64::new(first.saturating_sub(1)),
            first,
            stride: stride.max(1),
            pending: std::sync::Mutex::new((0, std::collections::BTreeSet::new())),
        }
    }

    fn limit(&self) -> u64 {
        self.limit.load(Ordering::Acquire)
    }

    fn acknowledge(&self, key: u64) {
        let mut guard = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let (next, done) = &mut *guard;
        done.insert(key.saturating_sub(self.first) / self.stride);
        while done.remove(next) {
            *next += 1;
        }
        let limit = (self.first + self.stride * *next).saturating_sub(1);
        self.limit.fetch_max(limit, Ordering::Release);
    }
}

/// A YCSB core workload bound to a session.
pub struct Ycsb {
    session: Session,
    names: Vec<String>,
    read: PreparedStatement,
    scan: PreparedStatement,
    writes: ByTtl<Writes>,
    chooser: Chooser,
    /// The key numbers of the load phase.
    load_keys: InsertRange,
    insert_next: AtomicU64,
    /// Run-phase inserts of this client are every `insert_stride`-th new key.
    insert_stride: u64,
    acked: AckCounter,
    pool: BytePool,
    field_count: usize,
    field_length: usize,
    max_scan: u64,
    seed: u64,
    retries: RetryCounters,
}

/// Key chooser for a distribution, as YCSB's CoreWorkload builds it: uniform,
/// zipfian and hotspot over the load's keys `range` (zipfian up to one past it
/// plus the expected new keys, YCSB's inclusive `insertstart + insertcount +
/// expectednewkeys`), latest over every record.
fn chooser(cmd: &YcsbCommand, range: InsertRange, dist: KeyDist, expected_ops: u64) -> Chooser {
    let records = cmd.records.max(1);
    match dist {
        KeyDist::Uniform => Chooser::Uniform {
            lb: range.start,
            ub: range.last(),
        },
        KeyDist::Zipfian => {
            let insert_prop = mix_for(cmd.workload)[INSERT];
            let expected_new = (expected_ops as f64 * insert_prop * 2.0) as u64;
            Chooser::Zipf(ScrambledZipfian::new(
                range.start,
                range.start + range.count + expected_new,
                cmd.zipfian_constant,
            ))
        }
        KeyDist::Hotspot => Chooser::Hotspot(Hotspot::new(
            range.start,
            range.last(),
            cmd.hotspot_data_fraction,
            cmd.hotspot_opn_fraction,
        )),
        KeyDist::Latest => Chooser::Latest(Mutex::new(Latest::new(records - 1))),
    }
}

impl Ycsb {
    /// Creates keyspace and table if missing (dropping the keyspace with `--drop`).
    pub async fn create_schema(session: &Session, cmd: &YcsbCommand) -> Result<()> {
        db::ensure_keyspace(session, &cmd.keyspace, cmd.schema.rf, cmd.schema.drop).await?;
        let fields: Vec<String> = (0..cmd.field_count)
            .map(|i| format!(", field{i} varchar"))
            .collect();
        db::ddl(
            session,
            &format!(
                "CREATE TABLE IF NOT EXISTS {}.{TABLE} (y_id varchar PRIMARY KEY{})",
                cmd.keyspace,
                fields.concat()
            ),
        )
        .await
    }

    /// Prepares the statements (one write set per TTL in `ttls`).
    pub async fn new(
        session: Session,
        cmd: &YcsbCommand,
        ttls: &[Option<i32>],
        expected_ops: u64,
    ) -> Result<Self> {
        let cls = Cls::new(cmd.conn.cl_read, cmd.conn.cl_write, Cl::One);
        let names = names();
        let retries = RetryCounters::new(names.len(), cmd.conn.error_retries);
        let nr = cmd.conn.no_retry;
        let ks = &cmd.keyspace;
        let read = db::prepare(
            &session,
            &format!("SELECT * FROM {ks}.{TABLE} WHERE y_id = ?"),
            cls.read,
            &retries,
            READ,
            nr,
        )
        .await?;
        let scan = db::prepare(
            &session,
            &format!("SELECT * FROM {ks}.{TABLE} WHERE token(y_id) >= token(?) LIMIT ?"),
            cls.read,
            &retries,
            SCAN,
            nr,
        )
        .await?;
        let mut writes = ByTtl::new();
        for ttl in ttl_set(ttls) {
            let cols: Vec<String> = (0..cmd.field_count)
                .map(|i| format!(", field{i}"))
                .collect();
            let marks = ", ?".repeat(cmd.field_count);
            let insert = db::prepare(
                &session,
                &format!(
                    "INSERT INTO {ks}.{TABLE} (y_id{}) VALUES (?{marks}){}",
                    cols.concat(),
                    ttl_clause(ttl)
                ),
                cls.write,
                &retries,
                INSERT,
                nr,
            )
            .await?;
            let mut updates = Vec::new();
            for f in 0..cmd.field_count {
                updates.push(
                    db::prepare(
                        &session,
                        &format!(
                            "UPDATE {ks}.{TABLE}{} SET field{f} = ? WHERE y_id = ?",
                            ttl_clause(ttl)
                        ),
                        cls.write,
                        &retries,
                        UPDATE,
                        nr,
                    )
                    .await?,
                );
            }
            writes.push(ttl, Writes { insert, updates });
        }
        let dist = cmd.distribution.unwrap_or(distribution_for(cmd.workload));
        let client = cmd.run.client.unwrap_or(ClientSlice::ALONE);
        let load_keys = InsertRange::of(cmd)?;
        Ok(Ycsb {
            session,
            names,
            read,
            scan,
            writes,
            chooser: chooser(cmd, load_keys, dist, expected_ops),
            load_keys,
            insert_next: AtomicU64::new(cmd.records + client.index),
            acked: AckCounter::new(cmd.records + client.index, client.count),
            insert_stride: client.count,
            pool: BytePool::new(cmd.seed_for_values(), 1 << 16),
            field_count: cmd.field_count,
            field_length: cmd.field_length,
            max_scan: cmd.max_scan_length,
            seed: cmd.run.seed,
            retries,
        })
    }

    /// YCSB's `nextKeynum`: draw until the key has been inserted.
    fn next_keynum(&self, rng: &mut Rng) -> u64 {
        self.chooser.next_keynum(rng, self.acked.limit())
    }

    fn field(&self, keynum: u64, f: usize) -> &str {
        self.pool
            .str(hash3(self.seed, keynum, f as u64), self.field_length)
    }

    async fn insert(&self, keynum: u64, ttl: Option<i32>) -> Outcome {
        let mut kb = [0u8; 32];
        let key = key_name(&mut kb, keynum);
        let mut vals: [&str; MAX_FIELDS + 1] = [""; MAX_FIELDS + 1];
        vals[0] = key;
        for (f, v) in vals[1..=self.field_count].iter_mut().enumerate() {
            *v = self.field(keynum, f);
        }
        let st = &self.writes.get(ttl).insert;
        write_outcome(
            self.session
                .execute_unpaged(st, &vals[..=self.field_count])
                .await,
        )
    }

    async fn update(&self, key: &str, rng: &mut Rng, ttl: Option<i32>) -> Outcome {
        let f = rng.below(self.field_count as u64) as usize;
        let value = self.pool.str(rng.next_u64(), self.field_length);
        let st = &self.writes.get(ttl).updates[f];
        write_outcome(self.session.execute_unpaged(st, (value, key)).await)
    }
}

impl YcsbCommand {
    /// Seed of the value pool (the run seed; separate function so a load and
    /// a run with the same seed write the same bytes).
    fn seed_for_values(&self) -> u64 {
        self.run.seed ^ 0x5943_5342
    }
}

impl Workload for Ycsb {
    fn op_names(&self) -> &[String] {
        &self.names
    }

    async fn run_op(&self, op: usize, cycle: u64, ctx: &OpCtx) -> Outcome {
        // The runner calls run_op_parts; here the parts are timed and dropped.
        self.exec(op, cycle, ctx, &mut Vec::new()).await
    }

    fn run_op_parts<'a>(
        &'a self,
        op: usize,
        cycle: u64,
        ctx: &'a OpCtx,
        parts: &'a mut Vec<Part>,
    ) -> impl std::future::Future<Output = Outcome> + Send + 'a {
        self.exec(op, cycle, ctx, parts)
    }

    fn retries(&self) -> Vec<u64> {
        self.retries.snapshot()
    }
}

impl Ycsb {
    /// Runs one operation; the read and the update of a read-modify-write are
    /// also timed on their own into `parts`, as YCSB's DB wrapper does.
    async fn exec(&self, op: usize, cycle: u64, ctx: &OpCtx, parts: &mut Vec<Part>) -> Outcome {
        let mut rng = Rng::new(self.seed, cycle);
        match op {
            INSERT => {
                let keynum = if ctx.phase == Phase::Load {
                    self.load_keys.keynum(cycle)
                } else {
                    self.insert_next
                        .fetch_add(self.insert_stride, Ordering::Relaxed)
                };
                let out = self.insert(keynum, ctx.ttl_s).await;
                if ctx.phase == Phase::Run {
                    // As YCSB: acknowledged whatever the outcome, so one failed insert
                    // does not freeze the readable range.
                    self.acked.acknowledge(keynum);
                }
                out
            }
            READ | UPDATE | RMW => {
                let keynum = self.next_keynum(&mut rng);
                let mut kb = [0u8; 32];
                let key = key_name(&mut kb, keynum);
                if op == UPDATE {
                    return self.update(key, &mut rng, ctx.ttl_s).await;
                }
                if op == READ {
                    return read_outcome(self.session.execute_unpaged(&self.read, (key,)).await);
                }
                let t0 = Instant::now();
                let r = read_outcome(self.session.execute_unpaged(&self.read, (key,)).await);
                let t1 = Instant::now();
                let failed = !matches!(r, Outcome::Ok | Outcome::NotFound);
                parts.push(Part {
                    op: READ,
                    start: t0,
                    end: t1,
                    outcome: r.clone(),
                });
                if failed {
                    return r;
                }
                let u = self.update(key, &mut rng, ctx.ttl_s).await;
                parts.push(Part {
                    op: UPDATE,
                    start: t1,
                    end: Instant::now(),
                    outcome: u.clone(),
                });
                u
            }
            _ => {
                let keynum = self.next_keynum(&mut rng);
                let len = 1 + rng.below(self.max_scan) as i32;
                let mut kb = [0u8; 32];
                let key = key_name(&mut kb, keynum);
                read_outcome(self.session.execute_unpaged(&self.scan, (key, len)).await)
            }
        }
    }
}

#[cfg(test)]
mod ack_tests {
    use super::AckCounter;

    #[test]
    fn limit_advances_only_over_contiguous_acknowledgements() {
        let c = AckCounter::new(10, 1); // keys 0..=9 loaded
        c.acknowledge(11);
        assert_eq!(c.limit(), 9, "10 is still in flight");
        c.acknowledge(12);
        c.acknowledge(10);
        assert_eq!(c.limit(), 12);
        c.acknowledge(13);
        assert_eq!(c.limit(), 13);
    }

    #[test]
    fn a_client_of_k_advances_over_its_own_keys() {
        // Client 1 of 3 after 10 records inserts 11, 14, 17, ...
        let c = AckCounter::new(11, 3);
        assert_eq!(c.limit(), 10);
        c.acknowledge(14);
        assert_eq!(c.limit(), 10, "11 is still in flight");
        c.acknowledge(11);
        assert_eq!(c.limit(), 16);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_sum_to_one() {
        for w in [
            YcsbWorkload::A,
            YcsbWorkload::B,
            YcsbWorkload::C,
            YcsbWorkload::D,
            YcsbWorkload::E,
            YcsbWorkload::F,
            YcsbWorkload::I,
        ] {
            let s: f64 = mix_for(w).iter().sum();
            assert!((s - 1.0).abs() < 1e-9, "{w:?}");
            assert_eq!(mix_for(w).len(), names().len());
        }
    }
}

#[cfg(test)]
mod insert_range_tests {
    use super::*;
    use crate::config::{Cli, Command};
    use clap::Parser;
    use std::collections::BTreeSet;

    fn ycsb(args: &[&str]) -> YcsbCommand {
        let mut v = vec!["casslab-load", "ycsb", "-w", "a"];
        v.extend_from_slice(args);
        match Cli::try_parse_from(v).unwrap().command {
            Command::Ycsb(c) => c,
            _ => unreachable!(),
        }
    }

    /// Key numbers 250..749 of 1,000 records.
    fn sliced() -> YcsbCommand {
        ycsb(&[
            "--records",
            "1000",
            "--insert-start",
            "250",
            "--insert-count",
            "500",
        ])
    }

    /// The key numbers the K clients of `--client I/K` insert, as the runner hands
    /// out the load stage's cycles (base 0, this client's share of the count).
    fn loaded(cmd: &YcsbCommand, clients: u64) -> Vec<Vec<u64>> {
        let range = InsertRange::of(cmd).unwrap();
        (0..clients)
            .map(|index| {
                let slice = ClientSlice {
                    index,
                    count: clients,
                };
                (0..slice.share(range.count))
                    .map(|i| range.keynum(slice.cycle(0, i)))
                    .collect()
            })
            .collect()
    }

    fn names(keys: impl IntoIterator<Item = u64>) -> BTreeSet<String> {
        let mut kb = [0u8; 32];
        keys.into_iter()
            .map(|k| key_name(&mut kb, k).to_string())
            .collect()
    }

    #[test]
    fn a_sliced_load_inserts_exactly_its_key_numbers_split_over_k_clients() {
        let cmd = sliced();
        assert_eq!(
            InsertRange::of(&cmd).unwrap(),
            InsertRange {
                start: 250,
                count: 500
            }
        );
        for k in [1, 2, 3, 7] {
            let per_client = loaded(&cmd, k);
            let mut all: Vec<u64> = per_client.concat();
            all.sort_unstable();
            assert_eq!(all, (250..750).collect::<Vec<_>>(), "{k} clients");
        }
        // Without a count: the rest of the records (CoreWorkload's default).
        let rest = ycsb(&["--records", "1000", "--insert-start", "900"]);
        assert_eq!(loaded(&rest, 1)[0], (900..1000).collect::<Vec<_>>());
        // Neither: the whole key space, as before these options.
        assert_eq!(
            loaded(&ycsb(&["--records", "10"]), 1)[0],
            (0..10).collect::<Vec<_>>()
        );
    }

    #[test]
    fn two_halves_write_the_keys_of_one_whole_load_and_no_other() {
        let first = ycsb(&["--records", "1000", "--insert-count", "500"]);
        let second = ycsb(&[
            "--records",
            "1000",
            "--insert-start",
            "500",
            "--insert-count",
            "500",
        ]);
        let a = names(loaded(&first, 1).concat());
        let b = names(loaded(&second, 2).concat());
        assert_eq!(a.len() + b.len(), 1000);
        assert!(a.is_disjoint(&b));
        let whole = names(loaded(&ycsb(&["--records", "1000"]), 1).concat());
        assert_eq!(a.union(&b).cloned().collect::<BTreeSet<_>>(), whole);
        // YCSB's own key of key number 0: "user" + FNV-1a 64 of 0, as a signed long.
        let mut kb = [0u8; 32];
        assert_eq!(key_name(&mut kb, 0), "user6284781860667377211");
    }

    #[test]
    fn a_range_outside_the_records_is_refused_in_one_line_naming_both() {
        let over = ycsb(&[
            "--records",
            "1000",
            "--insert-start",
            "600",
            "--insert-count",
            "500",
        ]);
        let e = InsertRange::of(&over).unwrap_err().to_string();
        assert!(
            e.contains("--insert-start 600 + --insert-count 500 is more than --records 1000"),
            "{e}"
        );
        assert!(!e.contains('\n') && e.starts_with("invalid option --insert-count"));
        let wraps = ycsb(&[
            "--insert-start",
            &u64::MAX.to_string(),
            "--insert-count",
            "2",
        ]);
        assert!(InsertRange::of(&wraps).is_err());
        let past = ycsb(&["--records", "1000", "--insert-start", "1000"]);
        let e = InsertRange::of(&past).unwrap_err().to_string();
        assert!(
            e.contains("--insert-start: 1000 is not below --records 1000"),
            "{e}"
        );
        // The exact fit is fine, and a count of 0 never parses.
        let fit = ycsb(&[
            "--records",
            "1000",
            "--insert-start",
            "600",
            "--insert-count",
            "400",
        ]);
        assert!(InsertRange::of(&fit).is_ok());
        let zero = ["casslab-load", "ycsb", "-w", "a", "--insert-count", "0"];
        assert!(Cli::try_parse_from(zero).is_err());
    }

    #[test]
    fn run_phase_choices_draw_from_the_load_range_as_ycsb_but_latest_from_all() {
        let cmd = sliced();
        let range = InsertRange::of(&cmd).unwrap();
        let last = 999; // every record inserted
        for dist in [KeyDist::Uniform, KeyDist::Hotspot, KeyDist::Zipfian] {
            let c = chooser(&cmd, range, dist, 0);
            let draws: Vec<u64> = (0..20_000)
                .map(|i| c.next_keynum(&mut Rng::new(3, i), last))
                .collect();
            let (lo, hi) = (*draws.iter().min().unwrap(), *draws.iter().max().unwrap());
            // zipfian: YCSB's inclusive upper end insertstart + insertcount (+ new keys).
            let top = if dist == KeyDist::Zipfian { 750 } else { 749 };
            assert!(lo >= 250 && hi <= top, "{dist:?}: {lo}..={hi}");
            assert!(
                lo < 260 && hi > 740,
                "{dist:?} covers the range: {lo}..={hi}"
            );
        }
        let latest = chooser(&cmd, range, KeyDist::Latest, 0);
        let draws: Vec<u64> = (0..20_000)
            .map(|i| latest.next_keynum(&mut Rng::new(3, i), last))
            .collect();
        assert!(draws.iter().any(|&k| k >= 750) && draws.iter().any(|&k| k < 250));
    }
}
