//! The search with the uniform evaluator: mates, campmate, avoiding a
//! forced loss, determinism, threads with start/stop cycles, the memory
//! budget, tree reuse and self-play hooks; the leaf mate searches.

use pantheon::mcts::problems::{CAMPMATE_IN_THREE, MATES_IN_FIVE, MATES_IN_ONE, MATES_IN_THREE, MateProblem};
use pantheon::mcts::{
    Limits, Proof, Rng, Score, SearchParams, SearchResult, Searcher, UniformEvaluator, find_mate, find_mated,
    mate_in_one, mate_line,
};
use pantheon::notation::{UsiMove, format_move, parse_position};
use pantheon::rules::{Game, Move, Variant};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[path = "support/hashed.rs"]
mod hashed;
use hashed::HashedValues;

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
    // With the leaf mate search the root is proven at once; with mate in
    // one only, the tree has to prove it.
    for mate_plies in [3, 1] {
        for MateProblem { variant: v, sfen, .. } in MATES_IN_THREE {
            let g = game(v, sfen, "");
            // One thread: the order in which proofs complete, hence the mate
            // distance reported first, is then fixed.
            let params =
                SearchParams { threads: 1, batch_size: 8, hash_mib: 64, mate_plies, ..SearchParams::default() };
            let r = search(&mut Searcher::new(Arc::new(UniformEvaluator), params), &g, 200_000);
            assert_eq!(r.info.lines[0].score, Score::Mate(3), "{v}: {:?}", r.info.lines[0]);
            assert_eq!(r.proof, Proof::Win(3));
            assert_eq!(r.info.lines[0].pv.len(), 3, "{v}: the whole mate is shown");
            assert!(wins_in_three(&g, r.best.unwrap()), "{v}: {} is no mate in 3", best(v, &r));
        }
    }
}

/// Whether `mv` wins by force within 3 plies, checked over every reply and
/// every move after it (not only checks).
fn wins_in_three(g: &Game, mv: Move) -> bool {
    let us = g.position().side_to_move();
    let mut after = g.clone();
    after.play(mv);
    if let Some(outcome) = after.outcome() {
        return outcome.winner == Some(us);
    }
    after.legal_moves().into_iter().all(|reply| {
        let mut line = after.clone();
        line.play(reply);
        match line.outcome() {
            Some(outcome) => outcome.winner == Some(us),
            None => line.legal_moves().into_iter().any(|m| {
                let mut end = line.clone();
                end.play(m);
                end.outcome().is_some_and(|o| o.winner == Some(us))
            }),
        }
    })
}

#[test]
fn mate_search_solves_the_problems_at_their_length() {
    for p in MATES_IN_ONE.iter().chain(&MATES_IN_THREE).chain(&MATES_IN_FIVE).chain([&CAMPMATE_IN_THREE]) {
        let mut g = game(p.variant, p.sfen, "");
        let legal = g.legal_moves();
        if let Some(shorter) = p.plies.checked_sub(2) {
            assert_eq!(find_mate(&mut g, &legal, shorter, 1_000_000), None, "{} {}", p.variant, p.sfen);
        }
        let (mv, plies) = find_mate(&mut g, &legal, 9, 1_000_000).expect("a mate");
        assert_eq!(plies, p.plies, "{} {}", p.variant, p.sfen);
        if p.plies <= 3 {
            assert!(wins_in_three(&g, mv), "{}: {}", p.variant, format_move(p.variant, mv));
        }
        // The line plays out to the win, and the game is left as it was.
        let before = g.position().clone();
        let us = g.position().side_to_move();
        let line = mate_line(&mut g, us, p.plies, 1_000_000);
        assert_eq!(g.position(), &before);
        assert_eq!(line.len() as u32, p.plies, "{} {}", p.variant, p.sfen);
        let mut end = g.clone();
        for &m in &line {
            assert!(end.legal_moves().contains(&m));
            end.play(m);
        }
        assert_eq!(end.outcome().map(|o| o.winner), Some(Some(g.position().side_to_move())), "{}", p.variant);
    }
}

/// Calls `visit` at every position of `games` random games per variant
/// (seeded from `seed`, at most 160 plies), with its legal moves.
fn each_random_position(seed: u64, games: usize, mut visit: impl FnMut(Variant, &mut Game, &[Move])) {
    for (i, v) in Variant::ALL.into_iter().enumerate() {
        let mut rng = Rng::new(seed + i as u64);
        for _ in 0..games {
            let mut g = Game::new(pantheon::rules::Position::startpos(v));
            while g.outcome().is_none() && g.moves().len() < 160 {
                let legal = g.legal_moves();
                visit(v, &mut g, &legal);
                g.play(legal[rng.below(legal.len())]);
            }
        }
    }
}

#[test]
fn mate_search_is_sound_on_random_positions() {
    // Every mate in 3 the search claims in positions of random games is
    // checked by brute force; a tiny budget may miss mates but never
    // invent one.
    let mut claims = 0;
    each_random_position(40, 6, |v, g, legal| {
        for budget in [50, 5_000] {
            if let Some((mv, plies)) = find_mate(g, legal, 3, budget) {
                assert!(plies == 1 || plies == 3);
                assert!(wins_in_three(g, mv), "{v}: {} claimed in {plies}", format_move(v, mv));
                assert_eq!(plies == 1, mate_in_one(g, legal).is_some());
                claims += 1;
            }
        }
    });
    assert!(claims > 20, "only {claims} mates claimed: the test checks too little");
}

#[test]
fn root_mate_search_proves_mates_the_tree_has_not_reached() {
    // No leaf mate search and a uniform evaluator: the root's own mate
    // thread proves the mates in five, and the search ends with the whole
    // line.
    for MateProblem { variant: v, sfen, .. } in MATES_IN_FIVE {
        let params = SearchParams { threads: 1, mate_plies: 0, root_mate_plies: 7, ..SearchParams::default() };
        let mut s = Searcher::new(Arc::new(UniformEvaluator), params);
        let g = game(v, sfen, "");
        s.set_position(&g);
        let limits = Limits { movetime: Some(Duration::from_secs(120)), ..Limits::default() };
        let r = s.search(&limits, &AtomicBool::new(false), &mut |_| {});
        assert_eq!(r.proof, Proof::Win(5), "{v}: {:?}", r.info.lines[0]);
        let mut end = g.clone();
        for &m in &r.info.lines[0].pv {
            end.play(m);
        }
        assert_eq!(end.outcome().and_then(|o| o.winner), Some(g.position().side_to_move()), "{v}");
    }
}

#[test]
fn a_mate_is_played_out_move_by_move_with_the_tree_kept() {
    // The searcher keeps its tree between moves; nodes proven by a mate
    // search but never expanded must not become an empty root.
    for MateProblem { variant: v, sfen, .. } in MATES_IN_FIVE {
        let mut g = game(v, sfen, "");
        let winner = g.position().side_to_move();
        let mut s = searcher(2);
        let mut plies = 0;
        while g.outcome().is_none() {
            assert!(plies < 5, "{v}: no mate after {plies} plies");
            let r = search(&mut s, &g, 20_000);
            let mv = r.best.unwrap_or_else(|| panic!("{v}: no move at ply {plies}"));
            assert!(g.legal_moves().contains(&mv));
            // Both sides see the mate, with a line to show.
            let score = r.info.lines.first().map(|l| l.score);
            assert!(
                matches!(score, Some(Score::Mate(n)) if (n > 0) == (g.position().side_to_move() == winner)),
                "{v}: {score:?}"
            );
            g.play(mv);
            plies += 1;
        }
        assert_eq!(g.outcome().and_then(|o| o.winner), Some(winner), "{v}");
    }
}

#[test]
fn leaf_mate_search_proves_mates_in_five() {
    // 5 plies: at the root's first playout; 3 plies: the tree finds the
    // first move and proves every reply with the leaf searches.
    for (mate_plies, MateProblem { variant: v, sfen, .. }) in
        [5, 3].into_iter().flat_map(|p| MATES_IN_FIVE.map(|m| (p, m)))
    {
        let g = game(v, sfen, "");
        let params = SearchParams { threads: 1, batch_size: 8, hash_mib: 64, mate_plies, ..SearchParams::default() };
        let r = search(&mut Searcher::new(Arc::new(UniformEvaluator), params), &g, 100_000);
        assert_eq!(r.proof, Proof::Win(5), "{v}: {:?}", r.info.lines[0]);
        if mate_plies == 5 {
            assert_eq!(r.info.playouts, 1, "{v}");
        }
        assert_eq!(r.info.lines[0].score, Score::Mate(5));
        let mut end = g.clone();
        for &m in &r.info.lines[0].pv {
            end.play(m);
        }
        assert_eq!(r.info.lines[0].pv.len(), 5, "{v}");
        assert_eq!(end.outcome().and_then(|o| o.winner), Some(g.position().side_to_move()), "{v}");
    }
}

#[test]
fn defender_after_the_first_move_is_mated_in_the_rest() {
    // After the attacker's first move of each mate in 3 and 5, every
    // reply loses within the remaining plies and not sooner; the attacker
    // to move is never "mated".
    for p in MATES_IN_THREE.iter().chain(&MATES_IN_FIVE) {
        let mut g = game(p.variant, p.sfen, "");
        let legal = g.legal_moves();
        assert_eq!(find_mated(&mut g, &legal, 6, 200_000), None, "{} {}", p.variant, p.sfen);
        let (mv, _) = find_mate(&mut g, &legal, p.plies, 1_000_000).expect("a mate");
        g.play(mv);
        let before = g.position().clone();
        let replies = g.legal_moves();
        assert_eq!(find_mated(&mut g, &replies, 6, 1_000_000), Some(p.plies - 1), "{} {}", p.variant, p.sfen);
        assert_eq!(g.position(), &before, "{}: the game is left as it was", p.variant);
    }
}

/// Whether the side to move loses by force within 2 plies, by brute force
/// over every reply and every answer (not only checks).
fn lost_in_two(g: &Game) -> bool {
    let us = g.position().side_to_move();
    g.legal_moves().into_iter().all(|reply| {
        let mut line = g.clone();
        line.play(reply);
        match line.outcome() {
            Some(outcome) => outcome.winner.is_some_and(|w| w != us),
            None => line.legal_moves().into_iter().any(|m| {
                let mut end = line.clone();
                end.play(m);
                end.outcome().is_some_and(|o| o.winner.is_some_and(|w| w != us))
            }),
        }
    })
}

#[test]
fn mated_search_is_sound_on_random_positions() {
    // Every position in check of random games that the search calls lost
    // in 2 plies is checked by brute force.
    let (mut checks, mut claims) = (0, 0);
    each_random_position(60, 8, |v, g, legal| {
        if g.position().in_check() {
            checks += 1;
            if find_mated(g, legal, 2, 100_000) == Some(2) {
                assert!(lost_in_two(g), "{v}: {} claimed lost", pantheon::notation::to_sfen(g.position()));
                claims += 1;
            }
        }
    });
    assert!(claims > 5, "only {claims} of {checks} checks claimed lost: the test checks too little");
}

#[test]
fn a_leaf_in_check_is_proven_lost_at_its_first_visit() {
    // With a 3-ply leaf search the mates in 5 are proven once the tree
    // reaches the first move: every evasion is mated in 3, so the node
    // after it is lost at its first visit, without expanding the replies.
    for MateProblem { variant: v, sfen, .. } in MATES_IN_FIVE {
        let g = game(v, sfen, "");
        let params = SearchParams { threads: 1, batch_size: 1, hash_mib: 64, mate_plies: 3, ..SearchParams::default() };
        let r = search(&mut Searcher::new(Arc::new(UniformEvaluator), params), &g, 100_000);
        assert_eq!(r.proof, Proof::Win(5), "{v}: {:?}", r.info.lines[0]);
        assert_eq!(r.info.lines[0].visits, 1, "{v}: {:?}", r.info.lines[0]);
    }
}

/// Gives the first legal move prior 0.9 and shares 0.1 among the others.
struct Peaked;

impl pantheon::mcts::Evaluator for Peaked {
    fn evaluate(&self, batch: &[pantheon::mcts::EvalRequest]) -> Vec<pantheon::mcts::Evaluation> {
        batch
            .iter()
            .map(|r| {
                let n = r.moves.len();
                let mut policy = vec![0.1 / (n - 1) as f32; n];
                policy[0] = 0.9;
                pantheon::mcts::Evaluation { value: 0.0, policy }
            })
            .collect()
    }

    fn max_batch(&self) -> usize {
        64
    }

    fn name(&self) -> String {
        "peaked".into()
    }
}

#[test]
fn policy_temperature_flattens_the_priors() {
    // The root's priors as the search holds them: p^(1/T), renormalised.
    let g = game(Variant::Minishogi, "rbsgk/4p/5/P4/KGSBR b - 1", "");
    let n = g.legal_moves().len();
    for t in [1.0, 2.0, 0.5] {
        let params = SearchParams { threads: 1, multipv: 500, policy_temperature: t, ..SearchParams::default() };
        let r = search(&mut Searcher::new(Arc::new(Peaked), params), &g, 1);
        let first = 0.9f64.powf(1.0 / t);
        let other = (0.1 / (n - 1) as f64).powf(1.0 / t);
        let sum = first + other * (n - 1) as f64;
        let mut priors: Vec<f64> = r.info.lines.iter().map(|l| l.prior as f64).collect();
        assert_eq!(priors.len(), n);
        priors.sort_by(|a, b| b.total_cmp(a));
        // Priors are held in 1/65535 steps.
        let close = |got: f64, want: f64| (got - want).abs() <= want * 0.01 + 1.0 / 65535.0;
        assert!(close(priors[0], first / sum), "T {t}: {} vs {}", priors[0], first / sum);
        assert!(close(priors[n - 1], other / sum), "T {t}: {} vs {}", priors[n - 1], other / sum);
        assert!(priors[n - 1] > 0.0, "T {t}");
    }
}

#[test]
fn a_larger_exploration_constant_spreads_the_root_visits() {
    // With equal priors a small c_init piles the playouts on the move that
    // looks best; a large one shares them out more evenly.
    let g = game(Variant::Minishogi, "startpos", "");
    let top_share = |c: f64| {
        let params = SearchParams { threads: 1, multipv: 500, cpuct_init: c, ..SearchParams::default() };
        let r = search(&mut Searcher::new(Arc::new(HashedValues), params), &g, 2_000);
        let visits: Vec<u32> = r.info.lines.iter().map(|l| l.visits).collect();
        *visits.iter().max().unwrap() as f64 / visits.iter().sum::<u32>() as f64
    };
    let (narrow, default, wide) = (top_share(0.25), top_share(pantheon::mcts::CPUCT_INIT), top_share(4.0));
    assert!(narrow > default && default > wide, "top move's share: {narrow} / {default} / {wide}");
}

fn root_priors(s: &mut Searcher, g: &Game) -> Vec<(Move, f32)> {
    let r = search(s, g, 1);
    let mut priors: Vec<(Move, f32)> = r.info.lines.iter().map(|l| (l.mv, l.prior)).collect();
    priors.sort_by_key(|&(mv, _)| format!("{mv:?}"));
    priors
}

#[test]
fn tempered_priors_are_the_same_from_the_cache_and_follow_a_new_temperature() {
    let (p, q) =
        (game(Variant::Minishogi, "rbsgk/4p/5/P4/KGSBR b - 1", ""), game(Variant::Minishogi, "startpos", "5e4d"));
    let params = SearchParams { threads: 1, multipv: 500, policy_temperature: 2.0, ..SearchParams::default() };
    let mut s = Searcher::new(Arc::new(Peaked), params.clone());
    let fresh = root_priors(&mut s, &p);
    // Another root and back: a new tree, the root's priors from the cache.
    root_priors(&mut s, &q);
    assert_eq!(root_priors(&mut s, &p), fresh);
    // A new temperature drops the tree and the cache, even for the same
    // position (which would otherwise keep its tree).
    s.set_params(SearchParams { policy_temperature: 1.0, ..params });
    let plain = root_priors(&mut s, &p);
    assert!((plain.iter().map(|l| l.1).fold(0.0, f32::max) - 0.9).abs() < 1e-4, "{plain:?}");
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
fn a_move_that_lets_the_opponent_win_by_repetition_is_proven_lost() {
    // A Pandemonium 2022 game against Fairy-Stockfish: gote's 2f3f lets
    // sente's quiet 4f2g make the third occurrence, gote to move, who loses.
    // The mate searches only try checks; the tree sees it at the first
    // visit of the position after 2f3f, not after visiting sente's replies.
    let moves = "7g6g 5c4c 3g4g 3a5c 1g2g 9c8c 3i2h 2a4b 2i4h 1a2a 1i1c+ 2a2g+ 4h2g 5c2f 4g3g P*1h \
                 1c1h 2f3g+ 2h3g P*3f 3g4h 3f2f 2g4f 2f3f 4f2g 3f2f 2g4f";
    let v = Variant::Pandemonium2022;
    let g = game(v, "rnbsksbnr/2a1f1u2/p1p1p1p1p/4v4/9/4V4/P1P1P1P1P/2U1F1A2/RNBSKSBNR b - 1", moves);
    let params = SearchParams { threads: 1, batch_size: 8, hash_mib: 64, multipv: 500, ..SearchParams::default() };
    let r = search(&mut Searcher::new(Arc::new(UniformEvaluator), params), &g, 3000);
    let line = r.info.lines.iter().find(|l| format_move(v, l.mv) == "2f3f").expect("2f3f searched");
    assert_eq!(line.score, Score::Mate(-2), "{line:?}");
    assert_eq!(line.visits, 1, "{line:?}");
    assert_ne!(best(v, &r), "2f3f");
}

#[test]
fn proofs_and_collisions_with_many_threads_keep_counts_consistent() {
    // Many threads and big batches on positions with forced wins make walks
    // meet proven nodes and pending ones; counters must never underflow
    // (the test profile checks arithmetic overflow).
    for MateProblem { variant: v, sfen, .. } in MATES_IN_THREE {
        // Mate in one only at the leaves, so that the tree does the proving.
        let params =
            SearchParams { threads: 4, batch_size: 64, hash_mib: 16, mate_plies: 1, ..SearchParams::default() };
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
