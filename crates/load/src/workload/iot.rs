//! IoT time-series workload. Table `iot.sensor_data`:
//! `device_id uuid` partition key, `service_name text` and
//! `observation_time timestamp` clustering (time DESC), `device_name text
//! static`, `observed_value float`. Each device has `--series` series (service
//! names); an insert writes `--values-per-insert` values (one per second
//! ending now) of one series as an unlogged single-partition batch. Reads, with
//! `--reads study` (the default) as seed 003 wrote them: `devdat` (at most 500
//! rows of a device), `lesrow` (at most 500 rows of a series), `avgdat` (device
//! and average over a series); with `--reads full-latest`: `devdat` every row of
//! the device (paged), `lesrow` the latest row of a series, `avgdat` the average
//! alone. Default mix: insert 50 %, and the reads 40/30/30 of the rest.

use super::{ttl_clause, ttl_set, ByTtl, Cls};
use crate::config::{Cl, IotCommand, IotReads};
use crate::db::{self, classify, read_outcome, rows_of, write_outcome, RetryCounters};
use crate::error::{LoadError, Result};
use crate::exec::{OpCtx, Phase, StagePlan, Workload};
use crate::generator::{hash3, unit, Rng};
use crate::stats::Outcome;
use scylla::client::session::Session;
use scylla::response::{PagingState, PagingStateResponse};
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::value::CqlTimestamp;
use std::time::{SystemTime, UNIX_EPOCH};
use uuid::Uuid;

const INSERT: usize = 0;
const DEVDAT: usize = 1;
const LESROW: usize = 2;
const AVGDAT: usize = 3;
const TABLE: &str = "sensor_data";
/// Rows devdat and lesrow read at most with `--reads study` (seed 003's LIMIT 500).
pub const STUDY_LIMIT: u32 = 500;
/// Service names of the series.
pub const SERVICES: [&str; 5] = ["temperature", "humidity", "pressure", "co2", "light"];

/// Op names (index = op id).
pub fn names() -> Vec<String> {
    ["insert", "devdat", "lesrow", "avgdat"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// Default mix: insert 50 %, devdat 20 %, lesrow 15 %, avgdat 15 %.
pub fn default_mix() -> Vec<f64> {
    vec![0.5, 0.2, 0.15, 0.15]
}

/// The CQL compaction map for `--compaction`: `stcs`, `lcs`, `ucs`,
/// `twcs[:SIZE:UNIT]` or a literal `{...}` map.
pub fn compaction_map(text: &str) -> Result<String> {
    let t = text.trim();
    if t.starts_with('{') && t.ends_with('}') {
        return Ok(t.to_string());
    }
    let parts: Vec<&str> = t.split(':').collect();
    let class = |c: &str| format!("{{'class': '{c}'}}");
    match parts[0].to_ascii_lowercase().as_str() {
        "stcs" if parts.len() == 1 => Ok(class("SizeTieredCompactionStrategy")),
        "lcs" if parts.len() == 1 => Ok(class("LeveledCompactionStrategy")),
        "ucs" if parts.len() == 1 => Ok(class("UnifiedCompactionStrategy")),
        "twcs" => {
            let (size, unit) = match parts.len() {
                1 => ("1", "DAYS"),
                3 => (parts[1], parts[2]),
                _ => {
                    return Err(LoadError::option(
                        "--compaction",
                        "twcs takes twcs or twcs:SIZE:UNIT",
                    ))
                }
            };
            let size: u32 = size.parse().ok().filter(|s| *s >= 1).ok_or_else(|| {
                LoadError::option(
                    "--compaction",
                    format!("window size {size:?} must be an integer >= 1"),
                )
            })?;
            let unit = unit.to_ascii_uppercase();
            if !["MINUTES", "HOURS", "DAYS"].contains(&unit.as_str()) {
                return Err(LoadError::option(
                    "--compaction",
                    format!("window unit {unit:?} must be MINUTES, HOURS or DAYS"),
                ));
            }
            Ok(format!(
                "{{'class': 'TimeWindowCompactionStrategy', 'compaction_window_size': '{size}', 'compaction_window_unit': '{unit}'}}"
            ))
        }
        _ => Err(LoadError::option(
            "--compaction",
            format!("{t:?}: use stcs, lcs, ucs, twcs[:SIZE:UNIT] or a CQL map '{{...}}'"),
        )),
    }
}

fn table_options(cmd: &IotCommand) -> Result<Vec<String>> {
    let mut opts = Vec::new();
    if let Some(ttl) = cmd.table_ttl_s {
        opts.push(ttl_option(ttl));
    }
    if let Some(c) = &cmd.compaction {
        opts.push(format!("compaction = {}", compaction_map(c)?));
    }
    Ok(opts)
}

/// Device id of device `d`: a version-4 UUID derived from the seed.
pub fn device_id(seed: u64, d: u64) -> Uuid {
    let hi = hash3(seed, d, 0x1D01);
    let lo = hash3(seed, d, 0x1D02);
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&hi.to_be_bytes());
    b[8..].copy_from_slice(&lo.to_be_bytes());
    uuid::Builder::from_random_bytes(b).into_uuid()
}

/// The IoT workload bound to a session.
pub struct Iot {
    session: Session,
    names: Vec<String>,
    devdat: PreparedStatement,
    lesrow: PreparedStatement,
    avgdat: PreparedStatement,
    batches: ByTtl<Batch>,
    ids: Vec<Uuid>,
    dev_names: Vec<String>,
    series: u64,
    values: usize,
    seed: u64,
    reads: IotReads,
    retries: RetryCounters,
    keyspace: String,
}

/// ALTER TABLE of the iot table with `options` (`name = value` each).
fn alter_cql(ks: &str, options: &[String]) -> String {
    format!("ALTER TABLE {ks}.{TABLE} WITH {}", options.join(" AND "))
}

/// The table option of a default TTL (--table-ttl-s, a stage's `table_ttl_s`).
fn ttl_option(ttl_s: impl std::fmt::Display) -> String {
    format!("default_time_to_live = {ttl_s}")
}

/// The CQL of devdat, lesrow and avgdat for a form of the reads.
pub fn read_queries(ks: &str, reads: IotReads) -> [String; 3] {
    let t = format!("{ks}.{TABLE}");
    match reads {
        IotReads::Study => [
            format!("SELECT * FROM {t} WHERE device_id = ? LIMIT {STUDY_LIMIT}"),
            format!(
                "SELECT * FROM {t} WHERE device_id = ? AND service_name = ? LIMIT {STUDY_LIMIT}"
            ),
            format!(
                "SELECT device_id, avg(observed_value) FROM {t} WHERE device_id = ? AND service_name = ?"
            ),
        ],
        IotReads::FullLatest => [
            format!("SELECT * FROM {t} WHERE device_id = ?"),
            format!("SELECT * FROM {t} WHERE device_id = ? AND service_name = ? LIMIT 1"),
            format!(
                "SELECT avg(observed_value) FROM {t} WHERE device_id = ? AND service_name = ?"
            ),
        ],
    }
}

impl Iot {
    /// Creates keyspace and table if missing; applies --table-ttl-s and
    /// --compaction with ALTER TABLE when given.
    pub async fn create_schema(session: &Session, cmd: &IotCommand) -> Result<()> {
        let opts = table_options(cmd)?;
        db::ensure_keyspace(session, &cmd.keyspace, cmd.schema.rf, cmd.schema.drop).await?;
        let mut with =
            vec!["CLUSTERING ORDER BY (service_name ASC, observation_time DESC)".to_string()];
        with.extend(opts.iter().cloned());
        let ks = &cmd.keyspace;
        db::ddl(
            session,
            &format!(
                "CREATE TABLE IF NOT EXISTS {ks}.{TABLE} (device_id uuid, service_name text, \
                 observation_time timestamp, device_name text static, observed_value float, \
                 PRIMARY KEY ((device_id), service_name, observation_time)) WITH {}",
                with.join(" AND ")
            ),
        )
        .await?;
        if !opts.is_empty() {
            db::ddl(session, &alter_cql(ks, &opts)).await?;
        }
        Ok(())
    }

    /// Prepares the statements and the per-TTL insert batches.
    pub async fn new(session: Session, cmd: &IotCommand, ttls: &[Option<i32>]) -> Result<Self> {
        let cls = Cls::new(cmd.conn.cl_read, cmd.conn.cl_write, Cl::One);
        let names = names();
        let retries = RetryCounters::new(names.len(), cmd.conn.error_retries);
        let nr = cmd.conn.no_retry;
        let ks = &cmd.keyspace;
        let [devdat_q, lesrow_q, avgdat_q] = read_queries(ks, cmd.reads);
        let mut devdat = db::prepare(&session, &devdat_q, cls.read, &retries, DEVDAT, nr).await?;
        devdat.set_page_size(5000);
        let lesrow = db::prepare(&session, &lesrow_q, cls.read, &retries, LESROW, nr).await?;
        let avgdat = db::prepare(&session, &avgdat_q, cls.read, &retries, AVGDAT, nr).await?;
        let mut batches = ByTtl::new();
        for ttl in ttl_set(ttls) {
            let ps = db::prepare(
                &session,
                &format!(
                    "INSERT INTO {ks}.{TABLE} (device_id, service_name, observation_time, device_name, observed_value) \
                     VALUES (?, ?, ?, ?, ?){}",
                    ttl_clause(ttl)
                ),
                cls.write,
                &retries,
                INSERT,
                nr,
            )
            .await?;
            let mut b = Batch::new(BatchType::Unlogged);
            for _ in 0..cmd.values_per_insert {
                b.append_statement(ps.clone());
            }
            b.set_consistency(db::consistency(cls.write));
            b.set_is_idempotent(true);
            b.set_retry_policy(Some(retries.policy(INSERT, nr)));
            batches.push(ttl, b);
        }
        let seed = cmd.run.seed;
        Ok(Iot {
            session,
            names,
            devdat,
            lesrow,
            avgdat,
            batches,
            ids: (0..cmd.devices).map(|d| device_id(seed, d)).collect(),
            dev_names: (0..cmd.devices).map(|d| format!("device-{d}")).collect(),
            series: cmd.series,
            values: cmd.values_per_insert,
            seed,
            reads: cmd.reads,
            retries,
            keyspace: cmd.keyspace.clone(),
        })
    }

    async fn insert(&self, dev: usize, series: usize, cycle: u64, ttl: Option<i32>) -> Outcome {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        let id = self.ids[dev];
        let service = SERVICES[series];
        let name = self.dev_names[dev].as_str();
        let n = self.values as i64;
        let rows: Vec<(Uuid, &str, CqlTimestamp, &str, f32)> = (0..n)
            .map(|k| {
                let v = 20.0 + 10.0 * unit(hash3(self.seed, cycle, k as u64)) as f32;
                (
                    id,
                    service,
                    CqlTimestamp(now_ms - (n - 1 - k) * 1000),
                    name,
                    v,
                )
            })
            .collect();
        write_outcome(self.session.batch(self.batches.get(ttl), &rows).await)
    }

    async fn devdat(&self, dev: usize) -> Outcome {
        if self.reads == IotReads::Study {
            // LIMIT 500 fits in one page of 5000 rows.
            return read_outcome(
                self.session
                    .execute_unpaged(&self.devdat, (self.ids[dev],))
                    .await,
            );
        }
        let mut state = PagingState::start();
        let mut rows = 0;
        loop {
            match self
                .session
                .execute_single_page(&self.devdat, (self.ids[dev],), state)
                .await
            {
                Ok((res, PagingStateResponse::HasMorePages { state: next })) => {
                    rows += rows_of(res);
                    state = next;
                }
                Ok((res, _)) => {
                    rows += rows_of(res);
                    break;
                }
                Err(e) => return Outcome::Error(classify(&e), e.to_string()),
            }
        }
        if rows > 0 {
            Outcome::Ok
        } else {
            Outcome::NotFound
        }
    }
}

impl Workload for Iot {
    fn op_names(&self) -> &[String] {
        &self.names
    }

    async fn run_op(&self, op: usize, cycle: u64, ctx: &OpCtx) -> Outcome {
        let mut rng = Rng::new(self.seed, cycle);
        let (dev, series) = if ctx.phase == Phase::Load {
            (
                (cycle / self.series) as usize % self.ids.len(),
                (cycle % self.series) as usize,
            )
        } else {
            (
                rng.below(self.ids.len() as u64) as usize,
                rng.below(self.series) as usize,
            )
        };
        match op {
            INSERT => self.insert(dev, series, cycle, ctx.ttl_s).await,
            DEVDAT => self.devdat(dev).await,
            LESROW => read_outcome(
                self.session
                    .execute_unpaged(&self.lesrow, (self.ids[dev], SERVICES[series]))
                    .await,
            ),
            _ => match self
                .session
                .execute_unpaged(&self.avgdat, (self.ids[dev], SERVICES[series]))
                .await
            {
                Ok(_) => Outcome::Ok,
                Err(e) => Outcome::Error(classify(&e), e.to_string()),
            },
        }
    }

    async fn stage_begins(&self, stage: &StagePlan) -> Result<()> {
        // Seed 003's stages change the table's TTL (the tuner reads it from the
        // schema); writes without their own TTL then take the new one.
        match stage.table_ttl_s {
            Some(ttl) => {
                db::ddl(
                    &self.session,
                    &alter_cql(&self.keyspace, &[ttl_option(ttl)]),
                )
                .await
            }
            None => Ok(()),
        }
    }

    fn retries(&self) -> Vec<u64> {
        self.retries.snapshot()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compaction_forms() {
        assert!(compaction_map("twcs:1:minutes")
            .unwrap()
            .contains("'compaction_window_unit': 'MINUTES'"));
        assert!(compaction_map("stcs").unwrap().contains("SizeTiered"));
        assert_eq!(
            compaction_map(" {'class': 'X'} ").unwrap(),
            "{'class': 'X'}"
        );
        assert!(compaction_map("twcs:0:DAYS").is_err());
        assert!(compaction_map("twcs:1:WEEKS").is_err());
        assert!(compaction_map("dtcs").is_err());
    }

    #[test]
    fn study_reads_limit_devdat_and_lesrow_to_500_rows() {
        let [devdat, lesrow, avgdat] = read_queries("iot", IotReads::Study);
        assert!(devdat.ends_with("WHERE device_id = ? LIMIT 500"));
        assert!(lesrow.ends_with("AND service_name = ? LIMIT 500"));
        assert!(avgdat.starts_with("SELECT device_id, avg(observed_value)"));
        let [devdat, lesrow, _] = read_queries("iot", IotReads::FullLatest);
        assert!(devdat.ends_with("WHERE device_id = ?"));
        assert!(lesrow.ends_with("LIMIT 1"));
    }

    #[test]
    fn device_ids_are_v4_and_stable() {
        let a = device_id(1, 7);
        assert_eq!(a, device_id(1, 7));
        assert_ne!(a, device_id(1, 8));
        assert_eq!(a.get_version_num(), 4);
    }
}
