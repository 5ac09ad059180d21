//! A deterministic pseudo-random generator (xorshift64), the same on every machine.

/// Marsaglia's xorshift64.
#[derive(Debug, Clone)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator from `seed` (zero is replaced: xorshift never leaves zero).
    pub const fn new(seed: u64) -> Self {
        Self(if seed == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            seed
        })
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// A `usize` in `range`.
    pub fn range(&mut self, range: core::ops::Range<usize>) -> usize {
        let span = (range.end - range.start).max(1) as u64;
        range.start + self.below(span) as usize
    }
}
