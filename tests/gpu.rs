//! The wgpu path (feature `gpu`): runs on any adapter, the software Vulkan
//! device (llvmpipe) in CI. A tiny net keeps kernel compilation short.
#![cfg(feature = "gpu")]

use burn::prelude::*;
use pantheon::mcts::{EvalRequest, Evaluator};
use pantheon::nn::{DeviceChoice, Layout, NetConfig, NetEvaluator, device, weights};
use pantheon::rules::{Game, Position, Variant};

/// Largest difference allowed between GPU and CPU outputs (f32 kernels
/// sum in different orders).
const TOLERANCE: f32 = 1e-3;

#[test]
fn gpu_and_cpu_agree_on_a_tiny_net() {
    let gpu = device(DeviceChoice::Gpu).expect("a wgpu adapter (llvmpipe in CI)");
    let variant = Variant::Minishogi;
    let cpu = Device::flex();
    let config = NetConfig::new(&Layout::new(variant), 1, 8);
    let bytes = weights::to_bytes(variant, &config, &config.init(&cpu)).unwrap();
    let on = |d: &Device| {
        let l = weights::load(&bytes, Some(variant), d).unwrap();
        NetEvaluator::new(l.net, l.config, variant, d.clone(), 8, "tiny".into())
    };
    let mut game = Game::new(Position::startpos(variant));
    let mut reqs = Vec::new();
    for _ in 0..4 {
        let moves = game.legal_moves();
        reqs.push(EvalRequest { position: game.position().clone(), moves: moves.clone(), repetitions: 1 });
        game.play(moves[0]);
    }
    let a = on(&cpu).evaluate(&reqs);
    let b = on(&gpu).evaluate(&reqs);
    for (x, y) in a.iter().zip(&b) {
        assert!((x.value - y.value).abs() < TOLERANCE, "value {} vs {}", x.value, y.value);
        for (p, q) in x.policy.iter().zip(&y.policy) {
            assert!((p - q).abs() < TOLERANCE, "policy {p} vs {q}");
        }
    }
}
