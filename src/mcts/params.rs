//! Search parameters.

use crate::rules::Variant;

/// Default length of the leaf mate search, in plies (USI `MatePlies`,
/// `--mate-plies`).
pub const MATE_PLIES: u32 = 5;

/// Softmax temperature of the network's priors the engine front ends play
/// with (USI `PolicyTemperature`, `analyse`, `match`, `bench mates`;
/// [`SearchParams`] keeps 1, as self-play and the loop's gate do): 1.5
/// flattens them, so the search tries moves the net rates low sooner. The
/// shipped minishogi net scored 62% with it against itself with 1.0 at 200
/// playouts a move (README).
pub const POLICY_TEMPERATURE: f64 = 1.5;

/// The PUCT exploration constant's base value c_init that
/// [`SearchParams`] keeps, as self-play and the loop's gate do:
/// AlphaZero's 1.25.
pub const CPUCT_INIT: f64 = 1.25;

/// The c_init the engine front ends play `variant` with (USI `CPuct` 0,
/// `analyse`, `match`): 2.0 in minishogi, where it scored 56.2% [51.4,
/// 61.0] in 400 games against 1.25 at 3,200 and 5,600 playouts a move
/// (docs/strength.md); [`CPUCT_INIT`] in the 9x9 variants, where no other
/// value has been measured.
pub fn engine_cpuct(variant: Variant) -> f64 {
    match variant {
        Variant::Minishogi => 2.0,
        _ => CPUCT_INIT,
    }
}

/// Length of the root mate search the engine front ends (USI
/// `RootMatePlies`, `analyse`) use; [`SearchParams`] leaves it off.
pub const ENGINE_ROOT_MATE_PLIES: u32 = 7;

/// The CPU cores available to this process (the cgroup's limit where
/// there is one; at least 1).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// How the search explores and how much it may use.
#[derive(Clone, Debug)]
pub struct SearchParams {
    /// Worker threads that walk the tree and gather leaves (>= 1).
    pub threads: usize,
    /// Most positions sent to the evaluator in one call; each worker
    /// gathers up to `batch_size / threads` leaves per round.
    pub batch_size: usize,
    /// Exploration constant of PUCT: c(N) = init + ln((N + base + 1) / base).
    pub cpuct_init: f64,
    pub cpuct_base: f64,
    /// First-play urgency: an unvisited child's value is the parent's
    /// value minus `fpu_reduction * sqrt(sum of visited children's priors)`.
    pub fpu_reduction: f64,
    /// The same at the root.
    pub fpu_reduction_root: f64,
    /// Memory budget of the tree in MiB; never exceeded.
    pub hash_mib: usize,
    /// Evaluations kept in the cache (entries).
    pub cache_entries: usize,
    /// Softmax temperature applied to the network's priors when a node is
    /// expanded: each prior p becomes p^(1/T), renormalised. Above 1 it
    /// flattens them (1: the net's own priors).
    pub policy_temperature: f64,
    /// Dirichlet noise at the root: (alpha, weight), for self-play.
    pub root_noise: Option<(f64, f64)>,
    /// Longest mate (or campmate) looked for at each new leaf, in plies
    /// (odd; 0: none). See [`find_mate`](super::find_mate). A leaf in check
    /// is also asked whether it is lost within one ply more (each evasion
    /// mated within `mate_plies`; [`find_mated`](super::find_mated)).
    pub mate_plies: u32,
    /// Most positions one leaf's mate search may play.
    pub mate_budget: u64,
    /// Longest mate looked for at the root by a thread of its own beside
    /// the workers, in plies (0: none). Off by default: its result depends
    /// on timing, which node-limited searches (self-play, tests) avoid.
    pub root_mate_plies: u32,
    /// Most positions the root mate search may play.
    pub root_mate_budget: u64,
    /// Seed of the search's random choices (noise, sampling).
    pub seed: u64,
    /// Root moves reported with their lines (MultiPV).
    pub multipv: usize,
    /// Gumbel AlphaZero's root (Sequential Halving over Gumbel-top-k
    /// moves, see [`gumbel`](super::gumbel)) instead of PUCT, in searches
    /// with a playout limit; below the root the search stays PUCT.
    pub gumbel: Option<super::GumbelParams>,
    /// KataGo's forced playouts at the root (self-play's full searches):
    /// a child with fewer than sqrt(k * prior * visits) visits is taken
    /// first; the result then also carries the visits after policy target
    /// pruning ([`SearchResult::pruned_visits`](super::SearchResult)).
    /// `Some(k)`; KataGo uses k = 2.
    pub forced_playouts: Option<f64>,
}

impl Default for SearchParams {
    fn default() -> SearchParams {
        SearchParams {
            threads: 2,
            batch_size: 32,
            cpuct_init: CPUCT_INIT,
            cpuct_base: 19652.0,
            fpu_reduction: 0.25,
            fpu_reduction_root: 0.0,
            hash_mib: 256,
            cache_entries: 1 << 18,
            policy_temperature: 1.0,
            root_noise: None,
            mate_plies: MATE_PLIES,
            mate_budget: 2_000,
            root_mate_plies: 0,
            root_mate_budget: 5_000_000,
            seed: 0,
            multipv: 1,
            gumbel: None,
            forced_playouts: None,
        }
    }
}

impl SearchParams {
    /// Leaves each worker gathers per evaluator round.
    pub fn leaves_per_worker(&self) -> usize {
        (self.batch_size / self.threads.max(1)).max(1)
    }

    pub fn cpuct(&self, parent_visits: u32) -> f64 {
        self.cpuct_init + ((parent_visits as f64 + self.cpuct_base + 1.0) / self.cpuct_base).ln()
    }
}
