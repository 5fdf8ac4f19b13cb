//! Fixed pseudo-random keys for position hashing, made at compile time so that keys are the same in
//! every run and every process (repetition records and books can be compared across runs).

const SQUARES: usize = 256;
const CODES: usize = 32;
const LEN: usize = SQUARES * CODES + 64;

const fn splitmix(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (state, z ^ (z >> 31))
}

static TABLE: [u64; LEN] = {
    let mut table = [0u64; LEN];
    let mut state = 0x5EED_A2B1_7E20_1862u64;
    let mut i = 0;
    while i < LEN {
        let (next, value) = splitmix(state);
        state = next;
        table[i] = value;
        i += 1;
    }
    table
};

/// Key for the side to move being Black.
pub const SIDE: u64 = 0x7A3C_9D14_E6B2_58F1;

/// Key of piece code `code` (< 32) standing on mailbox square `sq` (< 256).
#[inline]
pub fn piece(sq: usize, code: usize) -> u64 {
    TABLE[(sq % SQUARES) * CODES + (code % CODES)]
}

/// A small deterministic generator on the same mixer: seeded runs (opening books, simulated
/// SPRTs) must be reproducible, and need nothing stronger.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next_u64(&mut self) -> u64 {
        let (state, value) = splitmix(self.0);
        self.0 = state;
        value
    }

    /// Uniform in [0, 1).
    pub fn next_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}
