//! A bounded cache of evaluations, keyed by the position hash and a digest
//! of the legal move list (which history rules can change), so a hit
//! always has priors for exactly the moves asked about.

use crate::rules::{CompactMove, Move};

#[derive(Clone)]
struct Entry {
    key: u64,
    value: f32,
    /// Quantised priors, one per move, in move-list order.
    priors: Box<[u16]>,
}

/// Direct-mapped: each key has one slot; a new entry replaces the old.
pub struct EvalCache {
    slots: Vec<Option<Entry>>,
}

/// The cache key of a position and its move list.
pub fn key(position_hash: u64, moves: &[Move]) -> u64 {
    let mut h = position_hash ^ (moves.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for &m in moves {
        h = (h ^ CompactMove::from(m).bits() as u64).wrapping_mul(0x1000_0000_01B3);
    }
    h
}

impl EvalCache {
    pub fn new(entries: usize) -> EvalCache {
        EvalCache { slots: vec![None; entries] }
    }

    pub fn get(&self, key: u64, num_moves: usize) -> Option<(f32, &[u16])> {
        if self.slots.is_empty() {
            return None;
        }
        match &self.slots[(key % self.slots.len() as u64) as usize] {
            Some(e) if e.key == key && e.priors.len() == num_moves => Some((e.value, &e.priors)),
            _ => None,
        }
    }

    pub fn insert(&mut self, key: u64, value: f32, priors: &[u16]) {
        if self.slots.is_empty() {
            return;
        }
        let i = (key % self.slots.len() as u64) as usize;
        self.slots[i] = Some(Entry { key, value, priors: priors.into() });
    }

    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
    }
}
