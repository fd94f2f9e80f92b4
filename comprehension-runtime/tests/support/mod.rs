//! What the runtime's test files share.

#![allow(dead_code)]

/// A small deterministic generator (xorshift), so that failures reproduce.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// `n` keys, each drawn by `key`.
    pub fn keys(&mut self, n: usize, key: impl Fn(&mut Rng) -> u64) -> Vec<u64> {
        (0..n).map(|_| key(self)).collect()
    }
}
