//! Text forms of the rules types, each with typed errors: SFEN for
//! positions, USI for moves.

pub mod sfen;
pub mod usi_move;

pub use sfen::{SfenError, parse_position, parse_setup, to_sfen};
pub use usi_move::{IllegalMove, ParseMoveError, UsiMove, UsiMoveError, format_move, parse_move};
