//! The root's policy improvements in the search: the Gumbel root
//! (Sequential Halving's survivors and budget on hand-made evaluations,
//! with batches and threads; PUCT without a playout limit), and KataGo's
//! forced playouts with policy target pruning.

use pantheon::mcts::{Limits, SearchParams, SearchResult, Searcher, UniformEvaluator};
use pantheon::rules::{Game, Variant};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn search(s: &mut Searcher, g: &Game, nodes: u64) -> SearchResult {
    s.set_position(g);
    s.search(&Limits { nodes: Some(nodes), ..Limits::default() }, &AtomicBool::new(false), &mut |_| {})
}

/// Uniform priors; -0.8 for the side to move in the positions listed
/// (so the move into one is good for the side that played it), 0
/// elsewhere.
struct Favouring(Vec<u64>);

impl pantheon::mcts::Evaluator for Favouring {
    fn evaluate(&self, batch: &[pantheon::mcts::EvalRequest]) -> Vec<pantheon::mcts::Evaluation> {
        batch
            .iter()
            .map(|r| pantheon::mcts::Evaluation {
                value: if self.0.contains(&r.position.hash()) { -0.8 } else { 0.0 },
                policy: vec![1.0 / r.moves.len() as f32; r.moves.len()],
            })
            .collect()
    }
    fn max_batch(&self) -> usize {
        64
    }
    fn name(&self) -> String {
        "favouring".into()
    }
}

/// A Gumbel-root search without noise and without leaf mate searches.
fn gumbel_search(
    evaluator: Arc<dyn pantheon::mcts::Evaluator>,
    (threads, batch): (usize, usize),
    considered: usize,
    nodes: u64,
) -> SearchResult {
    let gumbel = pantheon::mcts::GumbelParams { considered, noise: false, ..Default::default() };
    let params =
        SearchParams { threads, batch_size: batch, mate_plies: 0, gumbel: Some(gumbel), ..SearchParams::default() };
    let mut s = Searcher::new(evaluator, params);
    search(&mut s, &Game::new(pantheon::rules::Position::startpos(Variant::Minishogi)), nodes)
}

#[test]
fn sequential_halving_keeps_the_best_moves_and_spends_the_budget() {
    // 4 moves considered (with equal priors and no noise, the first 4 of
    // the root's moves), 16 playouts after the root's own: 2 phases, each
    // of 8 playouts: 2 visits to each of the 4, then 4 more to each of the
    // 2 best by q. Moves 1 and 3 lead to positions bad for the opponent.
    let start = Game::new(pantheon::rules::Position::startpos(Variant::Minishogi));
    let moves = start.legal_moves();
    let child = |i: usize| {
        let mut g = start.clone();
        g.play(moves[i]);
        g.position().hash()
    };
    let result = gumbel_search(Arc::new(Favouring(vec![child(1), child(3)])), (1, 1), 4, 17);
    let visits: Vec<u32> = result.visits.iter().map(|v| v.1).collect();
    assert_eq!(&visits[..4], &[2, 6, 2, 6], "{visits:?}");
    assert!(visits[4..].iter().all(|&n| n == 0), "{visits:?}");
    assert!(result.best == Some(moves[1]) || result.best == Some(moves[3]));
    let improved = result.improved_policy.expect("a Gumbel root gives an improved policy");
    assert_eq!(improved.len(), moves.len());
    assert!((improved.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    assert!(improved[1] + improved[3] > 0.99, "{improved:?}");
}

#[test]
fn gumbel_root_spends_exactly_the_budget_with_batches_and_threads() {
    for (threads, batch) in [(1, 1), (1, 8), (2, 8)] {
        for nodes in [2, 9, 33, 200] {
            let result = gumbel_search(Arc::new(UniformEvaluator), (threads, batch), 16, nodes);
            let spent: u32 = result.visits.iter().map(|v| v.1).sum();
            assert_eq!(u64::from(spent), nodes - 1, "threads {threads}, batch {batch}, nodes {nodes}");
            // Sequential Halving's schedule: the most visited moves were
            // visited about equally (the last two alternate).
            let mut v: Vec<u32> = result.visits.iter().map(|v| v.1).filter(|&n| n > 0).collect();
            v.sort_unstable_by(|a, b| b.cmp(a));
            if nodes >= 33 {
                assert!(v[0] - v[1] <= 1, "{v:?}");
            }
        }
    }
}

#[test]
fn without_a_playout_limit_the_root_stays_puct() {
    let gumbel = pantheon::mcts::GumbelParams::default();
    let params = SearchParams { threads: 1, batch_size: 4, gumbel: Some(gumbel), ..SearchParams::default() };
    let mut s = Searcher::new(Arc::new(UniformEvaluator), params);
    s.set_position(&Game::new(pantheon::rules::Position::startpos(Variant::Minishogi)));
    let limits = Limits { movetime: Some(Duration::from_millis(30)), ..Limits::default() };
    let result = s.search(&limits, &AtomicBool::new(false), &mut |_| {});
    assert!(result.improved_policy.is_none());
    assert!(result.best.is_some());
}

#[test]
fn forced_playouts_give_every_child_its_share() {
    let start = Game::new(pantheon::rules::Position::startpos(Variant::Minishogi));
    // Move 1 leads to a position bad for the opponent: PUCT alone would
    // spend most playouts on it.
    let moves = start.legal_moves();
    let mut after = start.clone();
    after.play(moves[1]);
    let evaluator = Arc::new(Favouring(vec![after.position().hash()]));
    let params = SearchParams {
        threads: 1,
        batch_size: 1,
        mate_plies: 0,
        forced_playouts: Some(2.0),
        ..SearchParams::default()
    };
    let result = search(&mut Searcher::new(evaluator, params), &start, 401);
    let visits: Vec<u32> = result.visits.iter().map(|v| v.1).collect();
    let total: u32 = visits.iter().sum();
    // Uniform priors: each child is owed sqrt(2 * total / n) playouts.
    let owed = (2.0 * f64::from(total) / moves.len() as f64).sqrt().floor() as u32;
    assert!(visits.iter().all(|&v| v + 1 >= owed), "owed {owed}: {visits:?}");
    let pruned = result.pruned_visits.expect("forced playouts give pruned visits");
    let best = (0..visits.len()).max_by_key(|&i| visits[i]).unwrap();
    assert_eq!(pruned[best], visits[best], "the best move keeps its visits");
    assert!(pruned.iter().zip(&visits).all(|(p, v)| p <= v), "{pruned:?} of {visits:?}");
    assert!(pruned.iter().all(|&p| p != 1), "a child left with one visit drops out");
    // Without forced playouts there is nothing to prune.
    let plain = SearchParams { threads: 1, batch_size: 1, ..SearchParams::default() };
    assert!(search(&mut Searcher::new(Arc::new(UniformEvaluator), plain), &start, 50).pruned_visits.is_none());
}
