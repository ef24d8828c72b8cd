//! Piece kinds, pieces and their movement, written like Betza atoms.

use super::Color;

/// Most piece kinds (unpromoted + promoted + king) of any variant.
pub const MAX_KINDS: usize = 20;

/// A variant-local piece kind: an index into the variant's
/// [`PieceSpec`](super::VariantSpec::pieces) table. The unpromoted kinds
/// that can be held in hand come first (in SFEN hand order), then the king,
/// then the promoted kinds.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PieceKind(pub u8);

impl PieceKind {
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// A piece on the board: a kind and the colour that owns it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    pub color: Color,
    pub kind: PieceKind,
}

/// A leaper or stepper component of a piece's move, named after Betza's
/// atoms. Offsets are (files, ranks) from the mover's point of view, ranks
/// positive forward. Every atom is left-right symmetric.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Atom {
    /// One step orthogonally (W, wazir).
    W,
    /// One step diagonally (F, ferz).
    F,
    /// Chess knight leap (N), all eight directions.
    N,
    /// Two-square diagonal leap (A, alfil), jumps over the middle square.
    A,
    /// Two-square orthogonal leap (D, dabbaba), jumps over the middle square.
    D,
    /// One step straight forward (fW).
    FW,
    /// One step sideways (sW).
    SW,
    /// One step diagonally forward (fF).
    FF,
}

impl Atom {
    /// The (file, forward-rank) offsets of this atom for the mover.
    pub const fn offsets(self) -> &'static [(i8, i8)] {
        match self {
            Atom::W => &[(0, 1), (0, -1), (1, 0), (-1, 0)],
            Atom::F => &[(1, 1), (1, -1), (-1, 1), (-1, -1)],
            Atom::N => &[(1, 2), (-1, 2), (1, -2), (-1, -2), (2, 1), (-2, 1), (2, -1), (-2, -1)],
            Atom::A => &[(2, 2), (2, -2), (-2, 2), (-2, -2)],
            Atom::D => &[(0, 2), (0, -2), (2, 0), (-2, 0)],
            Atom::FW => &[(0, 1)],
            Atom::SW => &[(1, 0), (-1, 0)],
            Atom::FF => &[(1, 1), (-1, 1)],
        }
    }
}

/// How a piece moves: leaps/steps that ignore blockers, plus full rook
/// and/or bishop slides (no variant has a lance-like partial slider).
#[derive(Copy, Clone, Debug)]
pub struct Movement {
    pub leaps: &'static [Atom],
    /// Slides any distance orthogonally (R).
    pub rook: bool,
    /// Slides any distance diagonally (B).
    pub bishop: bool,
}

impl Movement {
    pub const fn leaper(leaps: &'static [Atom]) -> Movement {
        Movement { leaps, rook: false, bishop: false }
    }
    pub const fn rook(leaps: &'static [Atom]) -> Movement {
        Movement { leaps, rook: true, bishop: false }
    }
    pub const fn bishop(leaps: &'static [Atom]) -> Movement {
        Movement { leaps, rook: false, bishop: true }
    }
    pub const fn queen(leaps: &'static [Atom]) -> Movement {
        Movement { leaps, rook: true, bishop: true }
    }
}

/// One piece kind of a variant.
#[derive(Copy, Clone, Debug)]
pub struct PieceSpec {
    /// English name, e.g. "dragon".
    pub name: &'static str,
    /// Upper-case SFEN letter of the base piece (`+` is added for promoted).
    pub letter: u8,
    /// Whether this kind is a promoted form (written `+X` in SFEN).
    pub promoted: bool,
    pub movement: Movement,
    /// For an unpromoted kind: the kind it promotes to, if any. For a
    /// promoted kind: the unpromoted kind it reverts to when captured.
    pub partner: Option<u8>,
    /// The king: never captured, never in hand, never promotes.
    pub royal: bool,
}

impl PieceSpec {
    pub const fn base(name: &'static str, letter: u8, movement: Movement, promotes_to: Option<u8>) -> Self {
        PieceSpec { name, letter, promoted: false, movement, partner: promotes_to, royal: false }
    }
    pub const fn promoted(name: &'static str, letter: u8, movement: Movement, base: u8) -> Self {
        PieceSpec { name, letter, promoted: true, movement, partner: Some(base), royal: false }
    }
    pub const fn king(letter: u8, leaps: &'static [Atom]) -> Self {
        PieceSpec {
            name: "king",
            letter,
            promoted: false,
            movement: Movement::leaper(leaps),
            partner: None,
            royal: true,
        }
    }
}
