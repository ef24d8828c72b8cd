//! Matches between two evaluators: paired games from the same random
//! openings with colours swapped, an arbiter applying the rules, and the
//! result as an Elo difference with a 95% confidence interval.

use crate::mcts::{Evaluator, Limits, Rng, SearchParams, Searcher};
use crate::rules::{Color, Game, Position, Variant};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Match settings.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    pub variant: Variant,
    /// Games in all (rounded up to an even number: pairs).
    pub games: usize,
    /// Playouts per move for both sides.
    pub nodes: u64,
    /// Random plies of each opening, played before the engines take over.
    pub opening_plies: usize,
    /// Games longer than this are scored as draws.
    pub max_plies: usize,
    pub seed: u64,
}

/// The score of A against B.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MatchResult {
    pub wins: usize,
    pub draws: usize,
    pub losses: usize,
}

impl MatchResult {
    pub fn games(&self) -> usize {
        self.wins + self.draws + self.losses
    }

    /// A's score share in [0, 1].
    pub fn score(&self) -> f64 {
        (self.wins as f64 + 0.5 * self.draws as f64) / self.games().max(1) as f64
    }

    /// Elo difference of A over B and its 95% interval (normal
    /// approximation of the score's standard error); infinite when one
    /// side scored everything.
    pub fn elo(&self) -> (f64, f64, f64) {
        let n = self.games().max(1) as f64;
        let s = self.score();
        let var = (self.wins as f64 * (1.0 - s).powi(2)
            + self.draws as f64 * (0.5 - s).powi(2)
            + self.losses as f64 * s.powi(2))
            / n;
        let se = (var / n).sqrt();
        let elo = |p: f64| -400.0 * (1.0 / p.clamp(0.0, 1.0) - 1.0).log10();
        (elo(s), elo(s - 1.96 * se), elo(s + 1.96 * se))
    }
}

impl std::fmt::Display for MatchResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (elo, lo, hi) = self.elo();
        write!(
            f,
            "+{} ={} -{} ({} games, score {:.1}%), Elo {:+.0} [{:+.0}, {:+.0}] (95%)",
            self.wins,
            self.draws,
            self.losses,
            self.games(),
            100.0 * self.score(),
            elo,
            lo,
            hi
        )
    }
}

/// Plays the match; `on_game` gets each game's result for A (1, 0.5, 0).
pub fn play_match(
    config: &MatchConfig,
    a: Arc<dyn Evaluator>,
    b: Arc<dyn Evaluator>,
    on_game: &mut dyn FnMut(usize, f64),
) -> MatchResult {
    let params = SearchParams { threads: 1, batch_size: 8, hash_mib: 64, ..SearchParams::default() };
    let mut engines = [Searcher::new(a, params.clone()), Searcher::new(b, params)];
    let mut rng = Rng::new(config.seed);
    let mut result = MatchResult::default();
    let pairs = config.games.div_ceil(2);
    for pair in 0..pairs {
        let opening = random_opening(config.variant, config.opening_plies, &mut rng);
        for swap in [false, true] {
            // A plays sente in the first game of a pair, gote in the second.
            let a_color = if swap { Color::Gote } else { Color::Sente };
            let score = play_game(config, &opening, &mut engines, a_color);
            match score {
                s if s > 0.75 => result.wins += 1,
                s if s < 0.25 => result.losses += 1,
                _ => result.draws += 1,
            }
            on_game(pair * 2 + swap as usize, score);
        }
    }
    result
}

fn random_opening(variant: Variant, plies: usize, rng: &mut Rng) -> Game {
    loop {
        let mut game = Game::new(Position::startpos(variant));
        for _ in 0..plies {
            let moves = game.legal_moves();
            if moves.is_empty() || game.outcome().is_some() {
                break;
            }
            game.play(moves[rng.below(moves.len())]);
        }
        if game.outcome().is_none() {
            return game;
        }
    }
}

/// One game from `opening`; A's score.
fn play_game(config: &MatchConfig, opening: &Game, engines: &mut [Searcher; 2], a_color: Color) -> f64 {
    let mut game = opening.clone();
    for e in engines.iter_mut() {
        e.clear();
    }
    let stop = AtomicBool::new(false);
    let limits = Limits { nodes: Some(config.nodes), ..Limits::default() };
    while game.moves().len() < config.max_plies {
        if let Some(o) = game.outcome() {
            return match o.winner {
                Some(w) if w == a_color => 1.0,
                Some(_) => 0.0,
                None => 0.5,
            };
        }
        let side = game.position().side_to_move();
        let engine = &mut engines[if side == a_color { 0 } else { 1 }];
        engine.set_position(&game);
        let r = engine.search(&limits, &stop, &mut |_| {});
        let Some(mv) = r.best else { break };
        // The searcher only proposes legal moves; the arbiter checks anyway.
        if !game.legal_moves().contains(&mv) {
            return if side == a_color { 0.0 } else { 1.0 };
        }
        game.play(mv);
    }
    0.5
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elo_of_known_scores() {
        let even = MatchResult { wins: 10, draws: 0, losses: 10 };
        assert!(even.elo().0.abs() < 1e-9);
        let (elo, lo, hi) = MatchResult { wins: 75, draws: 0, losses: 25 }.elo();
        assert!((elo - 190.8).abs() < 0.5, "{elo}");
        assert!(lo < elo && elo < hi);
        assert!(MatchResult { wins: 4, draws: 0, losses: 0 }.elo().0.is_infinite());
    }
}
