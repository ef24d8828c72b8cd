//! The search tree: nodes and edges in two arenas, addressed by `u32`.
//!
//! ```text
//! Node (32 bytes)                          Edge (8 bytes)
//! +-----------------------------------+    +-------------+--------+-------+
//! | visits u32 | in_flight u32        |    | move u16    | prior  | child |
//! | value_sum f64 (side to move view) |    | CompactMove | u16    | u32   |
//! | first_edge u32 | num_edges u16    |    +-------------+--------+-------+
//! | state u8 | proof (kind u8, u16)   |    edges of one node are contiguous:
//! +-----------------------------------+    first_edge .. first_edge+num_edges
//! ```
//!
//! A node's value is from the point of view of its side to move. A proof
//! (`Win(n)`/`Loss(n)`: the side to move wins/loses in `n` plies with best
//! play) is exact and overrides the averaged value.

use crate::rules::CompactMove;

/// Marks "no node" in [`Edge::child`].
pub const NO_NODE: u32 = u32::MAX;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NodeState {
    /// Not evaluated yet.
    New,
    /// Being evaluated by a worker; other workers must not pick it.
    Pending,
    /// Evaluated; edges hold its moves with priors.
    Expanded,
    /// The game is over here; the proof holds the result.
    Terminal,
    /// Evaluated but not expanded because the memory budget is full: each
    /// visit re-evaluates it (the cache makes that cheap). Also a leaf a
    /// mate search proved without expanding it: walks stop at its proof.
    Leaf,
}

/// An exact result from the side to move's point of view.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Proof {
    Unknown,
    /// The side to move wins; mate (or campmate, repetition win) in `n` plies.
    Win(u16),
    /// The side to move loses in `n` plies.
    Loss(u16),
    /// A draw (only Pandemonium's mutual perpetual check), in `n` plies.
    Draw(u16),
}

impl Proof {
    /// The exact value from the side to move's view, if proven.
    pub fn value(self) -> Option<f64> {
        match self {
            Proof::Unknown => None,
            Proof::Win(_) => Some(1.0),
            Proof::Loss(_) => Some(-1.0),
            Proof::Draw(_) => Some(0.0),
        }
    }

    pub fn is_proven(self) -> bool {
        self != Proof::Unknown
    }

    /// This proof seen from the parent (the other side to move), one ply
    /// further away.
    pub fn for_parent(self) -> Proof {
        match self {
            Proof::Unknown => Proof::Unknown,
            Proof::Win(n) => Proof::Loss(n.saturating_add(1)),
            Proof::Loss(n) => Proof::Win(n.saturating_add(1)),
            Proof::Draw(n) => Proof::Draw(n.saturating_add(1)),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Node {
    /// Completed visits.
    pub visits: u32,
    /// Visits in progress (virtual loss).
    pub in_flight: u32,
    /// Sum of backed-up values, side to move's view.
    pub value_sum: f64,
    pub first_edge: u32,
    /// Number of legal moves; up to 65535 (9x9 drop positions have
    /// several hundred).
    pub num_edges: u16,
    pub state: NodeState,
    pub proof: Proof,
}

const _: () = assert!(std::mem::size_of::<Node>() <= 32);
const _: () = assert!(std::mem::size_of::<Edge>() == 8);

impl Node {
    fn new() -> Node {
        Node {
            visits: 0,
            in_flight: 0,
            value_sum: 0.0,
            first_edge: 0,
            num_edges: 0,
            state: NodeState::New,
            proof: Proof::Unknown,
        }
    }

    /// Mean value from the side to move's view (0 when unvisited), or the
    /// exact one when proven.
    pub fn q(&self) -> f64 {
        match self.proof.value() {
            Some(v) => v,
            None if self.visits == 0 => 0.0,
            None => self.value_sum / self.visits as f64,
        }
    }
}

#[derive(Copy, Clone, Debug)]
pub struct Edge {
    pub mv: CompactMove,
    /// Prior probability scaled to 0..=65535.
    pub prior_q: u16,
    pub child: u32,
}

impl Edge {
    pub fn prior(&self) -> f32 {
        self.prior_q as f32 / 65535.0
    }

    pub fn quantize(p: f32) -> u16 {
        (p.clamp(0.0, 1.0) * 65535.0).round() as u16
    }
}

/// The arenas, with a memory budget they never grow past.
pub struct Tree {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    budget_bytes: usize,
}

impl Tree {
    pub const ROOT: u32 = 0;

    /// A tree holding a new root, that will use at most `budget_bytes`
    /// for its arenas (at least room for the root's moves).
    pub fn new(budget_bytes: usize) -> Tree {
        let mut tree = Tree { nodes: Vec::new(), edges: Vec::new(), budget_bytes: budget_bytes.max(64 * 1024) };
        tree.nodes.push(Node::new());
        tree
    }

    pub fn node(&self, id: u32) -> &Node {
        &self.nodes[id as usize]
    }

    pub fn node_mut(&mut self, id: u32) -> &mut Node {
        &mut self.nodes[id as usize]
    }

    pub fn edges(&self, id: u32) -> &[Edge] {
        let n = &self.nodes[id as usize];
        &self.edges[n.first_edge as usize..n.first_edge as usize + n.num_edges as usize]
    }

    pub fn edge_mut(&mut self, id: u32, i: usize) -> &mut Edge {
        let first = self.nodes[id as usize].first_edge as usize;
        &mut self.edges[first + i]
    }

    /// Bytes the arenas have reserved.
    pub fn bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>() + self.edges.capacity() * std::mem::size_of::<Edge>()
    }

    pub fn budget_bytes(&self) -> usize {
        self.budget_bytes
    }

    /// Share of the budget in use, in permille (USI `hashfull`).
    pub fn permille_full(&self) -> u32 {
        let used = self.nodes.len() * std::mem::size_of::<Node>() + self.edges.len() * std::mem::size_of::<Edge>();
        (used as u64 * 1000 / self.budget_bytes as u64).min(1000) as u32
    }

    /// Grows `v` so it can take `extra` more items, if the whole tree then
    /// stays within budget.
    fn reserve<T>(v: &mut Vec<T>, extra: usize, other_bytes: usize, budget: usize) -> bool {
        let size = std::mem::size_of::<T>();
        if v.len() + extra <= v.capacity() {
            return true;
        }
        let room = budget.saturating_sub(other_bytes) / size;
        if v.len() + extra > room {
            return false;
        }
        let wanted = (v.capacity() * 2).max(v.len() + extra).max(1024).min(room);
        v.reserve_exact(wanted - v.len());
        true
    }

    /// Adds a new node; `None` when the budget is full.
    pub fn add_node(&mut self) -> Option<u32> {
        let edge_bytes = self.edges.capacity() * std::mem::size_of::<Edge>();
        if !Tree::reserve(&mut self.nodes, 1, edge_bytes, self.budget_bytes) {
            return None;
        }
        self.nodes.push(Node::new());
        Some(self.nodes.len() as u32 - 1)
    }

    /// The child node of edge `i` of node `id`, added (and linked) if the
    /// edge has none yet; `None` when the budget is full.
    pub fn child_or_add(&mut self, id: u32, i: usize) -> Option<u32> {
        match self.edges(id)[i].child {
            NO_NODE => {
                let child = self.add_node()?;
                self.edge_mut(id, i).child = child;
                Some(child)
            }
            child => Some(child),
        }
    }

    /// Gives node `id` its edges; `false` (and nothing changed) when the
    /// budget is full.
    pub fn add_edges(&mut self, id: u32, edges: impl ExactSizeIterator<Item = Edge>) -> bool {
        let n = edges.len();
        let node_bytes = self.nodes.capacity() * std::mem::size_of::<Node>();
        if n > u16::MAX as usize || !Tree::reserve(&mut self.edges, n, node_bytes, self.budget_bytes) {
            return false;
        }
        let first = self.edges.len() as u32;
        self.edges.extend(edges);
        let node = self.node_mut(id);
        node.first_edge = first;
        node.num_edges = n as u16;
        true
    }

    /// A new tree holding the subtree under `new_root` (node ids renumbered),
    /// with the same budget; its arenas are sized exactly.
    pub fn subtree(&self, new_root: u32) -> Tree {
        // Count first, so the copy reserves what it needs once.
        let (mut node_count, mut edge_count) = (0usize, 0usize);
        let mut stack = vec![new_root];
        while let Some(id) = stack.pop() {
            node_count += 1;
            edge_count += self.edges(id).len();
            stack.extend(self.edges(id).iter().filter(|e| e.child != NO_NODE).map(|e| e.child));
        }
        let fresh = |id: u32| {
            let mut n = self.node(id).clone();
            n.in_flight = 0;
            if matches!(n.state, NodeState::Pending | NodeState::Leaf) {
                // A pending evaluation belonged to the finished search; a
                // node left unexpanded for lack of memory may fit now.
                n.state = NodeState::New;
            }
            n
        };
        let mut out = Tree {
            nodes: Vec::with_capacity(node_count),
            edges: Vec::with_capacity(edge_count),
            budget_bytes: self.budget_bytes,
        };
        out.nodes.push(fresh(new_root));
        // Breadth-first copy: (old id, new id).
        let mut queue = std::collections::VecDeque::from([(new_root, 0u32)]);
        while let Some((old, new)) = queue.pop_front() {
            out.nodes[new as usize].first_edge = out.edges.len() as u32;
            for e in self.edges(old) {
                let mut copy = *e;
                if e.child != NO_NODE {
                    out.nodes.push(fresh(e.child));
                    copy.child = out.nodes.len() as u32 - 1;
                    queue.push_back((e.child, copy.child));
                }
                out.edges.push(copy);
            }
        }
        out
    }
}
