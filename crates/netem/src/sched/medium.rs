//! A shared medium: links that transmit one packet at a time from one rate budget.
//!
//! Like one Wi-Fi channel (802.11 DCF), the medium is half-duplex and shared by every
//! station on it: a packet occupies it for `bits / rate`, and contending links take
//! turns packet by packet (DCF gives each station about the same number of
//! transmission opportunities; Heusse et al., "Performance anomaly of 802.11b",
//! INFOCOM 2003), so N busy links get about rate / N each.

/// One medium's state; `members` index into the scheduler's links.
#[derive(Debug, Clone, PartialEq)]
pub struct Medium {
    pub id: u32,
    pub rate_bit_s: u64,
    pub queue_limit_bytes: u64,
    /// When the packet now on the medium has been sent (ns on the scheduler's clock).
    pub free_at_ns: u64,
    pub members: Vec<usize>,
    /// Position in `members` where the search for the next sender starts.
    turn: usize,
}

impl Medium {
    pub fn new(id: u32, rate_bit_s: u64, queue_limit_bytes: u64) -> Self {
        Medium {
            id,
            rate_bit_s,
            queue_limit_bytes,
            free_at_ns: 0,
            members: Vec::new(),
            turn: 0,
        }
    }

    /// How long `bytes` occupy the medium, in ns.
    pub fn airtime_ns(&self, bytes: u32) -> u64 {
        (u128::from(bytes) * 8 * 1_000_000_000 / u128::from(self.rate_bit_s.max(1))) as u64
    }

    /// The next member, round robin, for which `ready` holds; it gets the medium.
    pub fn next_sender(&mut self, ready: impl Fn(usize) -> bool) -> Option<usize> {
        let n = self.members.len();
        for step in 0..n {
            let pos = (self.turn + step) % n;
            let link = self.members[pos];
            if ready(link) {
                self.turn = (pos + 1) % n;
                return Some(link);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn airtime_is_bits_over_rate() {
        let m = Medium::new(1, 20_000_000, 65_536);
        assert_eq!(m.airtime_ns(1500), 600_000); // 12,000 bits at 20 Mbit/s = 0.6 ms
    }

    #[test]
    fn senders_take_turns() {
        let mut m = Medium::new(1, 1_000_000, 65_536);
        m.members = vec![3, 5, 9];
        let order: Vec<_> = (0..6).filter_map(|_| m.next_sender(|_| true)).collect();
        assert_eq!(order, vec![3, 5, 9, 3, 5, 9]);
        // An idle member is skipped without losing its place in the rotation.
        let order: Vec<_> = (0..3).filter_map(|_| m.next_sender(|l| l != 5)).collect();
        assert_eq!(order, vec![3, 9, 3]);
        assert_eq!(m.next_sender(|_| false), None);
    }
}
