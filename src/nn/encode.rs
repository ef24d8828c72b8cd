//! Position -> input planes, and move <-> policy index, always from the
//! side to move's point of view: for gote the board is turned by 180
//! degrees, so "forward" is always up and the network sees one game.
//!
//! # Input planes (`C x H x W`, H = ranks, W = files of the variant)
//!
//! | planes | content |
//! | --- | --- |
//! | `0 .. K` | own pieces, one plane per piece kind (1 where it stands) |
//! | `K .. 2K` | opponent pieces, one plane per kind |
//! | `2K .. 2K+Hk` | own hand: count / [`HAND_SCALE`], constant over the board |
//! | `2K+Hk .. 2K+2Hk` | opponent hand, the same |
//! | `2K+2Hk` | repetitions so far: (occurrences - 1) / 3, constant |
//! | `2K+2Hk+1` | 1 if the side to move is gote (sente-specific rules) |
//! | `2K+2Hk+2` | all ones (lets convolutions see the board edge) |
//! | `2K+2Hk+3 ..` | with [`Features::Attacks`]: squares the side to move attacks at least 1, 2, 3 times, then the same for the opponent |
//!
//! K = the variant's piece kinds, Hk = its hand kinds. The attack planes
//! (as dlshogi's attacker counts) let a small net see what is hanging
//! without spending layers to work it out; a net's weight file says which
//! features it reads.
//!
//! # Policy layout (`T x H x W`, index = type * H * W + square)
//!
//! A board move is indexed by its origin square and a move type; a drop by
//! its destination and the dropped kind. Squares are numbered
//! `rank * W + column` in the side to move's view (rank 0 = the far rank,
//! column 0 = the leftmost file as that side sees the board). Types:
//!
//! | types | moves |
//! | --- | --- |
//! | `8 * (n - 1)` | slides/steps: 8 directions x distance 1..n-1 (n = max(H, W)) |
//! | 8 | knight leaps |
//! | the same again | each of the above with promotion |
//! | Hk | drops, one per hand kind |
//!
//! Every legal move of every variant maps to a distinct index (a leap of
//! two squares on a line uses the distance-2 slot of that direction), and
//! the map is invertible given the position.

use crate::rules::{Color, Move, NUM_SQUARES, PieceKind, Position, Square, Variant};

/// Hand counts are divided by this (a constant plane of 1.0 = 4 pieces).
pub const HAND_SCALE: f32 = 4.0;

/// The eight directions as (column, rank) steps in the mover's view, rank
/// steps negative = forward.
const DIRECTIONS: [(i32, i32); 8] = [(0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1)];
const KNIGHT: [(i32, i32); 8] = [(1, -2), (2, -1), (2, 1), (1, 2), (-1, 2), (-2, 1), (-2, -1), (-1, -2)];

/// Attack-count levels of [`Features::Attacks`]: at least 1, 2, 3 attackers.
pub const ATTACK_LEVELS: usize = 3;

/// Which input planes a net reads.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Features {
    /// Pieces, hands, repetitions, side, ones.
    #[default]
    Base,
    /// Base plus attacker counts per square for both sides.
    Attacks,
}

named_enum!(Features, "input features", { Base => "base", Attacks => "attacks" });

/// Shapes of a variant's encoding.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub variant: Variant,
    pub features: Features,
    /// Board height (ranks) and width (files).
    pub height: usize,
    pub width: usize,
    /// Input planes.
    pub planes: usize,
    /// Move types; the policy has `types * height * width` entries.
    pub types: usize,
    kinds: usize,
    hand_kinds: usize,
    max_distance: usize,
}

impl Layout {
    /// The base encoding of `variant`.
    pub fn new(variant: Variant) -> Layout {
        Layout::with_features(variant, Features::Base)
    }

    /// The encoding of `variant` with `features`.
    pub fn with_features(variant: Variant, features: Features) -> Layout {
        let spec = variant.spec();
        let (height, width) = (spec.geometry.ranks as usize, spec.geometry.files as usize);
        let kinds = spec.pieces.len();
        let hand_kinds = spec.hand_kinds as usize;
        let max_distance = height.max(width) - 1;
        let extra = match features {
            Features::Base => 0,
            Features::Attacks => 2 * ATTACK_LEVELS,
        };
        Layout {
            variant,
            features,
            height,
            width,
            planes: 2 * kinds + 2 * hand_kinds + 3 + extra,
            types: 2 * (8 * max_distance + 8) + hand_kinds,
            kinds,
            hand_kinds,
            max_distance,
        }
    }

    /// Entries of one position's input (`planes * height * width`).
    pub fn input_len(&self) -> usize {
        self.planes * self.height * self.width
    }

    /// Entries of one policy (`types * height * width`).
    pub fn policy_len(&self) -> usize {
        self.types * self.height * self.width
    }

    /// (rank, column) of `sq` in `side`'s view.
    fn view(&self, sq: Square, side: Color) -> (usize, usize) {
        let (rank, col) = (sq.rank() as usize, self.width - sq.file() as usize);
        match side {
            Color::Sente => (rank, col),
            Color::Gote => (self.height - 1 - rank, self.width - 1 - col),
        }
    }

    /// The square at (rank, column) of `side`'s view.
    fn unview(&self, rank: usize, col: usize, side: Color) -> Square {
        let (rank, col) = match side {
            Color::Sente => (rank, col),
            Color::Gote => (self.height - 1 - rank, self.width - 1 - col),
        };
        Square::new((self.width - col) as u8, rank as u8).expect("view squares are on the board")
    }

    /// Writes the planes of `pos` (seen `repetitions` times) into `out`,
    /// which must have [`Layout::input_len`] entries.
    pub fn encode(&self, pos: &Position, repetitions: u8, out: &mut [f32]) {
        assert_eq!(out.len(), self.input_len(), "input buffer size");
        out.fill(0.0);
        let us = pos.side_to_move();
        let hw = self.height * self.width;
        for sq in self.variant.geometry().squares() {
            if let Some(p) = pos.piece_at(sq) {
                let (r, c) = self.view(sq, us);
                let plane = p.kind.index() + if p.color == us { 0 } else { self.kinds };
                out[plane * hw + r * self.width + c] = 1.0;
            }
        }
        let mut fill = |plane: usize, value: f32| out[plane * hw..(plane + 1) * hw].fill(value);
        for k in 0..self.hand_kinds {
            fill(2 * self.kinds + k, pos.hand(us).count(k as u8) as f32 / HAND_SCALE);
            fill(2 * self.kinds + self.hand_kinds + k, pos.hand(!us).count(k as u8) as f32 / HAND_SCALE);
        }
        let base = 2 * self.kinds + 2 * self.hand_kinds;
        fill(base, repetitions.saturating_sub(1) as f32 / 3.0);
        fill(base + 1, if us == Color::Gote { 1.0 } else { 0.0 });
        fill(base + 2, 1.0);
        if self.features == Features::Attacks {
            for (i, side) in [us, !us].into_iter().enumerate() {
                let counts = attack_counts(pos, side);
                for sq in self.variant.geometry().squares() {
                    let n = counts[sq.index()] as usize;
                    let (r, c) = self.view(sq, us);
                    for level in 0..n.min(ATTACK_LEVELS) {
                        out[(base + 3 + i * ATTACK_LEVELS + level) * hw + r * self.width + c] = 1.0;
                    }
                }
            }
        }
    }

    /// The policy index of legal move `mv` in `pos`.
    pub fn index(&self, pos: &Position, mv: Move) -> usize {
        let us = pos.side_to_move();
        let hw = self.height * self.width;
        let square = |sq: Square| {
            let (r, c) = self.view(sq, us);
            r * self.width + c
        };
        match mv {
            Move::Drop { kind, to } => (2 * (8 * self.max_distance + 8) + kind.index()) * hw + square(to),
            Move::Normal { from, to, promote } => {
                let (fr, fc) = self.view(from, us);
                let (tr, tc) = self.view(to, us);
                let (dr, dc) = (tr as i32 - fr as i32, tc as i32 - fc as i32);
                let slide = DIRECTIONS.iter().enumerate().find_map(|(d, &(sc, sr))| {
                    let n = dc.abs().max(dr.abs());
                    (n > 0 && dc == sc * n && dr == sr * n).then(|| d * self.max_distance + n as usize - 1)
                });
                let ty = slide.unwrap_or_else(|| {
                    let k = KNIGHT.iter().position(|&(kc, kr)| kc == dc && kr == dr).expect("a knight leap");
                    8 * self.max_distance + k
                });
                let ty = if promote { ty + 8 * self.max_distance + 8 } else { ty };
                ty * hw + fr * self.width + fc
            }
        }
    }

    /// The index of legal move `mv` in `next` for the reply head of the
    /// position before `next`: the same move type as [`Layout::index`]
    /// (directions are the mover's), its square seen from the other side,
    /// that is the board turned half a turn, so that the head's outputs lie
    /// over the squares that the side to move before `next` sees.
    pub fn reply_index(&self, next: &Position, mv: Move) -> usize {
        let hw = self.height * self.width;
        let index = self.index(next, mv);
        index - index % hw + (hw - 1 - index % hw)
    }

    /// The move a policy index stands for in `pos`, if it names a move of
    /// the right shape (it need not be legal).
    pub fn decode(&self, pos: &Position, index: usize) -> Option<Move> {
        let us = pos.side_to_move();
        let hw = self.height * self.width;
        let (ty, sq) = (index / hw, index % hw);
        let (r, c) = (sq / self.width, sq % self.width);
        let board_types = 8 * self.max_distance + 8;
        if ty >= 2 * board_types {
            let kind = ty - 2 * board_types;
            return (kind < self.hand_kinds)
                .then(|| Move::Drop { kind: PieceKind(kind as u8), to: self.unview(r, c, us) });
        }
        let promote = ty >= board_types;
        let ty = ty % board_types;
        let (dc, dr) = if ty < 8 * self.max_distance {
            let (sc, sr) = DIRECTIONS[ty / self.max_distance];
            let n = (ty % self.max_distance + 1) as i32;
            (sc * n, sr * n)
        } else {
            KNIGHT[ty - 8 * self.max_distance]
        };
        let (tr, tc) = (r as i32 + dr, c as i32 + dc);
        if tr < 0 || tc < 0 || tr >= self.height as i32 || tc >= self.width as i32 {
            return None;
        }
        Some(Move::Normal { from: self.unview(r, c, us), to: self.unview(tr as usize, tc as usize, us), promote })
    }
}

/// How many of `side`'s pieces attack each square (frame index), with
/// the current occupancy (a slider's attack stops at the first piece).
pub fn attack_counts(pos: &Position, side: Color) -> [u8; NUM_SQUARES] {
    let tables = pos.variant().tables();
    let occ = pos.occupied();
    let mut counts = [0u8; NUM_SQUARES];
    for from in pos.pieces_of(side) {
        if let Some(p) = pos.piece_at(from) {
            for to in tables.attacks(p.kind.index() as u8, side, from, occ) {
                counts[to.index()] = counts[to.index()].saturating_add(1);
            }
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::{parse_move, parse_position};

    #[test]
    fn sizes() {
        let m = Layout::new(Variant::Minishogi);
        assert_eq!((m.height, m.width, m.planes, m.types), (5, 5, 2 * 10 + 2 * 5 + 3, 2 * (32 + 8) + 5));
        let p = Layout::new(Variant::Pandemonium);
        assert_eq!(p.types, 2 * (64 + 8) + 9);
        assert_eq!(p.planes, 2 * 19 + 18 + 3);
    }

    #[test]
    fn attack_planes_count_the_attackers_of_each_square() {
        let v = Variant::Minishogi;
        let l = Layout::with_features(v, Features::Attacks);
        assert_eq!(l.planes, Layout::new(v).planes + 2 * ATTACK_LEVELS);
        // Gote to move, with pieces in hand and a crowded centre.
        let pos = parse_position(v, "1r1gk/2s1p/2P2/2S2/KG1BR w b 1").unwrap();
        let mut x = vec![0.0; l.input_len()];
        l.encode(&pos, 1, &mut x);
        let hw = 25;
        let first = Layout::new(v).planes;
        let us = pos.side_to_move();
        let mut seen = 0;
        for (i, side) in [us, !us].into_iter().enumerate() {
            let counts = attack_counts(&pos, side);
            for sq in v.geometry().squares() {
                // The slow way: every attacker of the square.
                let n = pos.attackers(sq, side, pos.occupied()).count() as usize;
                assert_eq!(counts[sq.index()] as usize, n, "{sq}");
                seen += n;
                let (r, c) = l.view(sq, us);
                for level in 0..ATTACK_LEVELS {
                    let plane = first + i * ATTACK_LEVELS + level;
                    let want = if n > level { 1.0 } else { 0.0 };
                    assert_eq!(x[plane * hw + r * 5 + c], want, "side {i} level {level} at {sq}");
                }
            }
        }
        assert!(seen > 10);
        // The base planes are those of the base encoding.
        let mut base = vec![0.0; Layout::new(v).input_len()];
        Layout::new(v).encode(&pos, 1, &mut base);
        assert_eq!(&x[..base.len()], &base[..]);
    }

    #[test]
    fn planes_of_a_known_position() {
        // Gote to move: the board is seen turned around.
        let v = Variant::Minishogi;
        let l = Layout::new(v);
        let pos = parse_position(v, "rbsgk/4p/5/P4/KGSBR w 2Pb 1").unwrap();
        let mut x = vec![0.0; l.input_len()];
        l.encode(&pos, 2, &mut x);
        let hw = 25;
        let at = |plane: usize, r: usize, c: usize| x[plane * hw + r * 5 + c];
        // Gote's king on 1a is, in gote's view, at the bottom-left corner.
        assert_eq!(at(5, 4, 0), 1.0, "own king");
        // Sente's king on 5e is, in gote's view, top right; it is the opponent's.
        assert_eq!(at(10 + 5, 0, 4), 1.0, "opponent king");
        // Gote's pawn on 1b: own pawn (kind 4), one rank above gote's king row.
        assert_eq!(at(4, 3, 0), 1.0);
        // Hands: gote (to move) holds a bishop (kind 1); sente holds 2 pawns (kind 4).
        assert_eq!(at(20 + 1, 2, 2), 1.0 / HAND_SCALE);
        assert_eq!(at(25 + 4, 0, 0), 2.0 / HAND_SCALE);
        assert_eq!(at(30, 1, 1), 1.0 / 3.0, "seen twice");
        assert_eq!(at(31, 3, 3), 1.0, "gote to move");
        assert_eq!(at(32, 4, 4), 1.0);
        let pieces: f32 = x[..20 * hw].iter().sum();
        assert_eq!(pieces, 12.0);
    }

    #[test]
    fn sente_and_gote_see_mirrored_positions_alike() {
        let v = Variant::Minishogi;
        let l = Layout::new(v);
        let start = Position::startpos(v);
        // The start position is symmetric under a 180-degree turn with
        // colours swapped, so both sides see the same planes apart from
        // the side plane.
        let mut a = vec![0.0; l.input_len()];
        let mut b = vec![0.0; l.input_len()];
        l.encode(&start, 1, &mut a);
        let flipped = parse_position(v, "rbsgk/4p/5/P4/KGSBR w - 1").unwrap();
        l.encode(&flipped, 1, &mut b);
        let side_plane = (l.planes - 2) * 25;
        assert_eq!(a[..side_plane], b[..side_plane]);
        let e2e = parse_move(&start, "1e1d").unwrap();
        let gote = parse_move(&flipped, "5a5b").unwrap();
        assert_eq!(l.index(&start, e2e), l.index(&flipped, gote));
    }

    #[test]
    fn reply_indices_lie_over_the_squares_the_side_before_sees() {
        let v = Variant::Minishogi;
        let l = Layout::new(v);
        let start = Position::startpos(v);
        let next = start.play(parse_move(&start, "2e3d").unwrap());
        let hw = 25;
        for reply in ["4a2c", "3a4b"] {
            let reply = parse_move(&next, reply).unwrap();
            let Move::Normal { from, .. } = reply else { unreachable!() };
            let (index, r) = (l.index(&next, reply), l.reply_index(&next, reply));
            assert_eq!(r / hw, index / hw, "the mover's move type");
            let (rank, col) = l.view(from, start.side_to_move());
            assert_eq!(r % hw, rank * 5 + col);
            assert_ne!(r, index);
        }
    }
}
