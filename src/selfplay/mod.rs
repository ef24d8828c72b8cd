//! Self-play: games in lockstep whose leaves share network batches, the
//! training records they write, and mate problems from random playouts
//! as extra training data.

pub mod baselines;
pub mod batching;
pub mod games;
pub mod matches;
pub mod record;
pub mod tsume;

pub use batching::BatchingEvaluator;
pub use games::{GameReport, SelfPlayConfig, play, summary};
pub use matches::{MatchConfig, MatchGame, MatchResult, MoveLimit, Player, play_match};
pub use record::{Sample, Shard, ShardError, read_dir};
pub use tsume::{RandomMates, TsumeConfig, TsumeReport};
