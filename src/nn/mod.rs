//! The policy/value network: input encoding and policy layout, the burn
//! model, weight files and the evaluator the search uses. This is the only
//! layer that imports burn.

pub mod encode;
pub mod evaluator;
#[cfg(feature = "gpu")]
pub mod kernels;
pub mod model;
pub mod weights;

pub use encode::{Features, Layout};
pub use evaluator::{
    DeviceChoice, DeviceError, LoadError, ModelSource, NetEvaluator, Timings, describe, device, shipped, softmax,
};
pub use model::{Net, NetConfig};
pub use weights::{LoadedNet, WeightsError};
