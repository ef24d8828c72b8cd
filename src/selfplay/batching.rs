//! An evaluator shared by many searches that joins their requests into one
//! call of the evaluator behind it: self-play games in lockstep put their
//! leaves into the same network batch.

use crate::mcts::{EvalJob, EvalRequest, Evaluation, Evaluator, serve_pipelined};
use crossbeam::channel::Sender;
use std::sync::Arc;
use std::time::Duration;

/// Collects batches from many threads; a server thread evaluates them
/// together once `max_batch` positions wait or `patience` has passed
/// since the first of them arrived (the search's own merge-and-split
/// loop, [`serve_pipelined`], with patience; with the inner evaluator's
/// pipeline depth).
pub struct BatchingEvaluator {
    jobs: Sender<EvalJob>,
    max_batch: usize,
    name: String,
}

impl BatchingEvaluator {
    pub fn new(inner: Arc<dyn Evaluator>, patience: Duration) -> BatchingEvaluator {
        let (jobs, rx) = crossbeam::channel::unbounded::<EvalJob>();
        let max_batch = inner.max_batch();
        let name = format!("{} (batched across games)", inner.name());
        std::thread::spawn(move || serve_pipelined(&*inner, rx, patience));
        BatchingEvaluator { jobs, max_batch, name }
    }
}

impl Evaluator for BatchingEvaluator {
    fn evaluate(&self, batch: &[EvalRequest]) -> Vec<Evaluation> {
        // If the server thread died (its evaluator panicked), stop loudly
        // rather than feed the games made-up evaluations.
        let (tx, rx) = crossbeam::channel::bounded(1);
        self.jobs.send((batch.to_vec(), tx)).expect("the batching evaluator's server thread has stopped");
        rx.recv().expect("the batching evaluator's server thread has stopped").1
    }

    fn max_batch(&self) -> usize {
        self.max_batch
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}
