//! Perft: the number of legal move sequences of a given length, counting
//! no successors for a position whose game is over (the project's
//! definition, `../shared/rules/README.md`).

use super::{Game, Move, MoveList, Variant};

/// Perft of the game's current position to `depth` plies, with bulk
/// counting at the last ply. History rules apply along each line.
pub fn perft(game: &mut Game, depth: u32) -> u64 {
    let mut buffers: Vec<MoveList> = (0..depth).map(|_| MoveList::with_capacity(256)).collect();
    perft_with(game, depth, &mut buffers)
}

fn perft_with(game: &mut Game, depth: u32, buffers: &mut [MoveList]) -> u64 {
    if depth == 0 {
        return 1;
    }
    if game.outcome_before_movegen().is_some() {
        return 0;
    }
    let (moves, rest) = buffers.split_first_mut().expect("one buffer per ply");
    game.generate_legal(moves);
    if depth == 1 {
        return moves.len() as u64;
    }
    let mut total = 0;
    for &mv in moves.iter() {
        game.play(mv);
        total += perft_with(game, depth - 1, rest);
        game.undo();
    }
    total
}

/// Perft split by first move: `(move, count)` for each legal move, in
/// generation order.
pub fn divide(game: &mut Game, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 || game.outcome_before_movegen().is_some() {
        return Vec::new();
    }
    game.legal_moves()
        .into_iter()
        .map(|mv| {
            game.play(mv);
            let n = perft(game, depth - 1);
            game.undo();
            (mv, n)
        })
        .collect()
}

/// A perft benchmark case with its known count.
pub struct BenchCase {
    pub name: &'static str,
    pub variant: Variant,
    pub sfen: &'static str,
    pub depth: u32,
    pub count: u64,
}

/// The positions `benches/perft.rs` and `pantheon bench perft` measure:
/// the start positions (at the depths of the Fairy-Stockfish reference
/// figures for minishogi and mansindam) and a pandemonium2022 middlegame
/// with full hands. Counts from ../shared/refdata, and from
/// Fairy-Stockfish's `go perft` for pandemonium depth 5; minishogi depth 7
/// is Fairy-Stockfish's 132,680,698 less the 81 pawn-drop mates it counts.
pub const BENCH_POSITIONS: [BenchCase; 4] = [
    BenchCase {
        name: "minishogi-start-d7",
        variant: Variant::Minishogi,
        sfen: "rbsgk/4p/5/P4/KGSBR b - 1",
        depth: 7,
        count: 132_680_617,
    },
    BenchCase {
        name: "mansindam-start-d5",
        variant: Variant::Mansindam,
        sfen: "rnbakqcnm/9/ppppppppp/9/9/9/PPPPPPPPP/9/MNCQKABNR b - 1",
        depth: 5,
        count: 38_109_695,
    },
    BenchCase {
        name: "pandemonium-start-d5",
        variant: Variant::Pandemonium,
        sfen: "rnbsksbnr/2+f1+u1+a2/p1p1p1p1p/4v4/9/4V4/P1P1P1P1P/2+F1+U1+A2/RNBSKSBNR b - 1",
        depth: 5,
        count: 217_078_256,
    },
    BenchCase {
        name: "pandemonium2022-middlegame-d3",
        variant: Variant::Pandemonium2022,
        sfen: "1n1sk2nr/2ab5/1pp1b1s2/9/9/5V3/r1P2P2+p/2UBFK3/RN1S1SBN1 b UV3PF2par 1",
        depth: 3,
        count: 10_989_567,
    },
];
