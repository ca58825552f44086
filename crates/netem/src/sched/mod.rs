//! Per-link scheduling, free of any I/O so it is tested with a fake clock.
//!
//! Each directed link keeps a FIFO of held packets. A packet's due time is
//! `max(now + delay + jitter, due time of the packet before it on the link)`, so
//! jitter never reorders packets within a link (netem's default does; users ask
//! for jitter without reordering). Time is nanoseconds on a monotonic clock.

pub mod loss;
pub mod rng;

use std::collections::{HashMap, VecDeque};

use crate::links::Config;
use loss::LossModel;
use rng::Rng;

/// What happened to a packet offered to the scheduler.
#[derive(Debug, PartialEq)]
pub enum Admit<T> {
    /// No link configured for this packet mark: let it through now.
    Pass(T),
    /// Lost on this link: drop it.
    Drop(T),
    /// Held; it comes back from `release_due` at its due time.
    Held,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    pub seen: u64,
    pub passed: u64,
    pub dropped: u64,
    pub released: u64,
    pub held_now: u64,
    pub held_max: u64,
    /// Release later than due: sum and max, in nanoseconds.
    pub late_sum_ns: u64,
    pub late_max_ns: u64,
}

struct LinkState<T> {
    delay_ns: u64,
    jitter_ns: u64,
    loss: LossModel,
    rng: Rng,
    last_due_ns: u64,
    queue: VecDeque<(u64, T)>,
}

pub struct Scheduler<T> {
    links: Vec<LinkState<T>>,
    /// Packet mark -> index into `links`.
    index: HashMap<u32, usize>,
    pub counters: Counters,
}

impl<T> Default for Scheduler<T> {
    fn default() -> Self {
        Scheduler {
            links: Vec::new(),
            index: HashMap::new(),
            counters: Counters::default(),
        }
    }
}

impl<T> Scheduler<T> {
    pub fn new(config: &Config) -> Self {
        let mut s = Scheduler::default();
        s.reconfigure(config);
        s
    }

    /// Apply a new config. Packets already held keep their due times, and a link that
    /// stays keeps its FIFO order; a removed link's packets are still released on time.
    pub fn reconfigure(&mut self, config: &Config) {
        let mut seen = vec![false; self.links.len()];
        for l in &config.links {
            let key = l.mark;
            let loss = LossModel::new(l.loss, l.loss_burst);
            match self.index.get(&key) {
                Some(&i) => {
                    let st = &mut self.links[i];
                    st.delay_ns = l.delay_ns;
                    st.jitter_ns = l.jitter_ns;
                    st.loss = loss;
                    st.rng = Rng::for_link(config.seed, key);
                    seen[i] = true;
                }
                None => {
                    self.index.insert(key, self.links.len());
                    self.links.push(LinkState {
                        delay_ns: l.delay_ns,
                        jitter_ns: l.jitter_ns,
                        loss,
                        rng: Rng::for_link(config.seed, key),
                        last_due_ns: 0,
                        queue: VecDeque::new(),
                    });
                }
            }
        }
        // A link no longer configured passes packets at once; its FIFO drains normally.
        let removed: Vec<u32> = self
            .index
            .iter()
            .filter(|(_, &i)| i < seen.len() && !seen[i])
            .map(|(k, _)| *k)
            .collect();
        for k in removed {
            if let Some(&i) = self.index.get(&k) {
                let st = &mut self.links[i];
                st.delay_ns = 0;
                st.jitter_ns = 0;
                st.loss = LossModel::new(0.0, 1.0);
            }
        }
    }

    /// Offer a packet with packet mark `mark` arriving at `now_ns`.
    pub fn admit(&mut self, now_ns: u64, mark: u32, item: T) -> Admit<T> {
        self.counters.seen += 1;
        let Some(&i) = self.index.get(&mark) else {
            self.counters.passed += 1;
            return Admit::Pass(item);
        };
        let st = &mut self.links[i];
        if st.loss.lose(&mut st.rng) {
            self.counters.dropped += 1;
            return Admit::Drop(item);
        }
        let mut delay = st.delay_ns as i128;
        if st.jitter_ns > 0 {
            let u = st.rng.next_f64() * 2.0 - 1.0;
            delay += (u * st.jitter_ns as f64) as i128;
        }
        let due = (now_ns as i128 + delay.max(0)) as u64;
        let due = due.max(st.last_due_ns);
        if due <= now_ns && st.queue.is_empty() {
            self.counters.passed += 1;
            return Admit::Pass(item);
        }
        st.last_due_ns = due;
        st.queue.push_back((due, item));
        self.counters.held_now += 1;
        self.counters.held_max = self.counters.held_max.max(self.counters.held_now);
        Admit::Held
    }

    /// Move every packet due at `now_ns` into `out`, oldest first within each link.
    pub fn release_due(&mut self, now_ns: u64, out: &mut Vec<T>) {
        for st in &mut self.links {
            while let Some(&(due, _)) = st.queue.front() {
                if due > now_ns {
                    break;
                }
                if let Some((_, item)) = st.queue.pop_front() {
                    let late = now_ns - due;
                    self.counters.late_sum_ns = self.counters.late_sum_ns.saturating_add(late);
                    self.counters.late_max_ns = self.counters.late_max_ns.max(late);
                    self.counters.released += 1;
                    self.counters.held_now -= 1;
                    out.push(item);
                }
            }
        }
    }

    /// Release everything now (shutdown): nothing is left for the kernel to time out.
    pub fn drain_all(&mut self, out: &mut Vec<T>) {
        for st in &mut self.links {
            while let Some((_, item)) = st.queue.pop_front() {
                self.counters.released += 1;
                self.counters.held_now -= 1;
                out.push(item);
            }
        }
    }

    /// The earliest due time of any held packet.
    pub fn next_due(&self) -> Option<u64> {
        self.links
            .iter()
            .filter_map(|st| st.queue.front().map(|(d, _)| *d))
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::links::Link;

    // Packet marks of three links (the endpoints are casslab's business).
    const A: u32 = 0x0ca5_0001;
    const B: u32 = 0x0ca5_0002;
    const C: u32 = 0x0ca5_0003;
    const MS: u64 = 1_000_000;

    fn link(mark: u32, delay_ms: u64, jitter_ms: u64, loss: f64) -> Link {
        Link {
            mark,
            name: String::new(),
            delay_ns: delay_ms * MS,
            jitter_ns: jitter_ms * MS,
            loss,
            loss_burst: 1.0,
        }
    }

    fn cfg(links: Vec<Link>) -> Config {
        Config { seed: 7, links }
    }

    #[test]
    fn holds_for_the_delay_then_releases() {
        let mut s = Scheduler::new(&cfg(vec![link(A, 10, 0, 0.0)]));
        assert_eq!(s.admit(0, A, 1), Admit::Held);
        let mut out = Vec::new();
        s.release_due(9 * MS, &mut out);
        assert!(out.is_empty());
        assert_eq!(s.next_due(), Some(10 * MS));
        s.release_due(10 * MS, &mut out);
        assert_eq!(out, vec![1]);
        assert_eq!(s.next_due(), None);
    }

    #[test]
    fn unknown_marks_pass_at_once() {
        let mut s = Scheduler::new(&cfg(vec![link(A, 10, 0, 0.0)]));
        assert_eq!(s.admit(0, B, 5), Admit::Pass(5));
        assert_eq!(s.counters.passed, 1);
    }

    #[test]
    fn jitter_never_reorders_within_a_link() {
        let mut s = Scheduler::new(&cfg(vec![link(B, 5, 5, 0.0), link(C, 1, 1, 0.0)]));
        let mut out = Vec::new();
        for i in 0..10_000u64 {
            let now = i * 100_000; // one packet per 0.1 ms, jitter range 10 ms
            let dst = if i % 3 == 0 { C } else { B };
            assert_eq!(s.admit(now, dst, (dst, i)), Admit::Held);
            s.release_due(now, &mut out);
        }
        s.release_due(u64::MAX, &mut out);
        assert_eq!(out.len(), 10_000);
        for d in [B, C] {
            let seq: Vec<u64> = out
                .iter()
                .filter(|(x, _)| *x == d)
                .map(|(_, i)| *i)
                .collect();
            assert!(
                seq.windows(2).all(|w| w[0] < w[1]),
                "reordered on link {d:#x}"
            );
        }
    }

    #[test]
    fn jitter_spreads_delay_around_the_mean() {
        let mut s = Scheduler::new(&cfg(vec![link(A, 10, 4, 0.0)]));
        let mut delays = Vec::new();
        let mut out = Vec::new();
        // Packets 50 ms apart: the FIFO never holds one back.
        for i in 0..2000u64 {
            let now = i * 50 * MS;
            s.admit(now, A, i);
            let due = s.next_due().expect("held");
            delays.push(due - now);
            s.release_due(due, &mut out);
        }
        let min = *delays.iter().min().expect("some");
        let max = *delays.iter().max().expect("some");
        let mean = delays.iter().sum::<u64>() as f64 / delays.len() as f64;
        assert!(min >= 6 * MS && max <= 14 * MS, "{min} {max}");
        assert!((mean - 10.0 * MS as f64).abs() < 0.3 * MS as f64, "{mean}");
    }

    #[test]
    fn jitter_larger_than_delay_clamps_at_zero() {
        let mut s = Scheduler::new(&cfg(vec![link(A, 1, 5, 0.0)]));
        let mut out = Vec::new();
        for i in 0..1000u64 {
            let now = i * 20 * MS;
            if s.admit(now, A, i) == Admit::Held {
                let due = s.next_due().expect("held");
                assert!(due >= now && due <= now + 6 * MS);
                s.release_due(due, &mut out);
            }
        }
    }

    #[test]
    fn loss_drops_the_configured_share() {
        let mut s = Scheduler::new(&cfg(vec![link(A, 0, 0, 0.1)]));
        let dropped = (0..100_000u64)
            .filter(|i| matches!(s.admit(*i, A, *i), Admit::Drop(_)))
            .count();
        assert!(
            (dropped as f64 / 100_000.0 - 0.1).abs() < 0.005,
            "{dropped}"
        );
    }

    #[test]
    fn same_seed_same_pattern() {
        let pattern = || {
            let mut s = Scheduler::new(&cfg(vec![link(A, 0, 0, 0.3)]));
            (0..1000u64)
                .map(|i| matches!(s.admit(i, A, i), Admit::Drop(_)))
                .collect::<Vec<_>>()
        };
        assert_eq!(pattern(), pattern());
    }

    #[test]
    fn reconfigure_keeps_held_packets_and_order() {
        let mut s = Scheduler::new(&cfg(vec![link(A, 50, 0, 0.0)]));
        s.admit(0, A, 1);
        s.reconfigure(&cfg(vec![link(A, 1, 0, 0.0)]));
        // The new, shorter delay cannot overtake the packet already held.
        s.admit(MS, A, 2);
        let mut out = Vec::new();
        s.release_due(10 * MS, &mut out);
        assert!(out.is_empty());
        s.release_due(50 * MS, &mut out);
        assert_eq!(out, vec![1, 2]);
        // A link removed from the config passes new packets at once.
        s.reconfigure(&cfg(vec![]));
        assert_eq!(s.admit(60 * MS, A, 3), Admit::Pass(3));
    }

    #[test]
    fn drain_all_releases_everything() {
        let mut s = Scheduler::new(&cfg(vec![link(A, 50, 0, 0.0)]));
        for i in 0..5 {
            s.admit(i, A, i);
        }
        let mut out = Vec::new();
        s.drain_all(&mut out);
        assert_eq!(out, vec![0, 1, 2, 3, 4]);
        assert_eq!(s.counters.held_now, 0);
    }
}
