//! What a search reports: scores, principal variations and the info lines
//! built from the tree.

use super::*;

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
    pub(super) fn from_q(q: f64) -> Score {
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

impl Shared<'_> {
    pub(super) fn pv_len(&self, tree: &Tree) -> usize {
        principal_variation(tree, Tree::ROOT).len()
    }

    pub(super) fn info(&self, tree: &Tree, started: Instant) -> SearchInfo {
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
    pub(super) fn complete_mate_line(&self, tree: &Tree, l: &mut PvLine) {
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

    pub(super) fn params_multipv(&self) -> usize {
        self.params.multipv.max(1)
    }
}

/// How good a root child is for the side choosing it: proven wins first
/// (shorter first), then by visits and value, proven losses last (longer
/// first).
pub(super) fn rank(tree: &Tree, e: &Edge) -> (u8, i64, i64) {
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

pub(super) fn line(tree: &Tree, e: &Edge) -> PvLine {
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
pub(super) fn principal_variation(tree: &Tree, id: u32) -> Vec<Move> {
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
