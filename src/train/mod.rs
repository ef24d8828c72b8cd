//! Training: batches from self-play records, soft cross-entropy policy
//! loss plus value loss (and the auxiliary material and reply losses) with
//! AdamW weight decay, atomic checkpoints that resume to the same state,
//! and loss curves as CSV and SVG charts.

mod checkpoint;
pub mod generations;
pub mod material;
pub mod plot;
pub mod trainer;

pub use generations::{CpuPhases, GenerationLog, LoopConfig, LoopError};
pub use material::MaterialTarget;
pub use trainer::{
    StepLoss, TeacherTargets, TrainConfig, TrainError, TrainReport, batch_losses, masked_cross_entropy, masked_mse,
    train,
};
