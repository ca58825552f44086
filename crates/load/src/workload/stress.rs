//! cassandra-stress `write`, `read` and `mixed` on `keyspace1.standard1`
//! (`key blob PRIMARY KEY, "C0".."C4" blob`, 34-byte columns, 10-byte keys),
//! with cassandra-stress's population defaults: `seq(1..N)` for write,
//! `gaussian(1..N)` (stdvrng 3) for read and mixed, N = --records or --ops or
//! 1000000. Mixed uses ratio(write=1,read=3) unless --mix is given.

use super::{iot, ttl_clause, ttl_set, ByTtl, Cls};
use crate::config::{Cl, StressCommand, StressMode};
use crate::db::{self, read_outcome, write_outcome, RetryCounters};
use crate::error::{LoadError, Result};
use crate::exec::{OpCtx, Phase, Workload};
use crate::generator::{hash3, BytePool, Dist, Rng};
use crate::stats::Outcome;
use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;

const WRITE: usize = 0;
const READ: usize = 1;
const COLUMNS: usize = 5;
const KEY_LEN: usize = 10;
const TABLE: &str = "standard1";

/// Op names (index = op id).
pub fn names() -> Vec<String> {
    vec!["write".into(), "read".into()]
}

/// Default mix per mode.
pub fn mix_for(mode: StressMode) -> Vec<f64> {
    match mode {
        StressMode::Write => vec![1.0, 0.0],
        StressMode::Read => vec![0.0, 1.0],
        StressMode::Mixed => vec![1.0, 3.0],
    }
}

/// Population size N as cassandra-stress picks it.
pub fn population_size(cmd: &StressCommand) -> u64 {
    cmd.records.or(cmd.run.ops).unwrap_or(1_000_000).max(1)
}

/// Population distribution: `--pop` or the cassandra-stress default for the mode.
pub fn population(cmd: &StressCommand) -> Result<Dist> {
    let n = population_size(cmd);
    match &cmd.pop {
        Some(t) => Dist::parse(t),
        None if cmd.mode == StressMode::Write => Ok(Dist::Seq { min: 1, max: n }),
        None => Ok(Dist::Gaussian {
            min: 1,
            max: n,
            stdvrng: 3.0,
        }),
    }
}

/// `--replication`: a CQL map `{'class': ..., ...}` naming its class.
pub fn replication_map(text: &str) -> Result<String> {
    let t = text.trim();
    if !(t.starts_with('{') && t.ends_with('}') && t.contains("'class'")) {
        return Err(LoadError::option(
            "--replication",
            format!(
                "{t:?} is not a CQL replication map (e.g. \
                 {{'class': 'NetworkTopologyStrategy', 'dc1': 3}})"
            ),
        ));
    }
    Ok(t.to_string())
}

/// Writes the 10-byte key of population seed `s` (hex digits of a hash, as text bytes).
#[inline]
pub fn key_of(seed: u64, s: u64, out: &mut [u8; KEY_LEN]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let h = hash3(seed, s, 0x004B_4559);
    for (i, b) in out.iter_mut().enumerate() {
        *b = HEX[((h >> (i * 4)) & 0xf) as usize];
    }
}

/// The cassandra-stress workload bound to a session.
pub struct Stress {
    session: Session,
    names: Vec<String>,
    read: PreparedStatement,
    writes: ByTtl<PreparedStatement>,
    pop: Dist,
    pool: BytePool,
    column_size: usize,
    seed: u64,
    retries: RetryCounters,
}

impl Stress {
    /// Creates keyspace and table if missing.
    pub async fn create_schema(session: &Session, cmd: &StressCommand) -> Result<()> {
        match &cmd.replication {
            Some(r) => {
                let map = replication_map(r)?;
                db::ensure_keyspace_with(session, &cmd.keyspace, &map, cmd.schema.drop).await?
            }
            None => {
                db::ensure_keyspace(session, &cmd.keyspace, cmd.schema.rf, cmd.schema.drop).await?
            }
        }
        let cols: Vec<String> = (0..COLUMNS).map(|i| format!(", \"C{i}\" blob")).collect();
        let with = match &cmd.compaction {
            Some(c) => format!(" WITH compaction = {}", iot::compaction_map(c)?),
            None => String::new(),
        };
        db::ddl(
            session,
            &format!(
                "CREATE TABLE IF NOT EXISTS {}.{TABLE} (key blob PRIMARY KEY{}){with}",
                cmd.keyspace,
                cols.concat()
            ),
        )
        .await
    }

    /// Prepares the statements.
    pub async fn new(session: Session, cmd: &StressCommand, ttls: &[Option<i32>]) -> Result<Self> {
        let cls = Cls::new(cmd.conn.cl_read, cmd.conn.cl_write, Cl::LocalOne);
        let names = names();
        let retries = RetryCounters::new(names.len(), cmd.conn.error_retries);
        let nr = cmd.conn.no_retry;
        let ks = &cmd.keyspace;
        let read = db::prepare(
            &session,
            &format!("SELECT * FROM {ks}.{TABLE} WHERE key = ?"),
            cls.read,
            &retries,
            READ,
            nr,
        )
        .await?;
        let mut writes = ByTtl::new();
        let cols: Vec<String> = (0..COLUMNS).map(|i| format!(", \"C{i}\"")).collect();
        for ttl in ttl_set(ttls) {
            let cql = format!(
                "INSERT INTO {ks}.{TABLE} (key{}) VALUES (?{}){}",
                cols.concat(),
                ", ?".repeat(COLUMNS),
                ttl_clause(ttl)
            );
            writes.push(
                ttl,
                db::prepare(&session, &cql, cls.write, &retries, WRITE, nr).await?,
            );
        }
        Ok(Stress {
            session,
            names,
            read,
            writes,
            pop: population(cmd)?,
            pool: BytePool::new(cmd.run.seed ^ 0x5354_5245, 1 << 16),
            column_size: cmd.column_size,
            seed: cmd.run.seed,
            retries,
        })
    }
}

impl Workload for Stress {
    fn op_names(&self) -> &[String] {
        &self.names
    }

    async fn run_op(&self, op: usize, cycle: u64, ctx: &OpCtx) -> Outcome {
        let mut rng = Rng::new(self.seed, cycle);
        let s = if ctx.phase == Phase::Load {
            1 + cycle
        } else {
            self.pop.sample(&mut rng, cycle)
        };
        let mut key = [0u8; KEY_LEN];
        key_of(self.seed, s, &mut key);
        if op == READ {
            return read_outcome(self.session.execute_unpaged(&self.read, (&key[..],)).await);
        }
        let mut vals: [&[u8]; COLUMNS + 1] = [&[]; COLUMNS + 1];
        vals[0] = &key;
        for (c, v) in vals[1..].iter_mut().enumerate() {
            *v = self
                .pool
                .slice(hash3(self.seed, s, c as u64), self.column_size);
        }
        write_outcome(
            self.session
                .execute_unpaged(self.writes.get(ctx.ttl_s), &vals[..])
                .await,
        )
    }

    fn retries(&self) -> Vec<u64> {
        self.retries.snapshot()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replication_map_must_name_its_class() {
        let nts = "{'class': 'NetworkTopologyStrategy', 'dc1': 3}";
        assert_eq!(replication_map(nts).unwrap(), nts);
        for bad in ["dc1=3", "{'dc1': 3}", ""] {
            let e = replication_map(bad).unwrap_err().to_string();
            assert!(e.contains("--replication"), "{e}");
        }
    }

    #[test]
    fn keys_are_stable_and_distinct() {
        let (mut a, mut b, mut c) = ([0u8; KEY_LEN], [0u8; KEY_LEN], [0u8; KEY_LEN]);
        key_of(1, 5, &mut a);
        key_of(1, 5, &mut b);
        key_of(1, 6, &mut c);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.iter().all(|x| x.is_ascii_hexdigit()));
    }
}
