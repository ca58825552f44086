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
//!   - name: later
//!     duration: 1m
//!     table_ttl_s: 7200      # iot: ALTER TABLE ... default_time_to_live first
//! ```
//! A top-level list (without `stages:`) is accepted too.

use super::{OpMix, Phase, StagePlan};
use crate::error::{LoadError, Result};
use crate::ranges::MAX_TTL_S;
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
    table_ttl_s: Option<i32>,
    record: Option<bool>,
}

/// The mapping form of a stages file, `stages: [...]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StagesDoc {
    stages: Vec<StageSpec>,
}

/// Defaults a stage inherits from the command line.
pub struct StageDefaults<'a> {
    /// `--rate`.
    pub rate_ops_s: Option<f64>,
    /// `--mix` or the workload's default.
    pub mix: &'a OpMix,
    /// `--ttl-s`.
    pub ttl_s: Option<i32>,
    /// Whether the workload's table TTL can be set per stage (`table_ttl_s`).
    pub table_ttl: bool,
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
    // Then typed from the text, not from `value`: only the text's errors carry the
    // field's path (`stages[1].ops: invalid value: integer `-5`, expected u64`).
    let specs: Vec<StageSpec> = match value {
        serde_norway::Value::Sequence(_) => serde_norway::from_str(text),
        serde_norway::Value::Mapping(m) if m.len() == 1 && m.contains_key("stages") => {
            serde_norway::from_str::<StagesDoc>(text).map(|d| d.stages)
        }
        _ => {
            return Err(err(
                "must be a list of stages, or a mapping with the one key `stages:`".into(),
            ))
        }
    }
    .map_err(|e| err(e.to_string()))?;
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
            for (key, ttl) in [("ttl_s", s.ttl_s), ("table_ttl_s", s.table_ttl_s)] {
                if let Some(ttl) = ttl {
                    if !(0..=MAX_TTL_S).contains(&u64::try_from(ttl).unwrap_or(u64::MAX)) {
                        return Err(err(format!(
                            "stage {name:?}: {key} {ttl} must be an integer in 0..={MAX_TTL_S}"
                        )));
                    }
                }
            }
            if s.table_ttl_s.is_some() && !defaults.table_ttl {
                return Err(err(format!(
                    "stage {name:?}: table_ttl_s: only the iot workload has a table whose TTL \
                     a stage sets (valid here: ttl_s, the writes' TTL)"
                )));
            }
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
                table_ttl_s: s.table_ttl_s,
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

    /// Command-line defaults of a two-operation workload: no TTL, mix `mix`.
    fn defaults(mix: &OpMix, rate_ops_s: Option<f64>, table_ttl: bool) -> StageDefaults<'_> {
        StageDefaults {
            rate_ops_s,
            mix,
            ttl_s: None,
            table_ttl,
        }
    }

    #[test]
    fn stage_durations_need_a_unit() {
        let mix = OpMix::from_weights(&[1.0, 1.0]).unwrap();
        let d = defaults(&mix, None, false);
        let e = parse_stages("[{duration: '30'}]", Path::new("s.yaml"), &names(), &d)
            .unwrap_err()
            .to_string();
        assert!(e.contains("duration: bare number 30 is ambiguous"), "{e}");
    }

    #[test]
    fn yaml_and_json_stages() {
        let mix = OpMix::from_weights(&[1.0, 1.0]).unwrap();
        let d = defaults(&mix, Some(100.0), false);
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

    #[test]
    fn a_table_ttl_is_kept_for_a_workload_with_its_own_table() {
        let mix = OpMix::from_weights(&[1.0, 1.0]).unwrap();
        let d = defaults(&mix, None, true);
        let s = parse_stages(
            "[{ops: 5, table_ttl_s: 60}, {ops: 5}]",
            Path::new("s.yaml"),
            &names(),
            &d,
        )
        .unwrap();
        assert_eq!((s[0].table_ttl_s, s[0].ttl_s), (Some(60), None));
        assert_eq!(s[1].table_ttl_s, None); // a later stage without it keeps the table as is
    }

    #[test]
    fn a_wrong_value_is_named_by_its_field() {
        let mix = OpMix::from_weights(&[1.0, 1.0]).unwrap();
        let d = defaults(&mix, None, false);
        let cases = [
            (
                "stages:\n  - {ops: 5}\n  - {ops: -5}\n",
                "stages[1].ops: invalid type: integer `-5`, expected u64",
            ),
            ("[{ops: 5, rate: fast}]", "[0].rate: invalid type: string"),
            ("stages:\n  - {ops: 5, record: maybe}\n", "stages[0].record"),
            (
                "stages:\n  - {ops: 5, speed: 3}\n",
                "stages[0]: unknown field `speed`",
            ),
            (
                "[{name: w, ops: 5, ttl_s: -1}]",
                "stage \"w\": ttl_s -1 must be an integer in 0..=630720000",
            ),
            (
                "[{name: w, ops: 5, table_ttl_s: -1}]",
                "stage \"w\": table_ttl_s -1 must be an integer in 0..=630720000",
            ),
            (
                "[{name: w, ops: 5, table_ttl_s: 60}]",
                "stage \"w\": table_ttl_s: only the iot workload has a table",
            ),
        ];
        for (text, expected) in cases {
            let e = parse_stages(text, Path::new("s.yaml"), &names(), &d)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("stages file s.yaml: ") && e.contains(expected),
                "{text}: {e}"
            );
        }
    }
}
