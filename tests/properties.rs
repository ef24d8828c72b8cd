//! Property tests along random games of every variant: the move generator
//! against a slow, obviously correct reference; incremental hash against
//! the recomputed one; SFEN and compact-move round trips; play/undo
//! leaving no trace; parsers never panicking on arbitrary input.

use pantheon::notation::{UsiMove, format_move, parse_position, parse_setup, to_sfen};
use pantheon::rules::variant::PromotionRule;
use pantheon::rules::{Color, CompactMove, Game, Move, Piece, PieceKind, Position, Square, Variant};
use proptest::prelude::*;
use std::collections::BTreeSet;

/// A tiny deterministic generator for the random games.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

/// The reference: a mailbox board that walks each piece's Betza atoms and
/// slides square by square, and tests every candidate move by playing it
/// and looking for an attack on the king. It shares nothing with the
/// engine but the variant specs.
mod reference {
    use super::*;

    #[derive(Clone)]
    pub struct Board {
        pub variant: Variant,
        pub squares: [Option<Piece>; 81],
        pub hands: [[u8; 10]; 2],
        pub side: Color,
    }

    impl Board {
        pub fn from(pos: &Position) -> Board {
            let s = pos.to_setup();
            let mut hands = [[0; 10]; 2];
            for c in Color::ALL {
                for k in 0..pos.variant().spec().hand_kinds {
                    hands[c.index()][k as usize] = s.hands[c.index()].count(k);
                }
            }
            Board { variant: s.variant, squares: s.board, hands, side: s.side }
        }

        fn on_board(&self, file: i32, rank: i32) -> Option<Square> {
            self.variant.geometry().square(file, rank)
        }

        /// Squares a piece on `from` attacks, walking its move.
        pub fn attacks(&self, from: Square, piece: Piece, empty_board: bool) -> Vec<Square> {
            let spec = &self.variant.spec().pieces[piece.kind.index()];
            let forward = if piece.color == Color::Sente { -1 } else { 1 };
            let (f0, r0) = (from.file() as i32, from.rank() as i32);
            let mut out = Vec::new();
            for atom in spec.movement.leaps {
                for &(df, dr) in atom.offsets() {
                    // Gote's moves are sente's turned by 180 degrees.
                    if let Some(sq) = self.on_board(f0 - forward * df as i32, r0 + forward * dr as i32) {
                        out.push(sq);
                    }
                }
            }
            let mut dirs = Vec::new();
            if spec.movement.rook {
                dirs.extend([(0, 1), (0, -1), (1, 0), (-1, 0)]);
            }
            if spec.movement.bishop {
                dirs.extend([(1, 1), (1, -1), (-1, 1), (-1, -1)]);
            }
            for (df, dr) in dirs {
                let (mut f, mut r) = (f0 + df, r0 + dr);
                while let Some(sq) = self.on_board(f, r) {
                    out.push(sq);
                    if !empty_board && self.squares[sq.index()].is_some() {
                        break;
                    }
                    f += df;
                    r += dr;
                }
            }
            out
        }

        fn king(&self, color: Color) -> Square {
            let king = self.variant.spec().pieces.iter().position(|p| p.royal).unwrap() as u8;
            Square::all().find(|&sq| self.squares[sq.index()] == Some(Piece { color, kind: PieceKind(king) })).unwrap()
        }

        fn attacked(&self, target: Square, by: Color) -> bool {
            Square::all().any(|sq| match self.squares[sq.index()] {
                Some(p) if p.color == by => self.attacks(sq, p, false).contains(&target),
                _ => false,
            })
        }

        fn in_zone(&self, sq: Square, color: Color) -> bool {
            let g = self.variant.geometry();
            let depth = if color == Color::Sente { sq.rank() } else { g.ranks - 1 - sq.rank() };
            depth < self.variant.spec().zone_depth
        }

        /// Whether an unpromoted `kind` piece of `color` on `sq` could
        /// never move again.
        fn stuck(&self, sq: Square, color: Color, kind: PieceKind) -> bool {
            self.attacks(sq, Piece { color, kind }, true).is_empty()
        }

        fn after(&self, mv: Move) -> Board {
            let spec = self.variant.spec();
            let mut next = self.clone();
            let us = self.side;
            match mv {
                Move::Normal { from, to, promote } => {
                    let mut piece = next.squares[from.index()].take().unwrap();
                    if let Some(captured) = next.squares[to.index()] {
                        let p = &spec.pieces[captured.kind.index()];
                        let base = if p.promoted { p.partner.unwrap() } else { captured.kind.0 };
                        next.hands[us.index()][base as usize] += 1;
                    }
                    if promote {
                        piece.kind = PieceKind(spec.pieces[piece.kind.index()].partner.unwrap());
                    }
                    next.squares[to.index()] = Some(piece);
                }
                Move::Drop { kind, to } => {
                    next.hands[us.index()][kind.index()] -= 1;
                    next.squares[to.index()] = Some(Piece { color: us, kind });
                }
            }
            next.side = !us;
            next
        }

        pub fn legal(&self) -> Vec<Move> {
            let spec = self.variant.spec();
            let us = self.side;
            let mut candidates = Vec::new();
            for from in self.variant.geometry().squares() {
                let Some(piece) = self.squares[from.index()] else {
                    continue;
                };
                if piece.color != us {
                    continue;
                }
                let p = &spec.pieces[piece.kind.index()];
                for to in self.attacks(from, piece, false) {
                    if self.squares[to.index()].is_some_and(|q| q.color == us) {
                        continue;
                    }
                    let promotable = !p.promoted && p.partner.is_some();
                    let eligible = self.in_zone(from, us) || self.in_zone(to, us);
                    let choices: &[bool] = if !promotable || !eligible {
                        &[false]
                    } else if spec.promotion == PromotionRule::Mandatory || self.stuck(to, us, piece.kind) {
                        &[true]
                    } else {
                        &[false, true]
                    };
                    for &promote in choices {
                        candidates.push(Move::Normal { from, to, promote });
                    }
                }
            }
            for k in 0..spec.hand_kinds {
                if self.hands[us.index()][k as usize] == 0 {
                    continue;
                }
                let kind = PieceKind(k);
                for to in self.variant.geometry().squares() {
                    if self.squares[to.index()].is_some() || self.stuck(to, us, kind) {
                        continue;
                    }
                    if k == spec.pawn && spec.pawn_drops.two_pawns {
                        let doubled = (0..spec.geometry.ranks).any(|r| {
                            let sq = Square::new(to.file(), r).unwrap();
                            self.squares[sq.index()] == Some(Piece { color: us, kind })
                        });
                        if doubled {
                            continue;
                        }
                    }
                    candidates.push(Move::Drop { kind, to });
                }
            }
            candidates
                .into_iter()
                .filter(|&mv| {
                    let next = self.after(mv);
                    if next.attacked(next.king(us), !us) {
                        return false;
                    }
                    let pawn_drop = matches!(mv, Move::Drop { kind, .. } if kind.0 == spec.pawn);
                    let mate = || next.attacked(next.king(!us), us) && next.legal().is_empty();
                    !(pawn_drop && spec.pawn_drops.no_drop_mate && mate())
                })
                .collect()
        }
    }
}

fn move_set(v: Variant, moves: &[Move]) -> BTreeSet<String> {
    moves.iter().map(|&m| format_move(v, m)).collect()
}

/// Plays a random game of up to `plies` moves, calling `check` on each
/// position before its move.
fn random_game(v: Variant, seed: u64, plies: usize, mut check: impl FnMut(&Game, &[Move])) {
    let mut rng = Rng(seed);
    let mut game = Game::new(Position::startpos(v));
    for _ in 0..plies {
        let moves = game.legal_moves();
        check(&game, &moves);
        if moves.is_empty() || game.outcome().is_some() {
            break;
        }
        game.play(moves[rng.below(moves.len())]);
    }
}

fn variant() -> impl Strategy<Value = Variant> {
    prop::sample::select(Variant::ALL.to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn movegen_matches_reference(v in variant(), seed in any::<u64>()) {
        random_game(v, seed, 60, |game, _| {
            let pos = game.position();
            let ours = move_set(v, &pos.legal_moves());
            let reference = move_set(v, &reference::Board::from(pos).legal());
            assert_eq!(ours, reference, "{}", to_sfen(pos));
        });
    }

    #[test]
    fn incremental_hash_and_round_trips(v in variant(), seed in any::<u64>()) {
        random_game(v, seed, 150, |game, moves| {
            let pos = game.position();
            assert_eq!(pos.hash(), pos.compute_hash(), "{}", to_sfen(pos));
            let sfen = to_sfen(pos);
            let again = parse_position(v, &sfen).unwrap();
            assert_eq!(&again, pos);
            assert_eq!(again.hash(), pos.hash());
            assert_eq!(to_sfen(&again), sfen);
            for &mv in moves {
                assert_eq!(pos.hash_after(mv), pos.play(mv).hash());
                assert_eq!(pos.gives_check(mv), pos.play(mv).in_check(), "{} {}", to_sfen(pos), format_move(v, mv));
                assert_eq!(Move::from(CompactMove::from(mv)), mv);
                let text = format_move(v, mv);
                assert_eq!(UsiMove::parse(&text, v.geometry()).unwrap().to_move(pos), Ok(mv));
            }
        });
    }

    #[test]
    fn play_then_undo_leaves_no_trace(v in variant(), seed in any::<u64>()) {
        random_game(v, seed, 80, |game, moves| {
            let mut copy = game.clone();
            let before = (to_sfen(copy.position()), copy.history().to_vec(), copy.legal_moves());
            for &mv in moves.iter().take(20) {
                copy.play(mv);
                assert_eq!(copy.undo(), Some(mv));
                let after = (to_sfen(copy.position()), copy.history().to_vec(), copy.legal_moves());
                assert_eq!(before, after);
            }
        });
    }

    #[test]
    fn policy_index_is_a_bijection_on_legal_moves(v in variant(), seed in any::<u64>()) {
        let layout = pantheon::nn::Layout::new(v);
        random_game(v, seed, 100, |game, moves| {
            let pos = game.position();
            let mut seen = std::collections::HashSet::new();
            for &mv in moves {
                let i = layout.index(pos, mv);
                assert!(i < layout.policy_len());
                assert!(seen.insert(i), "{} {}: index {i} twice", to_sfen(pos), format_move(v, mv));
                assert_eq!(layout.decode(pos, i), Some(mv), "{} {}", to_sfen(pos), format_move(v, mv));
            }
        });
    }

    #[test]
    fn sfen_parser_never_panics(v in variant(), text in "\\PC{0,80}") {
        let _ = parse_position(v, &text);
    }

    #[test]
    fn sfen_parser_never_panics_on_mutated_sfens(
        v in variant(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..3u8), 1..6),
    ) {
        let mut bytes = v.spec().start_sfen.as_bytes().to_vec();
        for (at, byte, op) in edits {
            let i = at.index(bytes.len() + 1);
            let ch = b"0123456789/+-bw PpKkRrBbNnSsGgQqAaCcMmFfVvUu*x"[byte as usize % 46];
            match op {
                0 => bytes.insert(i, ch),
                1 if i < bytes.len() => { bytes.remove(i); }
                _ if i < bytes.len() => bytes[i] = ch,
                _ => {}
            }
        }
        let text = String::from_utf8(bytes).unwrap();
        if let Ok(setup) = parse_setup(v, &text)
            && let Ok(pos) = Position::from_setup(&setup)
        {
            // Whatever parses is a usable position.
            let _ = pos.legal_moves();
            let _ = Game::new(pos).outcome();
        }
    }

    #[test]
    fn usi_move_parser_never_panics(v in variant(), text in "\\PC{0,8}", bytes in prop::collection::vec(any::<u8>(), 0..8)) {
        let pos = Position::startpos(v);
        for t in [text, String::from_utf8_lossy(&bytes).into_owned()] {
            if let Ok(m) = UsiMove::parse(&t, v.geometry()) {
                let _ = m.to_move(&pos);
            }
        }
    }

    #[test]
    fn compact_move_from_bits_never_panics(bits in any::<u16>()) {
        if let Some(m) = CompactMove::from_bits(bits) {
            assert_eq!(CompactMove::from(Move::from(m)), m);
        }
    }
}
