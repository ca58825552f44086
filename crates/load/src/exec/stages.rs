//! Stages files: a YAML (or JSON) list of phases with their own duration or
//! op count, rate, mix and TTL.
//!
//! ```yaml
//! stages:
//!   - name: warm
//!     duration: 30s
//!     rate: 500
//!     record: false          # warm-up: reported per interval, not summarised
//!   - name: steady
//!     duration: 2m
//!     rate: 2000
//!     mix: {read: 9, update: 1}
//!   - name: burst
//!     ops: 50000             # as fast as possible
//!     mix: "read=1"
//!     ttl_s: 3600            # writes expire after an hour
//! ```
//! A top-level list (without `stages:`) is accepted too.

use super::{OpMix, Phase, StagePlan};
use crate::error::{LoadError, Result};
use crate::units::parse_duration;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Deserialize)]
#[serde(untagged)]
enum MixSpec {
    Text(String),
    Map(BTreeMap<String, f64>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StageSpec {
    name: Option<String>,
    duration: Option<String>,
    ops: Option<u64>,
    rate: Option<f64>,
    mix: Option<MixSpec>,
    ttl_s: Option<i32>,
    record: Option<bool>,
}

/// Defaults a stage inherits from the command line.
pub struct StageDefaults<'a> {
    /// `--rate`.
    pub rate_ops_s: Option<f64>,
    /// `--mix` or the workload's default.
    pub mix: &'a OpMix,
    /// `--ttl-s`.
    pub ttl_s: Option<i32>,
}

/// Parses stages text (YAML or JSON). `path` is only used in error messages.
pub fn parse_stages(
    text: &str,
    path: &Path,
    names: &[String],
    defaults: &StageDefaults,
) -> Result<Vec<StagePlan>> {
    let err = |reason: String| LoadError::Stages {
        path: path.to_path_buf(),
        reason,
    };
    // The shape first, then the stages: an untagged enum over both shapes would report
    // any bad stage as "did not match any variant" instead of naming the field.
    let value: serde_norway::Value =
        serde_norway::from_str(text).map_err(|e| err(e.to_string()))?;
    let list = match value {
        serde_norway::Value::Sequence(_) => value,
        serde_norway::Value::Mapping(mut m) if m.len() == 1 && m.contains_key("stages") => {
            m.remove("stages").unwrap_or_default()
        }
        _ => {
            return Err(err(
                "must be a list of stages, or a mapping with the one key `stages:`".into(),
            ))
        }
    };
    let specs: Vec<StageSpec> = serde_norway::from_value(list).map_err(|e| err(e.to_string()))?;
    if specs.is_empty() {
        return Err(err("no stages".into()));
    }
    specs
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let name = s.name.unwrap_or_else(|| format!("stage{}", i + 1));
            let duration = s
                .duration
                .as_deref()
                .map(parse_duration)
                .transpose()
                .map_err(|e| err(format!("stage {name:?}: duration: {e}")))?;
            if duration.is_none() && s.ops.is_none() {
                return Err(err(format!("stage {name:?} needs `duration` or `ops`")));
            }
            let mix = match s.mix {
                None => defaults.mix.clone(),
                Some(MixSpec::Text(t)) => {
                    OpMix::parse(&t, names).map_err(|e| err(format!("stage {name:?}: {e}")))?
                }
                Some(MixSpec::Map(m)) => {
                    let t: Vec<String> = m.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    OpMix::parse(&t.join(","), names)
                        .map_err(|e| err(format!("stage {name:?}: {e}")))?
                }
            };
            if let Some(r) = s.rate {
                if !(r.is_finite() && r > 0.0) {
                    return Err(err(format!("stage {name:?}: rate must be > 0")));
                }
            }
            Ok(StagePlan {
                name,
                phase: Phase::Run,
                ops: s.ops,
                duration,
                rate_ops_s: s.rate.or(defaults.rate_ops_s),
                mix,
                ttl_s: s.ttl_s.or(defaults.ttl_s),
                record: s.record.unwrap_or(true),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn names() -> Vec<String> {
        vec!["read".into(), "update".into()]
    }

    #[test]
    fn stage_durations_need_a_unit() {
        let mix = OpMix::from_weights(&[1.0, 1.0]).unwrap();
        let d = StageDefaults {
            rate_ops_s: None,
            mix: &mix,
            ttl_s: None,
        };
        let e = parse_stages("[{duration: '30'}]", Path::new("s.yaml"), &names(), &d)
            .unwrap_err()
            .to_string();
        assert!(e.contains("duration: bare number 30 is ambiguous"), "{e}");
    }

    #[test]
    fn yaml_and_json_stages() {
        let mix = OpMix::from_weights(&[1.0, 1.0]).unwrap();
        let d = StageDefaults {
            rate_ops_s: Some(100.0),
            mix: &mix,
            ttl_s: None,
        };
        let y = "stages:\n  - {name: warm, duration: 10s, record: false}\n  - {ops: 500, rate: 50, mix: {read: 3, update: 1}, ttl_s: 60}\n";
        let s = parse_stages(y, Path::new("s.yaml"), &names(), &d).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].rate_ops_s, Some(100.0));
        assert!(!s[0].record);
        assert_eq!(s[1].name, "stage2");
        assert_eq!(s[1].mix.weights(), &[0.75, 0.25]);
        assert_eq!(s[1].ttl_s, Some(60));
        let j = r#"[{"duration": "1m", "mix": "update=1"}]"#;
        let s = parse_stages(j, Path::new("s.json"), &names(), &d).unwrap();
        assert_eq!(s[0].duration, Some(Duration::from_secs(60)));
        let e = parse_stages("[{name: x}]", Path::new("s.yaml"), &names(), &d).unwrap_err();
        assert!(e.to_string().contains("needs `duration` or `ops`"), "{e}");
        let e = parse_stages(
            "[{ops: 1, mix: 'scan=1'}]",
            Path::new("s.yaml"),
            &names(),
            &d,
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown operation"), "{e}");
        assert!(parse_stages("[{ops: 1, speed: 3}]", Path::new("s.yaml"), &names(), &d).is_err());
    }
}
