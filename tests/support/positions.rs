//! Evaluation requests along a fixed line from the start, shared by the
//! CPU and GPU network tests.

use pantheon::mcts::EvalRequest;
use pantheon::rules::{Game, Position, Variant};

/// The first `n` positions of the line that always plays the middle move
/// of the legal-move list.
pub fn requests(variant: Variant, n: usize) -> Vec<EvalRequest> {
    let mut game = Game::new(Position::startpos(variant));
    let mut out = Vec::new();
    while out.len() < n {
        let moves = game.legal_moves();
        out.push(EvalRequest { position: game.position().clone(), moves: moves.clone(), repetitions: 1 });
        // A fixed line: the move in the middle of the list.
        game.play(moves[moves.len() / 2]);
    }
    out
}
