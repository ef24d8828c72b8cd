//! The search/network boundary: the search asks an [`Evaluator`] about
//! positions and their legal moves and gets back a value and a policy over
//! exactly those moves. The search never sees the network itself.

use crate::rules::{Move, Position};
use crossbeam::channel::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// A batch of requests for [`serve_jobs`] and where its answers go (the
/// requests come back with them, in order).
pub type EvalJob = (Vec<EvalRequest>, Sender<(Vec<EvalRequest>, Vec<Evaluation>)>);

/// The merge-and-split loop between many askers and one evaluator (the
/// search's workers, or many self-play games): takes a first job, joins
/// the jobs that arrive within `patience` of it while fewer than the
/// evaluator's `max_batch` positions wait (zero: only those already
/// waiting), evaluates them in chunks of at most `max_batch`, and hands
/// each job its answers, made well-formed by [`sanitize`]. Ends when every
/// sender is gone.
pub fn serve_jobs(evaluator: &dyn Evaluator, jobs: Receiver<EvalJob>, patience: Duration) {
    let max = evaluator.max_batch().max(1);
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
        let requests: Vec<EvalRequest> = batch.iter_mut().flat_map(|(r, _)| std::mem::take(r)).collect();
        let mut answers = Vec::with_capacity(requests.len());
        for chunk in requests.chunks(max) {
            let mut got = evaluator.evaluate(chunk);
            // Answers line up with requests even when an evaluator answers
            // short: one asker never gets another's evaluations.
            got.resize_with(chunk.len(), || Evaluation { value: 0.0, policy: Vec::new() });
            for (req, ans) in chunk.iter().zip(got.iter_mut()) {
                sanitize(ans, req.moves.len());
            }
            answers.extend(got);
        }
        let mut requests = requests.into_iter();
        let mut answers = answers.into_iter();
        for ((_, reply), n) in batch.into_iter().zip(lens) {
            let r: Vec<EvalRequest> = requests.by_ref().take(n).collect();
            let a: Vec<Evaluation> = answers.by_ref().take(n).collect();
            // An asker gone (a search stopping) no longer needs its answers.
            let _ = reply.send((r, a));
        }
    }
}

/// Makes an evaluator's answer usable whatever it returned: a finite value
/// in [-1, 1] and a policy of the right length summing to 1 (uniform if it
/// was malformed).
pub fn sanitize(ans: &mut Evaluation, num_moves: usize) {
    ans.value = if ans.value.is_finite() { ans.value.clamp(-1.0, 1.0) } else { 0.0 };
    let sum: f32 = ans.policy.iter().filter(|p| p.is_finite() && **p >= 0.0).sum();
    let well_formed = ans.policy.len() == num_moves && ans.policy.iter().all(|p| p.is_finite() && *p >= 0.0);
    if well_formed && sum > 0.0 {
        ans.policy.iter_mut().for_each(|p| *p /= sum);
    } else {
        ans.policy = vec![1.0 / num_moves as f32; num_moves];
    }
}

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

/// The search's batch for evaluators that state no preference.
pub const DEFAULT_SEARCH_BATCH: usize = 32;

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

    /// The batch a search gathers when none is asked for: a net's is the
    /// one it was loaded for (its device's default unless one was given);
    /// by default [`DEFAULT_SEARCH_BATCH`] or the largest accepted.
    fn preferred_batch(&self) -> usize {
        self.max_batch().min(DEFAULT_SEARCH_BATCH)
    }

    /// A short description for logs (`uniform`, the model file, ...).
    fn name(&self) -> String;

    /// Batches worth having in flight at once: on a GPU at least two, so
    /// that the CPU gathers and encodes batch k+1 while the device runs
    /// batch k. A search runs this many evaluation threads
    /// ([`serve_pipelined`]).
    fn pipeline_depth(&self) -> usize {
        1
    }
}

/// [`serve_jobs`] on `evaluator.pipeline_depth()` threads sharing one
/// queue: while one thread waits for the device, the next takes the jobs
/// waiting and prepares its batch. Returns when every sender is gone.
pub fn serve_pipelined(evaluator: &dyn Evaluator, jobs: Receiver<EvalJob>, patience: Duration) {
    let depth = evaluator.pipeline_depth().max(1);
    if depth == 1 {
        return serve_jobs(evaluator, jobs, patience);
    }
    std::thread::scope(|scope| {
        for _ in 0..depth {
            let jobs = jobs.clone();
            scope.spawn(move || serve_jobs(evaluator, jobs, patience));
        }
    });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Game, Variant};

    /// Answers one position fewer than asked, with a malformed value.
    struct Short;

    impl Evaluator for Short {
        fn evaluate(&self, batch: &[EvalRequest]) -> Vec<Evaluation> {
            let n = batch.len().saturating_sub(1);
            batch[..n].iter().map(|r| Evaluation { value: f32::NAN, policy: vec![2.0; r.moves.len()] }).collect()
        }
        fn max_batch(&self) -> usize {
            3
        }
        fn name(&self) -> String {
            "short".into()
        }
    }

    #[test]
    fn merged_jobs_get_their_own_answers_made_well_formed() {
        let game = Game::new(Position::startpos(Variant::Minishogi));
        let moves: Vec<Move> = game.legal_moves().to_vec();
        let request = EvalRequest { position: game.position().clone(), moves: moves.clone(), repetitions: 1 };
        let (tx, rx) = crossbeam::channel::unbounded::<EvalJob>();
        let mut replies = Vec::new();
        // Jobs of 2, 2 and 1 positions: 5 in chunks of at most 3.
        for n in [2, 2, 1] {
            let (rtx, rrx) = crossbeam::channel::bounded(1);
            tx.send((vec![request.clone(); n], rtx)).unwrap();
            replies.push((n, rrx));
        }
        drop(tx);
        serve_jobs(&Short, rx, Duration::from_millis(10));
        check_replies(replies, moves.len());
    }

    /// Several batches in flight; each answer's value tells which
    /// position it is for (its number of moves).
    struct Deep;

    impl Evaluator for Deep {
        fn evaluate(&self, batch: &[EvalRequest]) -> Vec<Evaluation> {
            // Slow enough that the servers overlap.
            std::thread::sleep(Duration::from_millis(2));
            UniformEvaluator
                .evaluate(batch)
                .into_iter()
                .zip(batch)
                .map(|(e, r)| Evaluation { value: r.moves.len() as f32 / 100.0, ..e })
                .collect()
        }
        fn max_batch(&self) -> usize {
            3
        }
        fn name(&self) -> String {
            "deep".into()
        }
        fn pipeline_depth(&self) -> usize {
            3
        }
    }

    #[test]
    fn pipelined_servers_give_every_job_its_own_answers() {
        let game = Game::new(Position::startpos(Variant::Minishogi));
        let moves: Vec<Move> = game.legal_moves().to_vec();
        let (tx, rx) = crossbeam::channel::unbounded::<EvalJob>();
        let mut replies = Vec::new();
        assert!(moves.len() >= 12);
        for i in 0..36 {
            // The jobs' requests differ (their number of moves), so an
            // answer given to the wrong job would show.
            let (n, i) = (1 + i % 3, i % 12);
            let request =
                EvalRequest { position: game.position().clone(), moves: moves[..1 + i].to_vec(), repetitions: 1 };
            let (rtx, rrx) = crossbeam::channel::bounded(1);
            tx.send((vec![request; n], rtx)).unwrap();
            replies.push((n, 1 + i, rrx));
        }
        drop(tx);
        serve_pipelined(&Deep, rx, Duration::ZERO);
        for (n, len, reply) in replies {
            let (requests, answers) = reply.recv().unwrap();
            assert_eq!((requests.len(), answers.len()), (n, n));
            for (r, a) in requests.iter().zip(answers) {
                assert_eq!((r.moves.len(), a.policy.len()), (len, len));
                assert_eq!(a.value, len as f32 / 100.0);
            }
        }
    }

    type Reply = Receiver<(Vec<EvalRequest>, Vec<Evaluation>)>;

    fn check_replies(replies: Vec<(usize, Reply)>, moves: usize) {
        for (n, reply) in replies {
            let (requests, answers) = reply.recv().unwrap();
            assert_eq!((requests.len(), answers.len()), (n, n));
            for a in answers {
                assert_eq!(a.value, 0.0);
                assert_eq!(a.policy.len(), moves);
                assert!((a.policy.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            }
        }
    }
}
