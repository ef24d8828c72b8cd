//! Baseline opponents for strength measurements: random play and a
//! material-greedy 1-ply player.
//!
//! Piece values are not tuned by hand (the variants have pieces no one has
//! tables for): a piece is worth its average mobility, the number of
//! squares it attacks on an empty board, averaged over the squares it can
//! stand on. For minishogi that gives pawn 0.8, silver 3.4, gold 4.5, bishop
//! 4.8, rook 8.0, dragon 10.6; a piece in hand is worth its board value.

use crate::mcts::Rng;
use crate::rules::{Bitboard, Color, Game, Move, Position, Variant};

/// Value of every piece kind of `variant` (the king's is 0).
pub fn material_values(variant: Variant) -> Vec<f32> {
    let spec = variant.spec();
    let tables = variant.tables();
    let squares: Vec<_> = variant.geometry().squares().collect();
    (0..spec.pieces.len())
        .map(|kind| {
            if kind == spec.hand_kinds as usize {
                return 0.0;
            }
            let total: u32 =
                squares.iter().map(|&sq| tables.attacks(kind as u8, Color::Sente, sq, Bitboard::EMPTY).count()).sum();
            total as f32 / squares.len() as f32
        })
        .collect()
}

/// Material of `color` minus that of the opponent, board and hands.
pub fn material_balance(pos: &Position, values: &[f32], color: Color) -> f32 {
    let spec = pos.variant().spec();
    let mut balance = 0.0;
    for side in [Color::Sente, Color::Gote] {
        let sign = if side == color { 1.0 } else { -1.0 };
        for sq in pos.pieces_of(side) {
            if let Some(p) = pos.piece_at(sq) {
                balance += sign * values[p.kind.index()];
            }
        }
        let hand = pos.hand(side);
        for kind in 0..spec.hand_kinds {
            balance += sign * values[kind as usize] * hand.count(kind) as f32;
        }
    }
    balance
}

/// A uniformly random legal move (`None` when there is none).
pub fn random_move(game: &Game, rng: &mut Rng) -> Option<Move> {
    let moves = game.legal_moves();
    (!moves.is_empty()).then(|| moves[rng.below(moves.len())])
}

/// The greedy 1-ply choice: a move that wins at once if there is one,
/// else one that leaves the best material balance, avoiding moves that lose
/// at once (a repetition loss); ties are broken at random.
pub fn greedy_move(game: &Game, values: &[f32], rng: &mut Rng) -> Option<Move> {
    let me = game.position().side_to_move();
    let mut best: Vec<Move> = Vec::new();
    let mut best_score = f32::NEG_INFINITY;
    let mut after = game.branch();
    for mv in game.legal_moves() {
        after.play(mv);
        let score = match after.outcome() {
            Some(o) if o.winner == Some(me) => f32::INFINITY,
            Some(o) if o.winner.is_some() => -1e9,
            Some(_) => 0.0,
            None => material_balance(after.position(), values, me),
        };
        after.undo();
        if score > best_score {
            best_score = score;
            best.clear();
        }
        if score == best_score {
            best.push(mv);
        }
    }
    (!best.is_empty()).then(|| best[rng.below(best.len())])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::{parse_move, parse_position};

    fn game(variant: Variant, sfen: &str) -> Game {
        Game::new(parse_position(variant, sfen).unwrap())
    }

    #[test]
    fn values_follow_mobility() {
        let v = material_values(Variant::Minishogi);
        // rook, bishop, gold, silver, pawn, king, dragon, horse, +silver, tokin
        assert!(v[4] < v[3] && v[3] < v[2] && v[2] < v[1] && v[1] < v[0] && v[0] < v[6], "{v:?}");
        assert_eq!(v[5], 0.0);
        let m = material_values(Variant::Mansindam);
        assert!(m[0] > m[1] && m[1] > m[4] && m[7] < m[6], "{m:?}");
    }

    #[test]
    fn greedy_takes_the_biggest_piece_and_mates_when_it_can() {
        let mut rng = Rng::new(1);
        // Sente's rook on 5e takes the gote rook on 5a and promotes.
        let g = game(Variant::Minishogi, "r3p/2k2/5/5/R1K2 b - 1");
        let values = material_values(Variant::Minishogi);
        let mv = greedy_move(&g, &values, &mut rng).unwrap();
        assert_eq!(mv, parse_move(g.position(), "5e5a+").unwrap());
        // A gold drop in front of the cornered king mates.
        let g = game(Variant::Minishogi, "4k/5/4K/5/5 b G 1");
        let mv = greedy_move(&g, &values, &mut rng).unwrap();
        let mut after = g.clone();
        after.play(mv);
        assert_eq!(after.outcome().and_then(|o| o.winner), Some(Color::Sente), "{mv:?}");
    }

    #[test]
    fn random_play_covers_the_moves() {
        let g = Game::new(Position::startpos(Variant::Minishogi));
        let mut rng = Rng::new(7);
        let seen: std::collections::HashSet<_> = (0..200).map(|_| random_move(&g, &mut rng).unwrap()).collect();
        assert_eq!(seen.len(), g.legal_moves().len());
    }
}
