//! Key and value generators.
//!
//! Every draw is a pure function of `(seed, index, stream)`: the same seed and
//! cycle number always give the same operation, whichever worker runs it.
//! Distributions take uniform numbers in `[0, 1)` so they can be tested with
//! known inputs.

pub mod dist;
pub mod zipfian;

pub use dist::{Dist, Hotspot};
pub use zipfian::{Latest, ScrambledZipfian};

/// SplitMix64 finaliser: a fast, well-mixed 64-bit bijection.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Hash of `(seed, index, stream)`; `stream` separates independent draws of one cycle.
#[inline]
pub fn hash3(seed: u64, index: u64, stream: u64) -> u64 {
    mix64(
        seed ^ mix64(index.wrapping_add(0x9e37_79b9_7f4a_7c15))
            ^ stream.wrapping_mul(0xd1b5_4a32_d192_ed03),
    )
}

/// Maps 64 random bits to a double in `[0, 1)` (53-bit precision).
#[inline]
pub fn unit(h: u64) -> f64 {
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A small counter-based random stream for one cycle: `Rng::new(seed, cycle)`
/// gives the same sequence of draws every time.
#[derive(Clone, Debug)]
pub struct Rng {
    seed: u64,
    index: u64,
    stream: u64,
}

impl Rng {
    /// Stream of draws for `(seed, index)`.
    pub fn new(seed: u64, index: u64) -> Self {
        Rng {
            seed,
            index,
            stream: 0,
        }
    }

    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.stream += 1;
        hash3(self.seed, self.index, self.stream)
    }

    /// Next double in `[0, 1)`.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        unit(self.next_u64())
    }

    /// Next integer in `[0, n)`; `n` must be > 0.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// YCSB's `Utils.fnvhash64`: FNV-1a over the 8 little-endian bytes, then `Math.abs`.
pub fn fnvhash64(mut val: i64) -> i64 {
    const FNV_OFFSET_BASIS_64: i64 = 0xCBF2_9CE4_8422_2325_u64 as i64;
    const FNV_PRIME_64: i64 = 1_099_511_628_211;
    let mut hashval = FNV_OFFSET_BASIS_64;
    for _ in 0..8 {
        let octet = val & 0x00ff;
        val >>= 8;
        hashval ^= octet;
        hashval = hashval.wrapping_mul(FNV_PRIME_64);
    }
    hashval.wrapping_abs()
}

/// A fixed pool of printable ASCII bytes, sliced per operation instead of
/// drawing a random number per byte.
pub struct BytePool {
    bytes: Vec<u8>,
}

impl BytePool {
    /// Pool of `size` printable ASCII bytes derived from `seed`.
    pub fn new(seed: u64, size: usize) -> Self {
        let bytes = (0..size as u64)
            .map(|i| b' ' + (hash3(seed, i, 0xB00) % 95) as u8)
            .collect();
        BytePool { bytes }
    }

    /// A `len`-byte slice whose position is chosen by `h`.
    #[inline]
    pub fn slice(&self, h: u64, len: usize) -> &[u8] {
        let len = len.min(self.bytes.len());
        let span = (self.bytes.len() - len + 1) as u64;
        let off = (h % span) as usize;
        &self.bytes[off..off + len]
    }

    /// Same as [`BytePool::slice`] as a `&str` (the pool is ASCII).
    #[inline]
    pub fn str(&self, h: u64, len: usize) -> &str {
        // The pool holds only bytes 0x20..0x7e, so every slice is valid UTF-8.
        std::str::from_utf8(self.slice(h, len)).unwrap_or("")
    }
}

/// Writes `prefix` followed by the decimal digits of `n` into `buf`; returns the text.
pub fn write_key<'a>(buf: &'a mut [u8; 32], prefix: &str, n: u64) -> &'a str {
    let p = prefix.len().min(12);
    buf[..p].copy_from_slice(&prefix.as_bytes()[..p]);
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut v = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let d = &digits[i..];
    buf[p..p + d.len()].copy_from_slice(d);
    std::str::from_utf8(&buf[..p + d.len()]).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_matches_ycsb_known_values() {
        // FNV-1a of eight zero bytes, as YCSB's Utils.fnvhash64(0) computes it.
        let mut h: u64 = 0xCBF2_9CE4_8422_2325;
        for _ in 0..8 {
            h = h.wrapping_mul(1_099_511_628_211);
        }
        assert_eq!(fnvhash64(0), (h as i64).wrapping_abs());
        assert!(fnvhash64(12345) >= 0);
    }

    #[test]
    fn rng_is_pure() {
        let mut a = Rng::new(7, 42);
        let mut b = Rng::new(7, 42);
        for _ in 0..10 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_ne!(Rng::new(7, 43).next_u64(), Rng::new(7, 42).next_u64());
    }

    #[test]
    fn below_and_unit_bounds() {
        let mut r = Rng::new(1, 1);
        for _ in 0..10_000 {
            assert!(r.below(7) < 7);
            let u = r.next_f64();
            assert!((0.0..1.0).contains(&u));
        }
    }

    #[test]
    fn key_and_pool() {
        let mut buf = [0u8; 32];
        assert_eq!(write_key(&mut buf, "user", 0), "user0");
        assert_eq!(
            write_key(&mut buf, "user", u64::MAX),
            "user18446744073709551615"
        );
        let pool = BytePool::new(3, 1024);
        assert_eq!(pool.str(99, 100).len(), 100);
        assert!(pool.slice(5, 10).iter().all(|b| (0x20..0x7f).contains(b)));
    }
}
