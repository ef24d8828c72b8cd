//! The policy/value network: input encoding and policy layout (no burn),
//! the burn model, weight files and the evaluator the search uses.

pub mod encode;

pub use encode::Layout;
