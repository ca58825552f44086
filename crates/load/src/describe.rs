//! `casslab-load options --json`: every subcommand's options as JSON, read from the clap
//! definitions themselves (`Cli::command()`), not from a second table. casslab's
//! `casslab.load.options` builds its typed options and checks from this description, so
//! a range, a value list or a rule between options is written once, in config.rs.
//!
//! What clap keeps and shows (names, defaults, value lists, conflicts) is read through its
//! getters; what it keeps but does not show (ranges checked by a value parser, `requires`)
//! is set with `ranges::ArgRules` (`range = ...`, `needs = ...`), which keeps a copy on the
//! `Arg` for this module. The one table here maps value types to the kind of value they
//! take; a test fails on an option whose type is not in it.

use crate::config::{
    BatchKind, Cl, Format, IotReads, KeyDist, MeasurementInterval, PhaseArg, StressMode, Warmup,
};
use crate::config::{Cli, YcsbWorkload};
use crate::exec::ClientSlice;
use crate::ranges::{Needs, Range};
use crate::stats::prometheus::Label;
use crate::units::Dur;
use clap::builder::ValueParser;
use clap::builder::{ArgAction, Command};
use clap::{Arg, CommandFactory};
use serde_json::{json, Map, Value};
use std::any::TypeId;
use std::io::Write as _;
use std::path::PathBuf;

/// Version of the description's shape: casslab refuses a description it cannot read.
pub const SCHEMA: u32 = 1;

/// The value type of an option: its Rust type (for the reader) and the kind of value
/// casslab checks it as. Whole-number types also give their own limits.
struct ValueType {
    rust: &'static str,
    kind: &'static str,
    limit: Option<u64>,
}

fn value_type(parser: &ValueParser) -> Option<ValueType> {
    let t = |rust, kind, limit| Some(ValueType { rust, kind, limit });
    let is = |other: TypeId| parser.type_id() == other;
    if is(TypeId::of::<bool>()) {
        t("bool", "flag", None)
    } else if is(TypeId::of::<u64>()) {
        t("u64", "integer", Some(u64::MAX))
    } else if is(TypeId::of::<usize>()) {
        t("usize", "integer", Some(usize::MAX as u64))
    } else if is(TypeId::of::<u32>()) {
        t("u32", "integer", Some(u32::MAX.into()))
    } else if is(TypeId::of::<i32>()) {
        t("i32", "integer", Some(i32::MAX as u64))
    } else if is(TypeId::of::<f64>()) {
        t("f64", "number", None)
    } else if is(TypeId::of::<Dur>()) {
        t("Dur", "duration", None)
    } else if is(TypeId::of::<String>()) {
        t("String", "text", None)
    } else if is(TypeId::of::<PathBuf>()) {
        t("PathBuf", "path", None)
    } else if is(TypeId::of::<Warmup>()) {
        t("Warmup", "warmup", None)
    } else if is(TypeId::of::<ClientSlice>()) {
        t("ClientSlice", "client", None)
    } else if is(TypeId::of::<Label>()) {
        t("Label", "label", None)
    } else {
        enum_type(parser)
    }
}

/// The value enums: their values are listed as `choices`.
fn enum_type(parser: &ValueParser) -> Option<ValueType> {
    let names = [
        (TypeId::of::<Cl>(), "Cl"),
        (TypeId::of::<PhaseArg>(), "PhaseArg"),
        (TypeId::of::<Format>(), "Format"),
        (TypeId::of::<YcsbWorkload>(), "YcsbWorkload"),
        (TypeId::of::<KeyDist>(), "KeyDist"),
        (TypeId::of::<StressMode>(), "StressMode"),
        (TypeId::of::<IotReads>(), "IotReads"),
        (TypeId::of::<BatchKind>(), "BatchKind"),
        (TypeId::of::<MeasurementInterval>(), "MeasurementInterval"),
    ];
    names
        .iter()
        .find(|(other, _)| parser.type_id() == *other)
        .map(|(_, rust)| ValueType {
            rust,
            kind: "choice",
            limit: None,
        })
}

/// The description of every subcommand of `cmd`, or the name of an option whose value
/// type the table above lacks.
pub fn describe(cmd: &Command) -> Result<Value, String> {
    let mut commands = Map::new();
    for sub in cmd.get_subcommands() {
        let options: Result<Vec<Value>, String> = sub
            .get_arguments()
            .filter(|a| !is_builtin(a))
            .map(|a| option(sub, a))
            .collect();
        commands.insert(
            sub.get_name().to_string(),
            json!({
                "about": sub.get_about().map(|s| s.to_string()),
                "options": options?,
            }),
        );
    }
    Ok(json!({
        "schema": SCHEMA,
        "program": cmd.get_name(),
        "version": cmd.get_version(),
        "commands": commands,
    }))
}

/// `--help` and `--version`, which clap adds itself.
fn is_builtin(arg: &Arg) -> bool {
    matches!(
        arg.get_action(),
        ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::Version
    )
}

/// How an option is named on the command line: its long flag, else (a positional) its id.
fn flag_of(arg: &Arg) -> String {
    arg.get_long()
        .map_or_else(|| arg.get_id().to_string(), str::to_string)
}

fn option(cmd: &Command, arg: &Arg) -> Result<Value, String> {
    let parser = arg.get_value_parser();
    let vt = value_type(parser).ok_or_else(|| {
        format!(
            "{} {}: value type not in describe's table",
            cmd.get_name(),
            flag_of(arg)
        )
    })?;
    let choices: Vec<Value> = arg
        .get_possible_values()
        .iter()
        .filter(|_| vt.kind == "choice")
        .map(|p| {
            let aliases: Vec<&str> = p.get_name_and_aliases().skip(1).collect();
            json!({"name": p.get_name(), "aliases": aliases})
        })
        .collect();
    let range = arg
        .get::<Range>()
        .cloned()
        .or(vt.limit.map(|hi| Range::Integer {
            min: 0,
            max: (hi != u64::MAX).then_some(hi),
        }));
    let conflicts: Vec<String> = cmd
        .get_arg_conflicts_with(arg)
        .into_iter()
        .map(flag_of)
        .collect();
    let requires: Result<Vec<String>, String> = arg
        .get::<Needs>()
        .map(|n| n.0.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|id| {
            cmd.get_arguments()
                .find(|a| a.get_id() == id)
                .map(flag_of)
                .ok_or_else(|| format!("{} needs unknown {id}", flag_of(arg)))
        })
        .collect();
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    Ok(json!({
        "flag": flag_of(arg),
        "id": arg.get_id().as_str(),
        "short": arg.get_short().map(String::from),
        "positional": arg.is_positional(),
        "required": arg.is_required_set(),
        "kind": vt.kind,
        "rust_type": vt.rust,
        "multiple": matches!(arg.get_action(), ArgAction::Append),
        "delimiter": arg.get_value_delimiter().map(String::from),
        "default": (!defaults.is_empty()).then_some(defaults),
        "choices": (!choices.is_empty()).then_some(choices),
        "ignore_case": arg.is_ignore_case_set(),
        "range": range,
        "conflicts_with": conflicts,
        "requires": requires?,
        "help": arg.get_help().map(|h| h.to_string()),
    }))
}

/// `casslab-load options`: the JSON description, or one line per option. A closed
/// stdout (`| head`) ends the output quietly.
pub fn print(json: bool) -> Result<(), String> {
    let cmd = Cli::command();
    let description = describe(&cmd)?;
    let text = if json {
        serde_json::to_string_pretty(&description).map_err(|e| e.to_string())? + "\n"
    } else {
        lines(&cmd)
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.to_string()),
        _ => Ok(()),
    }
}

/// One line per option: `ycsb --records <RECORDS>: must be an integer >= 1 (default 1000)`.
fn lines(cmd: &Command) -> String {
    let mut text = String::new();
    for sub in cmd.get_subcommands() {
        for arg in sub.get_arguments().filter(|a| !is_builtin(a)) {
            let mut line = format!("{} --{}", sub.get_name(), flag_of(arg));
            if let Some(range) = arg.get::<Range>() {
                line += &format!(": {range}");
            }
            let values: Vec<String> = arg
                .get_possible_values()
                .iter()
                .map(|p| p.get_name().to_string())
                .collect();
            if !values.is_empty() && !matches!(arg.get_action(), ArgAction::SetTrue) {
                line += &format!(": one of {}", values.join(", "));
            }
            let defaults: Vec<String> = arg
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            if !defaults.is_empty() {
                line += &format!(" (default {})", defaults.join(","));
            }
            text += &line;
            text.push('\n');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranges::{int, ArgRules as _};
    use clap::parser::ValueSource;

    fn described() -> Value {
        describe(&Cli::command()).unwrap()
    }

    fn find<'a>(d: &'a Value, command: &str, flag: &str) -> &'a Value {
        d["commands"][command]["options"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["flag"] == flag)
            .unwrap_or_else(|| panic!("{command} --{flag} not described"))
    }

    #[test]
    fn every_clap_argument_of_every_subcommand_is_described() {
        let cmd = Cli::command();
        let d = described();
        let mut count = 0;
        for sub in cmd.get_subcommands() {
            for arg in sub.get_arguments().filter(|a| !is_builtin(a)) {
                let o = find(&d, sub.get_name(), &flag_of(arg));
                assert_eq!(o["id"], arg.get_id().as_str());
                count += 1;
            }
            let listed = d["commands"][sub.get_name()]["options"]
                .as_array()
                .unwrap()
                .len();
            assert_eq!(
                listed,
                sub.get_arguments().filter(|a| !is_builtin(a)).count()
            );
        }
        assert!(count > 100, "{count}");
    }

    #[test]
    fn every_requires_is_recorded_with_needs() {
        // clap shows no getter for `requires`; its Debug text does. An option given a
        // plain `requires` (not `needs`) would be checked by clap but not described.
        for sub in Cli::command().get_subcommands() {
            for arg in sub.get_arguments() {
                let needs = arg.get::<Needs>().map_or(0, |n| n.0.len());
                let debug = format!("{arg:?}");
                let plain = debug.split("requires: [").nth(1).map_or(0, |rest| {
                    let inner = rest.split(']').next().unwrap_or("");
                    inner
                        .matches("Id(")
                        .count()
                        .max(inner.matches('"').count() / 2)
                });
                assert_eq!(
                    plain,
                    needs,
                    "{} --{}: {debug}",
                    sub.get_name(),
                    flag_of(arg)
                );
            }
        }
    }

    #[test]
    fn ranges_values_and_rules_come_from_the_clap_definitions() {
        let d = described();
        let records = find(&d, "ycsb", "records");
        assert_eq!(records["kind"], "integer");
        assert_eq!(
            records["range"],
            json!({"kind": "integer", "min": 1, "max": null})
        );
        assert_eq!(records["default"], json!(["1000"]));
        let series = find(&d, "iot", "series");
        assert_eq!(series["range"]["max"], 5);
        let tick = find(&d, "stress", "tick");
        assert_eq!(
            tick["range"]["min"],
            json!({"end": "closed", "value": 0.001})
        );
        let threads = find(&d, "ycsb", "threads");
        assert_eq!(threads["conflicts_with"], json!(["workers", "in-flight"]));
        assert_eq!(
            find(&d, "ycsb", "think-time")["requires"],
            json!(["threads"])
        );
        assert_eq!(
            find(&d, "stress", "replication")["conflicts_with"],
            json!(["rf"])
        );
        let cl = find(&d, "user", "cl-read");
        assert_eq!(cl["ignore_case"], true);
        assert_eq!(
            cl["choices"][6],
            json!({"name": "LOCAL_QUORUM", "aliases": ["LOCAL-QUORUM"]})
        );
        // An option of one workload only is described there only.
        assert!(d["commands"]["ycsb"]["options"]
            .as_array()
            .unwrap()
            .iter()
            .all(|o| o["flag"] != "devices"));
        assert_eq!(
            find(&d, "ycsb", "ops")["range"],
            json!({"kind": "integer", "min": 0, "max": null})
        );
    }

    #[test]
    fn the_text_form_has_one_line_per_option_with_its_rule() {
        let text = lines(&Cli::command());
        assert!(
            text.contains("ycsb --records: must be an integer >= 1 (default 1000)\n"),
            "{text}"
        );
        assert!(text.contains("stress --tick: must be a duration >= 1ms and <= 1s (default 1ms)\n"));
        assert!(text.contains("iot --reads: one of study, full-latest (default study)\n"));
        assert_eq!(
            text.lines().count(),
            described()["commands"]
                .as_object()
                .unwrap()
                .values()
                .map(|c| c["options"].as_array().unwrap().len())
                .sum::<usize>()
        );
    }

    /// The description of the real command line with one rule planted in clap only:
    /// `ycsb --records` limited to 1..=5000, and `ycsb --seed` needing `--ops`.
    fn planted() -> Value {
        let cmd = Cli::command().mut_subcommand("ycsb", |c| {
            c.mut_arg("records", |a| a.range(int::<u64>(1, 5000)))
                .mut_arg("seed", |a| a.needs("ops"))
        });
        // clap itself now enforces the planted rules ...
        let sub = cmd.clone().try_get_matches_from([
            "casslab-load",
            "ycsb",
            "-w",
            "a",
            "--records",
            "6000",
        ]);
        assert!(sub
            .unwrap_err()
            .to_string()
            .contains("must be an integer in 1..=5000"));
        let m =
            cmd.clone()
                .try_get_matches_from(["casslab-load", "ycsb", "-w", "a", "--seed", "3"]);
        assert!(m.unwrap_err().to_string().contains("--ops"));
        // ... and a default seed does not trip it.
        let m = cmd
            .clone()
            .try_get_matches_from(["casslab-load", "ycsb", "-w", "a"])
            .unwrap();
        let ycsb = m.subcommand_matches("ycsb").unwrap();
        assert_eq!(ycsb.value_source("seed"), Some(ValueSource::DefaultValue));
        describe(&cmd).unwrap()
    }

    /// A golden file: rewritten with CASSLAB_UPDATE_GOLDEN=1, else compared.
    fn golden(path: &str, value: &Value) {
        let text = serde_json::to_string_pretty(value).unwrap() + "\n";
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(path);
        if std::env::var("CASSLAB_UPDATE_GOLDEN").as_deref() == Ok("1") {
            std::fs::write(&file, &text).unwrap();
        }
        let committed = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(
            committed == text,
            "{path} is not what casslab-load describes: CASSLAB_UPDATE_GOLDEN=1 cargo test -p casslab-load describe"
        );
    }

    #[test]
    fn a_rule_planted_in_clap_only_shows_in_the_description() {
        let d = planted();
        let records = find(&d, "ycsb", "records");
        assert_eq!(
            records["range"],
            json!({"kind": "integer", "min": 1, "max": 5000})
        );
        assert_eq!(find(&d, "ycsb", "seed")["requires"], json!(["ops"]));
        // Only there: the other workloads keep theirs.
        assert_eq!(find(&d, "stress", "records")["range"]["max"], Value::Null);
        // casslab's Python test reads this planted description (tests/fixtures).
        golden("tests/fixtures/load_options_planted.json", &d);
    }

    #[test]
    fn the_committed_description_is_the_binarys() {
        golden("src/casslab/load/options.json", &described());
    }
}
