//! [`Setup`]: a position as written, not yet checked against the rules.

use super::hand::{Hand, MAX_HAND_COUNT};
use super::{Color, NUM_SQUARES, Piece, Square, Variant};

/// Board, hands, side to move and move number of a variant, unvalidated.
/// [`Position::from_setup`](super::Position::from_setup) checks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    pub variant: Variant,
    pub board: [Option<Piece>; NUM_SQUARES],
    pub hands: [Hand; 2],
    pub side: Color,
    /// Move number as in SFEN, starting at 1.
    pub move_number: u32,
}

impl Setup {
    /// An empty board of `variant`, sente to move, move 1.
    pub fn empty(variant: Variant) -> Setup {
        Setup { variant, board: [None; NUM_SQUARES], hands: [Hand::default(); 2], side: Color::Sente, move_number: 1 }
    }

    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        self.board[sq.index()]
    }
}

/// Why a [`Setup`] is not a legal position of its variant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    #[error("{0} has no king")]
    MissingKing(Color),
    #[error("{0} has more than one king")]
    TooManyKings(Color),
    #[error("piece on {0}, outside the {1}x{2} board")]
    OffBoard(Square, u8, u8),
    #[error("the {kind} on {square} could never move (it must not stand there unpromoted)")]
    DeadPiece { square: Square, kind: &'static str },
    #[error("{color} has two unpromoted pawns on file {file}")]
    TwoPawns { color: Color, file: u8 },
    #[error("{kind} cannot be held in hand in {variant}")]
    NotAHandPiece { kind: &'static str, variant: Variant },
    #[error("{count} pieces of kind {kind} on board and in hands (at most {max})", max = MAX_HAND_COUNT)]
    TooManyPieces { kind: &'static str, count: u32 },
    #[error("the side not to move ({0}) is in check: its king could be captured")]
    OpponentInCheck(Color),
    #[error("move number must be at least 1")]
    BadMoveNumber,
}
