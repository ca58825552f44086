//! The link config file: which directed links exist and their conditions.
//!
//! A link is identified by the packet mark (skb mark, `nfmark`) casslab's iptables rules
//! give its packets in the lab namespace's mangle OUTPUT chain. Addresses cannot tell
//! links apart: Cassandra does not bind its outbound internode sockets to its own
//! address, so the rules classify by the connection's owner (a conntrack mark set from
//! the sending node's cgroup) and direction instead.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{NetemError, Result};

/// One directed link as written by casslab (`<lab>/net/netem.json`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    /// The packet mark of this link's packets (non-zero, unique in the file).
    pub mark: u32,
    /// A label for logs and `check-config` (e.g. `node1->node2`); not used to match.
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub delay_us: u64,
    #[serde(default)]
    pub jitter_us: u64,
    #[serde(default)]
    pub loss_pct: f64,
    /// Mean length of a loss burst in packets; 1 means independent (random) loss.
    #[serde(default = "one")]
    pub loss_burst: f64,
}

fn one() -> f64 {
    1.0
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    #[serde(default)]
    pub seed: u64,
    // Required: a config without `links` is a wrong file, not a lab without conditions.
    pub links: Vec<LinkConfig>,
}

/// A validated link.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub mark: u32,
    pub name: String,
    pub delay_ns: u64,
    pub jitter_ns: u64,
    /// Loss probability in [0, 1].
    pub loss: f64,
    pub loss_burst: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub seed: u64,
    pub links: Vec<Link>,
}

/// Read and validate a config file.
pub fn load(path: &Path) -> Result<Config> {
    let text = std::fs::read_to_string(path).map_err(|source| NetemError::ConfigRead {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, &text)
}

/// Validate config text; `path` only names the file in errors.
pub fn parse(path: &Path, text: &str) -> Result<Config> {
    let raw: FileConfig = serde_json::from_str(text).map_err(|source| NetemError::ConfigParse {
        path: path.to_path_buf(),
        source,
    })?;
    let mut links = Vec::with_capacity(raw.links.len());
    for (index, l) in raw.links.iter().enumerate() {
        let bad = |message: String| NetemError::ConfigValue {
            path: path.to_path_buf(),
            index,
            link: if l.name.is_empty() {
                format!("mark {:#x}", l.mark)
            } else {
                format!("{}, mark {:#x}", l.name, l.mark)
            },
            message,
        };
        if l.mark == 0 {
            return Err(bad(
                "mark must be non-zero (0 is every unclassified packet)".into(),
            ));
        }
        if !(0.0..=100.0).contains(&l.loss_pct) {
            return Err(bad(format!("loss_pct {} is not in 0..100", l.loss_pct)));
        }
        if !(l.loss_burst >= 1.0 && l.loss_burst.is_finite()) {
            return Err(bad(format!(
                "loss_burst {} must be >= 1 packet",
                l.loss_burst
            )));
        }
        const MAX_US: u64 = 60_000_000;
        if l.delay_us > MAX_US || l.jitter_us > MAX_US {
            return Err(bad("delay_us and jitter_us must be <= 60 s".into()));
        }
        if links.iter().any(|x: &Link| x.mark == l.mark) {
            return Err(bad("mark listed twice".into()));
        }
        links.push(Link {
            mark: l.mark,
            name: l.name.clone(),
            delay_ns: l.delay_us * 1_000,
            jitter_ns: l.jitter_us * 1_000,
            loss: l.loss_pct / 100.0,
            loss_burst: l.loss_burst,
        });
    }
    Ok(Config {
        seed: raw.seed,
        links,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_link() {
        let c = parse(
            Path::new("x.json"),
            r#"{"seed": 3, "links": [{"mark": 212140033, "name": "client->node1", "delay_us": 1500}]}"#,
        )
        .expect("valid");
        assert_eq!(c.seed, 3);
        assert_eq!(c.links[0].mark, 0x0ca5_0001);
        assert_eq!(c.links[0].name, "client->node1");
        assert_eq!(c.links[0].delay_ns, 1_500_000);
        assert_eq!(c.links[0].loss_burst, 1.0);
    }

    #[test]
    fn rejects_bad_values_naming_the_field() {
        let err = parse(
            Path::new("x.json"),
            r#"{"links": [{"mark": 7, "name": "a->b", "loss_pct": 120}]}"#,
        )
        .expect_err("loss out of range");
        assert!(err.to_string().contains("loss_pct"), "{err}");
        assert!(err.to_string().contains("a->b"), "{err}");
        let err = parse(Path::new("x.json"), r#"{"links": [{"mark": 0}]}"#).expect_err("zero mark");
        assert!(err.to_string().contains("mark must be non-zero"), "{err}");
        let err = parse(
            Path::new("x.json"),
            r#"{"links": [{"mark": 5, "delay_us": 1}, {"mark": 5}]}"#,
        )
        .expect_err("duplicate mark");
        assert!(err.to_string().contains("mark listed twice"), "{err}");
        let err =
            parse(Path::new("x.json"), r#"{"links": [{"mark": -1}]}"#).expect_err("negative mark");
        assert!(
            err.to_string().contains("mark") || err.to_string().contains("-1"),
            "{err}"
        );
        let err = parse(Path::new("x.json"), r#"{"links": [{"delay_us": 5}]}"#)
            .expect_err("missing mark");
        assert!(err.to_string().contains("mark"), "{err}");
        let err = parse(
            Path::new("x.json"),
            r#"{"links": [{"src": "127.0.0.1", "dst": "127.0.1.2", "mark": 3}]}"#,
        )
        .expect_err("address fields are gone");
        assert!(err.to_string().contains("src"), "{err}");
        let err = parse(
            Path::new("x.json"),
            r#"{"links": [{"mark": 3, "delay": 3}]}"#,
        )
        .expect_err("unknown field");
        assert!(err.to_string().contains("delay"), "{err}");
    }
}
