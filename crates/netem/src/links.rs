//! The link config file: which directed links exist and their conditions.

use std::net::Ipv4Addr;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{NetemError, Result};

/// One directed link as written by casslab (`<lab>/net/netem.json`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub src: String,
    pub dst: String,
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
    #[serde(default)]
    pub links: Vec<LinkConfig>,
}

/// A validated link with parsed addresses.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
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
            src: l.src.clone(),
            dst: l.dst.clone(),
            message,
        };
        let src: Ipv4Addr = l
            .src
            .parse()
            .map_err(|_| bad("src is not an IPv4 address".into()))?;
        let dst: Ipv4Addr = l
            .dst
            .parse()
            .map_err(|_| bad("dst is not an IPv4 address".into()))?;
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
        if links.iter().any(|x: &Link| x.src == src && x.dst == dst) {
            return Err(bad("link listed twice".into()));
        }
        links.push(Link {
            src,
            dst,
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
            r#"{"seed": 3, "links": [{"src": "127.0.0.1", "dst": "127.0.1.2", "delay_us": 1500}]}"#,
        )
        .expect("valid");
        assert_eq!(c.seed, 3);
        assert_eq!(c.links[0].delay_ns, 1_500_000);
        assert_eq!(c.links[0].loss_burst, 1.0);
    }

    #[test]
    fn rejects_bad_values_naming_the_field() {
        let err = parse(
            Path::new("x.json"),
            r#"{"links": [{"src": "127.0.0.1", "dst": "127.0.1.2", "loss_pct": 120}]}"#,
        )
        .expect_err("loss out of range");
        assert!(err.to_string().contains("loss_pct"), "{err}");
        let err = parse(
            Path::new("x.json"),
            r#"{"links": [{"src": "node1", "dst": "127.0.1.2"}]}"#,
        )
        .expect_err("bad address");
        assert!(err.to_string().contains("src"), "{err}");
        let err = parse(
            Path::new("x.json"),
            r#"{"links": [{"src": "1.2.3.4", "dst": "1.2.3.5", "delay": 3}]}"#,
        )
        .expect_err("unknown field");
        assert!(err.to_string().contains("delay"), "{err}");
    }
}
