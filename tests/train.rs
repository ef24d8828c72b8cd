//! Training on the CPU: losses, outputs, and resuming an interrupted run
//! to the same state.

#[path = "support/training.rs"]
mod training;

use burn::prelude::Device;
use pantheon::nn::{AuxHeads, NetConfig, weights};
use pantheon::rules::Variant;
use pantheon::selfplay::Shard;
use pantheon::train::{TrainConfig, train};
use std::path::PathBuf;
use training::setup;

#[test]
fn training_lowers_the_loss_and_writes_net_csv_and_png() {
    let (dir, mut tc) = setup("plain");
    tc.steps = 30;
    let report = train(&tc, &mut |_| {}).unwrap();
    assert_eq!(report.losses.len(), 30);
    let first: f32 = report.losses[..5].iter().map(|l| l.policy + l.value).sum();
    let last: f32 = report.losses[25..].iter().map(|l| l.policy + l.value).sum();
    assert!(last < first, "loss {first} -> {last}");
    assert!(weights::load_file(&tc.out, Some(Variant::Minishogi), &Device::flex()).is_ok());
    let csv = std::fs::read_to_string(dir.join("out.pnet.losses.csv")).unwrap();
    assert_eq!(csv.lines().count(), 31);
    let svg = std::fs::read_to_string(dir.join("out.pnet.losses.svg")).unwrap();
    assert!(svg.starts_with("<svg ") && svg.contains(">Training losses</text>") && svg.contains(">policy</text>"));
    assert!(!dir.join("out.pnet.ckpt").exists(), "checkpoint removed after a finished run");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_interrupted_run_resumes_to_the_same_state() {
    let (dir, tc) = setup("resume");
    let straight = train(&TrainConfig { out: dir.join("straight.pnet"), ..tc.clone() }, &mut |_| {}).unwrap();
    // Interrupt the second run after step 3 (the checkpoint is written
    // before progress is reported).
    let interrupted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        train(&tc, &mut |l| assert!(l.step < 3, "interrupted")).unwrap();
    }));
    assert!(interrupted.is_err());
    assert!(dir.join("out.pnet.ckpt").join("state").exists());
    let resumed = train(&tc, &mut |_| {}).unwrap();
    assert_eq!(resumed.resumed_from, Some(3));
    assert_eq!(resumed.losses.len(), straight.losses.len());
    for (a, b) in straight.losses.iter().zip(&resumed.losses) {
        assert_eq!(a.step, b.step);
        assert!((a.policy - b.policy).abs() < 1e-4 && (a.value - b.value).abs() < 1e-4, "{a:?} vs {b:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_time_limit_stops_with_a_checkpoint_and_a_rerun_finishes() {
    let (dir, tc) = setup("deadline");
    // A deadline already past: one step, then a checkpoint and no net.
    let limited = TrainConfig { deadline: Some(std::time::Instant::now()), ..tc.clone() };
    let stopped = train(&limited, &mut |_| {}).unwrap();
    assert!(stopped.stopped_early);
    assert_eq!(stopped.losses.len(), 1);
    assert!(!tc.out.exists(), "no net before the last step");
    assert!(dir.join("out.pnet.ckpt").join("state").exists());
    let finished = train(&tc, &mut |_| {}).unwrap();
    assert!(!finished.stopped_early);
    assert_eq!(finished.resumed_from, Some(1));
    assert_eq!(finished.losses.len(), tc.steps);
    assert!(tc.out.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_loop_runs_generations_and_resumes() {
    use pantheon::selfplay::{MatchConfig, MoveLimit, SelfPlayConfig, TsumeConfig};
    use pantheon::train::{LoopConfig, generations};
    let (dir, tc) = setup("loop");
    let variant = Variant::Minishogi;
    let run = dir.join("run");
    let mut config = LoopConfig {
        variant,
        dir: run.clone(),
        generations: 1,
        from: tc.from.clone(),
        selfplay: SelfPlayConfig {
            variant,
            games: 3,
            parallel: 3,
            visits: 12,
            fast_visits: 4,
            full_share: 0.5,
            temperature_plies: 6,
            resign_value: 0.99,
            no_resign_share: 0.3,
            max_plies: 40,
            greedy_share: 0.0,
            leaves_per_game: 4,
            seed: 1,
            out: run.join("data"),
            model_id: String::new(),
            gumbel: None,
            forced_playouts: None,
            cpuct_init: pantheon::mcts::CPUCT_INIT,
            deadline: None,
        },
        train: TrainConfig { steps: 4, checkpoint_every: 2, ..tc.clone() },
        gate: MatchConfig {
            variant,
            games: 2,
            limit: MoveLimit::Nodes(8),
            threads: 1,
            opening_plies: 2,
            max_plies: 40,
            mate_plies: [3, 3],
            policy_temperature: [1.0, 1.0],
            cpuct_init: [1.25, 1.25],
            gumbel: [None, None],
            time_margin: pantheon::selfplay::DEFAULT_TIME_MARGIN,
            seed: 1,
        },
        gate_score: 0.5,
        tsume: TsumeConfig {
            variant,
            samples: 10,
            max_plies: 3,
            budget: 2_000,
            mate_in_one_share: 1.0,
            threads: 1,
            seed: 1,
            out: PathBuf::new(),
        },
        cpu_budget: None,
        precision: pantheon::nn::Precision::F32,
    };
    let logs = generations::run(&config, &mut |_| {}).unwrap();
    assert_eq!(logs.len(), 1);
    config.generations = 2;
    // The resumed run plays in bf16 where the CPU has a kernel for it (the
    // precision is a setting of the run, not of its state).
    let kernel = pantheon::nn::bf16::Kernel::best();
    if kernel.is_some() {
        config.precision = pantheon::nn::Precision::Bf16;
    }
    let mut lines = Vec::new();
    let logs = generations::run(&config, &mut |l| lines.push(l.to_string())).unwrap();
    assert!(lines[0].starts_with("resuming after generation 1"), "{lines:?}");
    let selfplay = lines.iter().find(|l| l.starts_with("generation 2: self-play with ")).expect("self-play line");
    match kernel {
        Some(k) => assert!(selfplay.contains(&format!(", bf16 on {k}")), "{selfplay}"),
        None => assert!(!selfplay.contains("bf16"), "{selfplay}"),
    }
    assert_eq!(logs.iter().map(|l| l.generation).collect::<Vec<_>>(), vec![1, 2]);
    assert_eq!(std::fs::read_to_string(run.join("log.csv")).unwrap().lines().count(), 3);
    assert!(std::fs::read_to_string(run.join("state")).unwrap().starts_with("generation 2"));
    assert!(std::fs::read_to_string(run.join("strength.svg")).unwrap().contains(">generation</text>"));
    // Once the CPU budget is spent no generation starts.
    let mut spent = config.clone();
    spent.generations = 5;
    spent.cpu_budget = Some(logs.iter().map(|l| l.cpu_seconds).sum::<f64>() / 2.0);
    let mut stopped = Vec::new();
    let after = generations::run(&spent, &mut |l| stopped.push(l.to_string())).unwrap();
    assert_eq!(after.len(), 2);
    assert!(logs.iter().all(|l| l.cpu_seconds > 0.0), "{logs:?}");
    // The CPU time by phase adds up to the generation's, and is read back
    // from log.csv (`after` read the two generations from it).
    for (l, read) in logs.iter().zip(&after) {
        let p = l.cpu_phases.expect("CPU phases measured");
        assert!(p.selfplay > 0.0 && p.train > 0.0 && p.gate >= 0.0, "{p:?}");
        // Generation 1 comes back from log.csv, its four figures rounded to
        // the millisecond.
        assert!((p.selfplay + p.train + p.gate - l.cpu_seconds).abs() < 2.1e-3, "{l:?}");
        let back = read.cpu_phases.expect("phases read back");
        assert!((back.train - p.train).abs() < 1e-3, "{back:?} vs {p:?}");
    }
    assert!(lines.iter().any(|l| l.starts_with("generation 2: CPU ")), "{lines:?}");
    // A log written before the phase columns existed still reads, without
    // them.
    let csv = std::fs::read_to_string(run.join("log.csv")).unwrap();
    let old: String = csv.lines().map(|l| l.split(',').take(10).collect::<Vec<_>>().join(",") + "\n").collect();
    std::fs::write(run.join("log.csv"), old).unwrap();
    let reread = generations::run(&LoopConfig { generations: 2, ..config.clone() }, &mut |_| {}).unwrap();
    assert_eq!(reread.len(), 2);
    assert!(reread.iter().all(|l| l.cpu_phases.is_none() && l.cpu_seconds > 0.0));
    assert!(stopped.iter().any(|l| l.starts_with("CPU budget spent")), "{stopped:?}");
    // Each generation added its tsume samples to the data.
    assert!(lines.iter().any(|l| l.starts_with("generation 2: tsume: ")), "{lines:?}");
    let tsume = std::fs::read_dir(run.join("data"))
        .unwrap()
        .filter_map(|e| Shard::read(&e.unwrap().path()).ok())
        .filter(|s| s.model_id == "tsume")
        .count();
    assert_eq!(tsume, 2, "one shard per generation");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Trains `tc` stopped after its first step, then to its end from the
/// checkpoint.
fn train_with_a_resume(tc: &TrainConfig) -> pantheon::train::TrainReport {
    let limited = TrainConfig { deadline: Some(std::time::Instant::now()), ..tc.clone() };
    assert!(train(&limited, &mut |_| {}).unwrap().stopped_early);
    let report = train(tc, &mut |_| {}).unwrap();
    assert_eq!(report.resumed_from, Some(1));
    report
}

/// Asserts that a loss of 30 steps fell from its first 5 steps to its last 5.
fn assert_falls(name: &str, losses: &[f32]) {
    let (first, last) = (losses[..5].iter().sum::<f32>(), losses[25..].iter().sum::<f32>());
    assert!(last < first, "{name} loss {first} -> {last}");
}

/// `n` random inputs for a net of `config`, drawn from a fixed seed (not
/// from the backend's process-wide random source, which other tests seed).
fn random_input(config: &NetConfig, n: usize, device: &Device) -> burn::tensor::Tensor<4> {
    let shape = [n, config.planes, config.height, config.width];
    let mut rng = pantheon::mcts::Rng::new(5);
    let values: Vec<f32> = (0..shape.iter().product()).map(|_| rng.uniform() as f32 * 2.0 - 1.0).collect();
    burn::tensor::Tensor::from_data(burn::tensor::TensorData::new(values, shape), device)
}

#[test]
fn the_material_head_trains_resumes_and_leaves_play_unchanged() {
    use pantheon::train::MaterialTarget;
    let (dir, mut tc) = setup("material");
    tc.steps = 30;
    tc.material = MaterialTarget { weight: 1.0, plies: 4 };
    let report = train_with_a_resume(&tc);
    let material: Vec<f32> = report.losses.iter().map(|l| l.material.expect("a material loss every step")).collect();
    assert_falls("material", &material);
    let csv = std::fs::read_to_string(dir.join("out.pnet.losses.csv")).unwrap();
    assert!(csv.starts_with("step,policy_loss,value_loss,material_loss\n"), "{csv}");
    assert_eq!(csv.lines().count(), 31);
    // The written net has the head; a head added to a net changes none of
    // its play outputs.
    let device = Device::flex();
    let trained = weights::load_file(&tc.out, Some(Variant::Minishogi), &device).unwrap();
    assert!(trained.config.material_head);
    let plain = weights::load_file(tc.from.as_ref().unwrap(), Some(Variant::Minishogi), &device).unwrap();
    assert!(!plain.config.material_head);
    let x = random_input(&plain.config, 2, &device);
    let (logits, value) = plain.net.forward(x.clone());
    let config = NetConfig { material_head: true, ..plain.config.clone() };
    let headed = plain.net.clone().with_heads(&config, &device);
    let both = AuxHeads { material: true, reply: true };
    let out = headed.forward_train(x.clone(), both);
    assert_eq!(logits.to_data(), out.logits.to_data());
    assert_eq!(value.to_data(), out.value.to_data());
    let material = out.material.expect("the head's output").into_data().try_to_vec::<f32>().unwrap();
    assert!(material.len() == 2 && material.iter().all(|m| (-1.0..=1.0).contains(m)));
    assert!(out.reply.is_none(), "no reply head");
    assert!(plain.net.forward_train(x.clone(), both).material.is_none());
    assert!(headed.forward_train(x, AuxHeads::default()).material.is_none(), "not asked for");
    // Training on without the target keeps the head in the file.
    let again = TrainConfig {
        from: Some(tc.out.clone()),
        out: dir.join("again.pnet"),
        material: MaterialTarget::default(),
        steps: 2,
        ..tc.clone()
    };
    let plain_run = train(&again, &mut |_| {}).unwrap();
    assert!(plain_run.losses.iter().all(|l| l.material.is_none()));
    assert!(weights::load_file(&again.out, Some(Variant::Minishogi), &device).unwrap().config.material_head);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_reply_head_learns_the_next_positions_policy_target_and_resumes() {
    let (dir, mut tc) = setup("reply");
    tc.steps = 30;
    tc.reply_weight = 1.0;
    tc.material.weight = 0.5;
    // The checkpoint's loss lines carry both auxiliary losses.
    let report = train_with_a_resume(&tc);
    assert!(report.losses.iter().all(|l| l.material.is_some()));
    let reply: Vec<f32> = report.losses.iter().map(|l| l.reply.expect("a reply loss every step")).collect();
    assert_falls("reply", &reply);
    let csv = std::fs::read_to_string(dir.join("out.pnet.losses.csv")).unwrap();
    assert!(csv.starts_with("step,policy_loss,value_loss,material_loss,reply_loss\n"), "{csv}");
    assert_eq!(csv.lines().count(), 31);
    let device = Device::flex();
    let trained = weights::load_file(&tc.out, Some(Variant::Minishogi), &device).unwrap();
    assert!(trained.config.reply_head && trained.config.material_head);
    // Its outputs cover the policy; play's outputs are those of the net
    // without the head.
    let x = random_input(&trained.config, 3, &device);
    let out = trained.net.forward_train(x.clone(), AuxHeads { material: false, reply: true });
    let reply = out.reply.expect("the head's output");
    assert_eq!(reply.dims(), out.logits.dims());
    let (logits, _) = trained.net.forward(x);
    assert_eq!(logits.to_data(), out.logits.to_data());
    std::fs::remove_dir_all(&dir).unwrap();
}
