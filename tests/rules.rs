//! One test (or more) per rule of ../shared/rules/, on hand-built positions.

use pantheon::notation::{UsiMove, format_move, parse_position, parse_setup, to_sfen};
use pantheon::rules::{Color, EndReason, Game, Outcome, Position, PositionError, Variant, perft};

use Variant::*;

fn position(v: Variant, sfen: &str) -> Position {
    parse_position(v, sfen).unwrap_or_else(|e| panic!("{sfen}: {e}"))
}

fn legal(v: Variant, sfen: &str) -> Vec<String> {
    let mut moves: Vec<String> = position(v, sfen).legal_moves().into_iter().map(|m| format_move(v, m)).collect();
    moves.sort();
    moves
}

/// The game after `moves` from `sfen`; panics if a move is illegal.
fn game(v: Variant, sfen: &str, moves: &str) -> Game {
    let mut game = Game::new(position(v, sfen));
    for text in moves.split_whitespace() {
        assert!(game.outcome().is_none(), "game over before {text}");
        let mv = UsiMove::parse(text, v.geometry()).unwrap().to_game_move(&game).unwrap_or_else(|e| panic!("{e}"));
        game.play(mv);
    }
    game
}

fn illegal_reason(v: Variant, sfen: &str, moves: &str, mv: &str) -> String {
    let g = game(v, sfen, moves);
    match UsiMove::parse(mv, v.geometry()).unwrap().to_game_move(&g) {
        Ok(_) => panic!("{mv} unexpectedly legal"),
        Err(e) => e.to_string(),
    }
}

fn has(moves: &[String], m: &str) -> bool {
    moves.iter().any(|x| x == m)
}

// ---- Minishogi -------------------------------------------------------

#[test]
fn minishogi_no_pawn_drop_on_last_rank() {
    let moves = legal(Minishogi, "4k/5/5/5/K4 b P 1");
    assert!(has(&moves, "P*4b") && has(&moves, "P*4e"));
    assert!(!moves.iter().any(|m| m.starts_with("P*") && m.ends_with('a')), "{moves:?}");
    let gote = legal(Minishogi, "4k/5/5/5/K4 w p 1");
    assert!(!gote.iter().any(|m| m.starts_with("P*") && m.ends_with('e')), "{gote:?}");
    assert!(illegal_reason(Minishogi, "4k/5/5/5/K4 b P 1", "", "P*3a").contains("could never move"));
}

#[test]
fn minishogi_two_pawn_rule_counts_only_unpromoted_pawns() {
    let moves = legal(Minishogi, "4k/5/5/P4/K4 b P 1");
    assert!(!moves.iter().any(|m| m.starts_with("P*5")), "{moves:?}");
    assert!(has(&moves, "P*4c"));
    let with_tokin = legal(Minishogi, "4k/5/5/+P4/K4 b P 1");
    assert!(has(&with_tokin, "P*5b"), "{with_tokin:?}");
    assert!(illegal_reason(Minishogi, "4k/5/5/P4/K4 b P 1", "", "P*5b").contains("unpromoted pawn on file 5"));
}

#[test]
fn minishogi_pawn_drop_mate_is_illegal_but_pawn_drop_check_is_legal() {
    // Gote king 1a boxed in by its own rook on 2a; sente gold 2c guards 1b and 2b.
    let mate = "3rk/5/3G1/5/K4 b P 1";
    assert!(!has(&legal(Minishogi, mate), "P*1b"));
    assert!(illegal_reason(Minishogi, mate, "", "P*1b").contains("checkmate"));
    // Without the gold the king can take the pawn: check, not mate, legal.
    assert!(has(&legal(Minishogi, "3rk/5/5/5/K4 b P 1"), "P*1b"));
    // Any other piece may give mate by drop.
    let g = game(Minishogi, "3rk/5/3G1/5/K4 b S 1", "S*1b");
    assert_eq!(g.outcome(), Some(Outcome::win(Color::Sente, EndReason::Checkmate)));
}

#[test]
fn minishogi_promotion_is_optional_except_a_pawn_on_the_last_rank() {
    let moves = legal(Minishogi, "4k/2SP1/5/5/K4 b - 1");
    for m in ["3b3a", "3b3a+", "3b4a", "3b4a+", "3b2a", "3b2a+"] {
        assert!(has(&moves, m), "{m} missing: {moves:?}");
    }
    // Silver moving back out of the zone may promote too.
    let out = legal(Minishogi, "2S1k/5/5/5/K4 b - 1");
    assert!(has(&out, "3a4b") && has(&out, "3a4b+"), "{out:?}");
    // Pawn reaching rank a must promote.
    assert!(has(&moves, "2b2a+") && !has(&moves, "2b2a"));
    assert!(illegal_reason(Minishogi, "4k/2SP1/5/5/K4 b - 1", "", "2b2a").contains("must promote"));
    // No promotion outside the zone, gold and king never promote.
    let g = legal(Minishogi, "4k/5/1G3/5/K4 b - 1");
    assert!(has(&g, "4c4b") && !g.iter().any(|m| m.ends_with('+')), "{g:?}");
    assert!(illegal_reason(Minishogi, "4k/5/1G3/5/K4 b - 1", "", "4c4b+").contains("cannot promote"));
    assert!(illegal_reason(Minishogi, "4k/5/5/S4/K4 b - 1", "", "5d5c+").contains("promotion zone"));
}

#[test]
fn minishogi_captured_promoted_piece_goes_to_hand_unpromoted() {
    let g = game(Minishogi, "4k/5/5/2+r2/K1R2 b - 1", "3e3d");
    assert_eq!(to_sfen(g.position()), "4k/5/5/2R2/K4 w R 2");
}

#[test]
fn minishogi_fourfold_repetition_loses_for_sente() {
    let cycle = "5e5d 1a1b 5d5e 1b1a ";
    let g = game(Minishogi, "4k/5/5/5/K4 b - 1", &cycle.repeat(2));
    assert_eq!(g.repetitions(), 3);
    assert_eq!(g.outcome(), None);
    let g = game(Minishogi, "4k/5/5/5/K4 b - 1", &cycle.repeat(3));
    assert_eq!(g.repetitions(), 4);
    assert_eq!(g.outcome(), Some(Outcome::win(Color::Gote, EndReason::Repetition)));
    // A game over has no successors.
    assert_eq!(perft::perft(&mut g.clone(), 1), 0);
}

#[test]
fn minishogi_perpetual_checker_loses() {
    // Gote's rook checks on every move: gote loses, even though the
    // plain repetition rule would make sente lose.
    let cycle = "5e4e 5c4c 4e5e 4c5c ";
    let g = game(Minishogi, "4k/5/r4/5/K4 b - 1", &cycle.repeat(3));
    assert_eq!(g.outcome(), Some(Outcome::win(Color::Sente, EndReason::PerpetualCheck)));
}

#[test]
fn minishogi_stalemate_loses() {
    let g = Game::new(position(Minishogi, "4k/2S2/3G1/5/K4 w - 1"));
    assert!(!g.position().in_check());
    assert_eq!(g.outcome(), Some(Outcome::win(Color::Sente, EndReason::Stalemate)));
}

// ---- Mansindam -------------------------------------------------------

#[test]
fn mansindam_promotion_is_mandatory_into_within_and_out_of_the_zone() {
    let moves = legal(Mansindam, "4k4/9/9/4P4/9/9/9/9/K8 b - 1");
    assert!(has(&moves, "5d5c+") && !has(&moves, "5d5c"), "{moves:?}");
    // A piece dropped in the zone promotes on its next move, also leaving it.
    let g = game(Mansindam, "4k4/9/9/9/9/9/9/9/K8 b R 1", "R*1b 5a4a");
    let moves: Vec<String> = g.legal_moves().into_iter().map(|m| format_move(Mansindam, m)).collect();
    assert!(has(&moves, "1b1h+") && !has(&moves, "1b1h"), "{moves:?}");
    assert!(moves.iter().filter(|m| m.starts_with("1b")).all(|m| m.ends_with('+')));
    // Queen, angel and king never promote.
    let q = legal(Mansindam, "k8/9/9/4Q4/9/9/9/9/K8 b - 1");
    assert!(has(&q, "5d5c") && !q.iter().any(|m| m.ends_with('+')), "{q:?}");
    let a = legal(Mansindam, "k8/9/9/9/9/9/9/9/K3A4 b - 1");
    assert!(has(&a, "5i5b") && !a.iter().any(|m| m.ends_with('+')));
}

#[test]
fn mansindam_pawn_drops_two_pawn_rule_and_last_rank() {
    let moves = legal(Mansindam, "4k4/9/9/9/9/9/4P4/9/K8 b P 1");
    assert!(!moves.iter().any(|m| m.starts_with("P*5")), "two pawns on file 5");
    assert!(!moves.iter().any(|m| m.starts_with("P*") && m.ends_with('a')), "pawn on last rank");
    assert!(has(&moves, "P*4b"));
}

#[test]
fn mansindam_pawn_drop_mate_is_legal() {
    let sfen = "7rk/9/7+P1/9/9/9/9/9/K8 b P 1";
    assert!(has(&legal(Mansindam, sfen), "P*1b"));
    let g = game(Mansindam, sfen, "P*1b");
    assert_eq!(g.outcome(), Some(Outcome::win(Color::Sente, EndReason::Checkmate)));
}

#[test]
fn mansindam_campmate_wins_at_once() {
    let sfen = "9/4K4/9/9/8k/9/9/9/9 b - 1";
    let g = game(Mansindam, sfen, "5b5a");
    assert_eq!(g.outcome(), Some(Outcome::win(Color::Sente, EndReason::Campmate)));
    assert_eq!(perft::perft(&mut g.clone(), 2), 0);
    // Gote's camp is rank i.
    let g = game(Mansindam, "9/9/9/9/K8/9/9/4k4/9 w - 1", "5h4i");
    assert_eq!(g.outcome(), Some(Outcome::win(Color::Gote, EndReason::Campmate)));
    // The king can never step onto an attacked far-rank square.
    let moves = legal(Mansindam, "r8/4K4/9/9/8k/9/9/9/9 b - 1");
    assert!(!moves.iter().any(|m| m.starts_with("5b") && m.ends_with('a')), "{moves:?}");
}

#[test]
fn mansindam_third_repetition_move_is_illegal() {
    let start = "4k4/9/9/9/9/9/9/9/4K4 b - 1";
    let g = game(Mansindam, start, "5i5h 5a5b 5h5i 5b5a 5i5h 5a5b 5h5i");
    let moves: Vec<String> = g.legal_moves().into_iter().map(|m| format_move(Mansindam, m)).collect();
    assert!(!has(&moves, "5b5a"), "third occurrence must not be generated");
    assert!(has(&moves, "5b4a"));
    assert!(
        g.position().is_legal(
            UsiMove::parse("5b5a", g.position().variant().geometry()).unwrap().to_move(g.position()).unwrap()
        )
    );
    assert!(illegal_reason(Mansindam, start, "5i5h 5a5b 5h5i 5b5a 5i5h 5a5b 5h5i", "5b5a").contains("third time"));
    assert_eq!(g.outcome(), None, "no game end by repetition in Mansindam");
}

#[test]
fn mansindam_no_escape_but_a_third_repetition_loses() {
    // Gote's king shuttles 1a-1b under checks from a rook and a bishop;
    // once both of its squares have occurred twice, the only escape would
    // repeat a position a third time, so gote has no legal move.
    let start = "8k/R8/5N3/9/9/9/9/9/K6R1 b - 1";
    let cycle = "2i1i 1a2a 1i2i 2a1a ";
    let mut g = game(Mansindam, start, "");
    for (ply, text) in cycle.repeat(2).split_whitespace().enumerate() {
        if ply == 7 {
            // 2a1a would bring back the start position a third time.
            assert!(g.legal_moves().is_empty());
            assert!(g.position().has_legal_move());
            assert_eq!(g.outcome(), Some(Outcome::win(Color::Sente, EndReason::Checkmate)));
            return;
        }
        if ply % 2 == 1 {
            assert_eq!(g.legal_moves().len(), 1, "ply {ply}: gote's reply is forced");
        }
        g.play(UsiMove::parse(text, Mansindam.geometry()).unwrap().to_game_move(&g).unwrap());
    }
    unreachable!();
}

#[test]
fn mansindam_stalemate_loses() {
    // Gote king in the corner; every square around it attacked, no check.
    let g = Game::new(position(Mansindam, "8k/6Q2/9/9/9/9/9/9/K8 w - 1"));
    assert_eq!(g.outcome(), Some(Outcome::win(Color::Sente, EndReason::Stalemate)));
}

// ---- Pandemonium -----------------------------------------------------

#[test]
fn pandemonium_drops_anywhere_and_pawn_drop_mate_is_legal() {
    let moves = legal(Pandemonium, "4k4/9/9/9/9/9/4P4/9/K8 b P 1");
    assert!(has(&moves, "P*5b") && has(&moves, "P*4a"), "two pawns and last rank allowed");
    let sfen = "7rk/9/7+P1/9/9/9/9/9/K8 b P 1";
    let g = game(Pandemonium, sfen, "P*1b");
    assert_eq!(g.outcome(), Some(Outcome::win(Color::Sente, EndReason::Checkmate)));
}

#[test]
fn pandemonium_promotion_is_always_optional() {
    let moves = legal(Pandemonium, "k8/9/9/9/9/9/9/4P4/8K b - 1");
    assert!(has(&moves, "5h5g") && !has(&moves, "5h5g+"), "outside the zone");
    let moves = legal(Pandemonium, "k8/4P4/9/9/9/9/9/9/8K b - 1");
    for m in ["5b5a", "5b5a+", "5b4b", "5b4b+", "5b6b", "5b6b+"] {
        assert!(has(&moves, m), "{m} missing: {moves:?}");
    }
    // An unpromoted pawn on the last rank can still step sideways.
    let moves = legal(Pandemonium, "k3P4/9/9/9/9/9/9/9/8K b - 1");
    assert!(has(&moves, "5a4a") && has(&moves, "5a4a+"), "{moves:?}");
}

#[test]
fn pandemonium_promoted_start_pieces_return_to_hand_as_base_pieces() {
    // Queen (+F), centaur (+U) and cardinal (+A) start promoted.
    let pos = Position::startpos(Pandemonium);
    assert!(to_sfen(&pos).contains("2+F1+U1+A2"));
    let g = game(Pandemonium, "k8/9/9/9/4+f4/9/9/4R4/8K b - 1", "5h5e");
    assert_eq!(to_sfen(g.position()), "k8/9/9/9/4R4/9/9/9/8K w F 2");
}

#[test]
fn pandemonium_has_no_campmate_but_pandemonium2022_has() {
    let sfen = "9/4K4/9/9/8k/9/9/9/9 b - 1";
    assert_eq!(game(Pandemonium, sfen, "5b5a").outcome(), None);
    assert_eq!(game(Pandemonium2022, sfen, "5b5a").outcome(), Some(Outcome::win(Color::Sente, EndReason::Campmate)));
}

#[test]
fn pandemonium_threefold_repetition_side_to_move_loses() {
    let start = "4k4/9/9/9/9/9/9/9/4K4 b - 1";
    let cycle = "5i5h 5a5b 5h5i 5b5a ";
    let g = game(Pandemonium, start, cycle);
    assert_eq!(g.outcome(), None);
    let g = game(Pandemonium, start, &cycle.repeat(2));
    assert_eq!(g.repetitions(), 3);
    assert_eq!(g.outcome(), Some(Outcome::win(Color::Gote, EndReason::Repetition)));
    // The same with gote to move in the repeated position.
    let gote_first = "4k4/9/9/9/9/9/9/9/4K4 w - 1";
    let g = game(Pandemonium, gote_first, &"5a5b 5i5h 5b5a 5h5i ".repeat(2));
    assert_eq!(g.outcome(), Some(Outcome::win(Color::Sente, EndReason::Repetition)));
}

/// The move `Game::repetition_win` finds after `moves`, in USI notation.
fn repetition_win(v: Variant, sfen: &str, moves: &str) -> Option<String> {
    let g = game(v, sfen, moves);
    g.repetition_win(&g.legal_moves()).map(|m| format_move(v, m))
}

#[test]
fn a_quiet_move_that_completes_a_winning_repetition_is_found() {
    // Pandemonium: gote's 5b5a makes the start position's third occurrence,
    // sente to move, who loses; one cycle earlier it is only the second.
    let start = "4k4/9/9/9/9/9/9/9/4K4 b - 1";
    let cycle = "5i5h 5a5b 5h5i 5b5a ";
    assert_eq!(repetition_win(Pandemonium, start, &format!("{cycle}5i5h 5a5b 5h5i")).as_deref(), Some("5b5a"));
    assert_eq!(repetition_win(Pandemonium2022, start, &format!("{cycle}5i5h 5a5b 5h5i")).as_deref(), Some("5b5a"));
    assert_eq!(repetition_win(Pandemonium, start, "5i5h 5a5b 5h5i"), None);
    // Sente's 5h5i here repeats a position for the second time only.
    assert_eq!(repetition_win(Pandemonium, start, &format!("{cycle}5i5h 5a5b")), None);
    // Minishogi: gote's fourth occurrence wins; sente's loses, so sente has none.
    let cycle = "5e5d 1a1b 5d5e 1b1a ";
    let k = "4k/5/5/5/K4 b - 1";
    assert_eq!(repetition_win(Minishogi, k, &format!("{}5e5d 1a1b 5d5e", cycle.repeat(2))).as_deref(), Some("1b1a"));
    assert_eq!(repetition_win(Minishogi, k, &format!("{}5e5d 1a1b 5d5e", cycle)), None);
    let gote_first = "4k/5/5/5/K4 w - 1";
    let cycle = "1a1b 5e5d 1b1a 5d5e ";
    assert_eq!(repetition_win(Minishogi, gote_first, &format!("{}1a1b 5e5d 1b1a", cycle.repeat(2))), None);
    let lost = game(Minishogi, gote_first, &cycle.repeat(3));
    assert_eq!(lost.outcome(), Some(Outcome::win(Color::Gote, EndReason::Repetition)));
    // The fourth occurrence by gote's perpetual check loses for gote.
    let checks = "5e4e 5c4c 4e5e 4c5c ";
    assert_eq!(repetition_win(Minishogi, "4k/5/r4/5/K4 b - 1", &format!("{}5e4e 5c4c 4e5e", checks.repeat(2))), None);
    // Mansindam forbids the third occurrence: no repetition ever wins.
    let g = game(Mansindam, "4k4/9/9/9/9/9/9/9/4K4 b - 1", "5i5h 5a5b 5h5i 5b5a 5i5h 5a5b 5h5i");
    assert_eq!(g.repetition_win(&g.legal_moves()), None);
}

#[test]
fn pandemonium_perpetual_checker_loses() {
    let cycle = "9i8i 9g8g 8i9i 8g9g ";
    let g = game(Pandemonium, "4k4/9/9/9/9/9/r8/9/K8 b - 1", &cycle.repeat(2));
    assert_eq!(g.outcome(), Some(Outcome::win(Color::Sente, EndReason::PerpetualCheck)));
    assert_eq!(
        game(Pandemonium2022, "4k4/9/9/9/9/9/r8/9/K8 b - 1", &cycle.repeat(2)).outcome(),
        Some(Outcome::win(Color::Sente, EndReason::PerpetualCheck))
    );
}

#[test]
fn leapers_cannot_be_blocked_and_pinned_leapers_cannot_jump_the_pinner() {
    // A bull (D) checking from two squares away: no interposition drop.
    let moves = legal(Pandemonium2022, "4k1U2/9/9/9/9/9/9/9/4K4 w r 1");
    assert!(!has(&moves, "R*4a"), "{moves:?}");
    // Sente bull on 3h pinned by gote's rook on 2h may not leap to 1h.
    let moves = legal(Pandemonium2022, "4k4/9/9/9/9/9/9/5KUr1/9 b - 1");
    assert!(!moves.iter().any(|m| m.starts_with("3h")), "{moves:?}");
}

// ---- Positions -------------------------------------------------------

#[test]
fn an_empty_square_run_too_long_for_any_number_is_a_rank_length_error() {
    // 30 digits: more than a usize holds; the run must not wrap round.
    let sfen = format!("4k/5/5/5/K{} b - 1", "9".repeat(30));
    match parse_position(Minishogi, &sfen) {
        Err(pantheon::notation::SfenError::RankLength { found, .. }) => assert!(found > 5, "{found}"),
        other => panic!("expected a rank length error, got {other:?}"),
    }
}

#[test]
fn illegal_positions_are_rejected_with_a_reason() {
    let err = |v: Variant, sfen: &str| match parse_position(v, sfen) {
        Err(pantheon::notation::SfenError::Position(e)) => e,
        other => panic!("{sfen}: expected a position error, got {other:?}"),
    };
    assert_eq!(err(Minishogi, "5/5/5/5/K4 b - 1"), PositionError::MissingKing(Color::Gote));
    assert_eq!(err(Minishogi, "3kk/5/5/5/K4 b - 1"), PositionError::TooManyKings(Color::Gote));
    assert!(matches!(err(Minishogi, "P3k/5/5/5/K4 b - 1"), PositionError::DeadPiece { .. }));
    assert!(matches!(err(Mansindam, "P3k4/9/9/9/9/9/9/9/K8 b - 1"), PositionError::DeadPiece { .. }));
    assert!(parse_position(Pandemonium, "P3k4/9/9/9/9/9/9/9/K8 b - 1").is_ok());
    assert!(matches!(err(Minishogi, "4k/P4/5/P4/K4 b - 1"), PositionError::TwoPawns { .. }));
    assert!(parse_position(Pandemonium, "4k4/P8/9/P8/9/9/9/9/K8 b - 1").is_ok());
    assert_eq!(err(Minishogi, "4k/5/5/5/K3R b - 1"), PositionError::OpponentInCheck(Color::Gote));
    assert!(matches!(err(Minishogi, "4k/5/5/P4/K4 b 38P 1"), PositionError::TooManyPieces { .. }));
}

#[test]
fn start_positions_round_trip() {
    for v in Variant::ALL {
        let pos = Position::startpos(v);
        assert_eq!(to_sfen(&pos), v.spec().start_sfen);
        assert_eq!(parse_setup(v, "startpos").unwrap(), pos.to_setup());
    }
}
