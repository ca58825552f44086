//! Packet loss: independent (Bernoulli) or bursty (Gilbert model).
//!
//! The Gilbert model has a Good state (no loss) and a Bad state (every packet lost).
//! For a mean loss rate p and a mean burst length b packets: P(Bad -> Good) = 1/b and
//! P(Good -> Bad) = p / (b (1 - p)), so the stationary share of Bad is p and a burst
//! lasts b packets on average (the Gilbert-Elliott model with h = 0, k = 1).

use super::rng::Rng;

#[derive(Debug, Clone)]
pub struct LossModel {
    p: f64,
    p_good_to_bad: f64,
    p_bad_to_good: f64,
    bad: bool,
}

impl LossModel {
    pub fn new(p: f64, burst: f64) -> Self {
        let p = p.clamp(0.0, 1.0);
        let burst = burst.max(1.0);
        let p_bad_to_good = 1.0 / burst;
        let p_good_to_bad = if p >= 1.0 {
            1.0
        } else {
            (p * p_bad_to_good / (1.0 - p)).min(1.0)
        };
        LossModel {
            p,
            p_good_to_bad,
            p_bad_to_good,
            bad: false,
        }
    }

    pub fn is_bursty(&self) -> bool {
        self.p_bad_to_good < 1.0
    }

    /// Decide one packet: true when it is lost.
    pub fn lose(&mut self, rng: &mut Rng) -> bool {
        if self.p <= 0.0 {
            return false;
        }
        if self.p >= 1.0 {
            return true;
        }
        if !self.is_bursty() {
            return rng.next_f64() < self.p;
        }
        let u = rng.next_f64();
        self.bad = if self.bad {
            u >= self.p_bad_to_good
        } else {
            u < self.p_good_to_bad
        };
        self.bad
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(p: f64, burst: f64, n: usize) -> (f64, f64) {
        let mut m = LossModel::new(p, burst);
        let mut rng = Rng::new(42);
        let (mut lost, mut bursts, mut prev) = (0usize, 0usize, false);
        for _ in 0..n {
            let l = m.lose(&mut rng);
            lost += usize::from(l);
            if l && !prev {
                bursts += 1;
            }
            prev = l;
        }
        let rate = lost as f64 / n as f64;
        (rate, lost as f64 / bursts.max(1) as f64)
    }

    #[test]
    fn random_loss_matches_rate() {
        let (rate, mean_burst) = run(0.05, 1.0, 200_000);
        assert!((rate - 0.05).abs() < 0.003, "{rate}");
        assert!(mean_burst < 1.2, "{mean_burst}");
    }

    #[test]
    fn burst_loss_matches_rate_and_burst_length() {
        let (rate, mean_burst) = run(0.02, 4.0, 400_000);
        assert!((rate - 0.02).abs() < 0.003, "{rate}");
        assert!((mean_burst - 4.0).abs() < 0.4, "{mean_burst}");
    }

    #[test]
    fn zero_and_full_loss() {
        assert_eq!(run(0.0, 3.0, 1000).0, 0.0);
        assert_eq!(run(1.0, 1.0, 1000).0, 1.0);
        assert_eq!(run(1.0, 5.0, 1000).0, 1.0);
    }
}
