//! The search: PUCT over a shared tree, worker threads that gather leaves
//! into batches, and one evaluation thread that feeds the evaluator.
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
//!    evaluation thread, which joins the batches waiting for it into one
//!    evaluator call (so the device works while the workers walk).
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

/// A score for the side to move at the root.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawn-like: 0 even, +-100 about a 0.56 win share... mapped from
    /// the value by `90 * tan(1.5637541897 * q)`.
    Cp(i32),
    /// Mate (or another forced game end) in this many plies; negative when
    /// the side to move is the one that loses.
    Mate(i32),
}

impl Score {
    fn from_q(q: f64) -> Score {
        let q = q.clamp(-0.999, 0.999);
        Score::Cp((90.0 * (1.5637541897 * q).tan()).round() as i32)
    }
}

/// One root move with its line, for MultiPV output.
#[derive(Clone, Debug)]
pub struct PvLine {
    pub mv: Move,
    pub visits: u32,
    /// Mean value of the move for the side to move at the root, in [-1, 1].
    pub q: f64,
    pub prior: f32,
    pub score: Score,
    /// The principal variation, starting with `mv`.
    pub pv: Vec<Move>,
}

/// Progress of a search, reported about once a second and at the end.
#[derive(Clone, Debug)]
pub struct SearchInfo {
    /// Playouts completed by this search.
    pub playouts: u64,
    /// Visits of the root, including those kept from earlier searches.
    pub root_visits: u32,
    pub elapsed: Duration,
    /// Average and greatest depth of this search's playouts.
    pub depth: u32,
    pub seldepth: u32,
    /// Tree memory in use, permille of the budget.
    pub hashfull: u32,
    /// Best lines first; as many as asked for with `multipv`.
    pub lines: Vec<PvLine>,
}

impl SearchInfo {
    /// Playouts per second.
    pub fn nps(&self) -> u64 {
        (self.playouts as f64 / self.elapsed.as_secs_f64().max(1e-6)) as u64
    }
}

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
                let released = || {
                    stop.load(Ordering::SeqCst)
                        || (limits.ponder && !limits.infinite && ponderhit.load(Ordering::SeqCst))
                };
                while !released() {
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
            return self.finished_game_result(outcome, started);
        }
        let root_noise = self.params.root_noise.map(|(alpha, _)| {
            let n = root.legal_moves().len();
            self.rng.dirichlet(alpha, n)
        });
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
            mate_lines: Mutex::new(Vec::new()),
            wake: (Mutex::new(()), parking_lot::Condvar::new()),
            woken: AtomicBool::new(false),
        };
        {
            // A root kept from an earlier search gets its noise now.
            let mut tree = shared.tree.lock();
            if tree.node(Tree::ROOT).state == NodeState::Expanded {
                shared.apply_root_noise(&mut tree);
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
        self.tree = shared.tree.into_inner();
        self.result(info)
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
        SearchResult { best: None, ponder: None, info, visits: Vec::new(), root_q, proof, game_over: Some(outcome) }
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
        SearchResult { best, ponder, info, visits, root_q: node.q(), proof: node.proof, game_over: None }
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

    /// A worker: walk, evaluate, back up, until the search stops.
    fn worker(&self, jobs: Sender<Job>) {
        let (reply_tx, reply_rx) = crossbeam::channel::bounded(1);
        let per_round = self.params.leaves_per_worker();
        while !self.stop.load(Ordering::SeqCst) {
            let mut requests = Vec::new();
            let mut pending = Vec::new();
            let mut collided: Vec<Vec<u32>> = Vec::new();
            let mut idle = false;
            // Gather a full batch; collisions are allowed up to the batch
            // size, so a small tree cannot keep a worker walking forever.
            while requests.len() < per_round && collided.len() < per_round && !self.stop.load(Ordering::SeqCst) {
                if self.started.fetch_add(1, Ordering::SeqCst) >= self.node_limit {
                    self.started.fetch_sub(1, Ordering::SeqCst);
                    idle = requests.is_empty();
                    break;
                }
                match self.walk() {
                    Walk::Leaf(path, moves) => {
                        if let Some((request, key)) = self.prepare_leaf(&path, &moves) {
                            requests.push(request);
                            pending.push(PendingLeaf { path, cache_key: key });
                        }
                    }
                    Walk::Known => {}
                    Walk::Collision(path) => {
                        self.started.fetch_sub(1, Ordering::SeqCst);
                        collided.push(path);
                    }
                    Walk::Full | Walk::RootProven => {
                        self.started.fetch_sub(1, Ordering::SeqCst);
                        idle = requests.is_empty();
                        break;
                    }
                }
            }
            if !collided.is_empty() {
                let mut tree = self.tree.lock();
                for path in &collided {
                    for &id in path {
                        let n = tree.node_mut(id);
                        n.in_flight = n.in_flight.saturating_sub(1);
                    }
                }
                idle |= requests.is_empty();
            }
            if !requests.is_empty() {
                if jobs.send((requests, reply_tx.clone())).is_err() {
                    return;
                }
                let Ok((requests, answers)) = reply_rx.recv() else {
                    return;
                };
                self.finish_leaves(pending, requests, answers);
            } else if idle {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }

    /// The root mate search: a longer [`find_mate`](super::find_mate) than
    /// the leaves get, on a thread of its own; a mate found proves the root.
    fn root_mate(&self) {
        let mut game = self.root.branch();
        let legal = game.legal_moves();
        let (plies, budget) = (self.params.root_mate_plies, self.params.root_mate_budget);
        let Some((mv, plies)) = find_mate_until(&mut game, &legal, plies, budget, &self.stop) else {
            return;
        };
        // The proof goes on the root's edge, so wait for the first playout
        // to expand the root.
        while !self.stop.load(Ordering::SeqCst) {
            let mut tree = self.tree.lock();
            if tree.node(Tree::ROOT).state != NodeState::Expanded {
                drop(tree);
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            if matches!(tree.node(Tree::ROOT).proof, Proof::Win(n) if n as u32 <= plies) {
                return;
            }
            let cm = CompactMove::from(mv);
            let Some(i) = tree.edges(Tree::ROOT).iter().position(|e| e.mv == cm) else { return };
            let Some(child) = tree.child_or_add(Tree::ROOT, i) else { return };
            tree.node_mut(child).proof = Proof::Loss(plies as u16 - 1);
            tree.node_mut(Tree::ROOT).proof = Proof::Win(plies as u16);
            return;
        }
    }

    /// Step 1: select a path under the lock.
    fn walk(&self) -> Walk {
        let mut tree = self.tree.lock();
        if tree.node(Tree::ROOT).proof.is_proven() {
            return Walk::RootProven;
        }
        let mut path = vec![Tree::ROOT];
        let mut moves = Vec::new();
        let mut node = Tree::ROOT;
        loop {
            let n = tree.node(node);
            if let Some(v) = n.proof.value() {
                // The backup takes one in-flight count off every node of
                // the path; this last one has not been given one yet.
                tree.node_mut(node).in_flight += 1;
                self.backup(&mut tree, &path, v, false);
                return Walk::Known;
            }
            match n.state {
                NodeState::Pending => {
                    path.pop();
                    return Walk::Collision(path);
                }
                NodeState::New | NodeState::Leaf => {
                    // A `Leaf` (not expanded for lack of memory) is
                    // evaluated again; if it still cannot be expanded,
                    // `finish_leaves` marks the tree full.
                    tree.node_mut(node).state = NodeState::Pending;
                    tree.node_mut(node).in_flight += 1;
                    return Walk::Leaf(path, moves);
                }
                NodeState::Terminal => unreachable!("terminal nodes are proven"),
                NodeState::Expanded => {}
            }
            tree.node_mut(node).in_flight += 1;
            let i = self.select_edge(&tree, node);
            let Some(child) = tree.child_or_add(node, i) else {
                for &id in &path {
                    tree.node_mut(id).in_flight -= 1;
                }
                self.full.store(true, Ordering::SeqCst);
                return Walk::Full;
            };
            moves.push(Move::from(tree.edges(node)[i].mv));
            path.push(child);
            node = child;
        }
    }

    /// PUCT: the child maximising Q + c * P * sqrt(N) / (1 + n), with
    /// virtual losses counted as losses and first-play urgency for
    /// unvisited children. A child proven lost for the opponent is taken at
    /// once; children proven won for the opponent only as a last resort.
    fn select_edge(&self, tree: &Tree, id: u32) -> usize {
        let node = tree.node(id);
        let parent_n = node.visits + node.in_flight;
        let sqrt_n = (parent_n.max(1) as f64).sqrt();
        let cpuct = self.params.cpuct(parent_n);
        let mut visited_prior = 0.0;
        for e in tree.edges(id) {
            if e.child != NO_NODE && tree.node(e.child).visits + tree.node(e.child).in_flight > 0 {
                visited_prior += e.prior() as f64;
            }
        }
        let reduction = if id == Tree::ROOT { self.params.fpu_reduction_root } else { self.params.fpu_reduction };
        let fpu = node.q() - reduction * visited_prior.sqrt();
        let mut best = (f64::NEG_INFINITY, 0);
        for (i, e) in tree.edges(id).iter().enumerate() {
            let (q, n) = if e.child == NO_NODE {
                (fpu, 0)
            } else {
                let c = tree.node(e.child);
                match c.proof {
                    Proof::Loss(_) => return i,
                    Proof::Win(_) => (-10.0, c.visits),
                    Proof::Draw(_) => (0.0, c.visits + c.in_flight),
                    Proof::Unknown => {
                        let n = c.visits + c.in_flight;
                        if n == 0 { (fpu, 0) } else { (-(c.value_sum + c.in_flight as f64) / n as f64, n) }
                    }
                }
            };
            let score = q + cpuct * e.prior() as f64 * sqrt_n / (1 + n) as f64;
            if score > best.0 {
                best = (score, i);
            }
        }
        best.1
    }

    /// Step 2: the leaf's game, its end or its moves, the mate check and the
    /// cache. Returns a request when the evaluator must be asked.
    fn prepare_leaf(&self, path: &[u32], moves: &[Move]) -> Option<(EvalRequest, u64)> {
        let mut game = self.root.branch();
        for &mv in moves {
            game.play(mv);
        }
        let depth = moves.len() as u32;
        self.depth_sum.fetch_add(depth as u64, Ordering::Relaxed);
        self.max_depth.fetch_max(depth, Ordering::Relaxed);
        let leaf = *path.last().expect("path has the root");
        let side = game.position().side_to_move();
        let ended = game.outcome_before_movegen();
        let legal = if ended.is_none() { game.legal_moves() } else { Vec::new() };
        let outcome = ended.or_else(|| legal.is_empty().then(|| game.no_move_outcome()));
        if let Some(outcome) = outcome {
            let proof = match outcome.winner {
                Some(w) if w == side => Proof::Win(0),
                Some(_) => Proof::Loss(0),
                None => Proof::Draw(0),
            };
            let mut tree = self.tree.lock();
            let node = tree.node_mut(leaf);
            node.state = NodeState::Terminal;
            node.proof = proof;
            self.backup(&mut tree, path, proof.value().expect("proven"), true);
            return None;
        }
        if self.params.mate_plies > 0
            && let Some((mate, plies)) = find_mate(&mut game, &legal, self.params.mate_plies, self.params.mate_budget)
        {
            // The leaf is won: expand it (the priors are never used) and
            // prove the mating move's child lost for its side to move.
            let uniform = vec![1.0 / legal.len() as f32; legal.len()];
            let mut tree = self.tree.lock();
            if self.expand(&mut tree, leaf, &legal, &uniform) {
                let i = legal.iter().position(|&m| m == mate).expect("mate is legal");
                if let Some(child) = tree.child_or_add(leaf, i) {
                    let c = tree.node_mut(child);
                    if plies == 1 {
                        c.state = NodeState::Terminal;
                    }
                    c.proof = Proof::Loss(plies as u16 - 1);
                }
                tree.node_mut(leaf).proof = Proof::Win(plies as u16);
            } else {
                tree.node_mut(leaf).state = NodeState::Leaf;
            }
            self.backup(&mut tree, path, 1.0, true);
            return None;
        }
        // A leaf in check (not the root, which must keep its moves) whose
        // every evasion is answered by a mate the leaf search would find:
        // lost, one check deeper than the search from its parent saw.
        if self.params.mate_plies > 0
            && path.len() > 1
            && game.position().in_check()
            && let Some(plies) = find_mated(&mut game, &legal, self.params.mate_plies + 1, self.params.mate_budget)
        {
            let mut tree = self.tree.lock();
            let node = tree.node_mut(leaf);
            node.state = NodeState::Leaf;
            node.proof = Proof::Loss(plies as u16);
            self.backup(&mut tree, path, -1.0, true);
            return None;
        }
        // The net sees the repetition count, and history rules shape the
        // move list: both are part of the key.
        let reps = (game.repetitions() as u64).wrapping_mul(0xA24B_AED4_963E_E407);
        let key = cache::key(game.position().hash() ^ reps, &legal);
        let hit = self.cache.lock().get(key, legal.len()).map(|(v, p)| (v, p.to_vec()));
        if let Some((value, priors)) = hit {
            let priors: Vec<f32> = priors.iter().map(|&p| p as f32 / 65535.0).collect();
            let mut tree = self.tree.lock();
            if !self.expand(&mut tree, leaf, &legal, &priors) {
                tree.node_mut(leaf).state = NodeState::Leaf;
            }
            self.backup(&mut tree, path, value as f64, false);
            return None;
        }
        let request = EvalRequest { position: game.position().clone(), moves: legal, repetitions: game.repetitions() };
        Some((request, key))
    }

    /// Step 4: expand the evaluated leaves and back their values up.
    fn finish_leaves(&self, pending: Vec<PendingLeaf>, requests: Vec<EvalRequest>, mut answers: Vec<Evaluation>) {
        // Tempered before the cache, so a position gets the same priors
        // from the net and from the cache.
        for ans in &mut answers {
            temper(&mut ans.policy, self.params.policy_temperature);
        }
        {
            let mut cache = self.cache.lock();
            for (leaf, ans) in pending.iter().zip(&answers) {
                let q: Vec<u16> = ans.policy.iter().map(|&p| Edge::quantize(p)).collect();
                cache.insert(leaf.cache_key, ans.value, &q);
            }
        }
        let mut tree = self.tree.lock();
        for ((leaf, req), ans) in pending.iter().zip(&requests).zip(&answers) {
            let id = *leaf.path.last().expect("path has the root");
            if !self.expand(&mut tree, id, &req.moves, &ans.policy) {
                tree.node_mut(id).state = NodeState::Leaf;
                self.full.store(true, Ordering::SeqCst);
            }
            self.backup(&mut tree, &leaf.path, ans.value.clamp(-1.0, 1.0) as f64, false);
        }
    }

    /// Gives node `id` its edges (with root noise at the root); `false`
    /// when the tree is full.
    fn expand(&self, tree: &mut Tree, id: u32, moves: &[Move], priors: &[f32]) -> bool {
        let edges = moves.iter().zip(priors).map(|(&m, &p)| Edge {
            mv: CompactMove::from(m),
            prior_q: Edge::quantize(p),
            child: NO_NODE,
        });
        if !tree.add_edges(id, edges) {
            return false;
        }
        tree.node_mut(id).state = NodeState::Expanded;
        if id == Tree::ROOT {
            self.apply_root_noise(tree);
        }
        true
    }

    fn apply_root_noise(&self, tree: &mut Tree) {
        let Some(noise) = self.root_noise.lock().take() else {
            return;
        };
        let Some((_, weight)) = self.params.root_noise else {
            return;
        };
        let n = tree.node(Tree::ROOT).num_edges as usize;
        for (i, eta) in noise.iter().enumerate().take(n) {
            let e = tree.edge_mut(Tree::ROOT, i);
            let p = (1.0 - weight) * e.prior() as f64 + weight * eta;
            e.prior_q = Edge::quantize(p as f32);
        }
    }

    /// Adds `value` (from the leaf's side to move) along `path`, negating
    /// at each ply, removes the virtual losses, and propagates proofs when
    /// `proved` says the leaf's proof changed.
    fn backup(&self, tree: &mut Tree, path: &[u32], value: f64, proved: bool) {
        let mut v = value;
        for &id in path.iter().rev() {
            let node = tree.node_mut(id);
            node.visits += 1;
            node.in_flight = node.in_flight.saturating_sub(1);
            node.value_sum += v;
            v = -v;
        }
        let completed = self.completed.fetch_add(1, Ordering::SeqCst) + 1;
        if completed >= self.node_limit || proved {
            self.wake_controller();
        }
        if proved {
            for &id in path.iter().rev().skip(1) {
                if !update_proof(tree, id) {
                    break;
                }
            }
        }
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

    fn pv_len(&self, tree: &Tree) -> usize {
        principal_variation(tree, Tree::ROOT).len()
    }

    fn info(&self, tree: &Tree, started: Instant) -> SearchInfo {
        let playouts = self.completed.load(Ordering::SeqCst);
        let depth = self.depth_sum.load(Ordering::Relaxed).checked_div(playouts).unwrap_or(0);
        let mut children: Vec<(usize, &Edge)> = tree.edges(Tree::ROOT).iter().enumerate().collect();
        children.sort_by_key(|c| std::cmp::Reverse(rank(tree, c.1)));
        let mut lines: Vec<PvLine> = children.iter().take(self.params_multipv()).map(|&(_, e)| line(tree, e)).collect();
        for l in &mut lines {
            self.complete_mate_line(tree, l);
        }
        SearchInfo {
            playouts,
            root_visits: tree.node(Tree::ROOT).visits,
            elapsed: started.elapsed(),
            depth: depth as u32,
            seldepth: self.max_depth.load(Ordering::Relaxed),
            hashfull: tree.permille_full(),
            lines,
        }
    }

    /// A mate line whose end the tree does not hold (a leaf proven by a
    /// mate search) is completed by the mate search, so the PV shows the
    /// whole mate. The tree's line is kept only as far as its nodes are
    /// proven: below a node the root mate search proved, the most visited
    /// moves need not be the mating ones.
    fn complete_mate_line(&self, tree: &Tree, l: &mut PvLine) {
        let Score::Mate(n) = l.score else { return };
        let plies = n.unsigned_abs() as usize;
        let mut node = Tree::ROOT;
        let mut proven = 0;
        for &mv in &l.pv {
            let cm = CompactMove::from(mv);
            match tree.edges(node).iter().find(|e| e.mv == cm) {
                Some(e) if e.child != NO_NODE && tree.node(e.child).proof.is_proven() => node = e.child,
                _ => break,
            }
            proven += 1;
        }
        l.pv.truncate(proven);
        if l.pv.len() >= plies {
            return;
        }
        let mut known = self.mate_lines.lock();
        if let Some((_, rest)) = known.iter().find(|(pv, _)| *pv == l.pv) {
            l.pv.extend_from_slice(rest);
            return;
        }
        let mut game = self.root.branch();
        for &mv in &l.pv {
            game.play(mv);
        }
        let us = self.root.position().side_to_move();
        let winner = if n > 0 { us } else { !us };
        let budget = self.params.mate_budget.max(200_000);
        let rest = mate_line(&mut game, winner, (plies - l.pv.len()) as u32, budget);
        known.push((l.pv.clone(), rest.clone()));
        l.pv.extend(rest);
    }

    fn params_multipv(&self) -> usize {
        self.params.multipv.max(1)
    }
}

/// Raises the priors to the power 1 / `temperature` and renormalises them,
/// in place; leaves them as they are at temperature 1, at a temperature
/// that is not a positive number, or if the sum fails (all zero).
fn temper(priors: &mut [f32], temperature: f64) {
    if temperature == 1.0 || !(temperature > 0.0 && temperature.is_finite()) {
        return;
    }
    let powered: Vec<f64> = priors.iter().map(|&p| f64::from(p.max(0.0)).powf(1.0 / temperature)).collect();
    let sum: f64 = powered.iter().sum();
    if sum > 0.0 && sum.is_finite() {
        priors.iter_mut().zip(&powered).for_each(|(p, &w)| *p = (w / sum) as f32);
    }
}

/// How good a root child is for the side choosing it: proven wins first
/// (shorter first), then by visits and value, proven losses last (longer
/// first).
fn rank(tree: &Tree, e: &Edge) -> (u8, i64, i64) {
    if e.child == NO_NODE {
        return (1, 0, (e.prior() as f64 * 1e6) as i64 - 2_000_000);
    }
    let c = tree.node(e.child);
    match c.proof {
        Proof::Loss(n) => (2, -(n as i64), 0),
        Proof::Win(n) => (0, n as i64, 0),
        _ => (1, c.visits as i64, (-c.q() * 1e6) as i64),
    }
}

fn line(tree: &Tree, e: &Edge) -> PvLine {
    let mv = Move::from(e.mv);
    let (visits, q, score) = if e.child == NO_NODE {
        (0, 0.0, Score::Cp(0))
    } else {
        let c = tree.node(e.child);
        let score = match c.proof {
            Proof::Loss(n) => Score::Mate(n as i32 + 1),
            Proof::Win(n) => Score::Mate(-(n as i32 + 1)),
            _ => Score::from_q(-c.q()),
        };
        (c.visits, -c.q(), score)
    };
    let mut pv = vec![mv];
    if e.child != NO_NODE {
        pv.extend(principal_variation(tree, e.child));
    }
    PvLine { mv, visits, q, prior: e.prior(), score, pv }
}

/// The best line from node `id` (not including a move into `id`).
fn principal_variation(tree: &Tree, id: u32) -> Vec<Move> {
    let mut pv = Vec::new();
    let mut node = id;
    while tree.node(node).state == NodeState::Expanded && pv.len() < 256 {
        let Some(best) = tree.edges(node).iter().max_by(|a, b| rank(tree, a).cmp(&rank(tree, b))) else {
            break;
        };
        if best.child == NO_NODE || (tree.node(best.child).visits == 0 && !tree.node(best.child).proof.is_proven()) {
            break;
        }
        pv.push(Move::from(best.mv));
        node = best.child;
    }
    pv
}

/// Recomputes a node's proof from its children; returns whether it changed
/// (appeared, or became a shorter win or a longer loss).
fn update_proof(tree: &mut Tree, id: u32) -> bool {
    let node = tree.node(id);
    if node.state != NodeState::Expanded {
        return false;
    }
    let old = node.proof;
    let mut best_win: Option<u16> = None;
    let mut all_proven = true;
    let mut longest_loss: u16 = 0;
    let mut best_draw: Option<u16> = None;
    for e in tree.edges(id) {
        let proof = if e.child == NO_NODE { Proof::Unknown } else { tree.node(e.child).proof.for_parent() };
        match proof {
            Proof::Win(n) => best_win = Some(best_win.map_or(n, |b| b.min(n))),
            Proof::Loss(n) => longest_loss = longest_loss.max(n),
            Proof::Draw(n) => best_draw = Some(best_draw.map_or(n, |b| b.min(n))),
            Proof::Unknown => all_proven = false,
        }
    }
    let proof = match (best_win, all_proven, best_draw) {
        (Some(n), _, _) => Proof::Win(n),
        (None, true, Some(n)) => Proof::Draw(n),
        (None, true, None) => Proof::Loss(longest_loss),
        _ => return false,
    };
    // A proof only ever improves: a shorter win found by a walk that was
    // already under way replaces a longer one.
    let better = match (old, proof) {
        (Proof::Unknown, _) => true,
        (Proof::Win(a), Proof::Win(b)) => b < a,
        (Proof::Loss(a), Proof::Loss(b)) => b > a,
        _ => false,
    };
    if better {
        tree.node_mut(id).proof = proof;
    }
    better
}
