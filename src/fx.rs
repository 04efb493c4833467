//! A fast, deterministic hasher for the in-memory tables of one call (a catalog's words, a
//! spec's state names). It has no seed (the core has no randomness), so keys crafted to
//! collide make a table slow to build (quadratic in the number of keys), never wrong; each
//! table is built from one call's input and dropped with it.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// FxHash: a fast, deterministic hasher for short keys.
#[derive(Default, Clone, Copy)]
pub(crate) struct Fx(u64);

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
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
