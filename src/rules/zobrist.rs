//! Zobrist keys: one per (colour, kind, square), per (colour, hand kind,
//! count) and for the side to move. Generated at compile time.

use super::NUM_SQUARES;
use super::hand::{MAX_HAND_COUNT, MAX_HAND_KINDS};
use super::piece::MAX_KINDS;

const fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub struct Keys {
    pub piece: [[[u64; NUM_SQUARES]; MAX_KINDS]; 2],
    /// `hand[c][k][n]`: key of holding `n` pieces; `n = 0` has key 0 so an
    /// empty hand adds nothing.
    pub hand: [[[u64; MAX_HAND_COUNT as usize + 1]; MAX_HAND_KINDS]; 2],
    /// XORed in when gote is to move.
    pub gote_to_move: u64,
}

const fn build() -> Keys {
    let mut state = 0x5041_4E54_4845_4F4E; // "PANTHEON"
    let mut keys = Keys {
        piece: [[[0; NUM_SQUARES]; MAX_KINDS]; 2],
        hand: [[[0; MAX_HAND_COUNT as usize + 1]; MAX_HAND_KINDS]; 2],
        gote_to_move: 0,
    };
    let mut c = 0;
    while c < 2 {
        let mut k = 0;
        while k < MAX_KINDS {
            let mut s = 0;
            while s < NUM_SQUARES {
                keys.piece[c][k][s] = splitmix(&mut state);
                s += 1;
            }
            k += 1;
        }
        let mut k = 0;
        while k < MAX_HAND_KINDS {
            let mut n = 1;
            while n <= MAX_HAND_COUNT as usize {
                keys.hand[c][k][n] = splitmix(&mut state);
                n += 1;
            }
            k += 1;
        }
        c += 1;
    }
    keys.gote_to_move = splitmix(&mut state);
    keys
}

pub static KEYS: Keys = build();
