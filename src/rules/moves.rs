//! Moves: the [`Move`] enum used by the rules, and [`CompactMove`], its
//! 16-bit form for tree edges and training records.

use super::{PieceKind, Square};
use std::num::NonZeroU16;

/// A move in a given position. It says nothing about legality: only
/// moves produced by the move generator (or checked against it) are legal.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    /// A piece moves on the board, capturing whatever stands on `to`;
    /// `promote` says whether it promotes on arrival.
    Normal { from: Square, to: Square, promote: bool },
    /// A piece of `kind` (a hand kind) is dropped from hand onto `to`.
    Drop { kind: PieceKind, to: Square },
}

impl Move {
    /// The destination square.
    #[inline]
    pub const fn to(self) -> Square {
        match self {
            Move::Normal { to, .. } | Move::Drop { to, .. } => to,
        }
    }

    /// The origin square of a board move; `None` for a drop.
    #[inline]
    pub const fn origin(self) -> Option<Square> {
        match self {
            Move::Normal { from, .. } => Some(from),
            Move::Drop { .. } => None,
        }
    }

    #[inline]
    pub const fn is_drop(self) -> bool {
        matches!(self, Move::Drop { .. })
    }

    #[inline]
    pub const fn is_promotion(self) -> bool {
        matches!(self, Move::Normal { promote: true, .. })
    }
}

/// A move in 16 bits: bits 0-6 destination, bits 7-13 origin (or
/// `81 + kind` for a drop), bit 14 promotion, bit 15 always set so that
/// the value is never zero (`Option<CompactMove>` is 2 bytes).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CompactMove(NonZeroU16);

impl CompactMove {
    const MARK: u16 = 1 << 15;

    pub const fn bits(self) -> u16 {
        self.0.get()
    }

    /// Rebuilds a compact move from [`CompactMove::bits`]; `None` when the
    /// bits cannot be a move.
    pub fn from_bits(bits: u16) -> Option<CompactMove> {
        let m = CompactMove(NonZeroU16::new(bits)?);
        (bits & Self::MARK != 0 && m.unpack().is_some()).then_some(m)
    }

    fn unpack(self) -> Option<Move> {
        let b = self.0.get();
        let to = Square::from_index((b & 0x7f) as usize)?;
        let origin = ((b >> 7) & 0x7f) as usize;
        let promote = b >> 14 & 1 != 0;
        if origin < 81 {
            let from = Square::from_index(origin)?;
            Some(Move::Normal { from, to, promote })
        } else if !promote {
            Some(Move::Drop { kind: PieceKind((origin - 81) as u8), to })
        } else {
            None
        }
    }
}

impl From<Move> for CompactMove {
    fn from(m: Move) -> CompactMove {
        let bits = match m {
            Move::Normal { from, to, promote } => {
                to.index() as u16 | (from.index() as u16) << 7 | (promote as u16) << 14
            }
            Move::Drop { kind, to } => to.index() as u16 | (81 + kind.0 as u16) << 7,
        };
        CompactMove(NonZeroU16::new(bits | CompactMove::MARK).expect("mark bit set"))
    }
}

impl From<CompactMove> for Move {
    fn from(m: CompactMove) -> Move {
        m.unpack().expect("CompactMove holds a valid move by construction")
    }
}

/// A reusable buffer of moves. The generator clears and fills it; reusing
/// one list across calls keeps move generation free of allocation.
pub type MoveList = Vec<Move>;
