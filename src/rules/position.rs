//! [`Position`]: a validated board state (no history) and copy-make moves.

use super::hand::{Hand, MAX_HAND_COUNT};
use super::piece::MAX_KINDS;
use super::setup::{PositionError, Setup};
use super::tables::{NONE, VariantTables};
use super::zobrist::KEYS;
use super::{Bitboard, Color, Move, NUM_SQUARES, Piece, PieceKind, Square, Variant};

/// A legal position of a variant: board, hands, side to move. It holds no
/// game history; repetition rules live in [`Game`](super::Game).
///
/// Invariants: each side has exactly one king; `by_color`, `by_kind`,
/// `sliders`, `kings` and `hash` agree with `board` and `hands`;
/// `checkers` are the pieces attacking the side to move's king; the side
/// not to move is not in check.
#[derive(Clone, Debug)]
pub struct Position {
    variant: Variant,
    side: Color,
    board: [Option<Piece>; NUM_SQUARES],
    by_color: [Bitboard; 2],
    /// Pieces of each kind, both colours.
    by_kind: [Bitboard; MAX_KINDS],
    /// `sliders[color][0]`: pieces that slide like a rook; `[1]`: like a bishop.
    sliders: [[Bitboard; 2]; 2],
    hands: [Hand; 2],
    kings: [Square; 2],
    checkers: Bitboard,
    hash: u64,
    move_number: u32,
}

impl PartialEq for Position {
    /// Same variant, board, hands and side to move (the move number is not
    /// part of a position's identity).
    fn eq(&self, other: &Position) -> bool {
        self.variant == other.variant
            && self.side == other.side
            && self.board == other.board
            && self.hands == other.hands
    }
}

impl Eq for Position {}

impl Position {
    /// Validates a setup: one king each, no piece that could never move,
    /// no two unpromoted pawns on a file where the variant forbids it, the
    /// side not to move not in check.
    pub fn from_setup(setup: &Setup) -> Result<Position, PositionError> {
        let variant = setup.variant;
        let t = variant.tables();
        let g = variant.geometry();
        if setup.move_number == 0 {
            return Err(PositionError::BadMoveNumber);
        }
        let mut pos = Position {
            variant,
            side: setup.side,
            board: [None; NUM_SQUARES],
            by_color: [Bitboard::EMPTY; 2],
            by_kind: [Bitboard::EMPTY; MAX_KINDS],
            sliders: [[Bitboard::EMPTY; 2]; 2],
            hands: setup.hands,
            kings: [Square::new(1, 0).expect("1a"); 2],
            checkers: Bitboard::EMPTY,
            hash: 0,
            move_number: setup.move_number,
        };
        let mut king_count = [0; 2];
        for sq in Square::all() {
            let Some(piece) = setup.board[sq.index()] else {
                continue;
            };
            if !g.has(sq) {
                return Err(PositionError::OffBoard(sq, g.files, g.ranks));
            }
            let kind = piece.kind.0;
            if kind == t.king {
                king_count[piece.color.index()] += 1;
                pos.kings[piece.color.index()] = sq;
            }
            if !t.drop_to[kind as usize][piece.color.index()].contains(sq) && !t.spec.pieces[kind as usize].promoted {
                return Err(PositionError::DeadPiece { square: sq, kind: t.spec.pieces[kind as usize].name });
            }
            pos.put(sq, piece);
        }
        for c in Color::ALL {
            match king_count[c.index()] {
                0 => return Err(PositionError::MissingKing(c)),
                1 => {}
                _ => return Err(PositionError::TooManyKings(c)),
            }
            for k in 0..t.hand_kinds as u8 {
                // Board pieces of this kind (promoted or not) plus both hands
                // bound what one hand can ever hold.
                let on_board =
                    (0..t.num_kinds).filter(|&j| t.in_hand_as[j] == k).map(|j| pos.by_kind[j].count()).sum::<u32>();
                let total = on_board + (pos.hands[0].count(k) + pos.hands[1].count(k)) as u32;
                if total > MAX_HAND_COUNT as u32 {
                    let kind = t.spec.pieces[k as usize].name;
                    return Err(PositionError::TooManyPieces { kind, count: total });
                }
                let n = pos.hands[c.index()].count(k);
                pos.hash ^= KEYS.hand[c.index()][k as usize][n as usize];
            }
            if t.spec.pawn_drops.two_pawns {
                let pawns = pos.pieces(c, PieceKind(t.pawn));
                for file in 1..=g.files {
                    if (pawns & t.files[file as usize]).more_than_one() {
                        return Err(PositionError::TwoPawns { color: c, file });
                    }
                }
            }
        }
        if pos.side == Color::Gote {
            pos.hash ^= KEYS.gote_to_move;
        }
        let them = !pos.side;
        if pos.attackers(pos.king(them), pos.side, pos.occupied()).any() {
            return Err(PositionError::OpponentInCheck(them));
        }
        pos.checkers = pos.attackers(pos.king(pos.side), them, pos.occupied());
        Ok(pos)
    }

    /// The unvalidated form of this position.
    pub fn to_setup(&self) -> Setup {
        Setup {
            variant: self.variant,
            board: self.board,
            hands: self.hands,
            side: self.side,
            move_number: self.move_number,
        }
    }

    #[inline]
    pub fn variant(&self) -> Variant {
        self.variant
    }

    #[inline]
    pub(crate) fn tables(&self) -> &'static VariantTables {
        self.variant.tables()
    }

    #[inline]
    pub fn side_to_move(&self) -> Color {
        self.side
    }

    #[inline]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        self.board[sq.index()]
    }

    #[inline]
    pub fn hand(&self, color: Color) -> &Hand {
        &self.hands[color.index()]
    }

    #[inline]
    pub fn king(&self, color: Color) -> Square {
        self.kings[color.index()]
    }

    /// Pieces giving check to the side to move.
    #[inline]
    pub fn checkers(&self) -> Bitboard {
        self.checkers
    }

    #[inline]
    pub fn in_check(&self) -> bool {
        self.checkers.any()
    }

    /// Zobrist hash of board, hands and side to move (not the move number).
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// SFEN move number (1 for the first move of a game).
    #[inline]
    pub fn move_number(&self) -> u32 {
        self.move_number
    }

    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
    }

    #[inline]
    pub fn pieces_of(&self, color: Color) -> Bitboard {
        self.by_color[color.index()]
    }

    #[inline]
    pub fn pieces(&self, color: Color, kind: PieceKind) -> Bitboard {
        self.by_kind[kind.index()] & self.by_color[color.index()]
    }

    /// `[rook-like, bishop-like]` sliders of `color`.
    #[inline]
    pub(crate) fn sliders(&self, color: Color) -> [Bitboard; 2] {
        self.sliders[color.index()]
    }

    /// Pieces of `by` attacking `sq` when the occupied squares are `occ`.
    pub fn attackers(&self, sq: Square, by: Color, occ: Bitboard) -> Bitboard {
        let t = self.tables();
        let theirs = self.by_color[by.index()];
        let mut att = Bitboard::EMPTY;
        let mut leapers = t.leaper_kinds;
        while leapers != 0 {
            let k = leapers.trailing_zeros() as usize;
            leapers &= leapers - 1;
            att |= self.by_kind[k] & t.leaps[k][(!by).index()][sq.index()];
        }
        let [rooks, bishops] = self.sliders[by.index()];
        if rooks.any() {
            att |= rooks & t.rook_attacks(sq, occ);
        }
        if bishops.any() {
            att |= bishops & t.bishop_attacks(sq, occ);
        }
        att & theirs & occ
    }

    /// Whether any piece of `by` attacks `sq` when the occupied squares are
    /// `occ`.
    pub fn is_attacked(&self, sq: Square, by: Color, occ: Bitboard) -> bool {
        let t = self.tables();
        let theirs = self.by_color[by.index()] & occ;
        let [rooks, bishops] = self.sliders[by.index()];
        if (rooks & occ).any() && (rooks & occ & t.rook_attacks(sq, occ)).any() {
            return true;
        }
        if (bishops & occ).any() && (bishops & occ & t.bishop_attacks(sq, occ)).any() {
            return true;
        }
        let mut leapers = t.leaper_kinds;
        while leapers != 0 {
            let k = leapers.trailing_zeros() as usize;
            leapers &= leapers - 1;
            if (self.by_kind[k] & theirs & t.leaps[k][(!by).index()][sq.index()]).any() {
                return true;
            }
        }
        false
    }

    /// The winner by campmate, if the variant has it and a king stands on
    /// its far rank. In play only the side that just moved can be there; a
    /// set-up position with both there is won by the side that just moved.
    pub fn campmate_winner(&self) -> Option<Color> {
        let t = self.tables();
        if !t.spec.campmate {
            return None;
        }
        [!self.side, self.side].into_iter().find(|&c| t.far_rank[c.index()].contains(self.king(c)))
    }

    /// The position after `mv`, which must be legal here.
    #[must_use]
    pub fn play(&self, mv: Move) -> Position {
        let mut next = self.clone();
        next.play_mut(mv);
        next
    }

    /// Plays `mv`, which must be legal in this position, in place.
    pub fn play_mut(&mut self, mv: Move) {
        let t = self.tables();
        let us = self.side;
        match mv {
            Move::Normal { from, to, promote } => {
                let piece = self.board[from.index()].expect("legal move starts on a piece");
                if let Some(captured) = self.board[to.index()] {
                    self.remove(to, captured);
                    let k = t.in_hand_as[captured.kind.index()];
                    debug_assert!(k != NONE, "kings are never captured");
                    self.add_to_hand(us, k, 1);
                }
                self.remove(from, piece);
                let kind = if promote { PieceKind(t.promotes_to[piece.kind.index()]) } else { piece.kind };
                self.put(to, Piece { color: us, kind });
                if piece.kind.0 == t.king {
                    self.kings[us.index()] = to;
                }
            }
            Move::Drop { kind, to } => {
                self.add_to_hand(us, kind.0, -1);
                self.put(to, Piece { color: us, kind });
            }
        }
        self.side = !us;
        self.hash ^= KEYS.gote_to_move;
        self.move_number += 1;
        self.checkers = self.attackers(self.king(!us), us, self.occupied());
    }

    /// The hash the position would have after `mv` (legal here), computed
    /// without making the move.
    pub fn hash_after(&self, mv: Move) -> u64 {
        let t = self.tables();
        let us = self.side.index();
        let mut h = self.hash ^ KEYS.gote_to_move;
        match mv {
            Move::Normal { from, to, promote } => {
                let piece = self.board[from.index()].expect("legal move starts on a piece");
                if let Some(captured) = self.board[to.index()] {
                    h ^= KEYS.piece[captured.color.index()][captured.kind.index()][to.index()];
                    let k = t.in_hand_as[captured.kind.index()] as usize;
                    let n = self.hands[us].count(k as u8) as usize;
                    h ^= KEYS.hand[us][k][n] ^ KEYS.hand[us][k][n + 1];
                }
                let kind = if promote { t.promotes_to[piece.kind.index()] as usize } else { piece.kind.index() };
                h ^= KEYS.piece[us][piece.kind.index()][from.index()] ^ KEYS.piece[us][kind][to.index()];
            }
            Move::Drop { kind, to } => {
                let n = self.hands[us].count(kind.0) as usize;
                h ^= KEYS.hand[us][kind.index()][n] ^ KEYS.hand[us][kind.index()][n - 1];
                h ^= KEYS.piece[us][kind.index()][to.index()];
            }
        }
        h
    }

    /// The hash recomputed from scratch (for tests of the incremental one).
    pub fn compute_hash(&self) -> u64 {
        let mut h = 0;
        for sq in Square::all() {
            if let Some(p) = self.board[sq.index()] {
                h ^= KEYS.piece[p.color.index()][p.kind.index()][sq.index()];
            }
        }
        for c in Color::ALL {
            for k in 0..self.tables().hand_kinds {
                h ^= KEYS.hand[c.index()][k][self.hands[c.index()].count(k as u8) as usize];
            }
        }
        if self.side == Color::Gote {
            h ^= KEYS.gote_to_move;
        }
        h
    }

    fn put(&mut self, sq: Square, piece: Piece) {
        let t = self.tables();
        let (c, k) = (piece.color.index(), piece.kind.index());
        let bit = Bitboard::from_square(sq);
        self.board[sq.index()] = Some(piece);
        self.by_color[c] |= bit;
        self.by_kind[k] |= bit;
        if t.rook_kinds >> k & 1 != 0 {
            self.sliders[c][0] |= bit;
        }
        if t.bishop_kinds >> k & 1 != 0 {
            self.sliders[c][1] |= bit;
        }
        self.hash ^= KEYS.piece[c][k][sq.index()];
    }

    fn remove(&mut self, sq: Square, piece: Piece) {
        let (c, k) = (piece.color.index(), piece.kind.index());
        let keep = !Bitboard::from_square(sq);
        self.board[sq.index()] = None;
        self.by_color[c] &= keep;
        self.by_kind[k] &= keep;
        self.sliders[c][0] &= keep;
        self.sliders[c][1] &= keep;
        self.hash ^= KEYS.piece[c][k][sq.index()];
    }

    fn add_to_hand(&mut self, color: Color, kind: u8, delta: i8) {
        let (c, k) = (color.index(), kind as usize);
        let n = self.hands[c].count(kind);
        let m = n.checked_add_signed(delta).expect("hand count stays in range");
        self.hash ^= KEYS.hand[c][k][n as usize] ^ KEYS.hand[c][k][m as usize];
        self.hands[c].set(kind, m);
    }
}
