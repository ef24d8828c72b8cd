//! The two players.

use std::ops::Not;

/// A player. Sente moves first (upper case in SFEN, side letter `b`);
/// gote moves second (lower case, side letter `w`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    Sente = 0,
    Gote = 1,
}

impl Color {
    pub const ALL: [Color; 2] = [Color::Sente, Color::Gote];

    /// 0 for sente, 1 for gote: the index into per-colour arrays.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The SFEN side letter: `b` for sente, `w` for gote.
    pub const fn sfen_char(self) -> char {
        match self {
            Color::Sente => 'b',
            Color::Gote => 'w',
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Color::Sente => "sente",
            Color::Gote => "gote",
        }
    }

    #[inline]
    pub const fn flip(self) -> Color {
        match self {
            Color::Sente => Color::Gote,
            Color::Gote => Color::Sente,
        }
    }
}

impl Not for Color {
    type Output = Color;
    #[inline]
    fn not(self) -> Color {
        self.flip()
    }
}

impl std::fmt::Display for Color {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
