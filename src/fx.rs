//! A fast, deterministic hasher for in-memory tables: those of one call (a catalog's words,
//! a spec's state names) and the gateway's memory port. It has no seed (the core has no
//! randomness), so keys crafted to collide make a table slow (quadratic in the number of
//! keys), never wrong.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// FxHash: a fast, deterministic hasher for short keys.
#[derive(Default, Clone, Copy)]
pub(crate) struct Fx(u64);

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        // The multiply-rotate steps carry a difference only towards the high bits, and a
        // hash table picks its bucket by the low ones: keys that differ in the middle of
        // their last word ("s10", "s11", …) would share buckets (1,000 such names fell in 62
        // of 2,048). Folding the high half down and mixing once more spreads them as a random
        // hash would.
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^ (h >> 33)
    }
    fn write(&mut self, bytes: &[u8]) {
        // Full words read as one little-endian load each (`from_le_bytes` of an 8-byte
        // array is a single `i64.load` in wasm), the tail folded by hand.
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            if let Ok(a) = <[u8; 8]>::try_from(c) {
                self.mix(u64::from_le_bytes(a));
            }
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let tail = rest
                .iter()
                .rev()
                .fold(0u64, |a, &b| (a << 8) | u64::from(b));
            self.mix(tail ^ rest.len() as u64);
        }
    }
    fn write_u8(&mut self, i: u8) {
        // `Hash for str` ends every key with 0xff: one step, not a call to `write`.
        self.mix(u64::from(i));
    }
}

impl Fx {
    fn mix(&mut self, word: u64) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

/// A hash map keyed through [`Fx`].
pub(crate) type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

#[cfg(test)]
mod tests {
    use super::Fx;
    use std::collections::HashSet;
    use std::hash::{BuildHasher, BuildHasherDefault};

    /// Keys that differ only in a few middle bytes spread over a table's buckets (its low
    /// bits) about as a random hash would: `m (1 - e^(-n/m))` distinct buckets expected.
    #[test]
    fn similar_keys_spread_over_the_low_bits() {
        let b = BuildHasherDefault::<Fx>::default();
        let sets: [Vec<String>; 3] = [
            (0..1000).map(|i| format!("s{i}")).collect(),
            (0..10_000).map(|i| format!("skill-{i:04}")).collect(),
            (0..20_000)
                .map(|i| format!("idem:lookup@1.0.0:u1:s=s0:ABCD_{i:06}:en-US:10"))
                .collect(),
        ];
        for keys in &sets {
            let n = keys.len();
            let m = (n.next_power_of_two() * 2) as u64;
            let buckets: HashSet<u64> = keys.iter().map(|k| b.hash_one(k) & (m - 1)).collect();
            let random = m as f64 * (1.0 - (-(n as f64) / m as f64).exp());
            assert!(
                buckets.len() as f64 > 0.9 * random,
                "{} of {m} buckets for {n} keys (random: {random:.0})",
                buckets.len()
            );
        }
    }
}
