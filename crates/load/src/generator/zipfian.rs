//! YCSB's Zipfian family: `ZipfianGenerator`, `ScrambledZipfianGenerator` and
//! `SkewedLatestGenerator`, with YCSB's constants and its Gray et al. (SIGMOD
//! 1994) sampling formula, so key popularity matches YCSB runs.

use super::fnvhash64;

/// YCSB's `ZipfianGenerator.ZIPFIAN_CONSTANT`.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;
/// YCSB's `ScrambledZipfianGenerator.ITEM_COUNT`.
pub const SCRAMBLED_ITEM_COUNT: u64 = 10_000_000_000;
/// YCSB's `ScrambledZipfianGenerator.ZETAN`: zeta(ITEM_COUNT + 1, 0.99), precomputed.
pub const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

/// `sum_{i=st}^{n-1} 1 / (i+1)^theta`, added to `initial` (YCSB's `zetastatic`).
pub fn zeta_range(st: u64, n: u64, theta: f64, initial: f64) -> f64 {
    let mut sum = initial;
    for i in st..n {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    sum
}

/// zeta(n, theta) = sum_{i=1}^{n} 1 / i^theta.
pub fn zeta(n: u64, theta: f64) -> f64 {
    zeta_range(0, n, theta, 0.0)
}

/// YCSB's `ZipfianGenerator` over `[min, max]`: rank 0 (= `min`) is the most popular.
#[derive(Clone, Debug)]
pub struct Zipfian {
    items: u64,
    base: u64,
    theta: f64,
    zeta2theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    half_pow_theta: f64,
    countforzeta: u64,
}

impl Zipfian {
    /// Generator over `[min, max]` with constant `theta`; computes zeta(n) (O(n)).
    pub fn new(min: u64, max: u64, theta: f64) -> Self {
        let items = max.saturating_sub(min) + 1;
        Self::with_zetan(min, max, theta, zeta(items, theta))
    }

    /// Generator with a precomputed zeta(n), as YCSB does for its scrambled variant.
    pub fn with_zetan(min: u64, max: u64, theta: f64, zetan: f64) -> Self {
        let items = max.saturating_sub(min) + 1;
        let zeta2theta = zeta(2, theta);
        let eta = (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2theta / zetan);
        Zipfian {
            items,
            base: min,
            theta,
            zeta2theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta,
            half_pow_theta: 0.5f64.powf(theta),
            countforzeta: items,
        }
    }

    /// The value YCSB's `nextValue()` returns for the uniform draw `u` in `[0, 1)`.
    #[inline]
    pub fn sample(&self, u: f64) -> u64 {
        self.value(self.items, u)
    }

    #[inline]
    fn value(&self, itemcount: u64, u: f64) -> u64 {
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + self.half_pow_theta {
            return self.base + 1;
        }
        self.base + (itemcount as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64
    }

    /// YCSB's `nextLong(itemcount)`: when the item count changes, zeta is
    /// updated incrementally (growing) or recomputed (shrinking). As in YCSB,
    /// `eta` keeps using the constructor's item count.
    pub fn sample_n(&mut self, itemcount: u64, u: f64) -> u64 {
        if itemcount != self.countforzeta {
            if itemcount > self.countforzeta {
                self.zetan = zeta_range(self.countforzeta, itemcount, self.theta, self.zetan);
            } else {
                self.zetan = zeta(itemcount, self.theta);
            }
            self.countforzeta = itemcount;
            self.eta = (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta))
                / (1.0 - self.zeta2theta / self.zetan);
        }
        self.value(itemcount, u)
    }
}

/// YCSB's `ScrambledZipfianGenerator`: Zipfian popularity over a 10^10 item
/// space, scattered over `[min, max]` by FNV hashing, so popular keys are not
/// adjacent.
#[derive(Clone, Debug)]
pub struct ScrambledZipfian {
    gen: Zipfian,
    min: u64,
    itemcount: u64,
}

impl ScrambledZipfian {
    /// Keys in `[min, max]`. With the default constant 0.99 this uses YCSB's
    /// precomputed zeta; other constants use a generator over the real item
    /// count instead (YCSB would sum 10^10 terms).
    pub fn new(min: u64, max: u64, theta: f64) -> Self {
        let itemcount = max.saturating_sub(min) + 1;
        let gen = if (theta - ZIPFIAN_CONSTANT).abs() < 1e-12 {
            Zipfian::with_zetan(0, SCRAMBLED_ITEM_COUNT, theta, SCRAMBLED_ZETAN)
        } else {
            Zipfian::new(0, itemcount - 1, theta)
        };
        ScrambledZipfian {
            gen,
            min,
            itemcount,
        }
    }

    /// The key for the uniform draw `u`.
    #[inline]
    pub fn sample(&self, u: f64) -> u64 {
        let r = self.gen.sample(u);
        self.min + (fnvhash64(r as i64) as u64) % self.itemcount
    }
}

/// YCSB's `SkewedLatestGenerator`: recently inserted keys are the most popular.
#[derive(Clone, Debug)]
pub struct Latest {
    zipf: Zipfian,
}

impl Latest {
    /// `last` is the last inserted key number when the run starts.
    pub fn new(last: u64) -> Self {
        Latest {
            zipf: Zipfian::new(0, last.max(1) - 1, ZIPFIAN_CONSTANT),
        }
    }

    /// A key in `[1, max]` (or 0 when `max` is 0), skewed toward `max`.
    pub fn sample(&mut self, max: u64, u: f64) -> u64 {
        max.saturating_sub(self.zipf.sample_n(max, u))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::Rng;

    /// Probability that YCSB's formula returns rank `k` (exact, from the
    /// u-intervals of Gray's algorithm).
    fn gray_probability(z: &Zipfian, k: u64) -> f64 {
        let n = z.items as f64;
        let u1 = 1.0 / z.zetan;
        let u2 = (1.0 + z.half_pow_theta) / z.zetan;
        let mut p = 0.0;
        if k == 0 {
            p += u1.min(1.0);
        }
        if k == 1 {
            p += u2.min(1.0) - u1.min(1.0);
        }
        // ret = floor(n * (eta*u - eta + 1)^alpha) = k  <=>  u in [lo, hi)
        let inv = |x: f64| ((x / n).powf(1.0 / z.alpha) - 1.0) / z.eta + 1.0;
        let lo = inv(k as f64).max(u2);
        let hi = inv((k + 1) as f64).min(1.0);
        if hi > lo {
            p += hi - lo;
        }
        p
    }

    fn frequencies(z: &Zipfian, samples: u64) -> Vec<f64> {
        let mut counts = vec![0u64; z.items as usize];
        let mut rng = Rng::new(11, 0);
        for _ in 0..samples {
            counts[z.sample(rng.next_f64()) as usize] += 1;
        }
        counts.iter().map(|&c| c as f64 / samples as f64).collect()
    }

    #[test]
    fn zipfian_ranks_match_ycsb_and_zeta() {
        let n = 20;
        let z = Zipfian::new(0, n - 1, ZIPFIAN_CONSTANT);
        let zn = zeta(n, ZIPFIAN_CONSTANT);
        let samples = 400_000;
        let freq = frequencies(&z, samples);
        let mut total_gray = 0.0;
        for k in 0..n {
            let gray = gray_probability(&z, k);
            total_gray += gray;
            let exact = 1.0 / ((k + 1) as f64).powf(ZIPFIAN_CONSTANT) / zn;
            let f = freq[k as usize];
            // Empirical vs YCSB's own formula: within 4 binomial standard deviations.
            let sd = (gray * (1.0 - gray) / samples as f64).sqrt();
            assert!(
                (f - gray).abs() <= 4.0 * sd + 1e-4,
                "rank {k}: freq {f} vs ycsb {gray}"
            );
            // Ranks 0 and 1 are exact zeta probabilities in Gray's algorithm;
            // the tail is its approximation (within 25 % relative for n = 20).
            if k < 2 {
                assert!((gray - exact).abs() < 1e-12, "rank {k}");
            } else {
                assert!(
                    (gray - exact).abs() / exact < 0.25,
                    "rank {k}: ycsb {gray} vs zeta {exact}"
                );
            }
        }
        assert!((total_gray - 1.0).abs() < 1e-9);
        // Popularity decreases with rank.
        assert!(freq[0] > freq[1] && freq[1] > freq[5] && freq[5] > freq[19]);
    }

    #[test]
    fn zipfian_incremental_zeta_equals_direct() {
        let mut z = Zipfian::new(0, 99, ZIPFIAN_CONSTANT);
        z.sample_n(150, 0.5);
        assert!((z.zetan - zeta(150, ZIPFIAN_CONSTANT)).abs() < 1e-9);
        z.sample_n(120, 0.5);
        assert!((z.zetan - zeta(120, ZIPFIAN_CONSTANT)).abs() < 1e-9);
    }

    #[test]
    fn scrambled_constant_and_bounds() {
        // YCSB's precomputed constant is zeta(10^10 + 1, 0.99); check its order
        // of magnitude by the Euler-Maclaurin tail from 10^6.
        let head = zeta(1_000_000, ZIPFIAN_CONSTANT);
        let s = 1.0 - ZIPFIAN_CONSTANT;
        let tail = ((1e10f64 + 1.0).powf(s) - 1e6f64.powf(s)) / s;
        assert!((head + tail - SCRAMBLED_ZETAN).abs() < 0.01);
        let g = ScrambledZipfian::new(10, 1009, ZIPFIAN_CONSTANT);
        let mut rng = Rng::new(3, 0);
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            let v = g.sample(rng.next_f64());
            assert!((10..=1009).contains(&v));
            counts[(v - 10) as usize] += 1;
        }
        // The hottest key is YCSB's: rank 0 hashed.
        let hot = (fnvhash64(0) as u64 % 1000) as usize;
        assert_eq!(
            counts.iter().enumerate().max_by_key(|c| c.1).unwrap().0,
            hot
        );
    }

    #[test]
    fn latest_bounds_and_skew() {
        let mut l = Latest::new(1000);
        let mut rng = Rng::new(5, 0);
        let mut at_max = 0;
        for i in 0..50_000u64 {
            let max = 1000 + i / 100;
            let v = l.sample(max, rng.next_f64());
            assert!((1..=max).contains(&v), "{v} not in 1..={max}");
            if v == max {
                at_max += 1;
            }
        }
        // P(rank 0) = 1/zeta(~1000) ~ 0.13
        assert!(at_max > 5_000, "{at_max}");
    }
}
