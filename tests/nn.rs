//! The network on the CPU backend: shapes, masked policy, weight files and
//! their errors, a training step, the shipped nets.

use burn::optim::{AdamWConfig, GradientsParams};
use burn::prelude::*;
use burn::tensor::activation::log_softmax;
use pantheon::mcts::{EvalRequest, Evaluator};
use pantheon::nn::{Layout, NetConfig, NetEvaluator, WeightsError, weights};
use pantheon::rules::{Game, Position, Variant};

fn tiny(variant: Variant) -> NetConfig {
    NetConfig::new(&Layout::new(variant), 1, 8)
}

fn requests(variant: Variant, n: usize) -> Vec<EvalRequest> {
    let mut game = Game::new(Position::startpos(variant));
    let mut out = Vec::new();
    while out.len() < n {
        let moves = game.legal_moves();
        out.push(EvalRequest { position: game.position().clone(), moves: moves.clone(), repetitions: 1 });
        // A fixed line: the move in the middle of the list.
        game.play(moves[moves.len() / 2]);
    }
    out
}

#[test]
fn output_shapes_and_masked_policy() {
    for variant in Variant::ALL {
        let layout = Layout::new(variant);
        let device = Device::flex();
        let config = tiny(variant);
        let net = config.init(&device);
        let x = Tensor::<4>::zeros([3, layout.planes, layout.height, layout.width], &device);
        let (logits, value) = net.forward(x);
        assert_eq!(logits.dims(), [3, layout.policy_len()]);
        assert_eq!(value.dims(), [3, 1]);
        let eval = NetEvaluator::new(net, config, variant, device, 16, "test".into());
        // The GPU's padding sizes; the CPU runs batches unpadded.
        assert_eq!(eval.batch_sizes(), vec![1, 8, 16]);
        assert_eq!(eval.padded(5), 5);
        let reqs = requests(variant, 5);
        for (req, ans) in reqs.iter().zip(eval.evaluate(&reqs)) {
            assert_eq!(ans.policy.len(), req.moves.len());
            let sum: f32 = ans.policy.iter().sum();
            assert!((sum - 1.0).abs() < 1e-4, "{variant}: policy sums to {sum}");
            assert!((-1.0..=1.0).contains(&ans.value));
        }
    }
}

#[test]
fn save_then_load_gives_identical_outputs() {
    let variant = Variant::Mansindam;
    let device = Device::flex();
    let config = tiny(variant);
    let net = config.init(&device);
    let bytes = weights::to_bytes(variant, &config, &net).unwrap();
    let loaded = weights::load(&bytes, Some(variant), &device).unwrap();
    assert_eq!(loaded.config, config);
    let reqs = requests(variant, 4);
    let a = NetEvaluator::new(net, config.clone(), variant, device.clone(), 8, "a".into()).evaluate(&reqs);
    let b = NetEvaluator::new(loaded.net, config, variant, device, 8, "b".into()).evaluate(&reqs);
    assert!(a == b, "outputs differ after a byte round trip");
    // Through a file, written atomically (no temporary file left behind).
    let dir = std::env::temp_dir().join(format!("pantheon-nn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("net.pnet");
    let l = weights::load(&bytes, None, &Device::flex()).unwrap();
    weights::save(&path, variant, &l.config, &l.net).unwrap();
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    let from_file = weights::load_file(&path, Some(variant), &Device::flex()).unwrap();
    let c = NetEvaluator::new(from_file.net, from_file.config, variant, Device::flex(), 8, "c".into()).evaluate(&reqs);
    assert!(a == c, "outputs differ after a file round trip");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_weight_files_are_refused_with_a_reason() {
    let variant = Variant::Minishogi;
    let device = Device::flex();
    let config = tiny(variant);
    let bytes = weights::to_bytes(variant, &config, &config.init(&device)).unwrap();
    let err = |b: &[u8], v: Option<Variant>| weights::load(b, v, &device).expect_err("must fail");
    assert!(matches!(err(&bytes, Some(Variant::Mansindam)), WeightsError::WrongVariant { .. }));
    assert!(matches!(err(&bytes[..bytes.len() / 2], None), WeightsError::Truncated(_)));
    assert!(matches!(err(&bytes[..5], None), WeightsError::Truncated(_)));
    assert!(matches!(err(b"GIF89a..........", None), WeightsError::BadMagic));
    let mut flipped = bytes.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x40;
    assert!(matches!(err(&flipped, None), WeightsError::Checksum));
    let mut version = bytes.clone();
    version[8] = 99;
    assert!(matches!(err(&version, None), WeightsError::Version { found: 99 }));
    // A record length near 2^64 must not overflow the bounds arithmetic.
    let header_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let mut huge = bytes.clone();
    huge[16 + header_len..24 + header_len].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(err(&huge, None), WeightsError::Truncated(_)));
    let missing = weights::load_file(std::path::Path::new("/nonexistent/net.pnet"), None, &device);
    assert!(matches!(missing, Err(WeightsError::Read { .. })));
    assert!(err(&flipped, None).to_string().contains("checksum"));
}

#[test]
fn one_optimiser_step_lowers_the_loss() {
    let variant = Variant::Minishogi;
    let layout = Layout::new(variant);
    let device = Device::flex().autodiff();
    device.seed(3);
    let config = tiny(variant);
    let mut model = config.init(&device);
    let reqs = requests(variant, 8);
    let n = reqs.len();
    let mut input = vec![0.0; n * layout.input_len()];
    let mut target = vec![0.0; n * layout.policy_len()];
    let mut z = vec![0.0; n];
    for (i, r) in reqs.iter().enumerate() {
        layout.encode(&r.position, 1, &mut input[i * layout.input_len()..(i + 1) * layout.input_len()]);
        // Target: all weight on the first legal move; value +1 or -1.
        target[i * layout.policy_len() + layout.index(&r.position, r.moves[0])] = 1.0;
        z[i] = if i % 2 == 0 { 1.0 } else { -1.0 };
    }
    let shape = [n, layout.planes, layout.height, layout.width];
    let loss_of = |model: &pantheon::nn::Net| {
        let x = Tensor::<4>::from_data(TensorData::new(input.clone(), shape), &device);
        let pi = Tensor::<2>::from_data(TensorData::new(target.clone(), [n, layout.policy_len()]), &device);
        let zt = Tensor::<2>::from_data(TensorData::new(z.clone(), [n, 1]), &device);
        let (logits, v) = model.forward(x);
        let policy_loss = (log_softmax(logits, 1) * pi).sum_dim(1).mean().neg();
        let value_loss = (v - zt).powi_scalar(2).mean();
        policy_loss + value_loss
    };
    let mut optim = AdamWConfig::new().init();
    let before = loss_of(&model);
    let before_value: f32 = before.clone().into_scalar();
    let grads = GradientsParams::from_grads(before.backward(), &model);
    model = optim.step(1e-2, model, grads);
    let after: f32 = loss_of(&model).into_scalar();
    assert!(after < before_value, "loss {before_value} -> {after}");
}

#[test]
fn shipped_nets_load_for_every_variant() {
    for variant in Variant::ALL {
        let eval = NetEvaluator::load(variant, "", pantheon::nn::DeviceChoice::Cpu, 8).unwrap();
        let reqs = requests(variant, 2);
        assert_eq!(eval.evaluate(&reqs).len(), 2);
    }
}
