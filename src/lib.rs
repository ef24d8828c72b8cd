//! Pantheon: an AlphaZero-style engine for Minishogi, Mansindam and
//! Pandemonium.
//!
//! Layers, lowest first (see ARCHITECTURE.md): [`rules`] (pure game rules),
//! [`notation`] (SFEN and USI move text), then the command line in `cli`.

pub mod cli;
pub mod mcts;
pub mod nn;
pub mod notation;
pub mod rules;
pub mod selfplay;
pub mod train;
pub mod usi;
