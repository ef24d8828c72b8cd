//! The Gumbel root in the search: the state of one search's Sequential
//! Halving over the root's edges, read from the shared tree (the formulas
//! are in [`crate::mcts::gumbel`]).

use super::{NO_NODE, Shared, Tree};
use crate::mcts::gumbel::{self, GumbelParams};

/// One search's Gumbel root.
pub(super) enum GumbelRoot {
    /// PUCT at the root: no Gumbel params, or no playout limit.
    Off,
    /// Waiting for the root's edges: the Gumbel draw per legal move (in
    /// the order of the root's edges) and the search's playout limit.
    Pending {
        params: GumbelParams,
        noise: Vec<f64>,
        nodes: u64,
    },
    Active(Halving),
}

/// Sequential Halving under way.
pub(super) struct Halving {
    params: GumbelParams,
    noise: Vec<f64>,
    /// Playouts Sequential Halving spreads over the root's moves.
    budget: u64,
    /// Each edge's visits from earlier searches (a reused tree): only this
    /// search's count towards the schedule.
    before: Vec<u32>,
}

impl Shared<'_> {
    /// Starts Sequential Halving once the root has its edges; `spent`
    /// playouts of the limit are already used (the root's own).
    pub(super) fn start_gumbel(&self, tree: &Tree, spent: u64) {
        let mut state = self.gumbel.lock();
        let GumbelRoot::Pending { params, noise, nodes } = &mut *state else { return };
        let before = tree
            .edges(Tree::ROOT)
            .iter()
            .map(|e| if e.child == NO_NODE { 0 } else { tree.node(e.child).visits })
            .collect();
        let halving =
            Halving { params: *params, noise: std::mem::take(noise), budget: nodes.saturating_sub(spent), before };
        *state = GumbelRoot::Active(halving);
    }
}

impl GumbelRoot {
    /// The root edge the next playout takes, or None for PUCT (off, or
    /// past the schedule).
    pub(super) fn select(&self, tree: &Tree) -> Option<usize> {
        let GumbelRoot::Active(h) = self else { return None };
        let (moves, counted) = h.moves(tree, true);
        let playout: u64 = counted.iter().map(|&c| u64::from(c)).sum();
        if playout >= h.budget {
            return None;
        }
        let m = h.params.considered.min(moves.len());
        let level = gumbel::considered_visit(m, h.budget, playout);
        gumbel::select(&h.params, raw_value(tree), &moves, &h.noise, (&counted, level))
    }
}

impl Halving {
    /// Per root edge: (prior, q from the root's view, visits) over the
    /// whole tree, and the visits this search counts (with the virtual
    /// ones of playouts under way when `in_flight`).
    fn moves(&self, tree: &Tree, in_flight: bool) -> (Vec<(f64, f64, u32)>, Vec<u32>) {
        let edges = tree.edges(Tree::ROOT);
        let mut moves = Vec::with_capacity(edges.len());
        let mut counted = Vec::with_capacity(edges.len());
        for (i, e) in edges.iter().enumerate() {
            let prior = f64::from(e.prior());
            if e.child == NO_NODE {
                moves.push((prior, 0.0, 0));
                counted.push(0);
                continue;
            }
            let c = tree.node(e.child);
            // A proven child counts as visited, with its proven value.
            let visits = if c.proof.is_proven() { c.visits.max(1) } else { c.visits };
            moves.push((prior, -c.q(), visits));
            let now = c.visits + if in_flight { c.in_flight } else { 0 };
            counted.push(now.saturating_sub(self.before.get(i).copied().unwrap_or(0)));
        }
        (moves, counted)
    }

    /// The search's answer: the move Sequential Halving ends on (the best
    /// score among the moves with the most visits this search) and the
    /// improved policy per root edge.
    pub(super) fn outcome(&self, tree: &Tree) -> (Option<usize>, Vec<f32>) {
        let (moves, counted) = self.moves(tree, false);
        let raw = raw_value(tree);
        let most = counted.iter().copied().max().unwrap_or(0);
        let best = gumbel::select(&self.params, raw, &moves, &self.noise, (&counted, most));
        let improved = gumbel::improved_policy(&self.params, raw, &moves).iter().map(|&p| p as f32).collect();
        (best, improved)
    }
}

/// The net's value of the root, from its side to move: its value sum less
/// what its children's playouts added (each added the negation of the
/// child's value).
fn raw_value(tree: &Tree) -> f64 {
    let root = tree.node(Tree::ROOT);
    let through_children: f64 =
        tree.edges(Tree::ROOT).iter().filter(|e| e.child != NO_NODE).map(|e| tree.node(e.child).value_sum).sum();
    (root.value_sum + through_children).clamp(-1.0, 1.0)
}
