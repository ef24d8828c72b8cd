//! The search: PUCT over a shared tree, worker threads that gather leaves
//! into batches, and evaluation threads that feed the evaluator. This
//! module holds the set-up, tree reuse and the driver (the controller that
//! checks limits and reports); `worker` the playouts, `report` the scores
//! and lines.
//!
//! One playout (iteration), in order:
//! 1. A worker locks the tree and walks from the root, at each node taking
//!    the child with the highest PUCT score, adding a virtual loss to each
//!    node it passes. It stops at a new node (marked pending), at a node
//!    whose result is known (terminal or proven), or at a pending node (a
//!    collision: it takes its virtual losses back).
//! 2. Without the lock, it replays the path on a [`Game::branch`] of the
//!    root game: a finished game is scored by the rules; otherwise it
//!    generates the legal moves, runs a short mate search (see
//!    [`find_mate`]; at a leaf in check, also whether every evasion is
//!    mated, see [`find_mated`]), and looks the position up in the
//!    evaluation cache.
//! 3. Leaves still needing the network are sent, a batch per worker, to the
//!    evaluation threads (one per batch in flight), each of which joins the
//!    batches waiting into one evaluator call (so the device works while
//!    the workers walk).
//! 4. With the answers, the worker locks the tree, expands each leaf (edges
//!    with priors), backs the value up the path (negated at each ply),
//!    removes the virtual losses, and propagates proofs: a node with a child
//!    lost for the opponent is won; a node whose children are all won for
//!    the opponent is lost.

use super::cache::{self, EvalCache};
use super::evaluator::{EvalRequest, Evaluation, Evaluator};
use super::limits::{Limits, budget};
use super::mate::{find_mate, find_mate_until, find_mated, mate_line};
use super::params::SearchParams;
use super::rng::Rng;
use super::tree::{Edge, NO_NODE, NodeState, Proof, Tree};
use crate::rules::{CompactMove, Game, Move, Outcome};
use crossbeam::channel::Sender;
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

mod gumbel_root;
mod report;
mod worker;

use gumbel_root::GumbelRoot;

pub use report::{PvLine, Score, SearchInfo};

/// What a finished search found.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// `None` when the game is already over at the root.
    pub best: Option<Move>,
    /// The expected reply, if the tree has one.
    pub ponder: Option<Move>,
    pub info: SearchInfo,
    /// Visits per root move (legal moves never visited are listed with 0),
    /// the policy target of self-play.
    pub visits: Vec<(Move, u32)>,
    /// Mean value at the root, side to move's view.
    pub root_q: f64,
    /// Exact result of the root position if the search proved one.
    pub proof: Proof,
    /// With a Gumbel root: the improved policy per root move (in the order
    /// of `visits`), softmax(logit + sigma(completed q)); `best` is then
    /// Sequential Halving's choice.
    pub improved_policy: Option<Vec<f32>>,
    /// With forced playouts: the visits per root move (in the order of
    /// `visits`) after KataGo's policy target pruning, which takes back
    /// the forced playouts that PUCT alone would not have given.
    pub pruned_visits: Option<Vec<u32>>,
    /// The result if the game was already over at the root.
    pub game_over: Option<Outcome>,
}

/// A reusable searcher: keeps its tree between moves of one game.
pub struct Searcher {
    evaluator: Arc<dyn Evaluator>,
    params: SearchParams,
    tree: Tree,
    /// The game at the root of `tree`, once a position is set.
    root: Option<Game>,
    cache: Mutex<EvalCache>,
    rng: Rng,
}

/// What a worker found when it walked the tree.
enum Walk {
    /// A new leaf to evaluate: the path of node ids from the root, and the
    /// moves leading to it.
    Leaf(Vec<u32>, Vec<Move>),
    /// A node with a known result; already backed up.
    Known,
    /// Ran into a pending node. The virtual losses on the path (the
    /// nodes before the pending one) stay until the batch is sent, so that
    /// the next walks go elsewhere; the caller takes them back.
    Collision(Vec<u32>),
    /// The tree cannot grow within its budget.
    Full,
    /// The root's result is proven; nothing left to search.
    RootProven,
}

/// A batch from one worker and where to send the answers.
type Job = super::EvalJob;

/// A leaf waiting for its evaluation.
struct PendingLeaf {
    path: Vec<u32>,
    cache_key: u64,
}

/// State shared by the threads of one search.
struct Shared<'a> {
    tree: Mutex<Tree>,
    root: &'a Game,
    params: &'a SearchParams,
    cache: &'a Mutex<EvalCache>,
    /// Set when the search must end.
    stop: AtomicBool,
    /// The tree hit its memory budget.
    full: AtomicBool,
    /// Playouts started (reserved against the node limit) and completed.
    started: AtomicU64,
    completed: AtomicU64,
    node_limit: u64,
    depth_sum: AtomicU64,
    max_depth: AtomicU32,
    /// Root noise still to apply when the root is first expanded.
    root_noise: Mutex<Option<Vec<f64>>>,
    /// The Gumbel root's state (off with PUCT).
    gumbel: Mutex<GumbelRoot>,
    /// Mate lines completed for the PV, by the moves the tree gave.
    mate_lines: Mutex<Vec<(Vec<Move>, Vec<Move>)>>,
    /// Wakes the controller between its ticks when the node limit is
    /// reached or a proof appears, so a short search does not wait for
    /// the next tick; `woken` keeps a wake-up sent before it waits.
    wake: (Mutex<()>, parking_lot::Condvar),
    woken: AtomicBool,
}

impl Searcher {
    pub fn new(evaluator: Arc<dyn Evaluator>, params: SearchParams) -> Searcher {
        let cache = Mutex::new(EvalCache::new(params.cache_entries));
        let tree = Tree::new(params.hash_mib << 20);
        let rng = Rng::new(params.seed);
        Searcher { evaluator, params, tree, root: None, cache, rng }
    }

    pub fn params(&self) -> &SearchParams {
        &self.params
    }

    /// Changes the parameters; a new memory budget or cache size starts a
    /// fresh tree or cache, a new prior temperature both.
    pub fn set_params(&mut self, params: SearchParams) {
        if params.policy_temperature != self.params.policy_temperature {
            self.params.policy_temperature = params.policy_temperature;
            self.clear();
        }
        if params.hash_mib != self.params.hash_mib {
            self.tree = Tree::new(params.hash_mib << 20);
            self.root = None;
        }
        if params.cache_entries != self.params.cache_entries {
            self.cache = Mutex::new(EvalCache::new(params.cache_entries));
        }
        if params.seed != self.params.seed {
            self.rng = Rng::new(params.seed);
        }
        self.params = params;
    }

    pub fn set_evaluator(&mut self, evaluator: Arc<dyn Evaluator>) {
        self.evaluator = evaluator;
        self.clear();
    }

    /// Forgets the tree and cached evaluations (a new game).
    pub fn clear(&mut self) {
        self.tree = Tree::new(self.params.hash_mib << 20);
        self.root = None;
        self.cache.lock().clear();
    }

    /// Sets the position to search. If `game` continues the previous root
    /// game by some moves, the subtree under them is kept; returns whether
    /// it was.
    pub fn set_position(&mut self, game: &Game) -> bool {
        let reused = self.try_reuse(game);
        if !reused {
            self.tree = Tree::new(self.params.hash_mib << 20);
        }
        self.root = Some(game.clone());
        reused
    }

    fn try_reuse(&mut self, game: &Game) -> bool {
        let Some(old) = &self.root else { return false };
        let (old_moves, new_moves) = (old.moves(), game.moves());
        if old.start() != game.start()
            || old.history().len() - old_moves.len() != game.history().len() - new_moves.len()
            || !new_moves.starts_with(old_moves)
        {
            return false;
        }
        let mut node = Tree::ROOT;
        for &mv in &new_moves[old_moves.len()..] {
            let cm = CompactMove::from(mv);
            match self.tree.edges(node).iter().find(|e| e.mv == cm) {
                Some(e) if e.child != NO_NODE => node = e.child,
                _ => return false,
            }
        }
        // A node proven by a leaf mate search but never expanded has no
        // edges to search from: start afresh.
        if self.tree.node(node).state != NodeState::Expanded {
            return false;
        }
        if node != Tree::ROOT {
            self.tree = self.tree.subtree(node);
        }
        true
    }

    /// Searches the position set by [`Searcher::set_position`] until a limit
    /// is reached or `stop` is set, calling `on_info` about once a second.
    ///
    /// # Panics
    /// If no position was set.
    pub fn search(&mut self, limits: &Limits, stop: &AtomicBool, on_info: &mut dyn FnMut(&SearchInfo)) -> SearchResult {
        self.search_pondering(limits, stop, &AtomicBool::new(false), on_info)
    }

    /// [`Searcher::search`] that may start as a ponder search: with
    /// `limits.ponder` it searches until `stop`, or until `ponderhit` is
    /// set, from which moment the limits apply (clock times counted from
    /// the ponder hit).
    pub fn search_pondering(
        &mut self,
        limits: &Limits,
        stop: &AtomicBool,
        ponderhit: &AtomicBool,
        on_info: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
        let started = Instant::now();
        let root = self.root.clone().expect("set_position before search");
        if let Some(outcome) = root.outcome() {
            // Nothing to search; a ponder or infinite search still answers
            // only when told to (USI).
            if limits.infinite || limits.ponder {
                while !(stop.load(Ordering::SeqCst)
                    || (limits.ponder && !limits.infinite && ponderhit.load(Ordering::SeqCst)))
                {
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
            return self.finished_game_result(outcome, started);
        }
        let root_noise = self.params.root_noise.map(|(alpha, _)| {
            let n = root.legal_moves().len();
            self.rng.dirichlet(alpha, n)
        });
        let gumbel = self.gumbel_root(&root, limits);
        let tree = std::mem::replace(&mut self.tree, Tree::new(0));
        let shared = Shared {
            tree: Mutex::new(tree),
            root: &root,
            params: &self.params,
            cache: &self.cache,
            stop: AtomicBool::new(false),
            full: AtomicBool::new(false),
            started: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            node_limit: limits.nodes.unwrap_or(u64::MAX),
            depth_sum: AtomicU64::new(0),
            max_depth: AtomicU32::new(0),
            root_noise: Mutex::new(root_noise),
            gumbel: Mutex::new(gumbel),
            mate_lines: Mutex::new(Vec::new()),
            wake: (Mutex::new(()), parking_lot::Condvar::new()),
            woken: AtomicBool::new(false),
        };
        {
            // A root kept from an earlier search gets its noise now.
            let mut tree = shared.tree.lock();
            if tree.node(Tree::ROOT).state == NodeState::Expanded {
                shared.apply_root_noise(&mut tree);
                shared.start_gumbel(&tree, 0);
            }
        }
        let evaluator = &*self.evaluator;
        std::thread::scope(|scope| {
            let (job_tx, job_rx) = crossbeam::channel::bounded::<Job>(self.params.threads * 2);
            // Takes every batch waiting, without waiting for more; on a GPU
            // with several batches in flight.
            scope.spawn(|| super::serve_pipelined(evaluator, job_rx, Duration::ZERO));
            for _ in 0..self.params.threads.max(1) {
                let job_tx = job_tx.clone();
                let shared = &shared;
                scope.spawn(move || shared.worker(job_tx));
            }
            drop(job_tx);
            if self.params.root_mate_plies > 0 {
                scope.spawn(|| shared.root_mate());
            }
            self.control(&shared, limits, (stop, ponderhit), started, on_info);
            shared.stop.store(true, Ordering::SeqCst);
        });
        let info = shared.info(&shared.tree.lock(), started);
        let gumbel = shared.gumbel.into_inner();
        self.tree = shared.tree.into_inner();
        let result = self.result(info);
        self.with_gumbel(result, &gumbel)
    }

    /// A Gumbel root's answer in the result: Sequential Halving's move and
    /// the improved policy (not when the root is proven: its proof decides).
    fn with_gumbel(&self, mut result: SearchResult, gumbel: &GumbelRoot) -> SearchResult {
        if let GumbelRoot::Active(g) = gumbel
            && !result.proof.is_proven()
        {
            let (best, improved) = g.outcome(&self.tree);
            result.best = best.map(|i| Move::from(self.tree.edges(Tree::ROOT)[i].mv)).or(result.best);
            result.improved_policy = Some(improved);
        }
        result
    }

    /// The Gumbel root of a search, with its draws, when the parameters
    /// ask for one and the search has a playout limit.
    fn gumbel_root(&mut self, root: &Game, limits: &Limits) -> GumbelRoot {
        let (Some(params), Some(nodes)) = (self.params.gumbel, limits.nodes) else { return GumbelRoot::Off };
        let n = root.legal_moves().len();
        let noise = if params.noise { (0..n).map(|_| self.rng.gumbel()).collect() } else { vec![0.0; n] };
        GumbelRoot::Pending { params, noise, nodes }
    }

    /// The controller: checks limits every few milliseconds and reports.
    fn control(
        &self,
        shared: &Shared,
        limits: &Limits,
        (stop, ponderhit): (&AtomicBool, &AtomicBool),
        started: Instant,
        on_info: &mut dyn FnMut(&SearchInfo),
    ) {
        let time = limits.clock.as_ref().map(|c| budget(c, limits.margin));
        let mut pondering = limits.ponder;
        let mut clock_start = started;
        let bounded = limits.nodes.is_some() || limits.movetime.is_some() || time.is_some() || limits.depth.is_some();
        let until_stopped = limits.infinite || !bounded;
        let mut next_info = started + Duration::from_secs(1);
        loop {
            shared.wait_tick(Duration::from_millis(2));
            if stop.load(Ordering::SeqCst) {
                return;
            }
            if pondering && ponderhit.load(Ordering::SeqCst) {
                pondering = false;
                clock_start = Instant::now();
            }
            let elapsed = clock_start.elapsed();
            let done = shared.completed.load(Ordering::SeqCst);
            let tree = shared.tree.lock();
            let root = tree.node(Tree::ROOT);
            let settled = root.proof.is_proven() || shared.full.load(Ordering::SeqCst);
            let mut finished = !until_stopped && settled;
            finished |= done >= shared.node_limit;
            finished |= limits.movetime.is_some_and(|t| elapsed >= t);
            if let Some(t) = time {
                finished |= elapsed >= t.hard;
                finished |= elapsed >= t.target && !shared.best_may_change(&tree, elapsed, t.hard);
            }
            if let Some(depth) = limits.depth {
                finished |= shared.pv_len(&tree) >= depth as usize;
            }
            if finished && !limits.infinite && !pondering {
                return;
            }
            if Instant::now() >= next_info {
                let info = shared.info(&tree, started);
                drop(tree);
                on_info(&info);
                next_info += Duration::from_secs(1);
            }
        }
    }

    fn finished_game_result(&self, outcome: Outcome, started: Instant) -> SearchResult {
        let side = self.root.as_ref().expect("root set").position().side_to_move();
        let proof = match outcome.winner {
            Some(w) if w == side => Proof::Win(0),
            Some(_) => Proof::Loss(0),
            None => Proof::Draw(0),
        };
        let info = SearchInfo {
            playouts: 0,
            root_visits: 0,
            elapsed: started.elapsed(),
            depth: 0,
            seldepth: 0,
            hashfull: 0,
            lines: Vec::new(),
        };
        let root_q = proof.value().unwrap_or(0.0);
        SearchResult {
            best: None,
            ponder: None,
            info,
            visits: Vec::new(),
            root_q,
            proof,
            improved_policy: None,
            pruned_visits: None,
            game_over: Some(outcome),
        }
    }

    fn result(&self, info: SearchInfo) -> SearchResult {
        let root = self.root.as_ref().expect("root set");
        let tree = &self.tree;
        let node = tree.node(Tree::ROOT);
        let mut visits: Vec<(Move, u32)> = tree
            .edges(Tree::ROOT)
            .iter()
            .map(|e| (Move::from(e.mv), if e.child == NO_NODE { 0 } else { tree.node(e.child).visits }))
            .collect();
        if visits.is_empty() {
            // Never expanded (a zero-playout search): list the legal moves.
            visits = root.legal_moves().into_iter().map(|m| (m, 0)).collect();
        }
        let best = info.lines.first().map(|l| l.mv).or_else(|| visits.first().map(|v| v.0));
        if let (Proof::Win(_), Some(best)) = (node.proof, best) {
            // A proven win: the winning move is the whole policy target,
            // even when the proof came before any child was visited.
            for v in &mut visits {
                v.1 = if v.0 == best { v.1.max(1) } else { 0 };
            }
        }
        let ponder = info.lines.first().and_then(|l| l.pv.get(1).copied());
        let pruned_visits = match (self.params.forced_playouts, node.proof) {
            (Some(k), Proof::Unknown) => Some(prune_forced(tree, &self.params, k)),
            (Some(_), _) => Some(visits.iter().map(|v| v.1).collect()),
            _ => None,
        };
        SearchResult {
            best,
            ponder,
            info,
            visits,
            root_q: node.q(),
            proof: node.proof,
            improved_policy: None,
            pruned_visits,
            game_over: None,
        }
    }

    /// Picks a move from a result's visit counts: the best move at
    /// temperature 0, else sampled in proportion to visits^(1/temperature).
    pub fn pick_move(&mut self, result: &SearchResult, temperature: f64) -> Option<Move> {
        if temperature <= 0.0 || result.proof.is_proven() {
            return result.best;
        }
        let weights: Vec<f64> = result.visits.iter().map(|&(_, n)| (n as f64).powf(1.0 / temperature)).collect();
        let total: f64 = weights.iter().sum();
        if total <= 0.0 {
            return result.best;
        }
        let mut x = self.rng.uniform() * total;
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return Some(result.visits[i].0);
            }
            x -= w;
        }
        result.best
    }

    /// Bytes the tree has reserved (never above [`Searcher::tree_budget`]).
    pub fn tree_bytes(&self) -> usize {
        self.tree.bytes()
    }

    /// The tree's memory budget in bytes.
    pub fn tree_budget(&self) -> usize {
        self.tree.budget_bytes()
    }
}

impl Shared<'_> {
    /// Sleeps until the next controller tick, or less when woken.
    fn wait_tick(&self, tick: Duration) {
        let mut guard = self.wake.0.lock();
        if !self.woken.swap(false, Ordering::SeqCst) {
            self.wake.1.wait_for(&mut guard, tick);
            self.woken.store(false, Ordering::SeqCst);
        }
    }

    /// Has the controller look at the search now rather than at its next
    /// tick.
    fn wake_controller(&self) {
        let _guard = self.wake.0.lock();
        self.woken.store(true, Ordering::SeqCst);
        self.wake.1.notify_all();
    }

    /// Whether the best root move could still change before `hard`, at the
    /// current playout rate: if the runner-up cannot catch up, stop early.
    fn best_may_change(&self, tree: &Tree, elapsed: Duration, hard: Duration) -> bool {
        let mut counts: Vec<u32> =
            tree.edges(Tree::ROOT).iter().filter(|e| e.child != NO_NODE).map(|e| tree.node(e.child).visits).collect();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let (first, second) = (counts.first().copied().unwrap_or(0), counts.get(1).copied().unwrap_or(0));
        let rate = self.completed.load(Ordering::Relaxed) as f64 / elapsed.as_secs_f64().max(1e-3);
        let left = rate * hard.saturating_sub(elapsed).as_secs_f64();
        (first - second) as f64 <= left
    }
}

/// KataGo's policy target pruning: each root child but the most visited
/// one gives back up to its forced playouts, sqrt(k * prior * visits), as
/// long as its PUCT score stays below the best child's; a child left with
/// one visit or none drops out. Returns the visits per root edge.
fn prune_forced(tree: &Tree, params: &SearchParams, k: f64) -> Vec<u32> {
    let root = tree.node(Tree::ROOT);
    let edges = tree.edges(Tree::ROOT);
    let visits: Vec<u32> =
        edges.iter().map(|e| if e.child == NO_NODE { 0 } else { tree.node(e.child).visits }).collect();
    let Some(best) = (0..visits.len()).max_by_key(|&i| visits[i]) else { return visits };
    let total: u32 = visits.iter().sum();
    let sqrt_n = f64::from(root.visits.max(1)).sqrt();
    let cpuct = params.cpuct(root.visits);
    let puct = |i: usize, n: u32| {
        let q = if edges[i].child == NO_NODE { 0.0 } else { -tree.node(edges[i].child).q() };
        q + cpuct * f64::from(edges[i].prior()) * sqrt_n / f64::from(1 + n)
    };
    let bar = puct(best, visits[best]);
    visits
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            if i == best || n == 0 {
                return n;
            }
            let forced = (k * f64::from(edges[i].prior()) * f64::from(total)).sqrt().floor() as u32;
            let kept = (n.saturating_sub(forced)..=n).find(|&m| puct(i, m) < bar).unwrap_or(n);
            if kept <= 1 { 0 } else { kept }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Position;

    /// A root with four children: (prior, visits, q from the root's view).
    fn hand_made_root(children: &[(f32, u32, f64)]) -> Tree {
        let mut tree = Tree::new(1 << 20);
        let moves = Position::startpos(crate::rules::Variant::Minishogi).legal_moves();
        let edges = children.iter().zip(&moves).map(|(&(p, _, _), &m)| Edge {
            mv: CompactMove::from(m),
            prior_q: Edge::quantize(p),
            child: NO_NODE,
        });
        assert!(tree.add_edges(Tree::ROOT, edges));
        tree.node_mut(Tree::ROOT).state = NodeState::Expanded;
        let mut total = 0;
        for (i, &(_, visits, q)) in children.iter().enumerate() {
            let child = tree.child_or_add(Tree::ROOT, i).unwrap();
            let node = tree.node_mut(child);
            node.visits = visits;
            // The child's values are from its side to move: -q each.
            node.value_sum = -q * f64::from(visits);
            total += visits;
        }
        tree.node_mut(Tree::ROOT).visits = total + 1;
        tree
    }

    #[test]
    fn pruning_takes_back_forced_playouts_and_never_touches_the_best() {
        // By hand (k = 2, 102 child visits, cpuct(103) = 1.2552, sqrt(103)):
        // the best's PUCT is 0.3786. B may give back 7 and stays below it
        // from 6 visits on; C is above it with all its 7 and keeps them; D
        // may give back all 3 and drops out.
        let tree = hand_made_root(&[(0.5, 80, 0.3), (0.3, 12, -0.2), (0.2, 7, 0.1), (0.05, 3, -0.5)]);
        assert_eq!(prune_forced(&tree, &SearchParams::default(), 2.0), vec![80, 6, 7, 0]);
        // Without forced playouts owed (k = 0) nothing is taken back.
        assert_eq!(prune_forced(&tree, &SearchParams::default(), 0.0), vec![80, 12, 7, 3]);
    }

    #[test]
    fn pruning_keeps_the_most_visited_move_whatever_its_value() {
        // The most visited move has the worst q: it still keeps its visits.
        let tree = hand_made_root(&[(0.4, 50, -0.6), (0.4, 30, 0.5), (0.2, 20, 0.4)]);
        let pruned = prune_forced(&tree, &SearchParams::default(), 2.0);
        assert_eq!(pruned[0], 50);
        assert!(pruned.iter().zip([50, 30, 20]).all(|(&p, v)| p <= v), "{pruned:?}");
    }
}
