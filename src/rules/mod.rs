//! Pure game rules: no IO, threads or network. Everything else stands on
//! this layer.

mod bitboard;
mod color;
mod game;
mod hand;
mod movegen;
mod moves;
mod outcome;
pub mod perft;
mod piece;
mod position;
mod setup;
mod square;
pub mod tables;
pub mod variant;
mod zobrist;

pub use bitboard::Bitboard;
pub use color::Color;
pub use game::{Game, HistoryEntry};
pub use hand::{Hand, MAX_HAND_COUNT, MAX_HAND_KINDS};
pub use moves::{CompactMove, Move, MoveList};
pub use outcome::{EndReason, Outcome};
pub use piece::{Atom, MAX_KINDS, Movement, Piece, PieceKind, PieceSpec};
pub use position::Position;
pub use setup::{PositionError, Setup};
pub use square::{Geometry, NUM_SQUARES, Square};
pub use variant::{UnknownVariant, Variant, VariantSpec};
