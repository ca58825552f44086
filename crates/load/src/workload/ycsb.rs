//! YCSB core workloads A-F and I against YCSB's Cassandra schema
//! (`usertable (y_id varchar PRIMARY KEY, field0..N varchar)`), following
//! `CoreWorkload` and the `cassandra-cql` binding:
//! keys `"user" + fnvhash64(keynum)` (insertorder=hashed), reads of all
//! fields, updates of one random field (writeallfields=false), inserts of all
//! fields, scans `WHERE token(y_id) >= token(?) LIMIT len` with len uniform
//! in 1..=max_scan_length, read-modify-write = read then update (recorded as
//! one `rmw` op, and its read and update also as parts, as YCSB reports them). Request distributions as YCSB: scrambled zipfian over
//! records + expected new keys (with rejection of keys not inserted yet),
//! latest, uniform, hotspot.

use super::{ttl_clause, ttl_set, ByTtl, Cls};
use crate::config::{Cl, KeyDist, YcsbCommand, YcsbWorkload};
use crate::db::{self, read_outcome, write_outcome, RetryCounters};
use crate::error::Result;
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

enum Chooser {
    Uniform { lb: u64, ub: u64 },
    Zipf(ScrambledZipfian),
    Hotspot(Hotspot),
    Latest(Mutex<Latest>),
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

/// Key chooser for a distribution, as YCSB's CoreWorkload builds it.
fn chooser(cmd: &YcsbCommand, dist: KeyDist, expected_ops: u64) -> Chooser {
    let records = cmd.records.max(1);
    match dist {
        KeyDist::Uniform => Chooser::Uniform {
            lb: 0,
            ub: records - 1,
        },
        KeyDist::Zipfian => {
            let insert_prop = mix_for(cmd.workload)[INSERT];
            let expected_new = (expected_ops as f64 * insert_prop * 2.0) as u64;
            Chooser::Zipf(ScrambledZipfian::new(
                0,
                records + expected_new,
                cmd.zipfian_constant,
            ))
        }
        KeyDist::Hotspot => Chooser::Hotspot(Hotspot::new(
            0,
            records - 1,
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
        Ok(Ycsb {
            session,
            names,
            read,
            scan,
            writes,
            chooser: chooser(cmd, dist, expected_ops),
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
        let last = self.acked.limit();
        for _ in 0..100 {
            let k = match &self.chooser {
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

    fn field(&self, keynum: u64, f: usize) -> &str {
        self.pool
            .str(hash3(self.seed, keynum, f as u64), self.field_length)
    }

    async fn insert(&self, keynum: u64, ttl: Option<i32>) -> Outcome {
        let mut kb = [0u8; 32];
        let key = write_key(&mut kb, "user", fnvhash64(keynum as i64) as u64);
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
                    cycle
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
                let key = write_key(&mut kb, "user", fnvhash64(keynum as i64) as u64);
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
                let key = write_key(&mut kb, "user", fnvhash64(keynum as i64) as u64);
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
