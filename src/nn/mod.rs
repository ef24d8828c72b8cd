//! The policy/value network: input encoding and policy layout, the burn
//! model, weight files and the evaluator the search uses. This is the only
//! layer that imports burn.

pub mod device;
pub mod encode;
pub mod evaluator;
#[cfg(feature = "gpu")]
pub mod kernels;
pub mod model;
pub mod weights;

pub use device::{DeviceChoice, DeviceError, Precision, describe, device, has_real_gpu, peak_flops, supports_f16};
pub use encode::{Features, Layout};
pub use evaluator::{DeviceIdle, LoadError, ModelSource, NetEvaluator, Timings, shipped, softmax};
pub use model::{Net, NetConfig};
pub use weights::{LoadedNet, WeightsError};
