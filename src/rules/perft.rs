//! Perft: the number of legal move sequences of a given length, counting
//! no successors for a position whose game is over (the project's
//! definition, `../shared/rules/README.md`).

use super::{Game, Move, MoveList};

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
