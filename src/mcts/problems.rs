//! Mate and campmate problems shared by the search tests and
//! `pantheon bench mates` (playouts needed to prove them, per evaluator).
//!
//! The mates come from random playouts and were checked with brute-force
//! solvers: the side to move mates in 3 plies and not in 1; in 5 plies
//! (by checks) and not in 3 (by any moves).

use crate::rules::Variant;

/// A position whose side to move wins by force in `plies` plies.
#[derive(Clone, Copy, Debug)]
pub struct MateProblem {
    pub variant: Variant,
    pub sfen: &'static str,
    pub plies: u32,
    /// What kind of win: "mate" or "campmate".
    pub kind: &'static str,
}

const fn mate(variant: Variant, sfen: &'static str, plies: u32) -> MateProblem {
    MateProblem { variant, sfen, plies, kind: "mate" }
}

pub const MATES_IN_ONE: [MateProblem; 4] = [
    mate(Variant::Minishogi, "3rk/5/3G1/5/K4 b S 1", 1),
    mate(Variant::Mansindam, "7rk/9/7+P1/9/9/9/9/9/K8 b P 1", 1),
    mate(Variant::Pandemonium, "7rk/9/7+P1/9/9/9/9/9/K8 b P 1", 1),
    mate(Variant::Pandemonium2022, "7rk/9/7+P1/9/9/9/9/9/K8 b P 1", 1),
];

pub const MATES_IN_THREE: [MateProblem; 4] = [
    mate(Variant::Minishogi, "3Bk/1pg2/P1G2/KSb2/2R1s b R 25", 3),
    mate(Variant::Mansindam, "br4mn1/5kcq1/np1p2p2/p3pp3/1Pp1P2a1/3M1P1P1/P1PP2P1P/7BR/CNA1K1QN1 b 2P 81", 3),
    mate(Variant::Pandemonium, "1ns1ks1n1/+Fb6r/p1pp4p/RB1+f3pV/3+ava1B1/P1P2P+u2/4PS2P/1R2K3R/uN2S1BN1 w - 66", 3),
    mate(Variant::Pandemonium2022, "rn1sks1n1/1+Vabfbu1r/p1pp5/AB4pp1/4P4/9/P2PV1P1P/2U1F4/RNBSKS1NR b - 31", 3),
];

/// With a leaf mate search of 3 plies (or none) the tree must find the
/// first move and try every reply, so the network's priors matter.
pub const MATES_IN_FIVE: [MateProblem; 4] = [
    mate(Variant::Minishogi, "4r/GS+B2/P4/1Sbkp/KG3 b r 33", 5),
    mate(Variant::Mansindam, "1r2k1cn1/1n5q1/p2P1pppp/2pMpM2A/1p2P4/5P3/P5PPP/Ca1B1K3/1N5NR b Bq3p 65", 5),
    mate(Variant::Pandemonium, "rnbsk4/v1+f3U2/2pn4b/A3s+U2p/P1v+Ap1+B2/1p3+Fp2/3S1p1P1/R2KS3p/1NB3RN1 b rp 87", 5),
    mate(Variant::Pandemonium2022, "Bsks5/2f2nu1r/8p/+b1pvAp1pS/4+n3P/P3AK2P/1PVf3P1/RbU2S2R/pN4BNr w - 104", 5),
];

/// The king walks to the far rank: 5c-5b, any reply, 5b-5a.
pub const CAMPMATE_IN_THREE: MateProblem =
    MateProblem { variant: Variant::Mansindam, sfen: "9/9/4K4/9/8k/9/9/9/9 b - 1", plies: 3, kind: "campmate" };

/// All problems, in the order `bench mates` lists them.
pub fn all() -> Vec<MateProblem> {
    MATES_IN_ONE.iter().chain(&MATES_IN_THREE).chain(&MATES_IN_FIVE).copied().chain([CAMPMATE_IN_THREE]).collect()
}
