//! SFEN: `<board> <side> <hand> [<move number>]`, or `startpos`.
//!
//! Board ranks from `a` down, files from the highest number to 1, digits
//! for runs of empty squares, `+` before a promoted piece; upper case is
//! sente. Hands `-` or count-letter pairs in any order (`2Pn`).

use crate::rules::{Color, Hand, MAX_HAND_COUNT, Piece, PieceKind, Position, PositionError, Setup, Square, Variant};
use std::fmt::Write;

/// What is wrong with an SFEN string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SfenError {
    #[error("empty SFEN")]
    Empty,
    #[error("SFEN has {0} fields; expected 3 or 4: board, side, hand, [move number]")]
    FieldCount(usize),
    #[error("board has {found} ranks; {variant} has {expected}")]
    RankCount { found: usize, expected: u8, variant: Variant },
    #[error("rank {rank} has {found} squares; {variant} has {expected} files")]
    RankLength { rank: char, found: usize, expected: u8, variant: Variant },
    #[error("unknown piece letter '{letter}' in rank {rank} for {variant}")]
    BadPieceLetter { letter: char, rank: char, variant: Variant },
    #[error("'+{letter}' in rank {rank}: that piece has no promoted form in {variant}")]
    CannotPromote { letter: char, rank: char, variant: Variant },
    #[error("'+' not followed by a piece letter in rank {rank}")]
    DanglingPlus { rank: char },
    #[error("bad character '{ch}' in rank {rank}")]
    BadBoardChar { ch: char, rank: char },
    #[error("side to move must be 'b' (sente) or 'w' (gote), not '{0}'")]
    BadSide(String),
    #[error("bad hand '{hand}': {reason}")]
    BadHand { hand: String, reason: String },
    #[error("bad move number '{0}': expected a whole number of at least 1")]
    BadMoveNumber(String),
    #[error("illegal position: {0}")]
    Position(#[from] PositionError),
}

/// Parses an SFEN (or `startpos`) of `variant` into a validated position.
impl Position {
    /// The variant's start position. Defined here, not in `rules`: the
    /// start is written in the variant's spec as SFEN text, and the rules
    /// layer does not parse text.
    pub fn startpos(variant: Variant) -> Position {
        parse_position(variant, variant.spec().start_sfen).expect("start SFEN of every variant is valid")
    }
}

pub fn parse_position(variant: Variant, text: &str) -> Result<Position, SfenError> {
    Ok(Position::from_setup(&parse_setup(variant, text)?)?)
}

/// Parses an SFEN (or `startpos`) of `variant` without checking the rules.
pub fn parse_setup(variant: Variant, text: &str) -> Result<Setup, SfenError> {
    let text = text.trim();
    let text = if text == "startpos" { variant.spec().start_sfen } else { text };
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.is_empty() {
        return Err(SfenError::Empty);
    }
    if !(3..=4).contains(&fields.len()) {
        return Err(SfenError::FieldCount(fields.len()));
    }
    let mut setup = Setup::empty(variant);
    parse_board(variant, fields[0], &mut setup)?;
    setup.side = match fields[1] {
        "b" => Color::Sente,
        "w" => Color::Gote,
        other => return Err(SfenError::BadSide(other.to_string())),
    };
    setup.hands = parse_hands(variant, fields[2])?;
    if let Some(&n) = fields.get(3) {
        setup.move_number =
            n.parse().ok().filter(|&n| n >= 1).ok_or_else(|| SfenError::BadMoveNumber(n.to_string()))?;
    }
    Ok(setup)
}

/// The kind of `letter` (upper case) in `variant`, promoted or not.
fn find_kind(variant: Variant, letter: u8, promoted: bool) -> Option<PieceKind> {
    let pieces = variant.spec().pieces;
    let i = pieces.iter().position(|p| p.letter == letter && p.promoted == promoted)?;
    Some(PieceKind(i as u8))
}

fn parse_board(variant: Variant, board: &str, setup: &mut Setup) -> Result<(), SfenError> {
    let g = variant.geometry();
    let ranks: Vec<&str> = board.split('/').collect();
    if ranks.len() != g.ranks as usize {
        return Err(SfenError::RankCount { found: ranks.len(), expected: g.ranks, variant });
    }
    for (r, text) in ranks.iter().enumerate() {
        let rank = (b'a' + r as u8) as char;
        let mut file = g.files as usize; // next file to fill, counting down
        let mut placed = 0usize;
        let mut chars = text.chars().peekable();
        let too_long = |found| SfenError::RankLength { rank, found, expected: g.files, variant };
        while let Some(ch) = chars.next() {
            if let Some(d) = ch.to_digit(10) {
                // Multi-digit runs are accepted (never needed on 9 files).
                let mut run = d as usize;
                while let Some(d2) = chars.peek().and_then(|c| c.to_digit(10)) {
                    run = run.saturating_mul(10).saturating_add(d2 as usize);
                    chars.next();
                }
                if run == 0 {
                    return Err(SfenError::BadBoardChar { ch, rank });
                }
                placed = placed.saturating_add(run);
                file = file.saturating_sub(run);
                if placed > g.files as usize {
                    return Err(too_long(placed));
                }
                continue;
            }
            let (promoted, letter) = if ch == '+' {
                match chars.next() {
                    Some(c) if c.is_ascii_alphabetic() => (true, c),
                    _ => return Err(SfenError::DanglingPlus { rank }),
                }
            } else if ch.is_ascii_alphabetic() {
                (false, ch)
            } else {
                return Err(SfenError::BadBoardChar { ch, rank });
            };
            let upper = letter.to_ascii_uppercase() as u8;
            let kind = match find_kind(variant, upper, promoted) {
                Some(k) => k,
                None if promoted && find_kind(variant, upper, false).is_some() => {
                    return Err(SfenError::CannotPromote { letter, rank, variant });
                }
                None => {
                    return Err(SfenError::BadPieceLetter { letter, rank, variant });
                }
            };
            placed += 1;
            if placed > g.files as usize {
                return Err(too_long(placed));
            }
            let color = if letter.is_ascii_uppercase() { Color::Sente } else { Color::Gote };
            let sq = Square::new(file as u8, r as u8).expect("file and rank on the board");
            setup.board[sq.index()] = Some(Piece { color, kind });
            file -= 1;
        }
        if placed != g.files as usize {
            return Err(SfenError::RankLength { rank, found: placed, expected: g.files, variant });
        }
    }
    Ok(())
}

fn parse_hands(variant: Variant, text: &str) -> Result<[Hand; 2], SfenError> {
    let mut hands = [Hand::default(); 2];
    if text == "-" {
        return Ok(hands);
    }
    let bad = |reason: String| SfenError::BadHand { hand: text.to_string(), reason };
    let spec = variant.spec();
    let mut count: Option<u32> = None;
    for ch in text.chars() {
        if let Some(d) = ch.to_digit(10) {
            let n = count.unwrap_or(0) * 10 + d;
            if n > MAX_HAND_COUNT as u32 {
                return Err(bad(format!("count above {MAX_HAND_COUNT}")));
            }
            count = Some(n);
            continue;
        }
        if !ch.is_ascii_alphabetic() {
            return Err(bad(format!("unexpected character '{ch}'")));
        }
        let n = count.take().unwrap_or(1);
        if n == 0 {
            return Err(bad(format!("zero count before '{ch}'")));
        }
        let upper = ch.to_ascii_uppercase() as u8;
        let kind = match find_kind(variant, upper, false) {
            Some(k) if (k.0 as usize) < spec.hand_kinds as usize => k,
            Some(k) => {
                let name = spec.pieces[k.index()].name;
                return Err(bad(format!("a {name} cannot be held in hand")));
            }
            None => return Err(bad(format!("unknown piece letter '{ch}' for {variant}"))),
        };
        let color = if ch.is_ascii_uppercase() { Color::Sente } else { Color::Gote };
        let hand = &mut hands[color.index()];
        let total = hand.count(kind.0) as u32 + n;
        if total > MAX_HAND_COUNT as u32 {
            return Err(bad(format!("more than {MAX_HAND_COUNT} of '{ch}'")));
        }
        hand.set(kind.0, total as u8);
    }
    if count.is_some() {
        return Err(bad("count without a piece letter at the end".to_string()));
    }
    Ok(hands)
}

/// The SFEN of a position: hands in the variant's order, sente first.
pub fn to_sfen(pos: &Position) -> String {
    format_setup(&pos.to_setup())
}

/// The SFEN of a setup (validated or not).
pub fn format_setup(setup: &Setup) -> String {
    let variant = setup.variant;
    let spec = variant.spec();
    let g = variant.geometry();
    let mut out = String::new();
    for rank in 0..g.ranks {
        if rank > 0 {
            out.push('/');
        }
        let mut empty = 0;
        for file in (1..=g.files).rev() {
            let sq = Square::new(file, rank).expect("on board");
            match setup.piece_at(sq) {
                None => empty += 1,
                Some(p) => {
                    if empty > 0 {
                        write!(out, "{empty}").expect("write to String");
                        empty = 0;
                    }
                    out.push_str(&piece_str(variant, p));
                }
            }
        }
        if empty > 0 {
            write!(out, "{empty}").expect("write to String");
        }
    }
    out.push(' ');
    out.push(setup.side.sfen_char());
    out.push(' ');
    let mut hand = String::new();
    for color in Color::ALL {
        for k in 0..spec.hand_kinds {
            let n = setup.hands[color.index()].count(k);
            if n > 1 {
                write!(hand, "{n}").expect("write to String");
            }
            if n > 0 {
                hand.push(letter(spec.pieces[k as usize].letter, color));
            }
        }
    }
    out.push_str(if hand.is_empty() { "-" } else { &hand });
    write!(out, " {}", setup.move_number).expect("write to String");
    out
}

fn letter(upper: u8, color: Color) -> char {
    match color {
        Color::Sente => upper as char,
        Color::Gote => upper.to_ascii_lowercase() as char,
    }
}

/// A piece as in SFEN: `P`, `+p`.
pub fn piece_str(variant: Variant, piece: Piece) -> String {
    let spec = &variant.spec().pieces[piece.kind.index()];
    let l = letter(spec.letter, piece.color);
    if spec.promoted { format!("+{l}") } else { l.to_string() }
}
