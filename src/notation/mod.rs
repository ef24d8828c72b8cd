//! Text forms of the rules types, each with typed errors: SFEN for
//! positions, USI for moves, and a game as a start position with moves.

pub mod game;
pub mod sfen;
pub mod usi_move;

pub use game::{GameTextError, parse_game};
pub use sfen::{SfenError, parse_position, parse_setup, to_sfen};
pub use usi_move::{IllegalMove, IllegalReason, ParseMoveError, UsiMove, UsiMoveError, format_move, parse_move};
