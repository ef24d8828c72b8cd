//! The policy/value network: input encoding and policy layout, the burn
//! model, weight files and the evaluator the search uses. burn is imported
//! here and in `train` (for its autodiff and optimisers) only.

/// An enum of unit variants named by fixed words: `ALL`, `name()`,
/// `Display`, and a case-insensitive `FromStr` whose error lists the names.
macro_rules! named_enum {
    ($ty:ident, $what:literal, { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];

            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }
        }

        impl std::str::FromStr for $ty {
            type Err = $crate::nn::UnknownName;
            fn from_str(s: &str) -> Result<$ty, Self::Err> {
                $ty::ALL.iter().copied().find(|v| v.name().eq_ignore_ascii_case(s)).ok_or_else(|| {
                    $crate::nn::UnknownName { what: $what, given: s.to_string(), expected: &[$($name),+] }
                })
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

pub mod amx;
pub mod bf16;
pub mod cpu;
pub mod device;
pub mod encode;
pub mod evaluator;
#[cfg(feature = "gpu")]
pub mod kernels;
pub mod model;
pub mod weights;

pub use device::{DeviceChoice, DeviceError, Precision, describe, device, has_real_gpu, peak_flops, supports_f16};
pub use encode::{Features, Layout};
pub use evaluator::{
    DeviceIdle, LoadError, ModelSource, NetEvaluator, NetSize, Timings, shipped, shipped_large, softmax,
};
pub use model::{AuxHeads, Net, NetConfig, TrainOutputs};
pub use weights::{LoadedNet, WeightsError};

/// A name that none of an enum's variants has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} '{given}' (expected {})", list(expected))]
pub struct UnknownName {
    pub what: &'static str,
    pub given: String,
    pub expected: &'static [&'static str],
}

/// "a, b or c".
fn list(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}
