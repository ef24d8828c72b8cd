//! The wgpu path (the default `gpu` feature): inference and training on
//! any adapter, the software Vulkan device (llvmpipe) in CI. A tiny net
//! keeps kernel compilation short.
#![cfg(feature = "gpu")]

use burn::prelude::*;
use pantheon::mcts::{EvalRequest, Evaluator};
use pantheon::nn::{DeviceChoice, Layout, NetConfig, NetEvaluator, device, weights};
use pantheon::rules::{Game, Position, Variant};

/// Largest difference allowed between GPU and CPU outputs (f32 kernels
/// sum in different orders).
const TOLERANCE: f32 = 1e-3;

/// A tiny net (1 block of 8 channels) with random weights, as a weight file.
fn tiny_net_bytes(variant: Variant) -> Vec<u8> {
    let config = NetConfig::new(&Layout::new(variant), 1, 8);
    weights::to_bytes(variant, &config, &config.init(&Device::flex())).unwrap()
}

/// The net in `bytes` as an evaluator on `device`, batches of up to 8.
fn tiny_on(bytes: &[u8], variant: Variant, device: &Device) -> NetEvaluator {
    let l = weights::load(bytes, Some(variant), device).unwrap();
    NetEvaluator::new(l.net, l.config, variant, device.clone(), 8, "tiny".into())
}

#[test]
fn gpu_and_cpu_agree_on_a_tiny_net() {
    let gpu = device(DeviceChoice::Gpu).expect("a wgpu adapter (llvmpipe in CI)");
    let variant = Variant::Minishogi;
    let cpu = Device::flex();
    let bytes = tiny_net_bytes(variant);
    let on = |d: &Device| tiny_on(&bytes, variant, d);
    let mut game = Game::new(Position::startpos(variant));
    let mut reqs = Vec::new();
    for _ in 0..4 {
        let moves = game.legal_moves();
        reqs.push(EvalRequest { position: game.position().clone(), moves: moves.clone(), repetitions: 1 });
        game.play(moves[0]);
    }
    let a = on(&cpu).evaluate(&reqs);
    let gpu_net = on(&gpu);
    // Four positions run padded to a batch of 8 on the GPU.
    assert_eq!(gpu_net.batch_sizes(), vec![1, 8]);
    assert_eq!(gpu_net.padded(4), 8);
    gpu_net.warm_up();
    let mut gpu_net = gpu_net;
    assert!(gpu_net.policy_kernel(), "the WGSL softmax is the GPU default");
    let b = gpu_net.evaluate(&reqs);
    assert_eq!(b.len(), 4);
    gpu_net.set_policy_kernel(false);
    let plain = gpu_net.evaluate(&reqs);
    for (x, y) in plain.iter().zip(&b) {
        for (p, q) in x.policy.iter().zip(&y.policy) {
            assert!((p - q).abs() < 1e-5, "plain {p} vs kernel {q}");
        }
    }
    for (x, y) in a.iter().zip(&b) {
        assert!((x.value - y.value).abs() < TOLERANCE, "value {} vs {}", x.value, y.value);
        for (p, q) in x.policy.iter().zip(&y.policy) {
            assert!((p - q).abs() < TOLERANCE, "policy {p} vs {q}");
        }
    }
}

#[test]
fn masked_softmax_kernel_matches_the_cpu_softmax() {
    use pantheon::mcts::Rng;
    use pantheon::nn::{kernels, softmax};
    let gpu = device(DeviceChoice::Gpu).expect("a wgpu adapter (llvmpipe in CI)");
    // 70 rows: two workgroups of 64; rows with no moves like padding rows.
    let (rows, width) = (70, 300);
    let mut rng = Rng::new(5);
    let logits: Vec<f32> = (0..rows * width).map(|_| (rng.uniform() as f32 - 0.5) * 20.0).collect();
    let mut moves = Vec::new();
    let mut offsets = vec![0u32];
    for r in 0..rows {
        let count = if r % 10 == 3 { 0 } else { 1 + rng.below(120) };
        moves.extend((0..count).map(|_| rng.below(width) as u32));
        offsets.push(moves.len() as u32);
    }
    let tensor = Tensor::<2>::from_data(TensorData::new(logits.clone(), [rows, width]), &gpu);
    let probs = kernels::masked_softmax(tensor, &moves, &offsets).expect("a wgpu tensor").expect("the kernel runs");
    assert_eq!(probs.len(), moves.len());
    for r in 0..rows {
        let (a, b) = (offsets[r] as usize, offsets[r + 1] as usize);
        let picked: Vec<f32> = moves[a..b].iter().map(|&m| logits[r * width + m as usize]).collect();
        for (p, q) in softmax(&picked).iter().zip(&probs[a..b]) {
            assert!((p - q).abs() < 1e-5, "row {r}: {p} vs {q}");
        }
    }
    // A tensor on the CPU is not the kernel's: the caller falls back.
    let cpu = Tensor::<2>::from_data(TensorData::new(logits, [rows, width]), &Device::flex());
    assert!(kernels::masked_softmax(cpu, &moves, &offsets).is_none());
}

/// Not a test: the A/B measurement of the two policy paths on whatever
/// adapter is present, printed as medians (`cargo test --features gpu
/// --test gpu -- --ignored --nocapture`). `pantheon bench nn --device gpu`
/// measures the same in a GPU build of the binary.
#[test]
#[ignore]
fn measure_policy_paths() {
    use std::time::Instant;
    let gpu = device(DeviceChoice::Gpu).expect("a wgpu adapter");
    for variant in [Variant::Minishogi, Variant::Mansindam] {
        let l = weights::load(pantheon::nn::shipped(variant), Some(variant), &gpu).unwrap();
        let mut net = NetEvaluator::new(l.net, l.config, variant, gpu.clone(), 64, "shipped".into());
        net.warm_up();
        let mut game = Game::new(Position::startpos(variant));
        let mut reqs = Vec::new();
        let mut rng = pantheon::mcts::Rng::new(3);
        while reqs.len() < 64 {
            let moves = game.legal_moves();
            if moves.is_empty() || game.outcome().is_some() {
                game = Game::new(Position::startpos(variant));
                continue;
            }
            reqs.push(EvalRequest { position: game.position().clone(), moves: moves.clone(), repetitions: 1 });
            game.play(moves[rng.below(moves.len())]);
        }
        for batch in [1, 16, 64] {
            let mut times = [Vec::new(), Vec::new()];
            for _ in 0..7 {
                for (k, kernel) in [false, true].into_iter().enumerate() {
                    net.set_policy_kernel(kernel);
                    let t = Instant::now();
                    net.evaluate(&reqs[..batch]);
                    times[k].push(t.elapsed().as_secs_f64() * 1e3);
                }
            }
            let median = |v: &mut Vec<f64>| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            let (plain, kernel) = (median(&mut times[0]), median(&mut times[1]));
            println!(
                "{variant} batch {batch}: plain {plain:.2} ms, kernel {kernel:.2} ms, kernel/plain {:.3}",
                kernel / plain
            );
        }
    }
}

#[path = "support/training.rs"]
mod training;

#[path = "support/positions.rs"]
mod positions;
use positions::requests;

/// Largest difference allowed between a GPU and a CPU training loss over
/// a few steps (the same maths, summed in a different order).
const LOSS_TOLERANCE: f32 = 2e-3;

#[test]
fn training_on_the_gpu_gives_the_cpus_losses() {
    let (dir, tc) = training::setup("gpu");
    let steps = pantheon::train::TrainConfig { steps: 4, checkpoint_every: 100, ..tc };
    let cpu = pantheon::train::train(&steps, &mut |_| {}).unwrap();
    let on_gpu = pantheon::train::TrainConfig { device: DeviceChoice::Gpu, out: dir.join("gpu.pnet"), ..steps.clone() };
    let gpu = pantheon::train::train(&on_gpu, &mut |_| {}).unwrap();
    assert_eq!(cpu.losses.len(), 4);
    for (c, g) in cpu.losses.iter().zip(&gpu.losses) {
        assert!((c.policy - g.policy).abs() < LOSS_TOLERANCE, "step {}: policy {} vs {}", c.step, c.policy, g.policy);
        assert!((c.value - g.value).abs() < LOSS_TOLERANCE, "step {}: value {} vs {}", c.step, c.value, g.value);
    }
    // The net trained on the GPU is a weight file like any other.
    assert!(weights::load_file(&on_gpu.out, Some(Variant::Minishogi), &Device::flex()).is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Largest difference allowed between f16 and f32 outputs of the tiny net
/// (f16 keeps about three significant digits).
const HALF_TOLERANCE: f32 = 2e-2;

#[test]
fn half_precision_gives_the_f32_outputs_where_the_adapter_has_it() {
    use pantheon::nn::{DeviceError, Precision, supports_f16};
    let gpu = device(DeviceChoice::Gpu).expect("a wgpu adapter (llvmpipe in CI)");
    let variant = Variant::Mansindam;
    let bytes = tiny_net_bytes(variant);
    let on_gpu = || tiny_on(&bytes, variant, &gpu);
    let reqs = requests(variant, 5);
    let full = on_gpu().evaluate(&reqs);
    let mut half = on_gpu();
    if !supports_f16(&gpu) {
        // Refused with a reason, and the net stays in f32.
        assert!(matches!(half.set_precision(Precision::F16), Err(DeviceError::NoHalfPrecision(_))));
        assert_eq!(half.precision(), Precision::F32);
        eprintln!("this adapter has no f16: {}", pantheon::nn::describe(&gpu));
        return;
    }
    half.set_precision(Precision::F16).unwrap();
    assert!(half.name().ends_with(", f16"));
    for (x, y) in full.iter().zip(half.evaluate(&reqs)) {
        assert!((x.value - y.value).abs() < HALF_TOLERANCE, "value {} vs {}", x.value, y.value);
        for (p, q) in x.policy.iter().zip(&y.policy) {
            assert!((p - q).abs() < HALF_TOLERANCE, "policy {p} vs {q}");
        }
    }
    // The f32 weights are gone: going back is refused.
    assert!(half.set_precision(Precision::F32).is_err());
}

#[test]
fn a_search_with_two_batches_in_flight_on_the_gpu() {
    use pantheon::mcts::{Limits, SearchParams, Searcher};
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    let gpu = device(DeviceChoice::Gpu).expect("a wgpu adapter (llvmpipe in CI)");
    let variant = Variant::Minishogi;
    let net = Arc::new(tiny_on(&tiny_net_bytes(variant), variant, &gpu));
    assert_eq!(net.pipeline_depth(), 2, "two batches in flight on a GPU");
    let params = SearchParams { threads: 4, batch_size: 8, ..SearchParams::default() };
    let mut searcher = Searcher::new(net.clone(), params);
    searcher.set_position(&Game::new(Position::startpos(variant)));
    let limits = Limits { nodes: Some(400), ..Limits::default() };
    let result = searcher.search(&limits, &AtomicBool::new(false), &mut |_| {});
    assert!(result.info.playouts >= 400);
    assert!(result.best.is_some());
    assert!(net.device_idle().batches > 0);
}

#[test]
fn on_a_gpu_shipped_is_the_large_net_where_there_is_one_and_batch_0_the_gpu_default() {
    use pantheon::nn::{ModelSource, evaluator::default_batch, shipped, shipped_large};
    let variant = Variant::Minishogi;
    let config = |bytes: &[u8]| weights::load(bytes, Some(variant), &Device::flex()).unwrap().config;
    let eval = NetEvaluator::load(variant, &ModelSource::Shipped, DeviceChoice::Gpu, 0).unwrap();
    assert_eq!(eval.config(), &config(shipped_large(variant).unwrap_or(shipped(variant))));
    assert_eq!(eval.max_batch(), default_batch(true));
    let small = NetEvaluator::load(variant, &ModelSource::ShippedSmall, DeviceChoice::Gpu, 8).unwrap();
    assert_eq!(small.config(), &config(shipped(variant)));
    assert!(small.name().contains("shipped small"), "{}", small.name());
}
