//! How a game ends: [`Outcome`], and the rules that are algorithms rather
//! than move-generator masks (repetition and perpetual check).

use super::Color;

/// Why a game ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// The side to move is in check and has no legal move.
    Checkmate,
    /// The side to move is not in check and has no legal move (a loss).
    Stalemate,
    /// A king reached its far rank (Mansindam, pandemonium2022).
    Campmate,
    /// A position repeated as often as the variant allows.
    Repetition,
    /// A repetition in which one side gave check with every move: the
    /// checking side loses (both sides: a draw, Pandemonium only).
    PerpetualCheck,
}

impl EndReason {
    /// Lower-case name as printed by `pantheon show`.
    pub const fn name(self) -> &'static str {
        match self {
            EndReason::Checkmate => "checkmate",
            EndReason::Stalemate => "stalemate",
            EndReason::Campmate => "campmate",
            EndReason::Repetition => "repetition",
            EndReason::PerpetualCheck => "perpetual-check",
        }
    }
}

/// The result of a finished game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    /// `None` only for a draw, which only Pandemonium's mutual perpetual
    /// check can produce.
    pub winner: Option<Color>,
    pub reason: EndReason,
}

impl Outcome {
    pub const fn win(winner: Color, reason: EndReason) -> Outcome {
        Outcome { winner: Some(winner), reason }
    }
}

impl std::fmt::Display for Outcome {
    /// `sente wins (checkmate)`, `draw (perpetual-check)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.winner {
            Some(c) => write!(f, "{c} wins ({})", self.reason.name()),
            None => write!(f, "draw ({})", self.reason.name()),
        }
    }
}

/// Who checked on every one of their moves in a repetition cycle.
///
/// `gave_check[i]` says whether the move that led to position `i` of the
/// cycle gave check; position 0 is the first occurrence, whose side to
/// move is `first_mover`. Returns `[sente, gote]`.
pub(crate) fn perpetual_checkers(first_mover: Color, gave_check: &[bool]) -> [bool; 2] {
    let mut all = [true; 2];
    let mut mover = first_mover;
    for &check in &gave_check[1..] {
        all[mover.index()] &= check;
        mover = !mover;
    }
    all
}
