//! Squares and board geometry.
//!
//! Every board lives in one 9x9 frame. A square's index is
//! `(file - 1) * 9 + rank`, with files numbered 1..=9 from sente's right
//! (USI convention) and ranks 0..=8 for `a..=i` from the top (gote's back
//! rank). Minishogi uses files 1-5 and ranks a-e of the same frame, so one
//! [`Square`] and one [`Bitboard`](super::Bitboard) type serve every variant.

use super::Color;

/// Number of squares in the 9x9 frame.
pub const NUM_SQUARES: usize = 81;

/// One square of the 9x9 frame (index 0..81).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

impl Square {
    /// The square at `file` (1..=9) and `rank` (0..=8, `a` = 0), or `None`
    /// outside the 9x9 frame.
    #[inline]
    pub const fn new(file: u8, rank: u8) -> Option<Square> {
        if file >= 1 && file <= 9 && rank <= 8 { Some(Square((file - 1) * 9 + rank)) } else { None }
    }

    /// The square with this frame index, or `None` if `index >= 81`.
    #[inline]
    pub const fn from_index(index: usize) -> Option<Square> {
        if index < NUM_SQUARES { Some(Square(index as u8)) } else { None }
    }

    /// Frame index 0..81.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// USI file number, 1..=9.
    #[inline]
    pub const fn file(self) -> u8 {
        self.0 / 9 + 1
    }

    /// Rank index from the top, 0..=8 (`a` = 0).
    #[inline]
    pub const fn rank(self) -> u8 {
        self.0 % 9
    }

    /// The USI rank letter, `a..=i`.
    pub const fn rank_char(self) -> char {
        (b'a' + self.rank()) as char
    }

    /// Iterates over all 81 squares of the frame, by index.
    pub fn all() -> impl Iterator<Item = Square> {
        (0..NUM_SQUARES as u8).map(Square)
    }
}

impl std::fmt::Display for Square {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.file(), self.rank_char())
    }
}

/// The size of a variant's board: `files` x `ranks`, anchored at file 1,
/// rank `a` of the 9x9 frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Geometry {
    pub files: u8,
    pub ranks: u8,
}

impl Geometry {
    pub const NINE: Geometry = Geometry { files: 9, ranks: 9 };
    pub const FIVE: Geometry = Geometry { files: 5, ranks: 5 };

    /// Whether (file, rank) lies on this board; signed so that offsets can
    /// be tested before they are turned into squares.
    #[inline]
    pub const fn contains(self, file: i32, rank: i32) -> bool {
        file >= 1 && file <= self.files as i32 && rank >= 0 && rank < self.ranks as i32
    }

    /// Whether `sq` lies on this board.
    #[inline]
    pub const fn has(self, sq: Square) -> bool {
        self.contains(sq.file() as i32, sq.rank() as i32)
    }

    /// The square at (file, rank) on this board, if it is on it.
    pub const fn square(self, file: i32, rank: i32) -> Option<Square> {
        if self.contains(file, rank) { Square::new(file as u8, rank as u8) } else { None }
    }

    /// The rank index `depth` ranks deep into the opponent's side for
    /// `color`: depth 0 is the far rank (rank `a` for sente).
    #[inline]
    pub const fn far_rank(self, color: Color, depth: u8) -> u8 {
        match color {
            Color::Sente => depth,
            Color::Gote => self.ranks - 1 - depth,
        }
    }

    /// How many ranks `rank` lies from `color`'s far rank (0 = on it).
    #[inline]
    pub const fn depth_from_far(self, color: Color, rank: u8) -> u8 {
        match color {
            Color::Sente => rank,
            Color::Gote => self.ranks - 1 - rank,
        }
    }

    /// The squares of this board, in frame-index order.
    pub fn squares(self) -> impl Iterator<Item = Square> {
        Square::all().filter(move |&sq| self.has(sq))
    }

    /// The SFEN/diagram order: ranks from `a`, files from the highest down.
    pub fn squares_reading_order(self) -> impl Iterator<Item = Square> {
        (0..self.ranks)
            .flat_map(move |rank| (1..=self.files).rev().map(move |file| Square::new(file, rank).expect("on board")))
    }
}
