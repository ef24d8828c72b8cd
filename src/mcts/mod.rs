//! Monte Carlo tree search with PUCT. The search sees the network only
//! through the [`Evaluator`] trait; it never imports burn.

mod cache;
mod evaluator;
pub mod gumbel;
mod limits;
mod mate;
mod params;
pub mod problems;
mod rng;
mod search;
mod tree;

pub use evaluator::{
    DEFAULT_SEARCH_BATCH, EvalJob, EvalRequest, Evaluation, Evaluator, UniformEvaluator, sanitize, serve_jobs,
    serve_pipelined,
};
pub use gumbel::GumbelParams;
pub use limits::{Clock, Limits, TimeBudget, budget};
pub use mate::{find_mate, find_mate_until, find_mated, mate_in_one, mate_line};
pub use params::{
    CPUCT_INIT, ENGINE_ROOT_MATE_PLIES, MATE_PLIES, POLICY_TEMPERATURE, SearchParams, cores, engine_cpuct,
};
pub use rng::Rng;
pub use search::{PvLine, Score, SearchInfo, SearchResult, Searcher};
pub use tree::Proof;
