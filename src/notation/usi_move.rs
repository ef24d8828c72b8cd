//! USI move text: `7g7f`, `2b3a+`, `P*5e`. On minishogi's board the same
//! form with files 1-5 and ranks a-e.

use crate::rules::{Color, Game, Geometry, Move, PieceKind, Position, Square, Variant};

/// A move as written, checked for syntax and board bounds only.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum UsiMove {
    Normal {
        from: Square,
        to: Square,
        promote: bool,
    },
    /// `letter` is the upper-case base letter of the dropped piece.
    Drop {
        letter: char,
        to: Square,
    },
}

/// Why a string is not a USI move.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UsiMoveError {
    #[error("'{0}' is not a USI move (expected e.g. 7g7f, 7g7f+ or P*5e)")]
    Syntax(String),
    #[error("'{text}': square {square} is off the {files}x{ranks} board")]
    OffBoard { text: String, square: String, files: u8, ranks: u8 },
}

/// Why a well-formed move cannot be played in the position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("illegal move {text}: {reason}")]
pub struct IllegalMove {
    pub text: String,
    pub reason: IllegalReason,
}

/// The rule a move breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IllegalReason {
    #[error("there is no piece on {0}")]
    NoPiece(Square),
    #[error("the {name} on {from} belongs to {owner}")]
    NotOwnPiece { name: &'static str, from: Square, owner: Color },
    #[error("{to} is occupied by a piece of {us}")]
    OwnPieceThere { to: Square, us: Color },
    #[error("a {name} on {from} cannot move to {to}")]
    CannotReach { name: &'static str, from: Square, to: Square },
    #[error("a {name} cannot promote")]
    CannotPromote { name: &'static str },
    #[error("a promotion needs a move into, within or out of the promotion zone")]
    OutsideZone,
    #[error("the {name} must promote on this move (write {from}{to}+)")]
    MustPromote { name: &'static str, from: Square, to: Square },
    #[error("'{letter}' is not a piece that can be dropped in {variant}")]
    NotDroppable { letter: char, variant: Variant },
    #[error("{us} has no {name} in hand")]
    NotInHand { us: Color, name: &'static str },
    #[error("{0} is not empty")]
    Occupied(Square),
    #[error("a {name} dropped on {to} could never move")]
    DeadDrop { name: &'static str, to: Square },
    #[error("{us} already has an unpromoted pawn on file {file}")]
    TwoPawns { us: Color, file: u8 },
    #[error("a pawn drop may not give checkmate")]
    PawnDropMate,
    #[error("it does not get the king out of check")]
    StillInCheck,
    #[error("it would leave the king in check")]
    SelfCheck,
    #[error("it would repeat a position a third time")]
    ThirdRepetition,
}

impl UsiMove {
    /// Parses `text` for a board of geometry `g`.
    pub fn parse(text: &str, g: Geometry) -> Result<UsiMove, UsiMoveError> {
        let syntax = || UsiMoveError::Syntax(text.to_string());
        let b = text.as_bytes();
        let square = |f: u8, r: u8| -> Result<Square, UsiMoveError> {
            if !f.is_ascii_digit() || !r.is_ascii_lowercase() {
                return Err(syntax());
            }
            g.square((f - b'0') as i32, (r - b'a') as i32).ok_or_else(|| UsiMoveError::OffBoard {
                text: text.to_string(),
                square: format!("{}{}", f as char, r as char),
                files: g.files,
                ranks: g.ranks,
            })
        };
        match b {
            [p, b'*', f, r] if p.is_ascii_uppercase() => Ok(UsiMove::Drop { letter: *p as char, to: square(*f, *r)? }),
            [f1, r1, f2, r2, rest @ ..] if rest.is_empty() || rest == b"+" => {
                Ok(UsiMove::Normal { from: square(*f1, *r1)?, to: square(*f2, *r2)?, promote: !rest.is_empty() })
            }
            _ => Err(syntax()),
        }
    }

    /// The legal move this text names in `pos`, or why there is none.
    pub fn to_move(self, pos: &Position) -> Result<Move, IllegalMove> {
        let mv = self.to_move_unchecked(pos).map_err(|reason| self.illegal(reason))?;
        if pos.is_legal(mv) { Ok(mv) } else { Err(self.illegal(diagnose(pos, mv))) }
    }

    /// The legal move this text names in the game's current position,
    /// history rules included.
    pub fn to_game_move(self, game: &Game) -> Result<Move, IllegalMove> {
        let mv = self.to_move(game.position())?;
        if game.repeats_third_time(mv) {
            return Err(self.illegal(IllegalReason::ThirdRepetition));
        }
        Ok(mv)
    }

    fn illegal(self, reason: IllegalReason) -> IllegalMove {
        IllegalMove { text: self.to_string(), reason }
    }

    fn to_move_unchecked(self, pos: &Position) -> Result<Move, IllegalReason> {
        match self {
            UsiMove::Normal { from, to, promote } => Ok(Move::Normal { from, to, promote }),
            UsiMove::Drop { letter, to } => {
                let spec = pos.variant().spec();
                let hand_kinds = &spec.pieces[..spec.hand_kinds as usize];
                match hand_kinds.iter().position(|p| p.letter == letter as u8) {
                    Some(k) => Ok(Move::Drop { kind: PieceKind(k as u8), to }),
                    None => Err(IllegalReason::NotDroppable { letter, variant: pos.variant() }),
                }
            }
        }
    }
}

impl std::fmt::Display for UsiMove {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            UsiMove::Normal { from, to, promote } => {
                write!(f, "{from}{to}{}", if promote { "+" } else { "" })
            }
            UsiMove::Drop { letter, to } => write!(f, "{letter}*{to}"),
        }
    }
}

/// Parses `text` as a legal move of `pos`.
pub fn parse_move(pos: &Position, text: &str) -> Result<Move, ParseMoveError> {
    Ok(UsiMove::parse(text, pos.variant().geometry())?.to_move(pos)?)
}

/// A move text that is malformed or illegal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseMoveError {
    #[error(transparent)]
    Syntax(#[from] UsiMoveError),
    #[error(transparent)]
    Illegal(#[from] IllegalMove),
}

/// The USI text of `mv` in `variant`.
pub fn format_move(variant: Variant, mv: Move) -> String {
    let usi = match mv {
        Move::Normal { from, to, promote } => UsiMove::Normal { from, to, promote },
        Move::Drop { kind, to } => UsiMove::Drop { letter: variant.spec().pieces[kind.index()].letter as char, to },
    };
    usi.to_string()
}

/// Explains why `mv` is not legal in `pos` (it is known not to be).
fn diagnose(pos: &Position, mv: Move) -> IllegalReason {
    use IllegalReason::*;
    let t = pos.variant().tables();
    let spec = t.spec;
    let us = pos.side_to_move();
    let check_reason = || if pos.in_check() { StillInCheck } else { SelfCheck };
    match mv {
        Move::Normal { from, to, promote } => {
            let Some(piece) = pos.piece_at(from) else {
                return NoPiece(from);
            };
            let name = spec.pieces[piece.kind.index()].name;
            if piece.color != us {
                return NotOwnPiece { name, from, owner: piece.color };
            }
            if pos.piece_at(to).is_some_and(|p| p.color == us) {
                return OwnPieceThere { to, us };
            }
            if !t.attacks(piece.kind.0, us, from, pos.occupied()).contains(to) {
                return CannotReach { name, from, to };
            }
            let eligible = t.zone[us.index()].contains(from) || t.zone[us.index()].contains(to);
            if promote && !t.is_promotable(piece.kind.0) {
                return CannotPromote { name };
            }
            if promote && !eligible {
                return OutsideZone;
            }
            let must = t.must_promote[piece.kind.index()][us.index()].contains(to);
            if !promote && eligible && t.is_promotable(piece.kind.0) && must {
                return MustPromote { name, from, to };
            }
            check_reason()
        }
        Move::Drop { kind, to } => {
            let name = spec.pieces[kind.index()].name;
            if pos.hand(us).count(kind.0) == 0 {
                return NotInHand { us, name };
            }
            if pos.piece_at(to).is_some() {
                return Occupied(to);
            }
            if !t.drop_to[kind.index()][us.index()].contains(to) {
                return DeadDrop { name, to };
            }
            if kind.0 == t.pawn {
                let own_pawn_on_file = pos.pieces(us, kind) & t.files[to.file() as usize];
                if spec.pawn_drops.two_pawns && own_pawn_on_file.any() {
                    return TwoPawns { us, file: to.file() };
                }
                let gives_check = t.leaps[kind.index()][us.index()][to.index()].contains(pos.king(!us));
                let blocks = pos.checkers().first().is_none_or(|c| pos.interpositions(pos.king(us), c).contains(to));
                if spec.pawn_drops.no_drop_mate && gives_check && blocks {
                    return PawnDropMate;
                }
            }
            check_reason()
        }
    }
}
