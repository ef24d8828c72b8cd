//! Pantheon: an AlphaZero-style engine for Minishogi, Mansindam and
//! Pandemonium.
//!
//! Layers, lowest first (see ARCHITECTURE.md): [`rules`] (pure game
//! rules), [`notation`] (SFEN and USI move text), [`mcts`] (the search,
//! which sees the network only as an evaluator), [`nn`] (the network, on
//! burn), [`usi`] (the protocol, both sides), [`selfplay`] (games,
//! records, matches, teacher labels), [`train`] (training and the loop),
//! then the command line in `cli`; [`atomic_file`] is the one way files
//! are written.

pub mod atomic_file;
pub mod cli;
pub mod mcts;
pub mod nn;
pub mod notation;
pub mod rules;
pub mod selfplay;
pub mod train;
pub mod usi;
