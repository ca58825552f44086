//! Value parsers of the numeric options that have a valid range. Clap runs them while
//! it parses the command line, so a value out of range is refused before anything
//! connects, in one line that names the option, the value and the range (exit 2):
//! `invalid value '0' for '--records <RECORDS>': must be an integer >= 1`.
//!
//! Each range is also kept on its clap `Arg` (an `ArgExt`), so `casslab-load options
//! --json` describes it and casslab's own check of these options (casslab.load.options)
//! is built from that description: the derive attribute `range = int::<u64>(1, MAX)`
//! is the one definition of the rule. `needs = "id"` does the same for clap's
//! `requires`, which clap keeps but does not show.

use crate::units::Dur;
use clap::builder::{ArgExt, ValueParser};
use clap::Arg;
use serde::Serialize;
use std::str::FromStr;
use std::time::Duration;

/// Cassandra's largest TTL, 20 years in seconds (a larger one is refused by the server).
pub const MAX_TTL_S: u64 = 630_720_000;

fn int_rule(lo: u64, hi: u64) -> String {
    if hi == u64::MAX {
        format!("must be an integer >= {lo}")
    } else {
        format!("must be an integer in {lo}..={hi}")
    }
}

/// A whole number in `lo..=hi` (`hi` = u64::MAX: no upper bound) of type `T`.
fn int_parser<T>(
    lo: u64,
    hi: u64,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: TryFrom<u64> + 'static,
{
    move |text: &str| {
        text.trim()
            .parse::<u64>()
            .ok()
            .filter(|n| (lo..=hi).contains(n))
            .and_then(|n| T::try_from(n).ok())
            .ok_or_else(|| int_rule(lo, hi))
    }
}

/// One end of a range of numbers or durations: the value, and whether the range holds it.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(rename_all = "lowercase", tag = "end", content = "value")]
pub enum End<T> {
    Open(T),
    Closed(T),
    None,
}

impl<T: PartialOrd + Copy> End<T> {
    fn below(self, x: T) -> bool {
        match self {
            End::Open(lo) => lo < x,
            End::Closed(lo) => lo <= x,
            End::None => true,
        }
    }
    fn above(self, x: T) -> bool {
        match self {
            End::Open(hi) => x < hi,
            End::Closed(hi) => x <= hi,
            End::None => true,
        }
    }
}

fn rule<T: Copy>(what: &str, lo: End<T>, hi: End<T>, show: impl Fn(T) -> String) -> String {
    let lower = match lo {
        End::Open(v) => Some(format!("> {}", show(v))),
        End::Closed(v) => Some(format!(">= {}", show(v))),
        End::None => None,
    };
    let upper = match hi {
        End::Open(v) => Some(format!("< {}", show(v))),
        End::Closed(v) => Some(format!("<= {}", show(v))),
        End::None => None,
    };
    match (lower, upper) {
        (Some(l), Some(u)) => format!("must be {what} {l} and {u}"),
        (Some(b), None) | (None, Some(b)) => format!("must be {what} {b}"),
        (None, None) => format!("must be {what}"),
    }
}

/// A finite number within `lo` and `hi`.
fn num_parser(
    lo: End<f64>,
    hi: End<f64>,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |text: &str| {
        text.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && lo.below(*x) && hi.above(*x))
            .ok_or_else(|| rule("a number", lo, hi, |v| format!("{v}")))
    }
}

/// A duration as the units' grammar writes it: `0`, `1ms`, `10s`.
fn show_dur(d: Duration) -> String {
    if d.is_zero() {
        "0".into()
    } else if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else if d.as_nanos().is_multiple_of(1_000_000) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{}us", d.as_micros())
    }
}

/// A duration (the units' grammar, e.g. `10s`) within `lo` and `hi`.
fn dur_parser(
    lo: End<Duration>,
    hi: End<Duration>,
) -> impl Fn(&str) -> Result<Dur, String> + Clone + Send + Sync + 'static {
    move |text: &str| {
        let d = Dur::from_str(text)?;
        if lo.below(d.0) && hi.above(d.0) {
            Ok(d)
        } else {
            Err(rule("a duration", lo, hi, show_dur))
        }
    }
}

/// The valid values of a numeric option, as `options --json` shows them: integers by
/// their closed ends, numbers by theirs (open or closed), durations in seconds.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum Range {
    /// `hi` None: no upper bound (u64::MAX in the parser).
    Integer {
        min: u64,
        max: Option<u64>,
    },
    Number {
        min: End<f64>,
        max: End<f64>,
    },
    /// Ends in seconds.
    Duration {
        min: End<f64>,
        max: End<f64>,
    },
}

impl ArgExt for Range {}

impl std::fmt::Display for Range {
    /// The rule as the value parser's error states it: `must be an integer in 1..=5`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = |e: End<f64>| match e {
            End::Open(s) => End::Open(Duration::from_secs_f64(s)),
            End::Closed(s) => End::Closed(Duration::from_secs_f64(s)),
            End::None => End::None,
        };
        let text = match *self {
            Range::Integer { min, max } => int_rule(min, max.unwrap_or(u64::MAX)),
            Range::Number { min, max } => rule("a number", min, max, |v| format!("{v}")),
            Range::Duration { min, max } => rule("a duration", secs(min), secs(max), show_dur),
        };
        f.write_str(&text)
    }
}

/// A range and the clap value parser that enforces it, made together so they agree.
pub struct Ranged {
    range: Range,
    parser: ValueParser,
}

/// `range = int::<T>(lo, hi)`: a whole number in `lo..=hi` (`hi` = u64::MAX: no upper bound).
pub fn int<T>(lo: u64, hi: u64) -> Ranged
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
{
    Ranged {
        range: Range::Integer {
            min: lo,
            max: (hi != u64::MAX).then_some(hi),
        },
        parser: ValueParser::new(int_parser::<T>(lo, hi)),
    }
}

/// `range = num(lo, hi)`: a finite number within `lo` and `hi`.
pub fn num(lo: End<f64>, hi: End<f64>) -> Ranged {
    Ranged {
        range: Range::Number { min: lo, max: hi },
        parser: ValueParser::new(num_parser(lo, hi)),
    }
}

fn end_s(end: End<Duration>) -> End<f64> {
    match end {
        End::Open(d) => End::Open(d.as_secs_f64()),
        End::Closed(d) => End::Closed(d.as_secs_f64()),
        End::None => End::None,
    }
}

/// `range = dur(lo, hi)`: a duration (the units' grammar) within `lo` and `hi`.
pub fn dur(lo: End<Duration>, hi: End<Duration>) -> Ranged {
    Ranged {
        range: Range::Duration {
            min: end_s(lo),
            max: end_s(hi),
        },
        parser: ValueParser::new(dur_parser(lo, hi)),
    }
}

/// The ids an option needs (clap's `requires`), kept where `options --json` can read them.
#[derive(Clone, Debug, Default)]
pub struct Needs(pub Vec<&'static str>);

impl ArgExt for Needs {}

/// Rules set on an `Arg` so that clap enforces them and `options --json` shows them.
pub trait ArgRules {
    /// The value parser and its range (`#[arg(range = int::<u64>(1, MAX))]`).
    fn range(self, ranged: Ranged) -> Self;
    /// clap's `requires`, recorded (`#[arg(needs = "threads")]`).
    fn needs(self, id: &'static str) -> Self;
}

impl ArgRules for Arg {
    fn range(self, ranged: Ranged) -> Self {
        self.value_parser(ranged.parser).add(ranged.range)
    }

    fn needs(self, id: &'static str) -> Self {
        let mut needs = self.get::<Needs>().cloned().unwrap_or_default();
        needs.0.push(id);
        self.requires(id).add(needs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_out_of_range_or_not_integers_name_the_range() {
        let records = int_parser::<u64>(1, u64::MAX);
        assert_eq!(records("7"), Ok(7));
        assert_eq!(records("0").unwrap_err(), "must be an integer >= 1");
        assert_eq!(records("-1").unwrap_err(), "must be an integer >= 1");
        assert_eq!(records("ten").unwrap_err(), "must be an integer >= 1");
        let series = int_parser::<u64>(1, 5);
        assert_eq!(series("6").unwrap_err(), "must be an integer in 1..=5");
        // The target type's own limit holds too.
        assert!(int_parser::<i32>(0, u64::MAX)("3000000000").is_err());
    }

    #[test]
    fn numbers_and_durations_name_their_ends() {
        let fraction = num_parser(End::Open(0.0), End::Open(1.0));
        assert_eq!(fraction("0.5"), Ok(0.5));
        for bad in ["0", "1", "NaN", "inf", "x"] {
            assert_eq!(
                fraction(bad).unwrap_err(),
                "must be a number > 0 and < 1",
                "{bad}"
            );
        }
        let positive = num_parser(End::Open(0.0), End::None);
        assert_eq!(positive("-3").unwrap_err(), "must be a number > 0");
        let tick = dur_parser(
            End::Closed(Duration::from_millis(1)),
            End::Closed(Duration::from_secs(1)),
        );
        assert!(tick("5ms").is_ok());
        assert_eq!(
            tick("2s").unwrap_err(),
            "must be a duration >= 1ms and <= 1s"
        );
        let timeout = dur_parser(End::Open(Duration::ZERO), End::None);
        assert_eq!(timeout("0s").unwrap_err(), "must be a duration > 0");
        // The grammar's own errors come through.
        assert!(timeout("60").unwrap_err().contains("add a unit"));
    }
}
