//! Built-in workloads (YCSB, cassandra-stress, IoT) and cassandra-stress user
//! profiles. Each prepares its statements once, creates its schema if
//! missing, and maps `(op, cycle)` to one request with values taken from
//! pure generators of `(seed, cycle)`.

pub mod idempotence;
pub mod iot;
pub mod profile;
pub mod stress;
pub mod user;
pub mod values;
pub mod ycsb;

use crate::config::Cl;

/// Prepared write statements per TTL. A TTL is a literal in the statement
/// (`USING TTL 3600`), so each stage TTL gets its own prepared statements and
/// bound values stay homogeneous (no per-op allocation for a TTL value).
pub struct ByTtl<T> {
    items: Vec<(Option<i32>, T)>,
}

impl<T> ByTtl<T> {
    /// Empty set.
    pub fn new() -> Self {
        ByTtl { items: Vec::new() }
    }

    /// Adds the statements for `ttl`.
    pub fn push(&mut self, ttl: Option<i32>, v: T) {
        self.items.push((ttl, v));
    }

    /// Statements for `ttl` (those without TTL if `ttl` was not prepared).
    #[inline]
    pub fn get(&self, ttl: Option<i32>) -> &T {
        self.items
            .iter()
            .find(|(t, _)| *t == ttl)
            .or_else(|| self.items.first())
            .map(|(_, v)| v)
            .expect("ByTtl always holds the no-TTL statements")
    }
}

impl<T> Default for ByTtl<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// ` USING TTL n` or nothing.
pub fn ttl_clause(ttl: Option<i32>) -> String {
    ttl.map(|t| format!(" USING TTL {t}")).unwrap_or_default()
}

/// TTL set with `None` first, without duplicates.
pub fn ttl_set(ttls: &[Option<i32>]) -> Vec<Option<i32>> {
    let mut out = vec![None];
    for t in ttls {
        if !out.contains(t) {
            out.push(*t);
        }
    }
    out
}

/// Read and write consistency levels in force.
#[derive(Clone, Copy, Debug)]
pub struct Cls {
    /// For reads.
    pub read: Cl,
    /// For writes.
    pub write: Cl,
}

impl Cls {
    /// CLI values or the workload's defaults.
    pub fn new(read: Option<Cl>, write: Option<Cl>, default: Cl) -> Self {
        Cls {
            read: read.unwrap_or(default),
            write: write.unwrap_or(default),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_lookup() {
        let mut b = ByTtl::new();
        for t in ttl_set(&[Some(60), None, Some(60), Some(5)]) {
            b.push(t, t.map_or(0, |v| v));
        }
        assert_eq!(*b.get(None), 0);
        assert_eq!(*b.get(Some(5)), 5);
        assert_eq!(*b.get(Some(7)), 0);
        assert_eq!(ttl_clause(Some(9)), " USING TTL 9");
    }
}
