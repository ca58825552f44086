//! cassandra-stress `write`, `read` and `mixed` on `keyspace1.standard1`
//! (`key blob PRIMARY KEY, "C0".."C4" blob`, 34-byte columns, 10-byte keys),
//! with cassandra-stress's population defaults: `seq(1..N)` for write,
//! `gaussian(1..N)` (stdvrng 3) for read and mixed, N = --records or --ops or
//! 1000000. Mixed uses ratio(write=1,read=3) unless --mix is given.

use super::{iot, ttl_clause, ttl_set, ByTtl, Cls};
use crate::config::{Cl, StressCommand, StressMode, MAX_VALUE_BYTES};
use crate::db::{self, read_outcome, write_outcome, RetryCounters};
use crate::error::{LoadError, Result};
use crate::exec::{OpCtx, Phase, Workload};
use crate::generator::{hash3, BytePool, Dist, Rng};
use crate::stats::Outcome;
use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;

const WRITE: usize = 0;
const READ: usize = 1;
/// Most columns of standard1 (`--columns`); the values of one write live on the stack.
pub const MAX_COLUMNS: usize = 64;
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

/// Column count and sizes of standard1 rows (`-col n=DIST size=DIST`).
pub struct Sizes {
    /// Columns per row.
    pub count: Dist,
    /// Bytes per column, drawn; `None`: every column is `fixed` bytes.
    pub size: Option<Dist>,
    /// Bytes per column without a size distribution.
    pub fixed: usize,
}

impl Sizes {
    /// From `--columns`, `--column-size-dist` and `--column-size`.
    pub fn of(cmd: &StressCommand) -> Result<Self> {
        let count = Dist::parse(&cmd.columns)?;
        if count.min() == 0 || count.max() > MAX_COLUMNS as u64 {
            return Err(LoadError::option(
                "--columns",
                format!(
                    "{} draws {}..{} columns; standard1 takes 1 to {MAX_COLUMNS}",
                    cmd.columns,
                    count.min(),
                    count.max()
                ),
            ));
        }
        let size = cmd
            .column_size_dist
            .as_deref()
            .map(Dist::parse)
            .transpose()?;
        if let Some(d) = &size {
            if d.min() == 0 || d.max() > MAX_VALUE_BYTES {
                return Err(LoadError::option(
                    "--column-size-dist",
                    format!("{d} draws sizes outside 1..{MAX_VALUE_BYTES} bytes"),
                ));
            }
        }
        Ok(Sizes {
            count,
            size,
            fixed: cmd.column_size,
        })
    }

    /// Columns of the table: the largest count a row can have.
    pub fn table_columns(&self) -> usize {
        self.count.max() as usize
    }

    /// Largest value size, for the byte pool.
    pub fn largest(&self) -> usize {
        self.size.as_ref().map_or(self.fixed, |d| d.max() as usize)
    }

    /// Columns written for population seed `s` (the same every time `s` is written).
    pub fn count_for(&self, seed: u64, s: u64) -> usize {
        let n = self
            .count
            .sample(&mut Rng::new(hash3(seed, s, 0x434E), 0), s);
        (n as usize).clamp(1, self.table_columns())
    }

    /// Bytes of column `c` of seed `s`.
    pub fn size_for(&self, seed: u64, s: u64, c: usize) -> usize {
        match &self.size {
            None => self.fixed,
            Some(d) => d.sample(&mut Rng::new(hash3(seed, s, c as u64), 0x535A), s) as usize,
        }
    }
}

/// The cassandra-stress workload bound to a session.
pub struct Stress {
    session: Session,
    names: Vec<String>,
    read: PreparedStatement,
    writes: ByTtl<Vec<PreparedStatement>>,
    pop: Dist,
    pool: BytePool,
    sizes: Sizes,
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
        let sizes = Sizes::of(cmd)?;
        let cols: Vec<String> = (0..sizes.table_columns())
            .map(|i| format!(", \"C{i}\" blob"))
            .collect();
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
        let sizes = Sizes::of(cmd)?;
        // One insert per column count a row can have: `writes[n - 1]` writes C0..C{n-1}.
        let mut writes = ByTtl::new();
        for ttl in ttl_set(ttls) {
            let mut by_count = Vec::new();
            for n in 1..=sizes.table_columns() {
                let cols: Vec<String> = (0..n).map(|i| format!(", \"C{i}\"")).collect();
                let cql = format!(
                    "INSERT INTO {ks}.{TABLE} (key{}) VALUES (?{}){}",
                    cols.concat(),
                    ", ?".repeat(n),
                    ttl_clause(ttl)
                );
                by_count.push(db::prepare(&session, &cql, cls.write, &retries, WRITE, nr).await?);
            }
            writes.push(ttl, by_count);
        }
        Ok(Stress {
            session,
            names,
            read,
            writes,
            pop: population(cmd)?,
            // As large as the largest value, so no value is cut to the pool's size.
            pool: BytePool::new(cmd.run.seed ^ 0x5354_5245, sizes.largest().max(1 << 16)),
            sizes,
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
        let n = self.sizes.count_for(self.seed, s);
        let mut vals: [&[u8]; MAX_COLUMNS + 1] = [&[]; MAX_COLUMNS + 1];
        vals[0] = &key;
        for (c, v) in vals[1..=n].iter_mut().enumerate() {
            let size = self.sizes.size_for(self.seed, s, c);
            *v = self.pool.slice(hash3(self.seed, s, c as u64), size);
        }
        let st = &self.writes.get(ctx.ttl_s)[n - 1];
        write_outcome(self.session.execute_unpaged(st, &vals[..=n]).await)
    }

    fn retries(&self) -> Vec<u64> {
        self.retries.snapshot()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn a_replication_map_must_name_its_class() {
        let nts = "{'class': 'NetworkTopologyStrategy', 'dc1': 3}";
        assert_eq!(replication_map(nts).unwrap(), nts);
        for bad in ["dc1=3", "{'dc1': 3}", ""] {
            let e = replication_map(bad).unwrap_err().to_string();
            assert!(e.contains("--replication"), "{e}");
        }
    }

    fn cmd(extra: &[&str]) -> StressCommand {
        let args = [
            "casslab-load",
            "stress",
            "write",
            "--hosts",
            "127.0.1.1:9042",
        ];
        let c = crate::config::Cli::try_parse_from(args.iter().chain(extra)).unwrap();
        let crate::config::Command::Stress(s) = c.command else {
            panic!("not stress")
        };
        s
    }

    #[test]
    fn column_counts_and_sizes_are_drawn_per_key_within_their_distributions() {
        let z = Sizes::of(&cmd(&[
            "--columns",
            "uniform(2..8)",
            "--column-size-dist",
            "gaussian(10..100)",
        ]))
        .unwrap();
        assert_eq!(z.table_columns(), 8);
        let (mut counts, mut sizes) = (std::collections::BTreeSet::new(), Vec::new());
        for s in 0..2000 {
            let n = z.count_for(7, s);
            assert_eq!(n, z.count_for(7, s), "a key's row is the same every write");
            counts.insert(n);
            sizes.extend((0..n).map(|c| z.size_for(7, s, c)));
        }
        assert_eq!(counts, (2..=8).collect());
        assert!(sizes.iter().all(|b| (10..=100).contains(b)));
        let mean = sizes.iter().sum::<usize>() as f64 / sizes.len() as f64;
        assert!((mean - 55.0).abs() < 3.0, "{mean}");
        // The defaults are c-s's: five columns of 34 bytes.
        let d = Sizes::of(&cmd(&[])).unwrap();
        assert_eq!((d.count_for(1, 1), d.size_for(1, 1, 0)), (5, 34));
    }

    #[test]
    fn column_distributions_outside_what_standard1_takes_are_refused() {
        for (flag, dist, want) in [
            ("--columns", "uniform(1..65)", "takes 1 to 64"),
            ("--columns", "fixed(0)", "takes 1 to 64"),
            ("--column-size-dist", "uniform(0..10)", "outside 1..1048576"),
            (
                "--column-size-dist",
                "exp(1..10)",
                "unsupported distribution",
            ),
        ] {
            let e = Sizes::of(&cmd(&[flag, dist]))
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains(want), "{flag} {dist}: {e}");
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
