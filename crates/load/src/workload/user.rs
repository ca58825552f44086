//! Running a cassandra-stress user profile (see [`super::profile`] for the
//! supported subset). Model: the population distribution picks a partition
//! seed `p`; partition key values derive from `p`; a partition has
//! `prod(cluster(col))` rows; clustering and regular values derive from
//! `(p, row, column)` through the column's population and size distributions,
//! so reads find what inserts wrote. Values are generated per op (`CqlValue`),
//! so this path allocates; the built-in workloads do not.

use super::idempotence::is_idempotent;
use super::profile::{ColumnSpec, Profile};
use super::values::{self, Ty};
use super::{ttl_clause, ttl_set, ByTtl, Cls};
use crate::config::{Cl, UserCommand};
use crate::db::{self, classify, write_outcome, RetryCounters};
use crate::error::{LoadError, Result};
use crate::exec::{OpCtx, Phase, Workload};
use crate::generator::{hash3, BytePool, Dist, Rng};
use crate::stats::Outcome;
use scylla::client::session::Session;
use scylla::cluster::metadata::{ColumnKind, ColumnType};
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::value::CqlValue;
use std::path::Path;

/// Largest number of rows one insert operation writes.
const MAX_ROWS_PER_OP: u64 = 5000;

struct Col {
    name: String,
    kind: ColumnKind,
    ty: Ty,
    spec: ColumnSpec,
}

enum Bind {
    Col(usize),
    Limit,
}

struct Query {
    ps: PreparedStatement,
    binds: Vec<Bind>,
    samerow: bool,
}

/// Op names: `insert` then the profile's queries.
pub fn names(p: &Profile) -> Vec<String> {
    std::iter::once("insert".to_string())
        .chain(p.queries.iter().map(|q| q.name.clone()))
        .collect()
}

fn ty_of(t: &ColumnType, col: &str, path: &Path) -> Result<Ty> {
    Ty::of(t).ok_or_else(|| LoadError::Profile {
        path: path.to_path_buf(),
        reason: format!(
            "column {col:?} has type {t:?}, which casslab-load cannot generate values for \
             (it generates every native CQL type, collections, tuples, vectors and user types)"
        ),
    })
}

/// The insert statement (without TTL) and the column indexes in its bind order.
/// A table with counter columns is written as c-s does, by incrementing every
/// counter by its generated value: `UPDATE t SET "c" = "c" + ? WHERE key = ? ...`.
fn insert_cql(ks: &str, table: &str, cols: &[Col]) -> (String, Vec<usize>) {
    let q = |c: &Col| format!("\"{}\"", c.name);
    let counters: Vec<usize> = (0..cols.len())
        .filter(|&i| cols[i].ty == Ty::Counter)
        .collect();
    if counters.is_empty() {
        let names: Vec<String> = cols.iter().map(q).collect();
        let cql = format!(
            "INSERT INTO {ks}.\"{table}\" ({}) VALUES ({})",
            names.join(", "),
            vec!["?"; cols.len()].join(", ")
        );
        return (cql, (0..cols.len()).collect());
    }
    let keys: Vec<usize> = (0..cols.len())
        .filter(|&i| {
            matches!(
                cols[i].kind,
                ColumnKind::PartitionKey | ColumnKind::Clustering
            )
        })
        .collect();
    let set: Vec<String> = counters
        .iter()
        .map(|&i| format!("{0} = {0} + ?", q(&cols[i])))
        .collect();
    let wh: Vec<String> = keys
        .iter()
        .map(|&i| format!("{} = ?", q(&cols[i])))
        .collect();
    let cql = format!(
        "UPDATE {ks}.\"{table}\" SET {} WHERE {}",
        set.join(", "),
        wh.join(" AND ")
    );
    (cql, counters.into_iter().chain(keys).collect())
}

/// A profile bound to a session.
pub struct User {
    session: Session,
    names: Vec<String>,
    cols: Vec<Col>,
    inserts: ByTtl<PreparedStatement>,
    /// Column indexes in the insert's bind order.
    insert_binds: Vec<usize>,
    /// A counter table: the insert is an `UPDATE ... SET c = c + ?`, batched as COUNTER.
    counter: bool,
    queries: Vec<Query>,
    profile: Profile,
    pop: Dist,
    pool: BytePool,
    seed: u64,
    cl_write: Cl,
    retries: RetryCounters,
}

fn already_exists(e: &LoadError) -> bool {
    let m = e.to_string().to_ascii_lowercase();
    m.contains("already exist") || m.contains("cannot add existing")
}

/// Creates keyspace and table from the profile's definitions if missing
/// (definitions of existing objects are skipped).
pub async fn create_schema(session: &Session, p: &Profile, rf: u32) -> Result<()> {
    // Metadata errors only mean we cannot skip; the CREATE then reports the problem.
    let _ = session.refresh_metadata().await;
    let state = session.get_cluster_state();
    let ks = state.get_keyspace(&p.keyspace);
    let table_exists = ks.is_some_and(|k| k.tables.contains_key(&p.table));
    if ks.is_none() {
        match &p.keyspace_definition {
            Some(cql) => match db::ddl(session, cql.trim().trim_end_matches(';')).await {
                Err(e) if already_exists(&e) => {}
                other => other?,
            },
            None => db::ensure_keyspace(session, &p.keyspace, rf, false).await?,
        }
    }
    session
        .use_keyspace(p.keyspace.clone(), false)
        .await
        .map_err(|e| LoadError::Schema {
            cql: format!("USE {}", p.keyspace),
            reason: e.to_string(),
        })?;
    let definitions = p.extra_definitions.iter().chain(&p.table_definition);
    for cql in definitions.filter(|_| !table_exists) {
        match db::ddl(session, cql.trim().trim_end_matches(';')).await {
            Err(e) if already_exists(&e) => {}
            other => other?,
        }
    }
    Ok(())
}

impl User {
    /// Reads the table's columns from cluster metadata and prepares the insert and queries.
    pub async fn new(
        session: Session,
        p: Profile,
        cmd: &UserCommand,
        ttls: &[Option<i32>],
    ) -> Result<Self> {
        let path = cmd.profile.clone();
        let perr = |reason: String| LoadError::Profile {
            path: path.clone(),
            reason,
        };
        session
            .refresh_metadata()
            .await
            .map_err(|e| perr(format!("cannot read schema metadata: {e}")))?;
        let state = session.get_cluster_state();
        let table = state
            .get_keyspace(&p.keyspace)
            .and_then(|k| k.tables.get(&p.table))
            .ok_or_else(|| perr(format!("table {}.{} does not exist and the profile has no table_definition that creates it", p.keyspace, p.table)))?;
        let mut order: Vec<String> = table.partition_key.clone();
        order.extend(table.clustering_key.iter().cloned());
        let mut rest: Vec<&String> = table
            .columns
            .keys()
            .filter(|c| !order.contains(c))
            .collect();
        rest.sort();
        order.extend(rest.into_iter().cloned());
        let mut cols = Vec::new();
        for name in order {
            let c = &table.columns[&name];
            cols.push(Col {
                ty: ty_of(&c.typ, &name, &path)?,
                kind: c.kind.clone(),
                spec: p.column(&name),
                name,
            });
        }
        for spec in &p.columns {
            if !cols.iter().any(|c| c.name == spec.name) {
                return Err(perr(format!(
                    "columnspec names column {:?}, which table {} does not have",
                    spec.name, p.table
                )));
            }
        }
        let names = names(&p);
        let retries = RetryCounters::new(names.len(), cmd.conn.error_retries);
        let cls = Cls::new(cmd.conn.cl_read, cmd.conn.cl_write, Cl::LocalOne);
        let nr = cmd.conn.no_retry;
        let ks = &p.keyspace;
        let (write, insert_binds) = insert_cql(ks, &p.table, &cols);
        let counter = cols.iter().any(|c| c.ty == Ty::Counter);
        if counter && ttls.iter().any(Option::is_some) {
            return Err(perr(format!(
                "table {} has counter columns, which cannot take a TTL (drop --ttl)",
                p.table
            )));
        }
        let mut inserts = ByTtl::new();
        for ttl in ttl_set(ttls) {
            let mut ps = db::prepare(
                &session,
                &format!("{write}{}", ttl_clause(ttl)),
                cls.write,
                &retries,
                0,
                nr,
            )
            .await?;
            // A counter increment applied twice counts twice: never retried.
            ps.set_is_idempotent(!counter);
            inserts.push(ttl, ps);
        }
        let mut queries = Vec::new();
        for (i, q) in p.queries.iter().enumerate() {
            let mut ps = db::prepare(&session, &q.cql, cls.read, &retries, i + 1, nr).await?;
            // An LWT or a counter update applied twice is not the same: never retried.
            ps.set_is_idempotent(is_idempotent(&q.cql));
            let mut binds = Vec::new();
            for spec in ps.get_variable_col_specs().iter() {
                let b =
                    if spec.name() == "[limit]" {
                        Bind::Limit
                    } else {
                        Bind::Col(cols.iter().position(|c| c.name == spec.name()).ok_or_else(
                            || {
                                perr(format!(
                                    "queries.{}: bind marker for {:?} is not a column of {}",
                                    q.name,
                                    spec.name(),
                                    p.table
                                ))
                            },
                        )?)
                    };
                binds.push(b);
            }
            queries.push(Query {
                ps,
                binds,
                samerow: q.samerow,
            });
        }
        let n = cmd.records.unwrap_or(1_000_000).max(1);
        let pop = match &cmd.pop {
            Some(t) => Dist::parse(t)?,
            None => Dist::Gaussian {
                min: 1,
                max: n,
                stdvrng: 3.0,
            },
        };
        Ok(User {
            session,
            names,
            cols,
            inserts,
            insert_binds,
            counter,
            queries,
            profile: p,
            pop,
            pool: BytePool::new(cmd.run.seed ^ 0x5553_4552, 1 << 17),
            seed: cmd.run.seed,
            cl_write: cls.write,
            retries,
        })
    }

    fn cluster_counts(&self, p: u64) -> Vec<u64> {
        self.cols
            .iter()
            .enumerate()
            .filter(|(_, c)| c.kind == ColumnKind::Clustering)
            .map(|(i, c)| {
                c.spec
                    .cluster
                    .sample(&mut Rng::new(hash3(self.seed, p, i as u64), 0xC1), p)
                    .max(1)
            })
            .collect()
    }

    fn rows_in(&self, p: u64) -> u64 {
        self.cluster_counts(p)
            .iter()
            .fold(1u64, |a, c| a.saturating_mul(*c))
            .min(1 << 40)
    }

    /// Value of column `ci` for partition `p`, row `row`.
    fn value(&self, ci: usize, p: u64, row: u64, counts: &[u64]) -> CqlValue {
        let c = &self.cols[ci];
        // As c-s: every column's identity is drawn from its population, seeded by
        // the partition (key columns), the clustering index or the row.
        let id = match c.kind {
            ColumnKind::PartitionKey => c
                .spec
                .population
                .sample(&mut Rng::new(hash3(self.seed, p, ci as u64), 0x504B), p),
            ColumnKind::Clustering => {
                // Mixed-radix digit of `row` for this clustering column.
                let j = self.cols[..ci]
                    .iter()
                    .filter(|x| x.kind == ColumnKind::Clustering)
                    .count();
                let below: u64 = counts[j + 1..].iter().product();
                let idx = (row / below.max(1)) % counts[j];
                c.spec
                    .population
                    .sample(&mut Rng::new(hash3(self.seed, p, ci as u64), idx), idx)
            }
            ColumnKind::Static => c
                .spec
                .population
                .sample(&mut Rng::new(hash3(self.seed, p, ci as u64), 0), 0),
            _ => c
                .spec
                .population
                .sample(&mut Rng::new(hash3(self.seed, p, ci as u64), row), row),
        };
        let h = hash3(self.seed ^ ci as u64, id, 0x5A);
        let max = if c.ty.is_collection() {
            values::MAX_ELEMENTS
        } else {
            1 << 20
        };
        let size = (c.spec.size.sample(&mut Rng::new(h, 1), id) as usize).clamp(1, max);
        values::value(&c.ty, id, size, h, &self.pool)
    }

    async fn insert(&self, cycle: u64, ctx: &OpCtx) -> Outcome {
        let mut rng = Rng::new(self.seed, cycle);
        let ins = &self.profile.insert;
        let parts = if ctx.phase == Phase::Load {
            1
        } else {
            ins.partitions.sample(&mut rng, cycle).max(1)
        };
        let mut rows: Vec<Vec<CqlValue>> = Vec::new();
        for k in 0..parts {
            let p = if ctx.phase == Phase::Load {
                1 + cycle
            } else {
                self.pop.sample(&mut rng, cycle * parts + k)
            };
            let counts = self.cluster_counts(p);
            let total = counts.iter().fold(1u64, |a, c| a.saturating_mul(*c));
            let take = if ctx.phase == Phase::Load {
                total
            } else {
                let frac =
                    (ins.select.sample(&mut rng, cycle) as f64 / ins.select_of as f64).min(1.0);
                ((total as f64 * frac).ceil() as u64).max(1)
            }
            .min(MAX_ROWS_PER_OP);
            let first = if take >= total {
                0
            } else {
                rng.below(total - take + 1)
            };
            for r in first..first + take {
                rows.push(
                    self.insert_binds
                        .iter()
                        .map(|&ci| self.value(ci, p, r, &counts))
                        .collect(),
                );
            }
        }
        let st = self.inserts.get(ctx.ttl_s);
        if rows.len() == 1 {
            return write_outcome(self.session.execute_unpaged(st, &rows[0]).await);
        }
        let mut b = Batch::new(if self.counter {
            BatchType::Counter
        } else if ins.logged {
            BatchType::Logged
        } else {
            BatchType::Unlogged
        });
        for _ in 0..rows.len() {
            b.append_statement(st.clone());
        }
        b.set_consistency(db::consistency(self.cl_write));
        b.set_is_idempotent(!self.counter);
        write_outcome(self.session.batch(&b, &rows).await)
    }

    async fn query(&self, qi: usize, cycle: u64) -> Outcome {
        let q = &self.queries[qi];
        let mut rng = Rng::new(self.seed, cycle);
        let p = self.pop.sample(&mut rng, cycle);
        let counts = self.cluster_counts(p);
        let total = self.rows_in(p);
        let row = rng.below(total);
        let values: Vec<CqlValue> = q
            .binds
            .iter()
            .map(|b| match b {
                Bind::Limit => CqlValue::Int(100),
                Bind::Col(ci) => {
                    let r = if q.samerow { row } else { rng.below(total) };
                    self.value(*ci, p, r, &counts)
                }
            })
            .collect();
        match self.session.execute_unpaged(&q.ps, values).await {
            Ok(res) if !res.is_rows() => Outcome::Ok,
            Ok(res) => match res.into_rows_result() {
                Ok(r) if r.rows_num() > 0 => Outcome::Ok,
                Ok(_) => Outcome::NotFound,
                Err(e) => Outcome::Error(crate::stats::ErrorKind::Other, e.to_string()),
            },
            Err(e) => Outcome::Error(classify(&e), e.to_string()),
        }
    }
}

impl Workload for User {
    fn op_names(&self) -> &[String] {
        &self.names
    }

    async fn run_op(&self, op: usize, cycle: u64, ctx: &OpCtx) -> Outcome {
        if op == 0 {
            self.insert(cycle, ctx).await
        } else {
            self.query(op - 1, cycle).await
        }
    }

    fn retries(&self) -> Vec<u64> {
        self.retries.snapshot()
    }
}
