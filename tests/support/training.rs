//! A small training run's data and settings, shared by the CPU and GPU
//! training tests: shards of random minishogi games and a tiny net.

use burn::prelude::Device;
use pantheon::mcts::Rng;
use pantheon::nn::{Layout, NetConfig, weights};
use pantheon::rules::{Game, Position, Variant};
use pantheon::selfplay::{Sample, Shard};
use pantheon::train::TrainConfig;
use std::path::PathBuf;

/// A fresh directory with the data and starting net; the config trains
/// on the CPU.
pub fn setup(name: &str) -> (PathBuf, TrainConfig) {
    let dir = std::env::temp_dir().join(format!("pantheon-train-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("data")).unwrap();
    let variant = Variant::Minishogi;
    // Records of random games: full-search targets on even plies.
    let mut rng = Rng::new(9);
    for g in 0..3 {
        let mut game = Game::new(Position::startpos(variant));
        let mut samples = Vec::new();
        for ply in 0..20 {
            let moves = game.legal_moves();
            if moves.is_empty() || game.outcome().is_some() {
                break;
            }
            let policy =
                if ply % 2 == 0 { moves.iter().map(|&m| (m, 1 + rng.below(10) as u32)).collect() } else { vec![] };
            let value = if ply % 2 == 0 { 1.0 } else { -1.0 };
            samples.push(Sample {
                position: game.position().clone(),
                repetitions: 1,
                value,
                full_search: ply % 2 == 0,
                policy,
                teacher: None,
                search: None,
            });
            game.play(moves[rng.below(moves.len())]);
        }
        Shard { variant, model_id: "random".into(), samples }.write(&dir.join("data"), &format!("g{g}")).unwrap();
    }
    let config = NetConfig::new(&Layout::new(variant), 1, 8);
    let from = dir.join("from.pnet");
    weights::save(&from, variant, &config, &config.init_seeded(&Device::flex(), 1)).unwrap();
    let tc = TrainConfig {
        variant,
        data: vec![dir.join("data")],
        teacher: pantheon::train::TeacherTargets::default(),
        search_value_weight: 0.0,
        material: Default::default(),
        reply_weight: 0.0,
        from: Some(from),
        out: dir.join("out.pnet"),
        steps: 6,
        batch_size: 16,
        learning_rate: 3e-3,
        weight_decay: 1e-4,
        window: 10_000,
        checkpoint_every: 1,
        device: pantheon::nn::DeviceChoice::Cpu,
        deadline: None,
        seed: 4,
    };
    (dir, tc)
}
