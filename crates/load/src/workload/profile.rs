//! cassandra-stress user profiles (YAML): the supported subset.
//!
//! Supported fields (anything else is rejected with an error naming it):
//! - `keyspace` (required), `keyspace_definition` (optional CQL; without it the
//!   keyspace is created with SimpleStrategy and `--rf`)
//! - `table` (required), `table_definition` (optional CQL, run when the table is missing)
//! - `extra_definitions` (optional list of CQL, e.g. `CREATE TYPE`, run before the
//!   table definition when the table is missing)
//! - `columnspec`: list of `{name, size, population, cluster}` with
//!   distributions `fixed(N)`, `uniform(A..B)`, `gaussian(A..B[,stdvrng])`
//!   (also `gauss`, `normal`) and for population `seq(A..B)`;
//!   defaults as cassandra-stress: size `uniform(4..8)`, population
//!   `uniform(1..100B)`, cluster `fixed(1)`
//! - `insert`: `partitions` (distribution, default `fixed(1)`), `select`
//!   (`DIST/DENOMINATOR`, e.g. `fixed(1)/1`, `uniform(1..10)/10`: the fraction of
//!   a partition's rows written per operation; default `fixed(1)/1`),
//!   `batchtype` (`LOGGED` default, or `UNLOGGED`)
//! - `queries`: map of name to `{cql, fields}` with `fields: samerow` (default)
//!   or `multirow`
//!
//! Column values are generated for every CQL type (see [`super::values`]).
//!
//! Not supported (rejected): `token_range_queries`,
//! `insert.visits`, `insert.revisit`, `insert.row-population-ratio`, the
//! `exp`, `extreme`, `qextreme`, `weibull` distributions. The `ops(...)` of
//! the cassandra-stress command line is `--mix insert=1,q1=9`.

use crate::error::{LoadError, Result};
use crate::generator::Dist;
use serde::Serialize;
use serde_norway::{Mapping, Value};
use std::path::{Path, PathBuf};

/// One `columnspec` entry.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ColumnSpec {
    /// Column name.
    pub name: String,
    /// Size (characters or bytes) of generated values.
    pub size: Dist,
    /// Distinct values the column takes.
    pub population: Dist,
    /// Rows per value of a clustering column.
    pub cluster: Dist,
}

/// The `insert` section.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InsertSpec {
    /// Partitions per insert operation.
    pub partitions: Dist,
    /// Numerator of the selected-row fraction.
    pub select: Dist,
    /// Denominator of the selected-row fraction.
    pub select_of: u64,
    /// LOGGED or UNLOGGED batches.
    pub logged: bool,
}

/// One named query.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QuerySpec {
    /// Name used in `--mix` and the output.
    pub name: String,
    /// CQL with `?` markers.
    pub cql: String,
    /// `fields: samerow` (true) or `multirow`.
    pub samerow: bool,
}

/// A parsed profile.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Profile {
    /// Keyspace name.
    pub keyspace: String,
    /// CQL creating the keyspace.
    pub keyspace_definition: Option<String>,
    /// Table name.
    pub table: String,
    /// CQL creating the table.
    pub table_definition: Option<String>,
    /// CQL run before the table definition (user types the table uses).
    pub extra_definitions: Vec<String>,
    /// Column specs (columns not listed get the defaults).
    pub columns: Vec<ColumnSpec>,
    /// Insert settings.
    pub insert: InsertSpec,
    /// Named queries.
    pub queries: Vec<QuerySpec>,
}

const TOP: &[&str] = &[
    "keyspace",
    "keyspace_definition",
    "table",
    "table_definition",
    "extra_definitions",
    "columnspec",
    "insert",
    "queries",
];
const COLUMN: &[&str] = &["name", "size", "population", "cluster"];
const INSERT: &[&str] = &["partitions", "select", "batchtype"];
const QUERY: &[&str] = &["cql", "fields"];

impl Profile {
    /// Default spec of a column the profile does not list.
    pub fn default_column(name: &str) -> ColumnSpec {
        ColumnSpec {
            name: name.to_string(),
            size: Dist::Uniform { min: 4, max: 8 },
            population: Dist::Uniform {
                min: 1,
                max: 100_000_000_000,
            },
            cluster: Dist::Fixed { value: 1 },
        }
    }

    /// Spec of column `name`.
    pub fn column(&self, name: &str) -> ColumnSpec {
        self.columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
            .cloned()
            .unwrap_or_else(|| Self::default_column(name))
    }
}

struct Ctx<'a> {
    path: &'a Path,
}

impl Ctx<'_> {
    fn err(&self, reason: impl Into<String>) -> LoadError {
        LoadError::Profile {
            path: PathBuf::from(self.path),
            reason: reason.into(),
        }
    }

    fn check_keys(&self, m: &Mapping, allowed: &[&str], where_: &str) -> Result<()> {
        for k in m.keys() {
            let k = k
                .as_str()
                .ok_or_else(|| self.err(format!("{where_}: keys must be strings")))?;
            if !allowed.contains(&k) {
                let known = [
                    "token_range_queries",
                    "visits",
                    "revisit",
                    "row-population-ratio",
                ];
                let what = if known.contains(&k) {
                    "unsupported field"
                } else {
                    "unknown field"
                };
                return Err(self.err(format!(
                    "{what} {where_}{k:?} (supported here: {})",
                    allowed.join(", ")
                )));
            }
        }
        Ok(())
    }

    fn string(&self, m: &Mapping, key: &str, where_: &str) -> Result<Option<String>> {
        match m.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim().to_string())),
            Some(_) => Err(self.err(format!("{where_}{key} must be a string"))),
        }
    }

    fn dist(
        &self,
        m: &Mapping,
        key: &str,
        where_: &str,
        default: Dist,
        allow_seq: bool,
    ) -> Result<Dist> {
        match self.string(m, key, where_)? {
            None => Ok(default),
            Some(s) => {
                let d = Dist::parse(&s).map_err(|e| self.err(format!("{where_}{key}: {e}")))?;
                if matches!(d, Dist::Seq { .. }) && !allow_seq {
                    return Err(self.err(format!(
                        "{where_}{key}: seq(..) is only supported for population"
                    )));
                }
                Ok(d)
            }
        }
    }
}

/// Parses profile text; `path` is used in error messages.
pub fn parse(text: &str, path: &Path) -> Result<Profile> {
    let cx = Ctx { path };
    let doc: Value =
        serde_norway::from_str(text).map_err(|e| cx.err(format!("not valid YAML: {e}")))?;
    let top = doc
        .as_mapping()
        .ok_or_else(|| cx.err("top level must be a mapping"))?;
    cx.check_keys(top, TOP, "")?;
    let keyspace = cx
        .string(top, "keyspace", "")?
        .ok_or_else(|| cx.err("missing required field keyspace"))?;
    let table = cx
        .string(top, "table", "")?
        .ok_or_else(|| cx.err("missing required field table"))?;
    let mut extra_definitions = Vec::new();
    if let Some(v) = top.get("extra_definitions") {
        let list = v
            .as_sequence()
            .ok_or_else(|| cx.err("extra_definitions must be a list of CQL statements"))?;
        for (i, d) in list.iter().enumerate() {
            let cql = d
                .as_str()
                .ok_or_else(|| cx.err(format!("extra_definitions[{i}] must be a CQL string")))?;
            extra_definitions.push(cql.trim().to_string());
        }
    }
    let mut columns = Vec::new();
    if let Some(v) = top.get("columnspec") {
        let list = v
            .as_sequence()
            .ok_or_else(|| cx.err("columnspec must be a list"))?;
        for (i, c) in list.iter().enumerate() {
            let w = format!("columnspec[{i}].");
            let m = c
                .as_mapping()
                .ok_or_else(|| cx.err(format!("columnspec[{i}] must be a mapping")))?;
            cx.check_keys(m, COLUMN, &w)?;
            let name = cx
                .string(m, "name", &w)?
                .ok_or_else(|| cx.err(format!("{w}name is required")))?;
            let d = Profile::default_column(&name);
            columns.push(ColumnSpec {
                size: cx.dist(m, "size", &w, d.size, false)?,
                population: cx.dist(m, "population", &w, d.population, true)?,
                cluster: cx.dist(m, "cluster", &w, d.cluster, false)?,
                name,
            });
        }
    }
    let mut insert = InsertSpec {
        partitions: Dist::Fixed { value: 1 },
        select: Dist::Fixed { value: 1 },
        select_of: 1,
        logged: true,
    };
    if let Some(v) = top.get("insert") {
        let m = v
            .as_mapping()
            .ok_or_else(|| cx.err("insert must be a mapping"))?;
        cx.check_keys(m, INSERT, "insert.")?;
        insert.partitions = cx.dist(m, "partitions", "insert.", insert.partitions, false)?;
        if let Some(s) = cx.string(m, "select", "insert.")? {
            let (num, den) = s.rsplit_once('/').ok_or_else(|| {
                cx.err(format!(
                    "insert.select {s:?} must be DIST/DENOMINATOR, e.g. fixed(1)/1"
                ))
            })?;
            insert.select = Dist::parse(num).map_err(|e| cx.err(format!("insert.select: {e}")))?;
            insert.select_of = den.trim().parse().ok().filter(|d| *d > 0).ok_or_else(|| {
                cx.err(format!(
                    "insert.select denominator {den:?} must be a positive integer"
                ))
            })?;
        }
        if let Some(b) = cx.string(m, "batchtype", "insert.")? {
            insert.logged = match b.to_ascii_uppercase().as_str() {
                "LOGGED" => true,
                "UNLOGGED" => false,
                other => {
                    return Err(cx.err(format!(
                        "insert.batchtype {other:?} must be LOGGED or UNLOGGED"
                    )))
                }
            };
        }
    }
    let mut queries = Vec::new();
    if let Some(v) = top.get("queries") {
        let m = v
            .as_mapping()
            .ok_or_else(|| cx.err("queries must be a mapping of name to {cql, fields}"))?;
        for (k, q) in m {
            let name = k
                .as_str()
                .ok_or_else(|| cx.err("query names must be strings"))?
                .to_string();
            if name == "insert" {
                return Err(
                    cx.err("queries.insert: the name insert is reserved for the insert operation")
                );
            }
            let w = format!("queries.{name}.");
            let qm = q
                .as_mapping()
                .ok_or_else(|| cx.err(format!("queries.{name} must be a mapping")))?;
            cx.check_keys(qm, QUERY, &w)?;
            let cql = cx
                .string(qm, "cql", &w)?
                .ok_or_else(|| cx.err(format!("{w}cql is required")))?;
            let samerow = match cx.string(qm, "fields", &w)?.as_deref() {
                None | Some("samerow") => true,
                Some("multirow") => false,
                Some(o) => {
                    return Err(cx.err(format!("{w}fields {o:?} must be samerow or multirow")))
                }
            };
            queries.push(QuerySpec { name, cql, samerow });
        }
    }
    Ok(Profile {
        keyspace,
        keyspace_definition: cx.string(top, "keyspace_definition", "")?,
        table,
        table_definition: cx.string(top, "table_definition", "")?,
        extra_definitions,
        columns,
        insert,
        queries,
    })
}

/// Reads and parses a profile file.
pub fn load(path: &Path) -> Result<Profile> {
    let text = std::fs::read_to_string(path).map_err(|source| LoadError::ReadFile {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
keyspace: stresscql
keyspace_definition: |
  CREATE KEYSPACE stresscql WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
table: blogposts
table_definition: |
  CREATE TABLE blogposts (domain text, published_date timeuuid, url text, author text, title text, body text,
    PRIMARY KEY(domain, published_date)) WITH CLUSTERING ORDER BY (published_date DESC)
columnspec:
  - name: domain
    size: gaussian(5..100)
    population: uniform(1..10M)
  - name: published_date
    cluster: fixed(1000)
  - name: body
    size: gaussian(100..5000)
insert:
  partitions: fixed(1)
  select: fixed(1)/1000
  batchtype: UNLOGGED
queries:
  singlepost:
    cql: select * from blogposts where domain = ? LIMIT 1
    fields: samerow
  timeline:
    cql: select url, title, published_date from blogposts where domain = ? LIMIT 10
    fields: multirow
"#;

    fn p(text: &str) -> Result<Profile> {
        parse(text, Path::new("test.yaml"))
    }

    #[test]
    fn parses_the_supported_subset() {
        let pr = p(GOOD).unwrap();
        assert_eq!(pr.keyspace, "stresscql");
        assert_eq!(pr.table, "blogposts");
        assert!(pr
            .table_definition
            .as_deref()
            .unwrap()
            .starts_with("CREATE TABLE blogposts"));
        assert_eq!(pr.columns.len(), 3);
        assert_eq!(
            pr.column("domain").population,
            Dist::Uniform {
                min: 1,
                max: 10_000_000
            }
        );
        assert_eq!(
            pr.column("published_date").cluster,
            Dist::Fixed { value: 1000 }
        );
        assert_eq!(pr.column("url"), Profile::default_column("url"));
        assert_eq!(pr.insert.select_of, 1000);
        assert!(!pr.insert.logged);
        assert_eq!(pr.queries.len(), 2);
        assert!(pr.queries[0].samerow && !pr.queries[1].samerow);
        assert!(pr.extra_definitions.is_empty());
    }

    #[test]
    fn extra_definitions_are_a_list_of_cql() {
        let pr =
            p("keyspace: k\ntable: t\nextra_definitions:\n  - CREATE TYPE a (b int);\n").unwrap();
        assert_eq!(pr.extra_definitions, vec!["CREATE TYPE a (b int);"]);
        let e = p("keyspace: k\ntable: t\nextra_definitions: CREATE TYPE a (b int)\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("extra_definitions must be a list"), "{e}");
    }

    #[test]
    fn rejects_unsupported_fields_by_name() {
        let e = p("keyspace: k\ntable: t\ntoken_range_queries:\n  all: {columns: '*'}\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unsupported field \"token_range_queries\""),
            "{e}"
        );
        let e = p("keyspace: k\ntable: t\ninsert:\n  visits: fixed(2)\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("insert.\"visits\""), "{e}");
        let e = p("keyspace: k\ntable: t\ncolumnspec:\n  - name: a\n    population: exp(1..10)\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("columnspec[0].population") && e.contains("unsupported distribution"),
            "{e}"
        );
        let e = p("keyspace: k\ntable: t\ncolumnspec:\n  - name: a\n    colour: red\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field columnspec[0].\"colour\""), "{e}");
        let e = p("table: t\n").unwrap_err().to_string();
        assert!(e.contains("missing required field keyspace"), "{e}");
        let e = p("keyspace: k\ntable: t\ninsert: {select: '0.5'}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("insert.select"), "{e}");
        let e = p("keyspace: k\ntable: t\nqueries:\n  q: {cql: 'select 1', fields: somerows}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("queries.q.fields"), "{e}");
        let e = p("keyspace: k\ntable: t\ninsert: {batchtype: COUNTER}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("batchtype"), "{e}");
        assert!(p("[1, 2]").is_err());
        assert!(p("keyspace: [")
            .unwrap_err()
            .to_string()
            .contains("not valid YAML"));
    }
}
