//! An evaluator shared by many searches that joins their requests into one
//! call of the evaluator behind it: self-play games in lockstep put their
//! leaves into the same network batch.

use crate::mcts::{EvalRequest, Evaluation, Evaluator};
use crossbeam::channel::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

type Job = (Vec<EvalRequest>, Sender<Vec<Evaluation>>);

/// Collects batches from many threads; a server thread evaluates them
/// together once `max_batch` positions wait or `patience` has passed
/// since the first of them arrived.
pub struct BatchingEvaluator {
    jobs: Sender<Job>,
    max_batch: usize,
    name: String,
}

impl BatchingEvaluator {
    pub fn new(inner: Arc<dyn Evaluator>, patience: Duration) -> BatchingEvaluator {
        let (jobs, rx) = crossbeam::channel::unbounded::<Job>();
        let max_batch = inner.max_batch();
        let name = format!("{} (batched across games)", inner.name());
        std::thread::spawn(move || serve(&*inner, rx, patience));
        BatchingEvaluator { jobs, max_batch, name }
    }
}

fn serve(inner: &dyn Evaluator, jobs: Receiver<Job>, patience: Duration) {
    let max = inner.max_batch().max(1);
    while let Ok(first) = jobs.recv() {
        let deadline = Instant::now() + patience;
        let mut size = first.0.len();
        let mut batch = vec![first];
        while size < max {
            match jobs.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(job) => {
                    size += job.0.len();
                    batch.push(job);
                }
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        let lens: Vec<usize> = batch.iter().map(|(r, _)| r.len()).collect();
        let all: Vec<EvalRequest> = batch.iter_mut().flat_map(|(r, _)| std::mem::take(r)).collect();
        let mut answers = Vec::with_capacity(all.len());
        for chunk in all.chunks(max) {
            let got = inner.evaluate(chunk);
            // Answers must line up with requests; a short answer would hand
            // one game's evaluations to another.
            assert_eq!(got.len(), chunk.len(), "evaluator answered {} of {} positions", got.len(), chunk.len());
            answers.extend(got);
        }
        let mut answers = answers.into_iter();
        for ((_, reply), n) in batch.into_iter().zip(lens) {
            let _ = reply.send(answers.by_ref().take(n).collect());
        }
    }
}

impl Evaluator for BatchingEvaluator {
    fn evaluate(&self, batch: &[EvalRequest]) -> Vec<Evaluation> {
        // If the server thread died (its evaluator panicked), stop loudly
        // rather than feed the games made-up evaluations.
        let (tx, rx) = crossbeam::channel::bounded(1);
        self.jobs.send((batch.to_vec(), tx)).expect("the batching evaluator's server thread has stopped");
        rx.recv().expect("the batching evaluator's server thread has stopped")
    }

    fn max_batch(&self) -> usize {
        self.max_batch
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}
