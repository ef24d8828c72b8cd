//! Self-play: games in lockstep whose leaves share network batches, the
//! training records they write, mate problems from random playouts as
//! extra training data, and what a directory of records teaches.

pub mod baselines;
pub mod batching;
pub mod games;
pub mod label;
pub mod matches;
pub mod record;
pub mod stats;
pub mod tsume;

pub use batching::BatchingEvaluator;
pub use games::{GameReport, SelfPlayConfig, play, summary};
pub use matches::{
    DEFAULT_TIME_MARGIN, MatchConfig, MatchGame, MatchResult, MoveLimit, Player, continue_match, play_match,
    think_summary,
};
pub use record::{Sample, SearchTargets, SelfPlayError, Shard, ShardError, TeacherLabel, read_dir, read_shards};
pub use stats::{DataStats, data_stats};
pub use tsume::{RandomMates, TSUME_MODEL_ID, TsumeConfig, TsumeReport};
