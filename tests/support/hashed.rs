//! A deterministic evaluator without a net, shared by the search and
//! self-play tests.

/// Uniform priors, and a value drawn from the position's hash: each root
/// move leads to a subtree of its own worth.
pub struct HashedValues;

impl pantheon::mcts::Evaluator for HashedValues {
    fn evaluate(&self, batch: &[pantheon::mcts::EvalRequest]) -> Vec<pantheon::mcts::Evaluation> {
        batch
            .iter()
            .map(|r| {
                let n = r.moves.len();
                let value = (r.position.hash() % 2001) as f32 / 1000.0 - 1.0;
                pantheon::mcts::Evaluation { value: value * 0.9, policy: vec![1.0 / n as f32; n] }
            })
            .collect()
    }

    fn max_batch(&self) -> usize {
        64
    }

    fn name(&self) -> String {
        "hashed values".into()
    }
}
