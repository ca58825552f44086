//! One grammar for values with units, the same as casslab's `casslab.core.units`:
//! durations -> seconds (`250us`, `10ms`, `1.5s`, `2m`/`2min`, `1h`), sizes -> bytes
//! (decimal `kB`/`KB`, `MB`, `GB`, `TB`; binary `KiB`, `MiB`, `GiB`, `TiB`), data rates
//! -> bit/s (`kbit`, `Mbit`, `Gbit` in any case with `/s` optional; `MB/s`, `MiB/s`, ...)
//! and percentages -> a fraction (`1%` = 0.01).
//!
//! A bare number is refused unless the caller names its unit (`bare`); `mbps` and its
//! kin are refused as ambiguous (megabits or megabytes). NaN, infinities and negative
//! values are refused. tests/units_cases.json (repository root) is the one table of
//! cases both implementations are tested against, so messages match word for word.

use serde::{Serialize, Serializer};
use std::str::FromStr;
use std::time::Duration;

/// What a value measures; each kind has one base unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(
    not(test),
    expect(
        dead_code,
        reason = "the whole grammar is kept so the shared case table holds for both \
                  languages; casslab-load's options take durations only today"
    )
)]
pub enum Kind {
    /// Seconds.
    Duration,
    /// Bytes.
    Size,
    /// Bits per second.
    Rate,
    /// A fraction (1 % = 0.01).
    Percent,
}

impl Kind {
    fn what(self) -> &'static str {
        match self {
            Kind::Duration => "a duration",
            Kind::Size => "a size",
            Kind::Rate => "a data rate",
            Kind::Percent => "a percentage",
        }
    }

    fn examples(self) -> &'static str {
        match self {
            Kind::Duration => "10ms or 10s",
            Kind::Size => "10MiB or 10MB",
            Kind::Rate => "10Mbit or 10MB/s",
            Kind::Percent => "10%",
        }
    }

    fn hints(self) -> &'static [&'static str] {
        match self {
            Kind::Duration => &["ms", "s"],
            Kind::Size => &["MiB", "MB"],
            Kind::Rate => &["Mbit", "MB/s"],
            Kind::Percent => &["%"],
        }
    }

    fn valid(self) -> &'static str {
        match self {
            Kind::Duration => "us, ms, s, m, min, h",
            Kind::Size => "B, kB, MB, GB, TB (10^3) or KiB, MiB, GiB, TiB (2^10)",
            Kind::Rate => {
                "bit, kbit, Mbit, Gbit (/s optional) or B/s, kB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s"
            }
            Kind::Percent => "%",
        }
    }
}

fn duration_s(unit: &str) -> Option<f64> {
    Some(match unit {
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return None,
    })
}

fn size_bytes(unit: &str) -> Option<f64> {
    Some(match unit {
        "B" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    })
}

/// Bit units match in any case (tc writes `mbit`); byte units exactly (B is not b).
fn rate_bit_s(unit: &str) -> Option<f64> {
    let per_s = unit.strip_suffix("/s");
    if let Some(bytes) = per_s.and_then(size_bytes) {
        return Some(bytes * 8.0);
    }
    Some(match per_s.unwrap_or(unit).to_lowercase().as_str() {
        "bit" => 1.0,
        "kbit" => 1e3,
        "mbit" => 1e6,
        "gbit" => 1e9,
        _ => return None,
    })
}

/// `mbps` and kin: (what to write for bits/s, for bytes/s).
fn ambiguous_rate(unit: &str) -> Option<(&'static str, &'static str)> {
    let u = unit.to_lowercase();
    Some(match u.strip_suffix("/s").unwrap_or(&u) {
        "bps" => ("bit", "B/s"),
        "kbps" => ("kbit", "kB/s"),
        "mbps" => ("Mbit", "MB/s"),
        "gbps" => ("Gbit", "GB/s"),
        _ => return None,
    })
}

fn scale(kind: Kind, unit: &str) -> Option<f64> {
    match kind {
        Kind::Duration => duration_s(unit),
        Kind::Size => size_bytes(unit),
        Kind::Rate => rate_bit_s(unit),
        Kind::Percent => (unit == "%").then_some(0.01),
    }
}

/// Splits `text` (already trimmed) into the number's text and the unit (trimmed), or
/// None when it does not start with a number. Sign kept so `-5ms` gets "negative".
fn split_number(text: &str) -> Option<(&str, &str)> {
    let b = text.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        let frac_start = i + 1;
        let mut j = frac_start;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        // `.` needs a digit on one side of it, as in the Python grammar.
        if digits > 0 || j > frac_start {
            digits += j - frac_start;
            i = j;
        }
    }
    if digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'-' || b[j] == b'+') {
            j += 1;
        }
        let exp_start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > exp_start {
            i = j;
        }
    }
    Some((&text[..i], text[i..].trim()))
}

/// Parses `text` as `kind` into its base unit; `bare` is the unit of a bare number.
/// The error is one line without the option name (clap adds it).
pub fn parse(kind: Kind, text: &str, bare: Option<&str>) -> Result<f64, String> {
    let show = text.trim();
    let Some((num, unit)) = split_number(show) else {
        return Err(format!(
            "'{show}' is not {} (e.g. {})",
            kind.what(),
            kind.examples()
        ));
    };
    let number: f64 = num
        .parse()
        .map_err(|_| format!("'{show}' is not {}", kind.what()))?;
    if !number.is_finite() {
        return Err(format!("{show} is not a finite number"));
    }
    if number < 0.0 {
        return Err(format!("{show} is negative"));
    }
    let unit = if unit.is_empty() {
        match bare {
            Some(b) => b,
            None => {
                let hint: Vec<String> = kind.hints().iter().map(|u| format!("{num}{u}")).collect();
                return Err(format!(
                    "bare number {num} is ambiguous: add a unit, e.g. {}",
                    hint.join(" or ")
                ));
            }
        }
    } else {
        unit
    };
    if kind == Kind::Rate {
        if let Some((bits, bytes)) = ambiguous_rate(unit) {
            return Err(format!(
                "'{show}' is ambiguous (bits or bytes?): write {bits} for bits/s or {bytes} for bytes/s"
            ));
        }
    }
    let Some(factor) = scale(kind, unit) else {
        return Err(format!(
            "unknown unit '{unit}' in '{show}' (valid: {})",
            kind.valid()
        ));
    };
    let out = number * factor;
    if !out.is_finite() {
        return Err(format!("{show} is not a finite number"));
    }
    if kind == Kind::Percent && out > 1.0 {
        return Err(format!("{show} is over 100%"));
    }
    Ok(out)
}

/// A duration from `500ms`, `30s`, `2m`, `1h`, `250us` (no bare numbers).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let secs = parse(Kind::Duration, text, None)?;
    Duration::try_from_secs_f64(secs).map_err(|_| format!("{} is too long", text.trim()))
}

/// A duration option value (`--duration 60s`); serialized as typed, so the summary
/// line shows what the user wrote.
#[derive(Clone, Debug)]
pub struct Dur(pub Duration, String);

impl FromStr for Dur {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_duration(s).map(|d| Dur(d, s.to_string()))
    }
}

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    const CASES: &str = include_str!("../../../tests/units_cases.json");

    fn kind(name: &str) -> Kind {
        match name {
            "duration" => Kind::Duration,
            "size" => Kind::Size,
            "rate" => Kind::Rate,
            "percent" => Kind::Percent,
            other => panic!("unknown kind {other} in units_cases.json"),
        }
    }

    #[test]
    fn shared_table_of_cases() {
        let table: Value = serde_json::from_str(CASES).unwrap();
        let cases = table["cases"].as_array().unwrap();
        assert!(cases.len() >= 60);
        let mut failures = Vec::new();
        for c in cases {
            let input = c["input"].as_str().unwrap();
            let got = parse(kind(c["kind"].as_str().unwrap()), input, c["bare"].as_str());
            let ok = match (&got, c.get("value"), c.get("error")) {
                (Ok(v), Some(want), None) => {
                    let want = want.as_f64().unwrap();
                    (v - want).abs() <= 1e-9 * want.abs().max(1e-6)
                }
                (Err(e), None, Some(want)) => {
                    e.contains(want.as_str().unwrap()) && !e.contains('\n')
                }
                _ => false,
            };
            if !ok {
                failures.push(format!("{c} -> {got:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn durations_become_std_durations() {
        assert_eq!(parse_duration("60s").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_duration("1e300s").unwrap_err().contains("too long"));
        let e = Dur::from_str("60").unwrap_err();
        assert_eq!(
            e,
            "bare number 60 is ambiguous: add a unit, e.g. 60ms or 60s"
        );
    }
}
