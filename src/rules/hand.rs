//! Pieces in hand.

/// Most kinds any variant can hold in hand.
pub const MAX_HAND_KINDS: usize = 10;
/// Most pieces of one kind a hand may hold (a 9x9 variant has 38
/// non-royal pieces in all; positions with more are rejected).
pub const MAX_HAND_COUNT: u8 = 38;

/// The pieces one side holds, counted per hand kind (the variant's first
/// `hand_kinds` piece kinds; always unpromoted).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Hand([u8; MAX_HAND_KINDS]);

impl Hand {
    /// How many pieces of hand kind `kind` are held.
    #[inline]
    pub const fn count(&self, kind: u8) -> u8 {
        self.0[kind as usize]
    }

    #[inline]
    pub fn set(&mut self, kind: u8, count: u8) {
        self.0[kind as usize] = count;
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&c| c == 0)
    }

    /// Total pieces held.
    pub fn total(&self) -> u32 {
        self.0.iter().map(|&c| c as u32).sum()
    }
}
