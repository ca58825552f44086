//! cassandra-stress style distributions (`uniform(1..N)`, `gaussian(1..N,3)`,
//! `fixed(34)`, `seq(1..N)`) and YCSB's hotspot generator.

use super::Rng;
use crate::error::{LoadError, Result};
use serde::Serialize;

/// A distribution over integers in `[min, max]`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Dist {
    /// Every value in `[min, max]` equally likely.
    Uniform { min: u64, max: u64 },
    /// Normal with mean `(min+max)/2` and sd `(mean-min)/stdvrng`, clamped to
    /// `[min, max]` (cassandra-stress's GAUSSIAN; `stdvrng` defaults to 3).
    Gaussian { min: u64, max: u64, stdvrng: f64 },
    /// Always `value`.
    Fixed { value: u64 },
    /// `min, min+1, ..., max, min, ...` by cycle index (cassandra-stress `seq=`).
    Seq { min: u64, max: u64 },
}

fn parse_u64(text: &str, whole: &str) -> Result<u64> {
    let t = text.trim();
    let (num, mult) = match t.chars().last() {
        Some('k') | Some('K') => (&t[..t.len() - 1], 1_000),
        Some('m') | Some('M') => (&t[..t.len() - 1], 1_000_000),
        Some('b') | Some('B') => (&t[..t.len() - 1], 1_000_000_000),
        _ => (t, 1),
    };
    num.parse::<u64>()
        .map(|v| v * mult)
        .map_err(|_| LoadError::Distribution {
            text: whole.to_string(),
            reason: format!("{text:?} is not a non-negative integer"),
        })
}

impl Dist {
    /// Parses `name(args)`; names are case-insensitive: `uniform(1..100)`,
    /// `gaussian(1..100)`, `gaussian(1..100,5)` (also `gauss`, `normal`),
    /// `fixed(34)`, `seq(1..1000)`.
    pub fn parse(text: &str) -> Result<Dist> {
        let err = |reason: &str| LoadError::Distribution {
            text: text.to_string(),
            reason: reason.to_string(),
        };
        let t = text.trim();
        let open = t
            .find('(')
            .ok_or_else(|| err("expected NAME(ARGS), e.g. uniform(1..1000)"))?;
        if !t.ends_with(')') {
            return Err(err("missing closing ')'"));
        }
        let name = t[..open].trim().to_ascii_lowercase();
        let args = &t[open + 1..t.len() - 1];
        let range = |a: &str| -> Result<(u64, u64)> {
            let (lo, hi) = a
                .split_once("..")
                .ok_or_else(|| err("expected a range MIN..MAX"))?;
            let (lo, hi) = (
                parse_u64(lo, text)?,
                parse_u64(hi.trim_start_matches('.'), text)?,
            );
            if lo > hi {
                return Err(err("MIN is greater than MAX"));
            }
            Ok((lo, hi))
        };
        match name.as_str() {
            "uniform" => {
                let (min, max) = range(args)?;
                Ok(Dist::Uniform { min, max })
            }
            "gaussian" | "gauss" | "normal" | "norm" => {
                let mut parts = args.splitn(2, ',');
                let (min, max) = range(parts.next().unwrap_or(""))?;
                let stdvrng = match parts.next() {
                    Some(s) => s
                        .trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|v| *v > 0.0)
                        .ok_or_else(|| err("stdvrng must be a positive number"))?,
                    None => 3.0,
                };
                Ok(Dist::Gaussian { min, max, stdvrng })
            }
            "fixed" => Ok(Dist::Fixed {
                value: parse_u64(args, text)?,
            }),
            "seq" => {
                let (min, max) = range(args)?;
                Ok(Dist::Seq { min, max })
            }
            other => Err(err(&format!(
                "unsupported distribution {other:?} (supported: uniform, gaussian, fixed, seq)"
            ))),
        }
    }

    /// The largest value a draw can take.
    pub fn max(&self) -> u64 {
        match *self {
            Dist::Uniform { max, .. } | Dist::Gaussian { max, .. } | Dist::Seq { max, .. } => max,
            Dist::Fixed { value } => value,
        }
    }

    /// The smallest value a draw can take.
    pub fn min(&self) -> u64 {
        match *self {
            Dist::Uniform { min, .. } | Dist::Gaussian { min, .. } | Dist::Seq { min, .. } => min,
            Dist::Fixed { value } => value,
        }
    }

    /// Draws a value for cycle `index` using `rng` (sequences use `index`).
    pub fn sample(&self, rng: &mut Rng, index: u64) -> u64 {
        match *self {
            Dist::Uniform { min, max } => min + rng.below(max - min + 1),
            Dist::Fixed { value } => value,
            Dist::Seq { min, max } => min + index % (max - min + 1),
            Dist::Gaussian { min, max, stdvrng } => {
                let mean = (min as f64 + max as f64) / 2.0;
                let sd = (mean - min as f64) / stdvrng;
                // Box-Muller with two independent draws.
                let u1 = rng.next_f64().max(f64::MIN_POSITIVE);
                let u2 = rng.next_f64();
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                (mean + z * sd).round().clamp(min as f64, max as f64) as u64
            }
        }
    }
}

impl std::fmt::Display for Dist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dist::Uniform { min, max } => write!(f, "uniform({min}..{max})"),
            Dist::Gaussian { min, max, stdvrng } => write!(f, "gaussian({min}..{max},{stdvrng})"),
            Dist::Fixed { value } => write!(f, "fixed({value})"),
            Dist::Seq { min, max } => write!(f, "seq({min}..{max})"),
        }
    }
}

/// YCSB's `HotspotIntegerGenerator`: `hot_opn_fraction` of draws go to the
/// first `hot_set_fraction` of `[lb, ub]`, the rest to the remainder.
#[derive(Clone, Debug)]
pub struct Hotspot {
    lb: u64,
    hot_interval: u64,
    cold_interval: u64,
    hot_opn_fraction: f64,
}

impl Hotspot {
    /// YCSB defaults are `hot_set_fraction = 0.2`, `hot_opn_fraction = 0.8`.
    pub fn new(lb: u64, ub: u64, hot_set_fraction: f64, hot_opn_fraction: f64) -> Self {
        let interval = ub - lb + 1;
        let hot_interval = ((interval as f64 * hot_set_fraction) as u64).clamp(1, interval);
        Hotspot {
            lb,
            hot_interval,
            cold_interval: interval - hot_interval,
            hot_opn_fraction,
        }
    }

    /// A key for the draws of `rng`.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        if rng.next_f64() < self.hot_opn_fraction || self.cold_interval == 0 {
            self.lb + rng.below(self.hot_interval)
        } else {
            self.lb + self.hot_interval + rng.below(self.cold_interval)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_forms() {
        assert_eq!(
            Dist::parse("UNIFORM(1..1M)").unwrap(),
            Dist::Uniform {
                min: 1,
                max: 1_000_000
            }
        );
        assert_eq!(
            Dist::parse("gaussian(1..100,5)").unwrap(),
            Dist::Gaussian {
                min: 1,
                max: 100,
                stdvrng: 5.0
            }
        );
        assert_eq!(Dist::parse("fixed(34)").unwrap(), Dist::Fixed { value: 34 });
        assert!(Dist::parse("exp(1..10)")
            .unwrap_err()
            .to_string()
            .contains("unsupported"));
        assert!(Dist::parse("uniform(10..1)").is_err());
        assert!(Dist::parse("uniform 1..10").is_err());
    }

    #[test]
    fn uniform_bounds_and_coverage() {
        let d = Dist::Uniform { min: 5, max: 14 };
        let mut seen = [0u32; 10];
        for i in 0..20_000 {
            let v = d.sample(&mut Rng::new(1, i), i);
            assert!((5..=14).contains(&v));
            seen[(v - 5) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| (1700..2300).contains(&c)), "{seen:?}");
    }

    #[test]
    fn gaussian_and_seq() {
        let g = Dist::Gaussian {
            min: 1,
            max: 1001,
            stdvrng: 3.0,
        };
        let n = 20_000;
        let mut sum = 0.0;
        for i in 0..n {
            let v = g.sample(&mut Rng::new(2, i), i);
            assert!((1..=1001).contains(&v));
            sum += v as f64;
        }
        assert!((sum / n as f64 - 501.0).abs() < 5.0);
        let s = Dist::Seq { min: 1, max: 3 };
        let vals: Vec<u64> = (0..5).map(|i| s.sample(&mut Rng::new(0, i), i)).collect();
        assert_eq!(vals, vec![1, 2, 3, 1, 2]);
    }

    #[test]
    fn hotspot_fractions() {
        let h = Hotspot::new(0, 999, 0.2, 0.8);
        let mut hot = 0;
        for i in 0..10_000 {
            let v = h.sample(&mut Rng::new(4, i));
            assert!(v < 1000);
            if v < 200 {
                hot += 1;
            }
        }
        assert!((7700..8300).contains(&hot), "{hot}");
    }
}
