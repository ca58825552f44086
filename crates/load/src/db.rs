//! The Cassandra side: connecting, preparing, schema statements, classifying
//! driver errors into [`ErrorKind`]s, re-issuing requests that failed on a busy
//! cluster (`--error-retries`) and counting every retry.

use crate::config::{Cl, ConnArgs};
use crate::error::{LoadError, Result};
use crate::stats::{ErrorKind, Outcome};
use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::policies::load_balancing::DefaultPolicy;
use scylla::policies::retry::{
    DefaultRetryPolicy, FallthroughRetryPolicy, RequestInfo, RetryDecision, RetryPolicy,
    RetrySession,
};
use scylla::response::query_result::QueryResult;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::{Consistency, Statement};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Environment variable with the CQL user name.
pub const USER_ENV: &str = "CASSLAB_USER";
/// Environment variable with the CQL password (never printed or stored).
pub const PASSWORD_ENV: &str = "CASSLAB_PASSWORD";
/// Timeout for schema statements, which can be slow on small machines.
const DDL_TIMEOUT: Duration = Duration::from_secs(120);

/// Connects to the contact points with token-aware (and, with `--dc`,
/// DC-aware) load balancing and the request timeout of `args`.
pub async fn connect(args: &ConnArgs) -> Result<Session> {
    let hosts = args.hosts.join(",");
    let mut policy = DefaultPolicy::builder().token_aware(true);
    if let Some(dc) = &args.dc {
        policy = policy
            .prefer_datacenter(dc.clone())
            .permit_dc_failover(false);
    }
    // No driver-level request timeout: it arms a tokio timer per request.
    // The runner enforces --timeout per operation instead (one lazily re-armed
    // timer per in-flight slot); schema statements and PREPARE carry their own.
    let mut profile = ExecutionProfile::builder()
        .load_balancing_policy(policy.build())
        .request_timeout(None);
    if args.no_retry {
        profile = profile.retry_policy(Arc::new(FallthroughRetryPolicy::new()));
    }
    let mut builder = SessionBuilder::new()
        .known_nodes(&args.hosts)
        .default_execution_profile_handle(profile.build().into_handle())
        .connection_timeout(Duration::from_secs(10))
        .tcp_nodelay(true);
    if let Some(tls) = crate::tls::client_config(args)? {
        builder = builder.tls_context(Some(tls));
    }
    if let Ok(user) = std::env::var(USER_ENV) {
        let password = std::env::var(PASSWORD_ENV).unwrap_or_default();
        builder = builder.user(user, password);
    }
    builder.build().await.map_err(|e| LoadError::Connect {
        hosts,
        reason: e.to_string(),
    })
}

/// Runs a schema statement (with a long timeout) and waits for schema agreement.
pub async fn ddl(session: &Session, cql: &str) -> Result<()> {
    let mut st = Statement::new(cql);
    st.set_request_timeout(Some(DDL_TIMEOUT));
    session
        .query_unpaged(st, ())
        .await
        .map_err(|e| LoadError::Schema {
            cql: cql.to_string(),
            reason: e.to_string(),
        })?;
    // Agreement failures are not fatal: the next statement will show a real problem.
    let _ = session.await_schema_agreement().await;
    Ok(())
}

/// Creates `keyspace` with SimpleStrategy and `rf` replicas if missing,
/// dropping it first when `drop` is set.
pub async fn ensure_keyspace(session: &Session, keyspace: &str, rf: u32, drop: bool) -> Result<()> {
    let simple = format!("{{'class': 'SimpleStrategy', 'replication_factor': {rf}}}");
    ensure_keyspace_with(session, keyspace, &simple, drop).await
}

/// Creates `keyspace` if missing with `replication`, a CQL map (dropped first if `drop`).
pub async fn ensure_keyspace_with(
    session: &Session,
    keyspace: &str,
    replication: &str,
    drop: bool,
) -> Result<()> {
    if drop {
        ddl(session, &format!("DROP KEYSPACE IF EXISTS {keyspace}")).await?;
    }
    ddl(
        session,
        &format!("CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = {replication}"),
    )
    .await
}

/// Counts the retries decided on, per statement it is attached to: the driver's own
/// policy first, then up to `error_retries` re-issues of an idempotent request that
/// failed the way a busy cluster fails (see [`error_retry`]).
#[derive(Debug)]
pub struct CountingRetryPolicy {
    inner: Arc<dyn RetryPolicy>,
    count: Arc<AtomicU64>,
    error_retries: u32,
}

struct CountingSession {
    inner: Box<dyn RetrySession>,
    count: Arc<AtomicU64>,
    error_retries: u32,
    used: u32,
}

impl RetryPolicy for CountingRetryPolicy {
    fn new_session(&self) -> Box<dyn RetrySession> {
        Box::new(CountingSession {
            inner: self.inner.new_session(),
            count: self.count.clone(),
            error_retries: self.error_retries,
            used: 0,
        })
    }
}

/// How to re-issue a request that failed with `e`, or None when it must not be: the
/// coordinator timed out, lacked replicas, was overloaded or bootstrapping (the same
/// node again: it may be the only one), or the connection broke (the next node).
/// Anything else (invalid, unauthorized, a syntax error...) would fail again.
pub fn error_retry(e: &RequestAttemptError) -> Option<RetryDecision> {
    match e {
        RequestAttemptError::DbError(
            DbError::ReadTimeout { .. }
            | DbError::WriteTimeout { .. }
            | DbError::Unavailable { .. }
            | DbError::Overloaded
            | DbError::IsBootstrapping,
            _,
        ) => Some(RetryDecision::RetrySameTarget(None)),
        RequestAttemptError::BrokenConnectionError(_)
        | RequestAttemptError::UnableToAllocStreamId => Some(RetryDecision::RetryNextTarget(None)),
        _ => None,
    }
}

impl CountingSession {
    /// After the driver's own policy said `driver`: re-issue within the budget what
    /// failed the way a busy cluster fails, and count every retry decided.
    fn after_driver(
        &mut self,
        driver: RetryDecision,
        error: &RequestAttemptError,
        is_idempotent: bool,
    ) -> RetryDecision {
        let mut d = driver;
        if d == RetryDecision::DontRetry && is_idempotent && self.used < self.error_retries {
            if let Some(again) = error_retry(error) {
                self.used += 1;
                d = again;
            }
        }
        if matches!(
            d,
            RetryDecision::RetrySameTarget(_) | RetryDecision::RetryNextTarget(_)
        ) {
            self.count.fetch_add(1, Ordering::Relaxed);
        }
        d
    }
}

impl RetrySession for CountingSession {
    fn decide_should_retry(&mut self, info: RequestInfo) -> RetryDecision {
        // RequestInfo cannot be built or cloned outside the driver: keep what is needed.
        let (error, is_idempotent) = (info.error, info.is_idempotent);
        let driver = self.inner.decide_should_retry(info);
        self.after_driver(driver, error, is_idempotent)
    }

    fn reset(&mut self) {
        self.inner.reset();
        self.used = 0;
    }
}

/// One retry counter per op type of a workload, and how many times a request that
/// failed on a busy cluster is re-issued (`--error-retries`).
#[derive(Clone, Debug)]
pub struct RetryCounters {
    counts: Vec<Arc<AtomicU64>>,
    error_retries: u32,
}

impl RetryCounters {
    /// `n` zeroed counters; `error_retries` re-issues per request (0: none).
    pub fn new(n: usize, error_retries: u32) -> Self {
        RetryCounters {
            counts: (0..n).map(|_| Arc::new(AtomicU64::new(0))).collect(),
            error_retries,
        }
    }

    /// Current values.
    pub fn snapshot(&self) -> Vec<u64> {
        self.counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect()
    }

    /// A retry policy that counts into counter `op`.
    pub fn policy(&self, op: usize, no_retry: bool) -> Arc<dyn RetryPolicy> {
        let inner: Arc<dyn RetryPolicy> = if no_retry {
            Arc::new(FallthroughRetryPolicy::new())
        } else {
            Arc::new(DefaultRetryPolicy::new())
        };
        Arc::new(CountingRetryPolicy {
            inner,
            count: self.counts[op].clone(),
            error_retries: self.error_retries,
        })
    }
}

/// Maps the CLI consistency level to the driver's.
pub fn consistency(cl: Cl) -> Consistency {
    match cl {
        Cl::Any => Consistency::Any,
        Cl::One => Consistency::One,
        Cl::Two => Consistency::Two,
        Cl::Three => Consistency::Three,
        Cl::Quorum => Consistency::Quorum,
        Cl::All => Consistency::All,
        Cl::LocalQuorum => Consistency::LocalQuorum,
        Cl::EachQuorum => Consistency::EachQuorum,
        Cl::LocalOne => Consistency::LocalOne,
    }
}

/// Prepares `cql` as an idempotent statement with consistency `cl` and a
/// retry policy counting into counter `op` of `retries`.
pub async fn prepare(
    session: &Session,
    cql: &str,
    cl: Cl,
    retries: &RetryCounters,
    op: usize,
    no_retry: bool,
) -> Result<PreparedStatement> {
    let mut st = Statement::new(cql);
    st.set_request_timeout(Some(DDL_TIMEOUT));
    let mut ps = session.prepare(st).await.map_err(|e| LoadError::Prepare {
        cql: cql.to_string(),
        reason: e.to_string(),
    })?;
    // Executions are timed out by the runner (see `connect`).
    ps.set_request_timeout(None);
    ps.set_consistency(consistency(cl));
    ps.set_is_idempotent(true);
    ps.set_retry_policy(Some(retries.policy(op, no_retry)));
    Ok(ps)
}

/// Error class of a driver error.
pub fn classify(e: &ExecutionError) -> ErrorKind {
    match e {
        ExecutionError::RequestTimeout(_) => ErrorKind::ClientTimeout,
        ExecutionError::EmptyPlan | ExecutionError::ConnectionPoolError(_) => ErrorKind::Connection,
        ExecutionError::LastAttemptError(a) => match a {
            RequestAttemptError::BrokenConnectionError(_)
            | RequestAttemptError::UnableToAllocStreamId => ErrorKind::Connection,
            RequestAttemptError::DbError(db, _) => match db {
                DbError::ReadTimeout { .. }
                | DbError::WriteTimeout { .. }
                | DbError::ReadFailure { .. }
                | DbError::WriteFailure { .. } => ErrorKind::ServerTimeout,
                DbError::Unavailable { .. } => ErrorKind::Unavailable,
                DbError::Overloaded | DbError::RateLimitReached { .. } => ErrorKind::Overloaded,
                DbError::IsBootstrapping => ErrorKind::Unavailable,
                _ => ErrorKind::Other,
            },
            _ => ErrorKind::Other,
        },
        _ => ErrorKind::Other,
    }
}

/// Outcome of a write.
#[inline]
pub fn write_outcome(r: std::result::Result<QueryResult, ExecutionError>) -> Outcome {
    match r {
        Ok(_) => Outcome::Ok,
        Err(e) => Outcome::Error(classify(&e), e.to_string()),
    }
}

/// Outcome of a read: no rows means "not found", which is not an error.
#[inline]
pub fn read_outcome(r: std::result::Result<QueryResult, ExecutionError>) -> Outcome {
    match r {
        Ok(res) => match res.into_rows_result() {
            Ok(rows) if rows.rows_num() > 0 => Outcome::Ok,
            Ok(_) => Outcome::NotFound,
            Err(e) => Outcome::Error(ErrorKind::Other, e.to_string()),
        },
        Err(e) => Outcome::Error(classify(&e), e.to_string()),
    }
}

/// Rows of a read result (0 on error or non-rows results).
pub fn rows_of(res: QueryResult) -> usize {
    res.into_rows_result().map(|r| r.rows_num()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(e: DbError) -> RequestAttemptError {
        RequestAttemptError::DbError(e, "from the node".into())
    }

    fn session(counters: &RetryCounters) -> CountingSession {
        CountingSession {
            inner: FallthroughRetryPolicy::new().new_session(),
            count: counters.counts[0].clone(),
            error_retries: counters.error_retries,
            used: 0,
        }
    }

    const NO: RetryDecision = RetryDecision::DontRetry;

    #[test]
    fn busy_cluster_errors_are_retried_and_mistakes_are_not() {
        assert_eq!(
            error_retry(&db(DbError::Overloaded)),
            Some(RetryDecision::RetrySameTarget(None))
        );
        assert_eq!(
            error_retry(&db(DbError::IsBootstrapping)),
            Some(RetryDecision::RetrySameTarget(None))
        );
        assert_eq!(
            error_retry(&RequestAttemptError::UnableToAllocStreamId),
            Some(RetryDecision::RetryNextTarget(None))
        );
        assert_eq!(error_retry(&db(DbError::SyntaxError)), None);
        assert_eq!(error_retry(&db(DbError::Unauthorized)), None);
    }

    #[test]
    fn a_request_is_reissued_at_most_n_times_and_each_is_counted() {
        let counters = RetryCounters::new(1, 2);
        let mut s = session(&counters);
        let e = db(DbError::Overloaded);
        let again = RetryDecision::RetrySameTarget(None);
        assert_eq!(s.after_driver(NO, &e, true), again);
        assert_eq!(s.after_driver(NO, &e, true), again);
        assert_eq!(s.after_driver(NO, &e, true), NO);
        assert_eq!(counters.snapshot(), vec![2]);
        s.reset(); // the next request gets its own budget
        assert_eq!(s.after_driver(NO, &e, true), again);
        // The driver's own retries are counted and leave the budget alone.
        assert_eq!(s.after_driver(again.clone(), &e, true), again);
        assert_eq!((counters.snapshot(), s.used), (vec![4], 1));
    }

    #[test]
    fn without_error_retries_or_idempotence_a_failure_stays_a_failure() {
        let e = db(DbError::Overloaded);
        assert_eq!(
            session(&RetryCounters::new(1, 0)).after_driver(NO, &e, true),
            NO
        );
        let five = RetryCounters::new(1, 5);
        assert_eq!(session(&five).after_driver(NO, &e, false), NO);
        let syntax = db(DbError::SyntaxError);
        assert_eq!(session(&five).after_driver(NO, &syntax, true), NO);
        assert_eq!(five.snapshot(), vec![0]);
    }
}
