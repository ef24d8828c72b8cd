//! The search with the uniform evaluator: mates, campmate, avoiding a
//! forced loss, determinism, threads with start/stop cycles, the memory
//! budget, tree reuse and self-play hooks.

use pantheon::mcts::problems::{CAMPMATE_IN_THREE, MATES_IN_ONE, MATES_IN_THREE, MateProblem};
use pantheon::mcts::{Limits, Proof, Score, SearchParams, SearchResult, Searcher, UniformEvaluator};
use pantheon::notation::{UsiMove, format_move, parse_position};
use pantheon::rules::{Game, Variant};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn searcher(threads: usize) -> Searcher {
    let params = SearchParams { threads, batch_size: 8, hash_mib: 64, ..SearchParams::default() };
    Searcher::new(Arc::new(UniformEvaluator), params)
}

fn game(v: Variant, sfen: &str, moves: &str) -> Game {
    let mut g = Game::new(parse_position(v, sfen).unwrap());
    for m in moves.split_whitespace() {
        let mv = UsiMove::parse(m, v.geometry()).unwrap().to_game_move(&g).unwrap();
        g.play(mv);
    }
    g
}

fn search(s: &mut Searcher, g: &Game, nodes: u64) -> SearchResult {
    s.set_position(g);
    let stop = AtomicBool::new(false);
    s.search(&Limits { nodes: Some(nodes), ..Limits::default() }, &stop, &mut |_| {})
}

fn best(v: Variant, r: &SearchResult) -> String {
    format_move(v, r.best.expect("a best move"))
}

#[test]
fn finds_mate_in_one_in_every_variant() {
    for MateProblem { variant: v, sfen, .. } in MATES_IN_ONE {
        let g = game(v, sfen, "");
        let r = search(&mut searcher(2), &g, 2000);
        assert_eq!(r.info.lines[0].score, Score::Mate(1), "{v}: {:?}", r.info.lines[0]);
        let mut after = g.clone();
        after.play(r.best.unwrap());
        let outcome = after.outcome().expect("mated");
        assert_eq!(outcome.winner, Some(g.position().side_to_move()), "{v} {}", best(v, &r));
        assert!(matches!(r.proof, Proof::Win(1)));
    }
}

#[test]
fn finds_campmate_in_three_plies() {
    let g = game(CAMPMATE_IN_THREE.variant, CAMPMATE_IN_THREE.sfen, "");
    let r = search(&mut searcher(1), &g, 20_000);
    assert_eq!(r.info.lines[0].score, Score::Mate(3), "{:?}", r.info.lines[0]);
    assert_eq!(r.info.lines[0].pv.len(), 3);
}

#[test]
fn deterministic_with_one_thread_and_a_seed() {
    let g = game(Variant::Mansindam, "startpos", "5g5f");
    let run = || {
        let mut s = searcher(1);
        let r = search(&mut s, &g, 3000);
        (r.best, r.visits, r.info.playouts)
    };
    let a = run();
    assert_eq!(a, run());
    assert_eq!(a.2, 3000);
}

#[test]
fn many_threads_survive_repeated_start_and_stop() {
    let mut s = Searcher::new(
        Arc::new(UniformEvaluator),
        SearchParams { threads: 6, batch_size: 12, hash_mib: 16, ..SearchParams::default() },
    );
    let stop = Arc::new(AtomicBool::new(false));
    for i in 0..30u64 {
        let g = game(Variant::Pandemonium, "startpos", if i % 2 == 0 { "" } else { "5f5e" });
        s.set_position(&g);
        stop.store(false, Ordering::SeqCst);
        let stopper = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(i % 7 * 3));
                stop.store(true, Ordering::SeqCst);
            })
        };
        let started = Instant::now();
        let r = s.search(&Limits { infinite: true, ..Limits::default() }, &stop, &mut |_| {});
        stopper.join().unwrap();
        assert!(r.best.is_some());
        assert!(started.elapsed() < Duration::from_secs(5), "stop took too long");
    }
}

#[test]
fn memory_budget_is_never_exceeded() {
    let params = SearchParams { threads: 2, batch_size: 8, hash_mib: 1, ..SearchParams::default() };
    let mut s = Searcher::new(Arc::new(UniformEvaluator), params);
    let g =
        game(Variant::Pandemonium2022, "1n1sk2nr/2ab5/1pp1b1s2/9/9/5V3/r1P2P2+p/2UBFK3/RN1S1SBN1 b UV3PF2par 1", "");
    let r = search(&mut s, &g, 1_000_000);
    assert!(s.tree_bytes() <= s.tree_budget(), "{} > {}", s.tree_bytes(), s.tree_budget());
    assert!(r.info.playouts < 1_000_000, "the search stops growing when the tree is full");
    assert!(r.info.hashfull > 500, "hashfull {}", r.info.hashfull);
    assert!(r.best.is_some());
}

#[test]
fn tree_is_reused_after_the_moves_played() {
    let mut s = searcher(1);
    let g = game(Variant::Minishogi, "startpos", "");
    let r = search(&mut s, &g, 4000);
    let reply = r.info.lines[0].pv.get(1).copied().expect("a reply in the pv");
    let mut next = g.clone();
    next.play(r.best.unwrap());
    next.play(reply);
    assert!(s.set_position(&next), "subtree kept");
    let stop = AtomicBool::new(false);
    let r2 = s.search(&Limits { nodes: Some(1), ..Limits::default() }, &stop, &mut |_| {});
    assert!(r2.info.root_visits > 1, "root keeps its earlier visits: {}", r2.info.root_visits);
    // An unrelated position starts afresh.
    assert!(!s.set_position(&game(Variant::Minishogi, "startpos", "1e1d")));
}

#[test]
fn game_over_at_the_root_gives_no_move() {
    let g = game(Variant::Minishogi, "3rk/5/3G1/5/K4 b S 1", "S*1b");
    let r = search(&mut searcher(1), &g, 100);
    assert!(r.best.is_none());
    assert!(r.game_over.is_some());
}

#[test]
fn root_noise_and_temperature_vary_the_choice() {
    let g = game(Variant::Minishogi, "startpos", "");
    let mut chosen = std::collections::BTreeSet::new();
    for seed in 0..8 {
        let params = SearchParams { threads: 1, seed, root_noise: Some((0.3, 0.25)), ..SearchParams::default() };
        let mut s = Searcher::new(Arc::new(UniformEvaluator), params);
        let r = search(&mut s, &g, 200);
        let total: u32 = r.visits.iter().map(|v| v.1).sum();
        assert!((190..=200).contains(&total), "{total}");
        chosen.insert(format_move(Variant::Minishogi, s.pick_move(&r, 1.0).unwrap()));
    }
    assert!(chosen.len() > 1, "temperature 1 sampling always picked the same move");
}

#[test]
fn finds_mate_in_three_in_every_variant() {
    for MateProblem { variant: v, sfen, .. } in MATES_IN_THREE {
        let g = game(v, sfen, "");
        // One thread: the order in which proofs complete, hence the mate
        // distance reported first, is then fixed.
        let r = search(&mut searcher(1), &g, 200_000);
        assert_eq!(r.info.lines[0].score, Score::Mate(3), "{v}: {:?}", r.info.lines[0]);
        assert_eq!(r.proof, Proof::Win(3));
        // Every reply to the first move allows a mate in one.
        let mut after = g.clone();
        after.play(r.best.unwrap());
        for reply in after.legal_moves() {
            let mut line = after.clone();
            line.play(reply);
            let moves = line.legal_moves();
            assert!(
                line.outcome().is_some() || pantheon::mcts::mate_in_one(&line, &moves).is_some(),
                "{v}: {} {} escapes",
                best(v, &r),
                format_move(v, reply)
            );
        }
    }
}

/// Positions where all moves but one or two allow a mate in one.
const ONLY_DEFENCES: [(Variant, &str, &[&str]); 4] = [
    (Variant::Minishogi, "+P3k/2b1p/KR2S/s3R/3Bg w G 30", &["1b1c"]),
    (Variant::Mansindam, "1k3am2/1p4r1b/7p1/p1pKppp2/3n2P2/P1Nb2N1A/2P2P1PP/7QC/M4+c1NR b 2Pq3p 99", &["6d6e"]),
    (Variant::Pandemonium, "rnbs2b1r/2k2+f2a/p1p1p1s1p/3+v2Up1/R3P4/1PP5V/3SK2PP/2+s1+n4/1N4BNR b bfau 77", &["5e4e"]),
    (
        Variant::Pandemonium2022,
        "1ns1uskr1/p4pfb1/bApp4p/1p4p2/2v6/Ur1PVnaP1/N3S+n2p/3B4R/+BR1F1S2K b - 115",
        &["1h1g", "1h2h"],
    ),
];

#[test]
fn avoids_a_forced_loss() {
    for (v, sfen, safe) in ONLY_DEFENCES {
        let g = game(v, sfen, "");
        let r = search(&mut searcher(2), &g, 3000);
        assert!(safe.contains(&best(v, &r).as_str()), "{v}: played {} instead of {safe:?}", best(v, &r));
        // It may still lose later, but not to the mate in one.
        assert_ne!(r.info.lines[0].score, Score::Mate(-2), "{v}");
    }
}

#[test]
fn proofs_and_collisions_with_many_threads_keep_counts_consistent() {
    // Many threads and big batches on positions with forced wins make walks
    // meet proven nodes and pending ones; counters must never underflow
    // (the test profile checks arithmetic overflow).
    for MateProblem { variant: v, sfen, .. } in MATES_IN_THREE {
        let params = SearchParams { threads: 4, batch_size: 64, hash_mib: 16, ..SearchParams::default() };
        let mut s = Searcher::new(Arc::new(UniformEvaluator), params);
        let g = game(v, sfen, "");
        let stop = AtomicBool::new(false);
        s.set_position(&g);
        let r = s.search(&Limits { nodes: Some(30_000), infinite: false, ..Limits::default() }, &stop, &mut |_| {});
        // With many threads a longer forced win may be proven first.
        assert!(matches!(r.proof, Proof::Win(n) if n >= 3), "{v}: {:?}", r.proof);
    }
}

#[test]
fn a_full_tree_kept_for_the_next_move_can_search_again_within_budget() {
    let params = SearchParams { threads: 2, batch_size: 8, hash_mib: 1, ..SearchParams::default() };
    let mut s = Searcher::new(Arc::new(UniformEvaluator), params);
    let g = game(Variant::Mansindam, "startpos", "");
    let r = search(&mut s, &g, 1_000_000);
    assert!(r.info.hashfull > 500);
    let mut next = g.clone();
    next.play(r.best.unwrap());
    let reply = r.info.lines[0].pv.get(1).copied().unwrap_or_else(|| next.legal_moves()[0]);
    next.play(reply);
    s.set_position(&next);
    assert!(s.tree_bytes() <= s.tree_budget(), "{} > {}", s.tree_bytes(), s.tree_budget());
    let stop = AtomicBool::new(false);
    let r2 = s.search(&Limits { nodes: Some(500), ..Limits::default() }, &stop, &mut |_| {});
    assert!(r2.info.playouts > 0, "the reused tree searched");
    assert!(s.tree_bytes() <= s.tree_budget());
}
