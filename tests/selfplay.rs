//! Self-play records: format round trip, damaged shards skipped, and a
//! tiny self-play run with a tiny net on the CPU.

use burn::prelude::Device;
use pantheon::mcts::Rng;
use pantheon::nn::{Layout, NetConfig, NetEvaluator};
use pantheon::rules::{Game, Position, Variant};
use pantheon::selfplay::{Sample, SearchTargets, SelfPlayConfig, Shard, ShardError, play, read_dir};
use std::path::PathBuf;
use std::sync::Arc;

#[path = "support/hashed.rs"]
mod hashed;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pantheon-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A one-block, 8-channel net with random weights.
fn tiny_net(variant: Variant) -> NetEvaluator {
    let device = Device::flex();
    let config = NetConfig::new(&Layout::new(variant), 1, 8);
    NetEvaluator::new(config.init(&device), config, variant, device, 32, "tiny".into())
}

/// Small self-play settings writing into `out`.
fn tiny_selfplay(variant: Variant, out: PathBuf) -> SelfPlayConfig {
    SelfPlayConfig {
        variant,
        games: 4,
        parallel: 4,
        visits: 16,
        fast_visits: 4,
        full_share: 0.5,
        temperature_plies: 6,
        resign_value: 0.99,
        no_resign_share: 0.25,
        max_plies: 60,
        greedy_share: 0.0,
        leaves_per_game: 4,
        seed: 1,
        out,
        model_id: "tiny".into(),
        gumbel: None,
        forced_playouts: None,
        cpuct_init: pantheon::mcts::CPUCT_INIT,
        deadline: None,
    }
}

fn random_shard(variant: Variant, seed: u64) -> Shard {
    let mut rng = Rng::new(seed);
    let mut game = Game::new(Position::startpos(variant));
    let mut samples = Vec::new();
    for ply in 0..30 {
        let moves = game.legal_moves();
        if moves.is_empty() || game.outcome().is_some() {
            break;
        }
        let policy = if ply % 2 == 0 { moves.iter().map(|&m| (m, rng.below(100) as u32)).collect() } else { vec![] };
        samples.push(Sample {
            position: game.position().clone(),
            repetitions: game.repetitions(),
            value: [1.0, -1.0, 0.0][ply % 3],
            full_search: ply % 2 == 0,
            // Search targets on every third sample; the improved policy
            // (on full searches) in steps of 1/65535, as stored.
            search: (ply % 3 == 0).then(|| SearchTargets {
                value: rng.uniform() as f32 * 2.0 - 1.0,
                improved: policy.iter().map(|_| rng.below(65536) as f32 / 65535.0).collect(),
            }),
            policy,
            teacher: None,
        });
        game.play(moves[rng.below(moves.len())]);
    }
    Shard { variant, model_id: format!("test-{seed}"), samples }
}

#[test]
fn shards_round_trip() {
    for (i, variant) in Variant::ALL.into_iter().enumerate() {
        let shard = random_shard(variant, i as u64);
        assert_eq!(Shard::from_bytes(&shard.to_bytes()).unwrap(), shard);
    }
}

#[test]
fn damaged_shards_are_detected_and_skipped_with_a_warning() {
    let dir = temp_dir("shards");
    let good = random_shard(Variant::Minishogi, 1);
    good.write(&dir, "good").unwrap();
    let bytes = good.to_bytes();
    std::fs::write(dir.join("truncated.shard"), &bytes[..bytes.len() / 2]).unwrap();
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 3] ^= 1;
    std::fs::write(dir.join("flipped.shard"), &flipped).unwrap();
    std::fs::write(dir.join("empty.shard"), b"").unwrap();
    random_shard(Variant::Mansindam, 2).write(&dir, "other-variant").unwrap();
    // A temporary file of a writer still at work is not read at all.
    std::fs::write(dir.join(".busy.tmp123"), &bytes[..10]).unwrap();
    assert!(matches!(Shard::from_bytes(&flipped), Err(ShardError::Checksum)));
    assert!(matches!(Shard::from_bytes(&bytes[..5]), Err(ShardError::Truncated)));
    let (samples, warnings) = read_dir(&dir, Variant::Minishogi, usize::MAX).unwrap();
    assert_eq!(samples, good.samples);
    assert_eq!(warnings.len(), 4, "{warnings:?}");
    assert!(warnings.iter().any(|w| w.contains("truncated.shard")));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Self-play with a fixed seed gives the same games whatever the timing:
/// parallel games share network batches, threads take games in any order.
#[test]
fn a_seed_determines_the_games() {
    let variant = Variant::Minishogi;
    let net = Arc::new(tiny_net(variant));
    let run = |name: &str, parallel: usize| {
        let dir = temp_dir(name);
        let sp = SelfPlayConfig {
            games: 6,
            parallel,
            visits: 16,
            fast_visits: 4,
            max_plies: 50,
            seed: 11,
            ..tiny_selfplay(variant, dir.clone())
        };
        let reports = play(&sp, net.clone(), &|_| {}).unwrap();
        let games: Vec<(usize, Vec<Sample>)> =
            reports.iter().map(|r| (r.index, pantheon::selfplay::Shard::read(&r.path).unwrap().samples)).collect();
        std::fs::remove_dir_all(&dir).unwrap();
        games
    };
    let first = run("repro-a", 4);
    assert_eq!(first.len(), 6);
    assert_eq!(first, run("repro-b", 4), "the same seed, the same records");
    assert_eq!(first, run("repro-c", 1), "one game at a time gives the same records");
    assert_ne!(first[0].1, first[1].1, "games of one run differ");
}

#[test]
fn gumbel_self_play_records_the_improved_policy_and_the_search_value() {
    let variant = Variant::Minishogi;
    let net: Arc<dyn pantheon::mcts::Evaluator> = Arc::new(tiny_net(variant));
    let dir = temp_dir("gumbel-selfplay");
    let sp = SelfPlayConfig {
        games: 2,
        parallel: 2,
        visits: 8,
        fast_visits: 4,
        full_share: 0.5,
        max_plies: 30,
        gumbel: Some(pantheon::mcts::GumbelParams::default()),
        ..tiny_selfplay(variant, dir.clone())
    };
    play(&sp, net.clone(), &|_| {}).unwrap();
    let (samples, _) = read_dir(&dir, variant, usize::MAX).unwrap();
    let improved = samples.iter().filter(|s| s.search.as_ref().is_some_and(|t| !t.improved.is_empty())).count();
    assert!(improved > 0);
    for s in &samples {
        let search = s.search.as_ref().expect("every searched move records its value");
        assert!((-1.0..=1.0).contains(&search.value));
        // A full search gives the improved policy, unless the root was
        // proven (its visits, the winning move alone, are the target).
        if s.full_search && !search.improved.is_empty() {
            assert_eq!(search.improved.len(), s.policy.len());
            assert!((search.improved.iter().sum::<f32>() - 1.0).abs() < 1e-3, "{:?}", search.improved);
        } else if !s.full_search {
            assert!(search.improved.is_empty());
        }
    }
    // The same seed plays the same games.
    let again = temp_dir("gumbel-selfplay-again");
    play(&SelfPlayConfig { out: again.clone(), ..sp }, net, &|_| {}).unwrap();
    assert_eq!(read_dir(&again, variant, usize::MAX).unwrap().0, samples);
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&again).unwrap();
}

#[test]
fn tiny_self_play_writes_readable_records() {
    let variant = Variant::Minishogi;
    let net = tiny_net(variant);
    let dir = temp_dir("selfplay");
    let sp = SelfPlayConfig {
        games: 3,
        parallel: 3,
        visits: 24,
        fast_visits: 8,
        no_resign_share: 0.5,
        max_plies: 40,
        seed: 5,
        ..tiny_selfplay(variant, dir.clone())
    };
    let reports = play(&sp, Arc::new(net), &|_| {}).unwrap();
    assert_eq!(reports.len(), 3);
    let (samples, warnings) = read_dir(&dir, variant, usize::MAX).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(samples.len(), reports.iter().map(|r| r.samples).sum::<usize>());
    assert!(samples.iter().any(|s| s.full_search));
    for s in &samples {
        assert!([-1.0, 0.0, 1.0].contains(&s.value));
        assert_eq!(s.full_search, !s.policy.is_empty());
        if s.full_search {
            assert!(s.policy.iter().map(|p| p.1).sum::<u32>() > 0);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_deadline_stops_self_play_and_a_rerun_plays_the_rest() {
    let variant = Variant::Minishogi;
    let net: Arc<dyn pantheon::mcts::Evaluator> = Arc::new(tiny_net(variant));
    let dir = temp_dir("selfplay-deadline");
    let sp = SelfPlayConfig { games: 3, parallel: 1, max_plies: 30, ..tiny_selfplay(variant, dir.clone()) };
    let past = SelfPlayConfig { deadline: Some(std::time::Instant::now()), ..sp.clone() };
    assert!(play(&past, net.clone(), &|_| {}).unwrap().is_empty());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing written after the deadline");
    let reports = play(&sp, net, &|_| {}).unwrap();
    assert_eq!(reports.len(), 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn games_against_the_greedy_player_record_its_moves_without_policy() {
    use pantheon::rules::Color;
    use pantheon::selfplay::baselines::{material_balance, material_values};
    use pantheon::selfplay::summary;
    let variant = Variant::Minishogi;
    let net = tiny_net(variant);
    let dir = temp_dir("selfplay-greedy");
    let sp = SelfPlayConfig {
        parallel: 2,
        temperature_plies: 4,
        no_resign_share: 1.0,
        greedy_share: 1.0,
        seed: 9,
        ..tiny_selfplay(variant, dir.clone())
    };
    let reports = play(&sp, Arc::new(net), &|_| {}).unwrap();
    let values = material_values(variant);
    let mut checked = 0;
    for r in &reports {
        let greedy = r.greedy.expect("every game has the greedy player");
        assert_eq!(greedy, if r.index % 2 == 0 { Color::Gote } else { Color::Sente });
        let samples = Shard::read(&r.path).unwrap().samples;
        assert_eq!(samples.len(), r.plies, "both sides' positions are recorded");
        // Replays the game (history matters for repetitions) by finding the
        // move from each recorded position to the next.
        let mut game = Game::new(Position::startpos(variant));
        for (i, s) in samples.iter().enumerate() {
            assert!(s.position == *game.position(), "game {} ply {i}: the records are one game", r.index);
            let mover = s.position.side_to_move();
            let expected = match r.winner {
                None => 0.0,
                Some(w) if w == mover => 1.0,
                Some(_) => -1.0,
            };
            assert_eq!(s.value, expected);
            // The greedy player's view of a move: a win at once first, a
            // loss at once last, a draw 0, else the material balance after it.
            let score = |mv| {
                let mut after = game.branch();
                after.play(mv);
                match after.outcome() {
                    Some(o) if o.winner == Some(mover) => f32::INFINITY,
                    Some(o) if o.winner.is_some() => -1e9,
                    Some(_) => 0.0,
                    None => material_balance(after.position(), &values, mover),
                }
            };
            let legal = game.legal_moves().to_vec();
            let played = match samples.get(i + 1) {
                Some(next) => legal.iter().copied().find(|&m| {
                    let mut after = game.branch();
                    after.play(m);
                    *after.position() == next.position
                }),
                // The last move ended the game or reached the ply cap.
                None => None,
            };
            if mover == greedy {
                assert!(!s.full_search && s.policy.is_empty(), "the greedy player's positions train the value only");
                if let Some(mv) = played {
                    let best = legal.iter().map(|&m| score(m)).fold(f32::NEG_INFINITY, f32::max);
                    assert_eq!(score(mv), best, "game {} ply {i}: greedy's move is one of its best", r.index);
                    checked += 1;
                }
            }
            match played {
                Some(mv) => game.play(mv),
                None => assert_eq!(i + 1, samples.len(), "game {} ply {i}: no move leads to the next record", r.index),
            }
        }
    }
    // Parallel games are timed by the batching, so their lengths vary:
    // 39 to 95 greedy moves in 15 runs.
    assert!(checked >= 15, "only {checked} greedy moves checked");
    let text = summary(&reports, std::time::Duration::from_secs(1));
    assert!(text.contains("; against greedy: 4 games, the net scored "), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tiny_end_to_end_loop_selfplay_train_match() {
    use pantheon::mcts::UniformEvaluator;
    use pantheon::selfplay::{MatchConfig, MoveLimit, Player, play_match};
    use pantheon::train::{TrainConfig, train};
    let variant = Variant::Minishogi;
    let dir = temp_dir("loop");
    let device = Device::flex();
    let config = NetConfig::new(&Layout::new(variant), 1, 8);
    let first = dir.join("gen0.pnet");
    pantheon::nn::weights::save(&first, variant, &config, &config.init(&device)).unwrap();
    let load = |p: &PathBuf| -> Arc<dyn pantheon::mcts::Evaluator> {
        let l = pantheon::nn::weights::load_file(p, Some(variant), &Device::flex()).unwrap();
        Arc::new(NetEvaluator::new(l.net, l.config, variant, Device::flex(), 32, p.display().to_string()))
    };
    let sp =
        SelfPlayConfig { temperature_plies: 8, model_id: "gen0".into(), ..tiny_selfplay(variant, dir.join("data")) };
    play(&sp, load(&first), &|_| {}).unwrap();
    let next = dir.join("gen1.pnet");
    let tc = TrainConfig {
        variant,
        data: vec![dir.join("data")],
        teacher: pantheon::train::TeacherTargets::default(),
        search_value_weight: 0.0,
        material: Default::default(),
        reply_weight: 0.0,
        from: Some(first.clone()),
        out: next.clone(),
        steps: 10,
        batch_size: 32,
        learning_rate: 1e-3,
        weight_decay: 1e-4,
        window: 100_000,
        checkpoint_every: 5,
        device: pantheon::nn::DeviceChoice::Cpu,
        deadline: None,
        seed: 2,
    };
    let report = train(&tc, &mut |_| {}).unwrap();
    assert_eq!(report.losses.len(), 10);
    let mc = MatchConfig {
        variant,
        games: 2,
        limit: MoveLimit::Nodes(16),
        threads: 1,
        opening_plies: 2,
        max_plies: 80,
        mate_plies: [3, 1],
        policy_temperature: [1.5, 1.0],
        cpuct_init: [1.25, 2.0],
        // A plays with a Gumbel root.
        gumbel: [Some(pantheon::mcts::GumbelParams::default()), None],
        time_margin: pantheon::selfplay::DEFAULT_TIME_MARGIN,
        seed: 3,
    };
    let result = play_match(&mc, Player::Search(load(&next)), Player::Search(Arc::new(UniformEvaluator)), &mut |_| {
        std::ops::ControlFlow::Continue(())
    });
    assert_eq!(result.games(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tsume_samples_are_mating_lines() {
    use pantheon::selfplay::tsume::{RandomMates, mate_samples};
    for variant in [Variant::Minishogi, Variant::Mansindam] {
        let mut source = RandomMates::new(variant, 7, 3, 5_000, 1.0);
        for _ in 0..6 {
            let problem = source.next_until(1_000_000).expect("random play meets mates");
            let samples = mate_samples(&problem, 5_000);
            assert_eq!(samples.len() as u32, problem.plies, "{variant}: the whole line");
            assert_eq!(samples[0].position.hash(), problem.game.position().hash());
            let attacker = problem.game.position().side_to_move();
            for (i, s) in samples.iter().enumerate() {
                let attacking = i % 2 == 0;
                assert_eq!(s.position.side_to_move() == attacker, attacking);
                assert_eq!(s.value, if attacking { 1.0 } else { -1.0 });
                assert_eq!(s.full_search, attacking);
                assert_eq!(s.policy.len(), usize::from(attacking), "one move, the mating one, or none");
                if let Some(&(mv, _)) = s.policy.first() {
                    assert!(s.position.legal_moves().contains(&mv), "{variant}: {mv:?} is legal");
                    if let Some(next) = samples.get(i + 1) {
                        let after = s.position.play(mv);
                        assert_eq!(next.position.hash(), after.hash(), "{variant}: the defender's position follows");
                        if let Some(again) = samples.get(i + 2) {
                            let replies = after.legal_moves();
                            assert!(replies.iter().any(|&r| after.play(r).hash() == again.position.hash()));
                        }
                    }
                }
            }
            // The last attacker move ends the game at once.
            let last = samples.last().unwrap();
            let mut game = Game::new(last.position.clone());
            game.play(last.policy[0].0);
            assert_eq!(game.outcome().and_then(|o| o.winner), Some(attacker), "{variant}: the last move wins");
        }
    }
}

#[test]
fn tsume_shards_are_written_reproducibly() {
    use pantheon::selfplay::{TsumeConfig, tsume::write_samples};
    let dir = temp_dir("tsume");
    let config = |out: PathBuf| TsumeConfig {
        variant: Variant::Minishogi,
        samples: 40,
        max_plies: 3,
        budget: 2_000,
        mate_in_one_share: 0.25,
        threads: 2,
        seed: 3,
        out,
    };
    let a = write_samples(&config(dir.join("a"))).unwrap();
    let b = write_samples(&config(dir.join("b"))).unwrap();
    assert!(a.samples >= 40 && a.samples < 40 + 2 * 3, "{a}");
    assert_eq!(a.mates.iter().sum::<usize>(), b.mates.iter().sum::<usize>());
    assert!(a.mates[1] > 0, "mates in 3 are found: {a}");
    assert_eq!(a.shards.len(), 2);
    let (samples, warnings) = read_dir(&dir.join("a"), Variant::Minishogi, usize::MAX).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(samples.len(), a.samples);
    assert!(samples.iter().all(|s| s.value.abs() == 1.0));
    for (x, y) in a.shards.iter().zip(&b.shards) {
        let (x, y) = (Shard::read(x).unwrap(), Shard::read(y).unwrap());
        assert_eq!(x.model_id, "tsume");
        assert_eq!(x.to_bytes(), y.to_bytes(), "same seed, same samples");
    }
    let even = TsumeConfig { max_plies: 4, ..config(dir.join("c")) };
    assert!(matches!(write_samples(&even), Err(pantheon::selfplay::SelfPlayError::EvenMateLength(4))));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn data_stats_relate_results_to_material() {
    use pantheon::mcts::Score;
    use pantheon::mcts::UniformEvaluator;
    use pantheon::notation::parse_position;
    use pantheon::selfplay::TeacherLabel;
    use pantheon::selfplay::stats::correlation;
    use pantheon::selfplay::{TSUME_MODEL_ID, data_stats};
    let v = Variant::Minishogi;
    let sample = |sfen: &str, value: f32| Sample {
        position: parse_position(v, sfen).unwrap(),
        repetitions: 1,
        value,
        full_search: false,
        policy: vec![],
        teacher: None,
        search: None,
    };
    let start = "rbsgk/4p/5/P4/KGSBR b - 1";
    // Gote without its rook (worth 8.0, its mean mobility): +8 for sente, -8 for gote to move.
    let (up, down) = ("1bsgk/4p/5/P4/KGSBR b - 1", "1bsgk/4p/5/P4/KGSBR w - 1");
    let mut played = Shard {
        variant: v,
        model_id: "gen1".into(),
        samples: vec![sample(start, 1.0), sample(start, -1.0), sample(up, 1.0), sample(up, 1.0), sample(down, -1.0)],
    };
    // One sample from a full search, one with a teacher's label (as `pantheon label` writes).
    let first_move = Game::new(played.samples[0].position.clone()).legal_moves()[0];
    played.samples[0].full_search = true;
    played.samples[0].policy = vec![(first_move, 3)];
    played.samples[1].teacher = Some(TeacherLabel { score: Score::Cp(-40), moves: vec![(first_move, Score::Cp(-40))] });
    let tsume = Shard { variant: v, model_id: TSUME_MODEL_ID.into(), samples: vec![sample(start, 1.0)] };
    let stats = data_stats(&[played.clone(), tsume.clone()], None);
    assert_eq!((stats.shards, stats.game_samples, stats.tsume_samples), (2, 5, 1));
    assert_eq!((stats.policy_targets, stats.teacher_labels, stats.teacher_lines), (1, 1, 1));
    assert_eq!((stats.wins, stats.draws, stats.losses), (3, 0, 2));
    let buckets: Vec<(f32, usize, f64)> = stats.buckets.iter().map(|b| (b.low, b.samples, b.mean_result)).collect();
    assert_eq!(buckets, vec![(-8.0, 1, -1.0), (-1.5, 2, 0.0), (8.0, 2, 1.0)]);
    let expected = correlation(&[0.0, 0.0, 8.0, 8.0, -8.0], &[1.0, -1.0, 1.0, 1.0, -1.0]).unwrap();
    assert!((stats.corr_material_result.unwrap() - expected).abs() < 1e-9 && expected > 0.7);
    assert!(stats.fit.is_none() && stats.buckets.iter().all(|b| b.mean_value.is_none()));
    let text = stats.to_string();
    assert!(
        text.contains(
            "5 game samples (1 with a search policy target, 1 with a teacher label, 1.00 lines each), 1 tsume samples"
        ),
        "{text}"
    );
    assert!(text.contains("win 60.0%, draw or unfinished 0.0%, loss 40.0%") && text.contains("8 .. 15"), "{text}");

    // A uniform evaluator values everything 0: the loss is the mean squared result, no correlation.
    let stats = data_stats(&[played, tsume], Some(&UniformEvaluator));
    let fit = stats.fit.as_ref().unwrap();
    assert_eq!((fit.mse, fit.corr_result, fit.corr_material), (1.0, None, None));
    assert!(stats.buckets.iter().all(|b| b.mean_value == Some(0.0)));
    assert!(stats.to_string().contains("value loss (mean squared error) 1.0000"), "{stats}");
}

#[test]
fn correlation_of_known_series() {
    use pantheon::selfplay::stats::correlation;
    assert!((correlation(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]).unwrap() - 1.0).abs() < 1e-12);
    assert!((correlation(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]).unwrap() + 1.0).abs() < 1e-12);
    assert_eq!(correlation(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
    assert_eq!(correlation(&[1.0], &[1.0]), None);
}

#[test]
fn the_exploration_constant_reaches_the_self_play_searches() {
    // The first move's visit counts of one game at c_init 0.25 and at 4.0,
    // same seed, an evaluator whose values differ from move to move: the
    // smaller constant puts more of them on its top move.
    let variant = Variant::Minishogi;
    let top_visits = |cpuct_init: f64| {
        let dir = temp_dir(&format!("selfplay-cpuct-{cpuct_init}"));
        let sp = SelfPlayConfig {
            games: 1,
            parallel: 1,
            visits: 400,
            full_share: 1.0,
            max_plies: 2,
            cpuct_init,
            ..tiny_selfplay(variant, dir.clone())
        };
        play(&sp, Arc::new(hashed::HashedValues), &|_| {}).unwrap();
        let (samples, _) = read_dir(&dir, variant, usize::MAX).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let first =
            samples.iter().find(|s| s.position == Position::startpos(variant)).expect("the first move's sample");
        first.policy.iter().map(|&(_, n)| n).max().unwrap()
    };
    let (narrow, wide) = (top_visits(0.25), top_visits(4.0));
    assert!(narrow > wide, "top move's visits: {narrow} at c_init 0.25, {wide} at 4.0");
}
