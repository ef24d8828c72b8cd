//! Self-play: games in lockstep whose leaves share network batches, and the
//! training records they write.

pub mod baselines;
pub mod batching;
pub mod games;
pub mod matches;
pub mod record;

pub use batching::BatchingEvaluator;
pub use games::{GameReport, SelfPlayConfig, play, summary};
pub use matches::{MatchConfig, MatchResult, MoveLimit, Player, play_match};
pub use record::{Sample, Shard, ShardError, read_dir};
