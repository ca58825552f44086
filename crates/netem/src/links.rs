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
    /// The shared medium (an `id` in `groups`) whose rate budget this link draws from.
    #[serde(default)]
    pub group: Option<u32>,
}

/// A shared medium: every link naming it draws from one rate budget, both directions
/// alike (half-duplex, like one Wi-Fi channel).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GroupConfig {
    pub id: u32,
    #[serde(default)]
    pub name: String,
    /// Bits per second of the medium, counted on whole IP packets.
    pub rate_bit_s: u64,
    /// Bytes a link may have waiting for the medium; beyond it packets are dropped
    /// (a station's transmit buffer).
    #[serde(default = "default_queue_limit")]
    pub queue_limit_bytes: u64,
}

fn default_queue_limit() -> u64 {
    64 * 1024
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
    #[serde(default)]
    pub groups: Vec<GroupConfig>,
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
    /// Id of the shared medium the link transmits on, if any.
    pub group: Option<u32>,
}

/// A validated shared medium.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub id: u32,
    pub name: String,
    pub rate_bit_s: u64,
    pub queue_limit_bytes: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub seed: u64,
    pub links: Vec<Link>,
    pub groups: Vec<Group>,
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
    // Through serde_path_to_error: a wrong value is reported with its field's path
    // (`links[0].delay_us`), not only with its text and position.
    let de = &mut serde_json::Deserializer::from_str(text);
    let raw: FileConfig = serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        NetemError::ConfigParse {
            path: path.to_path_buf(),
            field: if field == "." {
                String::new()
            } else {
                format!("{field}: ")
            },
            source: e.into_inner(),
        }
    })?;
    let groups = parse_groups(path, &raw.groups)?;
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
        if let Some(g) = l.group {
            if !groups.iter().any(|x| x.id == g) {
                let ids: Vec<String> = groups.iter().map(|x| x.id.to_string()).collect();
                return Err(bad(format!(
                    "group {g} is not in groups (valid: {})",
                    if ids.is_empty() {
                        "none defined".to_string()
                    } else {
                        ids.join(", ")
                    }
                )));
            }
        }
        links.push(Link {
            mark: l.mark,
            name: l.name.clone(),
            delay_ns: l.delay_us * 1_000,
            jitter_ns: l.jitter_us * 1_000,
            loss: l.loss_pct / 100.0,
            loss_burst: l.loss_burst,
            group: l.group,
        });
    }
    Ok(Config {
        seed: raw.seed,
        links,
        groups,
    })
}

fn parse_groups(path: &Path, raw: &[GroupConfig]) -> Result<Vec<Group>> {
    let mut out: Vec<Group> = Vec::with_capacity(raw.len());
    for (index, g) in raw.iter().enumerate() {
        let bad = |message: String| NetemError::ConfigGroup {
            path: path.to_path_buf(),
            index,
            group: format!(
                "id {}{}",
                g.id,
                if g.name.is_empty() {
                    String::new()
                } else {
                    format!(", {}", g.name)
                }
            ),
            message,
        };
        if !(1_000..=100_000_000_000).contains(&g.rate_bit_s) {
            return Err(bad(format!(
                "rate_bit_s {} is not in 1000..100000000000",
                g.rate_bit_s
            )));
        }
        if !(1_500..=1 << 30).contains(&g.queue_limit_bytes) {
            return Err(bad(format!(
                "queue_limit_bytes {} is not in 1500..1073741824",
                g.queue_limit_bytes
            )));
        }
        if out.iter().any(|x| x.id == g.id) {
            return Err(bad("id listed twice".into()));
        }
        out.push(Group {
            id: g.id,
            name: g.name.clone(),
            rate_bit_s: g.rate_bit_s,
            queue_limit_bytes: g.queue_limit_bytes,
        });
    }
    Ok(out)
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

    #[test]
    fn a_value_of_the_wrong_type_is_named_by_its_field() {
        let cases = [
            (
                r#"{"links": [{"mark": 1, "delay_us": -5}]}"#,
                "links[0].delay_us: invalid value: integer `-5`, expected u64",
            ),
            (
                r#"{"links": [{"mark": 1}, {"mark": 2, "loss_pct": "5%"}]}"#,
                "links[1].loss_pct: invalid type: string \"5%\", expected f64",
            ),
            (
                r#"{"links": [], "groups": [{"id": 1, "rate_bit_s": 1.5}]}"#,
                "groups[0].rate_bit_s: invalid type: floating point `1.5`, expected u64",
            ),
            (
                r#"{"seed": -1, "links": []}"#,
                "seed: invalid value: integer `-1`",
            ),
        ];
        for (text, expected) in cases {
            let err = parse(Path::new("x.json"), text)
                .expect_err(text)
                .to_string();
            assert!(err.contains(expected), "{text}: {err}");
        }
        // Not JSON at all: no field to name, the position instead.
        let err = parse(Path::new("x.json"), "{")
            .expect_err("truncated")
            .to_string();
        assert!(
            err.contains("is not valid JSON") && err.contains("line 1"),
            "{err}"
        );
    }

    #[test]
    fn parses_groups_and_checks_the_links_group() {
        let c = parse(
            Path::new("x.json"),
            r#"{"links": [{"mark": 1, "group": 4}, {"mark": 2, "group": 4}],
                "groups": [{"id": 4, "name": "wifi", "rate_bit_s": 20000000}]}"#,
        )
        .expect("valid");
        assert_eq!(c.groups[0].rate_bit_s, 20_000_000);
        assert_eq!(c.groups[0].queue_limit_bytes, 65_536);
        assert_eq!(c.links[1].group, Some(4));
        let err = parse(
            Path::new("x.json"),
            r#"{"links": [{"mark": 1, "group": 5}], "groups": [{"id": 4, "rate_bit_s": 20000000}]}"#,
        )
        .expect_err("unknown group");
        assert!(
            err.to_string()
                .contains("group 5 is not in groups (valid: 4)"),
            "{err}"
        );
        let err = parse(
            Path::new("x.json"),
            r#"{"links": [], "groups": [{"id": 4, "name": "wifi", "rate_bit_s": 0}]}"#,
        )
        .expect_err("zero rate");
        assert!(
            err.to_string().contains("wifi") && err.to_string().contains("rate_bit_s"),
            "{err}"
        );
    }
}
