//! The workers: walking the tree to leaves, preparing them (rules, mate
//! searches, the evaluation cache), and with the network's answers
//! expanding them and backing the values and proofs up; the root mate
//! search thread.

use super::*;

impl Shared<'_> {
    /// A worker: walk, evaluate, back up, until the search stops.
    pub(super) fn worker(&self, jobs: Sender<Job>) {
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
    pub(super) fn root_mate(&self) {
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
    pub(super) fn walk(&self) -> Walk {
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
            let gumbel = if node == Tree::ROOT && self.params.gumbel.is_some() {
                self.gumbel.lock().select(&tree)
            } else {
                None
            };
            let i = gumbel.unwrap_or_else(|| self.select_edge(&tree, node));
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
    pub(super) fn select_edge(&self, tree: &Tree, id: u32) -> usize {
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
        // Forced playouts at the root: children below their share first.
        let forced = self.params.forced_playouts.filter(|_| id == Tree::ROOT).map(|k| k * f64::from(parent_n));
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
            let mut score = q + cpuct * e.prior() as f64 * sqrt_n / (1 + n) as f64;
            if forced.is_some_and(|kn| f64::from(n) < (kn * e.prior() as f64).sqrt()) {
                score += FORCED;
            }
            if score > best.0 {
                best = (score, i);
            }
        }
        best.1
    }

    /// Step 2: the leaf's game, its end or its moves, the mate check and the
    /// cache. Returns a request when the evaluator must be asked.
    pub(super) fn prepare_leaf(&self, path: &[u32], moves: &[Move]) -> Option<(EvalRequest, u64)> {
        let mut game = self.root.branch();
        for &mv in moves {
            game.play(mv);
        }
        let depth = moves.len() as u32;
        self.depth_sum.fetch_add(depth as u64, Ordering::Relaxed);
        self.max_depth.fetch_max(depth, Ordering::Relaxed);
        let side = game.position().side_to_move();
        let ended = game.outcome_before_movegen();
        let legal = if ended.is_none() { game.legal_moves() } else { Vec::new() };
        if let Some(outcome) = ended.or_else(|| legal.is_empty().then(|| game.no_move_outcome())) {
            let proof = match outcome.winner {
                Some(w) if w == side => Proof::Win(0),
                Some(_) => Proof::Loss(0),
                None => Proof::Draw(0),
            };
            self.finish_ended(path, proof);
            return None;
        }
        // A quiet move that completes a winning repetition: found here, as
        // the mate search finds checkmates, or the tree only sees it if it
        // happens to visit that move.
        if let Some(win) = game.repetition_win(&legal) {
            self.finish_mating(path, &legal, win, 1);
            return None;
        }
        if self.params.mate_plies > 0
            && let Some((mate, plies)) = find_mate(&mut game, &legal, self.params.mate_plies, self.params.mate_budget)
        {
            self.finish_mating(path, &legal, mate, plies);
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
            let node = tree.node_mut(leaf_of(path));
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
            if !self.expand(&mut tree, leaf_of(path), &legal, &priors) {
                tree.node_mut(leaf_of(path)).state = NodeState::Leaf;
            }
            self.backup(&mut tree, path, value as f64, false);
            return None;
        }
        let request = EvalRequest { position: game.position().clone(), moves: legal, repetitions: game.repetitions() };
        Some((request, key))
    }

    /// A leaf whose game has ended: terminal, proven, its value backed up.
    fn finish_ended(&self, path: &[u32], proof: Proof) {
        let mut tree = self.tree.lock();
        let node = tree.node_mut(leaf_of(path));
        node.state = NodeState::Terminal;
        node.proof = proof;
        self.backup(&mut tree, path, proof.value().expect("proven"), true);
    }

    /// A leaf won by `mate` in `plies`: expanded (the priors are never
    /// used), the mating move's child proven lost for its side to move.
    fn finish_mating(&self, path: &[u32], legal: &[Move], mate: Move, plies: u32) {
        let leaf = leaf_of(path);
        let uniform = vec![1.0 / legal.len() as f32; legal.len()];
        let mut tree = self.tree.lock();
        if self.expand(&mut tree, leaf, legal, &uniform) {
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
    }

    /// Step 4: expand the evaluated leaves and back their values up.
    pub(super) fn finish_leaves(
        &self,
        pending: Vec<PendingLeaf>,
        requests: Vec<EvalRequest>,
        mut answers: Vec<Evaluation>,
    ) {
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
    pub(super) fn expand(&self, tree: &mut Tree, id: u32, moves: &[Move], priors: &[f32]) -> bool {
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
            // The playout that expanded the root was one of the budget.
            self.start_gumbel(tree, 1);
        }
        true
    }

    pub(super) fn apply_root_noise(&self, tree: &mut Tree) {
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
    pub(super) fn backup(&self, tree: &mut Tree, path: &[u32], value: f64, proved: bool) {
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
}

/// Raises the priors to the power 1 / `temperature` and renormalises them,
/// in place; leaves them as they are at temperature 1, at a temperature
/// that is not a positive number, or if the sum fails (all zero).
pub(super) fn temper(priors: &mut [f32], temperature: f64) {
    if temperature == 1.0 || !(temperature > 0.0 && temperature.is_finite()) {
        return;
    }
    let powered: Vec<f64> = priors.iter().map(|&p| f64::from(p.max(0.0)).powf(1.0 / temperature)).collect();
    let sum: f64 = powered.iter().sum();
    if sum > 0.0 && sum.is_finite() {
        priors.iter_mut().zip(&powered).for_each(|(p, &w)| *p = (w / sum) as f32);
    }
}

/// Recomputes a node's proof from its children; returns whether it changed
/// (appeared, or became a shorter win or a longer loss).
pub(super) fn update_proof(tree: &mut Tree, id: u32) -> bool {
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

/// The leaf at the end of a path from the root.
fn leaf_of(path: &[u32]) -> u32 {
    *path.last().expect("path has the root")
}

/// Added to the PUCT score of a root child owed forced playouts: above any
/// score, so the owed children go first, in their PUCT order.
const FORCED: f64 = 1e6;
