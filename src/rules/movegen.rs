//! Legal move generation: board moves with their promotion choices, drops
//! with each variant's drop rules, check evasions and pins.
//!
//! Pins and interpositions only concern sliders: every leaping component
//! in these variants jumps, so a leaper's check can only be answered by
//! capturing it or moving the king.

use super::tables::{NONE, between};
use super::{Bitboard, Color, Move, MoveList, PieceKind, Position, Square};

impl Position {
    /// All legal moves of this position (ignoring game history: see
    /// [`Game::legal_moves`](super::Game::legal_moves) for the repetition
    /// ban of Mansindam).
    pub fn legal_moves(&self) -> MoveList {
        let mut moves = MoveList::with_capacity(128);
        self.generate_legal(&mut moves);
        moves
    }

    /// Clears `out` and fills it with the legal moves (no allocation once
    /// `out` has grown to fit).
    pub fn generate_legal(&self, out: &mut MoveList) {
        out.clear();
        let t = self.tables();
        let us = self.side_to_move();
        let them = !us;
        let occ = self.occupied();
        let ours = self.pieces_of(us);
        let ksq = self.king(us);

        let without_king = occ.without(ksq);
        for to in t.leaps[t.king as usize][us.index()][ksq.index()] & !ours {
            if !self.is_attacked(to, them, without_king) {
                out.push(Move::Normal { from: ksq, to, promote: false });
            }
        }
        let checkers = self.checkers();
        if checkers.more_than_one() {
            return;
        }
        let (targets_allowed, drops_allowed) = match checkers.first() {
            Some(checker) => {
                let block = self.interpositions(ksq, checker);
                (block.with(checker), block)
            }
            None => (!ours & t.board, t.board & !occ),
        };

        let pins = self.pins(us);
        for k in 0..t.num_kinds as u8 {
            if k == t.king {
                continue;
            }
            for from in self.pieces(us, PieceKind(k)) {
                let mut targets = t.attacks(k, us, from, occ) & targets_allowed & !ours;
                if pins.pinned.contains(from) {
                    targets &= pins.allowed(from);
                }
                self.push_board_moves(out, k, from, targets);
            }
        }

        if drops_allowed.any() {
            self.push_drops(out, drops_allowed);
        }
    }

    /// Whether the side to move has any legal move (ignoring history).
    pub fn has_legal_move(&self) -> bool {
        let mut moves = MoveList::new();
        self.generate_legal(&mut moves);
        !moves.is_empty()
    }

    /// Whether the legal move `mv` gives check, directly or by uncovering a
    /// slider, without playing it.
    pub fn gives_check(&self, mv: Move) -> bool {
        let t = self.tables();
        let us = self.side_to_move();
        let their_king = self.king(!us);
        let (kind, to, occ) = match mv {
            Move::Normal { from, to, promote } => {
                let k = self.piece_at(from).expect("legal move starts on a piece").kind.0;
                let kind = if promote { t.promotes_to[k as usize] } else { k };
                (kind, to, self.occupied().without(from).with(to))
            }
            Move::Drop { kind, to } => (kind.0, to, self.occupied().with(to)),
        };
        if t.attacks(kind, us, to, occ).contains(their_king) {
            return true;
        }
        let Move::Normal { from, .. } = mv else {
            return false;
        };
        let [rooks, bishops] = self.sliders(us);
        let uncovered = (rooks & t.rook_empty(their_king)) | (bishops & t.bishop_empty(their_king));
        for s in uncovered.without(from) {
            let line = between(their_king, s);
            if line.contains(from) && (line & occ).is_empty() {
                return true;
            }
        }
        false
    }

    /// Whether `mv` is legal here (ignoring history).
    pub fn is_legal(&self, mv: Move) -> bool {
        self.legal_moves().contains(&mv)
    }

    /// Squares where a piece would block the check that `checker` gives
    /// to the king on `ksq`: none when the checker leaps there (a piece
    /// with both a slide and a leap onto the king, or a two-square leaper
    /// like the alfil, cannot be blocked).
    pub(crate) fn interpositions(&self, ksq: Square, checker: Square) -> Bitboard {
        let t = self.tables();
        let piece = self.piece_at(checker).expect("checker stands on its square");
        if t.leaps[piece.kind.index()][piece.color.index()][checker.index()].contains(ksq) {
            Bitboard::EMPTY
        } else {
            between(ksq, checker)
        }
    }

    /// Our pieces that shield our king from an enemy slider, and where each
    /// may go.
    pub(crate) fn pins(&self, us: Color) -> Pins {
        let t = self.tables();
        let them = !us;
        let ksq = self.king(us);
        let occ = self.occupied();
        let [rooks, bishops] = self.sliders(them);
        let snipers = (rooks & t.rook_empty(ksq)) | (bishops & t.bishop_empty(ksq));
        let mut pins = Pins { pinned: Bitboard::EMPTY, list: [(ksq, Bitboard::EMPTY); 8], len: 0 };
        for sniper in snipers {
            let blockers = between(ksq, sniper) & occ;
            if !blockers.more_than_one() && (blockers & self.pieces_of(us)).any() {
                pins.pinned |= blockers;
                let square = blockers.first().expect("one blocker");
                pins.list[pins.len] = (square, between(ksq, sniper).with(sniper));
                pins.len += 1;
            }
        }
        pins
    }

    /// Our pieces pinned to our king by an enemy slider.
    pub fn pinned(&self, us: Color) -> Bitboard {
        self.pins(us).pinned
    }

    /// Pushes the moves of a `kind` piece from `from` to each of `targets`,
    /// with the promotion choices the variant gives.
    fn push_board_moves(&self, out: &mut MoveList, kind: u8, from: Square, targets: Bitboard) {
        let t = self.tables();
        let us = self.side_to_move().index();
        if t.promotes_to[kind as usize] == NONE {
            out.extend(targets.map(|to| Move::Normal { from, to, promote: false }));
            return;
        }
        let zone = t.zone[us];
        let eligible = if zone.contains(from) { targets } else { targets & zone };
        let forced = eligible & t.must_promote[kind as usize][us];
        out.extend((targets & !eligible).map(|to| Move::Normal { from, to, promote: false }));
        for to in eligible & !forced {
            out.push(Move::Normal { from, to, promote: false });
            out.push(Move::Normal { from, to, promote: true });
        }
        out.extend(forced.map(|to| Move::Normal { from, to, promote: true }));
    }

    /// Pushes drops onto `allowed` (empty squares, or interposition squares
    /// when in check).
    fn push_drops(&self, out: &mut MoveList, allowed: Bitboard) {
        let t = self.tables();
        let us = self.side_to_move();
        let hand = self.hand(us);
        let rules = t.spec.pawn_drops;
        for k in 0..t.hand_kinds as u8 {
            if hand.count(k) == 0 {
                continue;
            }
            let mut squares = allowed & t.drop_to[k as usize][us.index()];
            if k != t.pawn {
                out.extend(squares.map(|to| Move::Drop { kind: PieceKind(k), to }));
                continue;
            }
            if rules.two_pawns {
                for pawn in self.pieces(us, PieceKind(k)) {
                    squares &= !t.files[pawn.file() as usize];
                }
            }
            let their_king = self.king(!us);
            for to in squares {
                let drop = Move::Drop { kind: PieceKind(k), to };
                let gives_check = t.leaps[k as usize][us.index()][to.index()].contains(their_king);
                if rules.no_drop_mate && gives_check && self.is_drop_mate(drop) {
                    continue;
                }
                out.push(drop);
            }
        }
    }

    /// Whether the (checking) drop `drop` leaves the opponent without a
    /// legal move: the pawn-drop-mate test.
    fn is_drop_mate(&self, drop: Move) -> bool {
        !self.play(drop).has_legal_move()
    }
}

/// The pins against one king: at most one per direction.
pub(crate) struct Pins {
    pub pinned: Bitboard,
    /// (pinned square, squares it may move to: between king and pinner,
    /// pinner included). A pinned leaper may not jump past the pinner.
    list: [(Square, Bitboard); 8],
    len: usize,
}

impl Pins {
    fn allowed(&self, sq: Square) -> Bitboard {
        self.list[..self.len].iter().find(|(s, _)| *s == sq).map_or(Bitboard::EMPTY, |&(_, allowed)| allowed)
    }
}
