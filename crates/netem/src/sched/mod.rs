//! Per-link scheduling, free of any I/O so it is tested with a fake clock.
//!
//! Each directed link keeps a FIFO of held packets. A packet's due time is
//! `max(now + delay + jitter, due time of the packet before it on the link)`, so
//! jitter never reorders packets within a link (netem's default does; users ask
//! for jitter without reordering). Time is nanoseconds on a monotonic clock.
//!
//! A link on a shared medium (`group` in the config) first waits for the medium: its
//! packets are sent one at a time at the medium's rate, links taking turns (see
//! `medium`), and the link's delay starts when the packet has been sent.

pub mod loss;
pub mod medium;
pub mod rng;

use std::collections::{HashMap, VecDeque};

use crate::links::Config;
use loss::LossModel;
use medium::Medium;
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
    /// Dropped because the link's buffer for its shared medium was full.
    pub medium_dropped: u64,
}

/// A packet waiting for its link's shared medium.
struct Waiting<T> {
    arrival_ns: u64,
    bytes: u32,
    item: T,
}

struct LinkState<T> {
    delay_ns: u64,
    jitter_ns: u64,
    loss: LossModel,
    rng: Rng,
    last_due_ns: u64,
    queue: VecDeque<(u64, T)>,
    /// Index into `media` of the shared medium this link sends on.
    medium: Option<usize>,
    waiting: VecDeque<Waiting<T>>,
    waiting_bytes: u64,
}

impl<T> LinkState<T> {
    /// Due time of a packet whose delay starts at `start_ns`: delay plus jitter, never
    /// before the packet ahead of it on this link.
    fn due_after(&mut self, start_ns: u64) -> u64 {
        let mut delay = self.delay_ns as i128;
        if self.jitter_ns > 0 {
            let u = self.rng.next_f64() * 2.0 - 1.0;
            delay += (u * self.jitter_ns as f64) as i128;
        }
        let due = (start_ns as i128 + delay.max(0)) as u64;
        due.max(self.last_due_ns)
    }
}

pub struct Scheduler<T> {
    links: Vec<LinkState<T>>,
    /// Packet mark -> index into `links`.
    index: HashMap<u32, usize>,
    media: Vec<Medium>,
    pub counters: Counters,
}

impl<T> Default for Scheduler<T> {
    fn default() -> Self {
        Scheduler {
            links: Vec::new(),
            index: HashMap::new(),
            media: Vec::new(),
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
        let media: Vec<Medium> = config
            .groups
            .iter()
            .map(|g| {
                // A medium that stays keeps its clock: the packet on it is still sent.
                let mut m = Medium::new(g.id, g.rate_bit_s, g.queue_limit_bytes);
                if let Some(old) = self.media.iter().find(|o| o.id == g.id) {
                    m.free_at_ns = old.free_at_ns;
                }
                m
            })
            .collect();
        self.media = media;
        let mut seen = vec![false; self.links.len()];
        for l in &config.links {
            let key = l.mark;
            let loss = LossModel::new(l.loss, l.loss_burst);
            let medium = l
                .group
                .and_then(|g| self.media.iter().position(|m| m.id == g));
            let i = match self.index.get(&key) {
                Some(&i) => {
                    let st = &mut self.links[i];
                    st.delay_ns = l.delay_ns;
                    st.jitter_ns = l.jitter_ns;
                    st.loss = loss;
                    st.rng = Rng::for_link(config.seed, key);
                    seen[i] = true;
                    i
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
                        medium: None,
                        waiting: VecDeque::new(),
                        waiting_bytes: 0,
                    });
                    self.links.len() - 1
                }
            };
            self.links[i].medium = medium;
            if let Some(m) = medium {
                self.media[m].members.push(i);
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
                st.medium = None;
            }
        }
        // Packets waiting for a medium their link left go on without it, in order.
        for st in &mut self.links {
            if st.medium.is_none() {
                while let Some(w) = st.waiting.pop_front() {
                    st.queue.push_back((st.last_due_ns, w.item));
                }
                st.waiting_bytes = 0;
            }
        }
    }

    /// Offer a packet of `bytes` (the whole IP packet) with packet mark `mark` arriving
    /// at `now_ns`.
    pub fn admit(&mut self, now_ns: u64, mark: u32, bytes: u32, item: T) -> Admit<T> {
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
        if let Some(m) = st.medium {
            if st.waiting_bytes + u64::from(bytes) > self.media[m].queue_limit_bytes {
                self.counters.dropped += 1;
                self.counters.medium_dropped += 1;
                return Admit::Drop(item);
            }
            st.waiting_bytes += u64::from(bytes);
            st.waiting.push_back(Waiting {
                arrival_ns: now_ns,
                bytes,
                item,
            });
            self.count_held();
            self.send_on_media(now_ns);
            return Admit::Held;
        }
        let due = st.due_after(now_ns);
        if due <= now_ns && st.queue.is_empty() {
            self.counters.passed += 1;
            return Admit::Pass(item);
        }
        st.last_due_ns = due;
        st.queue.push_back((due, item));
        self.count_held();
        Admit::Held
    }

    fn count_held(&mut self) {
        self.counters.held_now += 1;
        self.counters.held_max = self.counters.held_max.max(self.counters.held_now);
    }

    /// Put on each idle medium the next waiting packet (links taking turns) until the
    /// medium is busy past `now_ns`; a sent packet then waits out its link's delay.
    fn send_on_media(&mut self, now_ns: u64) {
        let links = &mut self.links;
        for med in &mut self.media {
            while med.free_at_ns <= now_ns {
                let Some(i) = med.next_sender(|l| !links[l].waiting.is_empty()) else {
                    break;
                };
                let st = &mut links[i];
                let Some(w) = st.waiting.pop_front() else {
                    break;
                };
                st.waiting_bytes -= u64::from(w.bytes);
                let sent = med.free_at_ns.max(w.arrival_ns) + med.airtime_ns(w.bytes);
                med.free_at_ns = sent;
                let due = st.due_after(sent);
                st.last_due_ns = due;
                st.queue.push_back((due, w.item));
            }
        }
    }

    /// Move every packet due at `now_ns` into `out`, oldest first within each link.
    pub fn release_due(&mut self, now_ns: u64, out: &mut Vec<T>) {
        self.send_on_media(now_ns);
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
            let waiting = st.waiting.drain(..).map(|w| w.item);
            for item in st.queue.drain(..).map(|(_, x)| x).chain(waiting) {
                self.counters.released += 1;
                self.counters.held_now -= 1;
                out.push(item);
            }
            st.waiting_bytes = 0;
        }
    }

    /// The earliest due time of any held packet, or of a busy medium becoming free for
    /// a packet waiting on it.
    pub fn next_due(&self) -> Option<u64> {
        let delayed = self
            .links
            .iter()
            .filter_map(|st| st.queue.front().map(|(d, _)| *d));
        let media = self
            .media
            .iter()
            .filter(|m| m.members.iter().any(|&i| !self.links[i].waiting.is_empty()))
            .map(|m| m.free_at_ns);
        delayed.chain(media).min()
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
            group: None,
        }
    }

    fn cfg(links: Vec<Link>) -> Config {
        Config {
            seed: 7,
            links,
            groups: vec![],
        }
    }

    #[test]
    fn holds_for_the_delay_then_releases() {
        let mut s = Scheduler::new(&cfg(vec![link(A, 10, 0, 0.0)]));
        assert_eq!(s.admit(0, A, 1500, 1), Admit::Held);
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
        assert_eq!(s.admit(0, B, 1500, 5), Admit::Pass(5));
        assert_eq!(s.counters.passed, 1);
    }

    #[test]
    fn jitter_never_reorders_within_a_link() {
        let mut s = Scheduler::new(&cfg(vec![link(B, 5, 5, 0.0), link(C, 1, 1, 0.0)]));
        let mut out = Vec::new();
        for i in 0..10_000u64 {
            let now = i * 100_000; // one packet per 0.1 ms, jitter range 10 ms
            let dst = if i % 3 == 0 { C } else { B };
            assert_eq!(s.admit(now, dst, 1500, (dst, i)), Admit::Held);
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
            s.admit(now, A, 1500, i);
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
            if s.admit(now, A, 1500, i) == Admit::Held {
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
            .filter(|i| matches!(s.admit(*i, A, 1500, *i), Admit::Drop(_)))
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
                .map(|i| matches!(s.admit(i, A, 1500, i), Admit::Drop(_)))
                .collect::<Vec<_>>()
        };
        assert_eq!(pattern(), pattern());
    }

    #[test]
    fn reconfigure_keeps_held_packets_and_order() {
        let mut s = Scheduler::new(&cfg(vec![link(A, 50, 0, 0.0)]));
        s.admit(0, A, 1500, 1);
        s.reconfigure(&cfg(vec![link(A, 1, 0, 0.0)]));
        // The new, shorter delay cannot overtake the packet already held.
        s.admit(MS, A, 1500, 2);
        let mut out = Vec::new();
        s.release_due(10 * MS, &mut out);
        assert!(out.is_empty());
        s.release_due(50 * MS, &mut out);
        assert_eq!(out, vec![1, 2]);
        // A link removed from the config passes new packets at once.
        s.reconfigure(&cfg(vec![]));
        assert_eq!(s.admit(60 * MS, A, 1500, 3), Admit::Pass(3));
    }

    #[test]
    fn drain_all_releases_everything() {
        let mut s = Scheduler::new(&cfg(vec![link(A, 50, 0, 0.0)]));
        for i in 0..5 {
            s.admit(i, A, 1500, i);
        }
        let mut out = Vec::new();
        s.drain_all(&mut out);
        assert_eq!(out, vec![0, 1, 2, 3, 4]);
        assert_eq!(s.counters.held_now, 0);
    }

    fn on_medium(mut l: Link, group: u32) -> Link {
        l.group = Some(group);
        l
    }

    fn shared(links: Vec<Link>, rate_bit_s: u64) -> Config {
        Config {
            seed: 7,
            links,
            groups: vec![crate::links::Group {
                id: 1,
                name: "wifi".into(),
                rate_bit_s,
                queue_limit_bytes: 64 * 1024,
            }],
        }
    }

    /// Offer `flows` links a packet of 1500 bytes whenever their buffer has room, for
    /// `seconds` of fake time in 0.1 ms steps; bytes released per link.
    fn saturate(s: &mut Scheduler<(u32, u32)>, flows: &[u32], seconds: u64) -> Vec<u64> {
        let mut got = vec![0u64; flows.len()];
        let mut out = Vec::new();
        let step = MS / 10;
        for t in 0..seconds * 10_000 {
            let now = t * step;
            for &f in flows {
                // A TCP sender keeps its buffer full; the limit drops what does not fit.
                let _ = s.admit(now, f, 1500, (f, 1500));
            }
            s.release_due(now, &mut out);
            for (f, bytes) in out.drain(..) {
                let k = flows.iter().position(|x| *x == f).expect("known");
                got[k] += u64::from(bytes);
            }
        }
        got
    }

    #[test]
    fn one_link_on_a_medium_gets_its_rate() {
        let mut s = Scheduler::new(&shared(vec![on_medium(link(A, 0, 0, 0.0), 1)], 20_000_000));
        let got = saturate(&mut s, &[A], 2);
        let mbit = got[0] as f64 * 8.0 / 2.0 / 1e6;
        assert!((mbit - 20.0).abs() < 0.2, "{mbit}");
    }

    #[test]
    fn links_on_one_medium_share_its_rate_evenly() {
        let links = vec![
            on_medium(link(A, 1, 0, 0.0), 1),
            on_medium(link(B, 5, 0, 0.0), 1),
            on_medium(link(C, 0, 0, 0.0), 1),
        ];
        let mut s = Scheduler::new(&shared(links.clone(), 20_000_000));
        let got = saturate(&mut s, &[A, B], 2);
        for bytes in &got {
            let mbit = *bytes as f64 * 8.0 / 2.0 / 1e6;
            assert!((mbit - 10.0).abs() < 0.2, "{got:?}");
        }
        assert!(s.counters.medium_dropped > 0, "a full buffer drops");
        // Three busy links: a third each.
        let mut s = Scheduler::new(&shared(links, 20_000_000));
        let got = saturate(&mut s, &[A, B, C], 2);
        for bytes in &got {
            let mbit = *bytes as f64 * 8.0 / 2.0 / 1e6;
            assert!((mbit - 20.0 / 3.0).abs() < 0.2, "{got:?}");
        }
    }

    #[test]
    fn a_link_off_the_medium_keeps_its_own_pace() {
        let links = vec![on_medium(link(A, 0, 0, 0.0), 1), link(B, 0, 0, 0.0)];
        let mut s = Scheduler::new(&shared(links, 1_000_000));
        assert_eq!(s.admit(0, B, 1500, (B, 1)), Admit::Pass((B, 1)));
    }

    #[test]
    fn delay_starts_when_the_packet_has_been_sent() {
        let mut s = Scheduler::new(&shared(vec![on_medium(link(A, 10, 0, 0.0), 1)], 12_000_000));
        // 1500 bytes at 12 Mbit/s take 1 ms on the medium; two back to back.
        assert_eq!(s.admit(0, A, 1500, 1), Admit::Held);
        assert_eq!(s.admit(0, A, 1500, 2), Admit::Held);
        let mut out = Vec::new();
        s.release_due(11 * MS - 1, &mut out);
        assert!(out.is_empty());
        s.release_due(11 * MS, &mut out);
        assert_eq!(out, vec![1]);
        // The second waited for the first: sent at 2 ms, due at 12 ms.
        assert_eq!(s.next_due(), Some(12 * MS));
        s.release_due(12 * MS, &mut out);
        assert_eq!(out, vec![1, 2]);
    }

    #[test]
    fn both_directions_share_one_budget() {
        // A and B as the two directions of one link: half-duplex, one budget.
        let links = vec![
            on_medium(link(A, 0, 0, 0.0), 1),
            on_medium(link(B, 0, 0, 0.0), 1),
        ];
        let mut s = Scheduler::new(&shared(links, 12_000_000));
        s.admit(0, A, 1500, 1);
        s.admit(0, B, 1500, 2);
        let mut out = Vec::new();
        s.release_due(MS, &mut out);
        assert_eq!(out, vec![1]);
        assert_eq!(s.next_due(), Some(2 * MS));
    }

    #[test]
    fn leaving_the_medium_releases_what_waited() {
        let mut s = Scheduler::new(&shared(vec![on_medium(link(A, 0, 0, 0.0), 1)], 1_000_000));
        for i in 0..3 {
            s.admit(0, A, 1500, i);
        }
        s.reconfigure(&cfg(vec![link(A, 0, 0, 0.0)]));
        let mut out = Vec::new();
        s.release_due(13 * MS, &mut out);
        assert_eq!(out, vec![0, 1, 2]);
        assert_eq!(s.counters.held_now, 0);
        let mut s = Scheduler::new(&shared(vec![on_medium(link(A, 0, 0, 0.0), 1)], 1_000_000));
        for i in 0..3 {
            s.admit(0, A, 1500, i);
        }
        s.drain_all(&mut out);
        assert_eq!(s.counters.held_now, 0);
    }
}
