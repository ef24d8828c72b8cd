//! The search/network boundary: the search asks an [`Evaluator`] about
//! positions and their legal moves and gets back a value and a policy over
//! exactly those moves. The search never sees the network itself.

use crate::rules::{Move, Position};

/// One position to evaluate.
#[derive(Clone, Debug)]
pub struct EvalRequest {
    pub position: Position,
    /// The legal moves of the position in the game (history rules
    /// included); never empty.
    pub moves: Vec<Move>,
    /// How many times the position has occurred in the game so far
    /// (1 = first time).
    pub repetitions: u8,
}

/// The evaluator's answer for one [`EvalRequest`].
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// Expected result in [-1, 1] from the side to move's point of view
    /// (1 = the side to move wins).
    pub value: f32,
    /// One prior probability per move of the request, in the same order,
    /// each in [0, 1], summing to 1.
    pub policy: Vec<f32>,
}

/// Evaluates batches of positions: a network, or a stand-in for tests.
///
/// Blocking and threads: [`Evaluator::evaluate`] blocks until the whole
/// batch is done. The search calls it from one evaluation thread at a time
/// per search, but an evaluator may be shared (behind `Arc`) by several
/// searches running at once, so implementations must be `Send + Sync` and
/// serialise access to a device themselves if they need to.
pub trait Evaluator: Send + Sync {
    /// Evaluates `batch` (1 to [`Evaluator::max_batch`] requests) and
    /// returns one [`Evaluation`] per request, in order.
    fn evaluate(&self, batch: &[EvalRequest]) -> Vec<Evaluation>;

    /// The largest batch this evaluator accepts.
    fn max_batch(&self) -> usize;

    /// A short description for logs (`uniform`, the model file, ...).
    fn name(&self) -> String;
}

/// Value 0 and equal priors over the legal moves: pure search, no
/// knowledge. Used by tests and to measure the search's own overhead.
#[derive(Clone, Debug, Default)]
pub struct UniformEvaluator;

impl Evaluator for UniformEvaluator {
    fn evaluate(&self, batch: &[EvalRequest]) -> Vec<Evaluation> {
        batch
            .iter()
            .map(|r| Evaluation { value: 0.0, policy: vec![1.0 / r.moves.len() as f32; r.moves.len()] })
            .collect()
    }

    fn max_batch(&self) -> usize {
        1024
    }

    fn name(&self) -> String {
        "uniform".to_string()
    }
}
