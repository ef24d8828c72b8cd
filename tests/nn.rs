//! The network on the CPU backend: shapes, masked policy, weight files and
//! their errors, a training step, the shipped nets.

use burn::optim::{AdamWConfig, GradientsParams};
use burn::prelude::*;
use pantheon::mcts::{Evaluation, Evaluator};
use pantheon::nn::bf16::Kernel;
use pantheon::nn::{Features, Layout, NetConfig, NetEvaluator, WeightsError, weights};
use pantheon::rules::Variant;

#[path = "support/positions.rs"]
mod positions;
use positions::requests;

fn tiny(variant: Variant) -> NetConfig {
    NetConfig::new(&Layout::new(variant), 1, 8)
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

/// The trainer's losses on a hand-computed batch of two samples.
#[test]
fn the_training_losses_follow_their_formulas() {
    let device = Device::flex();
    let t = |data: Vec<f32>, shape: [usize; 2]| Tensor::<2>::from_data(TensorData::new(data, shape), &device);
    // Sample 1: logits (0, ln 3) give probabilities (1/4, 3/4); the target
    // puts everything on the first move: cross-entropy ln 4. Sample 2 has
    // no policy target (mask 0), whatever its logits and targets.
    let logits = t(vec![0.0, 3f32.ln(), 5.0, -5.0], [2, 2]);
    let pi = t(vec![1.0, 0.0, 0.0, 1.0], [2, 2]);
    let mask = t(vec![1.0, 0.0], [2, 1]);
    // Values 0.5 and -1 against results 1 and -1: (0.25 + 0) / 2.
    let v = t(vec![0.5, -1.0], [2, 1]);
    let z = t(vec![1.0, -1.0], [2, 1]);
    let (policy, value) = pantheon::train::batch_losses(logits.clone(), v.clone(), pi.clone(), mask, z.clone());
    let (policy, value): (f32, f32) = (policy.into_scalar(), value.into_scalar());
    assert!((policy - 4f32.ln()).abs() < 1e-5, "{policy}");
    assert!((value - 0.125).abs() < 1e-6, "{value}");
    // Both samples with targets: the mean of ln 4 and the second's
    // cross-entropy, -log softmax(5, -5)[1] = 10 + ln(1 + e^-10).
    let both = t(vec![1.0, 1.0], [2, 1]);
    let (policy, _) = pantheon::train::batch_losses(logits, v, pi, both, z);
    let want = (4f32.ln() + 10.0 + (-10f32).exp().ln_1p()) / 2.0;
    let policy: f32 = policy.into_scalar();
    assert!((policy - want).abs() < 1e-4, "{policy} {want}");
}

#[test]
fn a_net_with_attack_planes_keeps_its_features_through_a_file() {
    let variant = Variant::Pandemonium;
    let device = Device::flex();
    let config = NetConfig::new(&Layout::with_features(variant, Features::Attacks), 1, 8);
    assert_eq!(config.planes, Layout::new(variant).planes + 6);
    let net = config.init(&device);
    let bytes = weights::to_bytes(variant, &config, &net).unwrap();
    let loaded = weights::load(&bytes, Some(variant), &device).unwrap();
    assert_eq!(loaded.config.features, Features::Attacks);
    assert_eq!(loaded.config, config);
    let reqs = requests(variant, 3);
    let eval = NetEvaluator::new(loaded.net, loaded.config, variant, device, 8, "attacks".into());
    for (req, ans) in reqs.iter().zip(eval.evaluate(&reqs)) {
        assert_eq!(ans.policy.len(), req.moves.len());
    }
    // A base net's header has no features line (files from before features
    // existed read as base).
    let base = tiny(variant);
    let text = weights::to_bytes(variant, &base, &base.init(&Device::flex())).unwrap();
    assert!(!String::from_utf8_lossy(&text[..200]).contains("features"));
    assert!(String::from_utf8_lossy(&bytes[..240]).contains("features attacks"));
}

/// Two nets' answers to the same requests agree within `tolerance`, value
/// and every move's prior.
fn assert_same_outputs(a: &[Evaluation], b: &[Evaluation], tolerance: f32) {
    assert_eq!(a.len(), b.len());
    for (a, b) in a.iter().zip(b) {
        assert!((a.value - b.value).abs() < tolerance, "value {} vs {}", a.value, b.value);
        for (p, q) in a.policy.iter().zip(&b.policy) {
            assert!((p - q).abs() < tolerance, "policy {p} vs {q}");
        }
    }
}

#[test]
fn adding_the_attack_planes_keeps_a_nets_outputs() {
    let variant = Variant::Mansindam;
    let device = Device::flex();
    let config = tiny(variant);
    let bytes = weights::to_bytes(variant, &config, &config.init(&device)).unwrap();
    let base = weights::load(&bytes, Some(variant), &device).unwrap();
    let before = NetEvaluator::new(base.net, base.config, variant, device.clone(), 8, "base".into());
    let widened = weights::with_attack_planes(weights::load(&bytes, Some(variant), &device).unwrap()).unwrap();
    assert_eq!(widened.config.features, Features::Attacks);
    assert_eq!(widened.config.planes, Layout::with_features(variant, Features::Attacks).planes);
    let after = NetEvaluator::new(widened.net, widened.config, variant, device.clone(), 8, "widened".into());
    let reqs = requests(variant, 6);
    assert_same_outputs(&before.evaluate(&reqs), &after.evaluate(&reqs), 1e-5);
    // A net that reads them already is refused.
    let once = weights::with_attack_planes(weights::load(&bytes, None, &device).unwrap()).unwrap();
    assert!(weights::with_attack_planes(once).is_none());
}

#[test]
fn growing_a_net_keeps_its_outputs() {
    let variant = Variant::Minishogi;
    let device = Device::flex();
    // The shipped net: trained weights and batch-norm statistics, which a
    // freshly initialised net would not have.
    let load = || weights::load(pantheon::nn::shipped(variant), Some(variant), &device).unwrap();
    let small = load();
    let (blocks, channels) = (small.config.blocks, small.config.channels);
    let before = NetEvaluator::new(small.net, small.config, variant, device.clone(), 8, "small".into());
    let grown = weights::grown(load(), blocks + 3, channels + 16, 5).unwrap();
    assert_eq!((grown.config.blocks, grown.config.channels), (blocks + 3, channels + 16));
    let bytes = weights::to_bytes(variant, &grown.config, &grown.net).unwrap();
    let reqs = requests(variant, 8);
    let want = before.evaluate(&reqs);
    // Pantheon's CPU forward pass (batch norm folded) and burn's.
    for cpu in [true, false] {
        let g = weights::load(&bytes, Some(variant), &device).unwrap();
        let mut after = NetEvaluator::new(g.net, g.config, variant, device.clone(), 8, "grown".into());
        after.set_cpu_forward(cpu);
        assert_same_outputs(&want, &after.evaluate(&reqs), 1e-4);
    }
    // The same seed grows the same net; a smaller size is refused.
    let again = weights::grown(load(), blocks + 3, channels + 16, 5).unwrap();
    assert!(weights::to_bytes(variant, &again.config, &again.net).unwrap() == bytes);
    assert!(matches!(weights::grown(load(), blocks - 1, channels + 16, 5), Err(WeightsError::Shrink { .. })));
    assert!(matches!(weights::grown(load(), blocks, channels - 1, 5), Err(WeightsError::Shrink { .. })));
}

#[test]
fn the_same_seed_writes_the_same_initial_net() {
    let dir = std::env::temp_dir().join(format!("pantheon-nn-seed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = tiny(Variant::Minishogi);
    let write = |name: &str, seed: u64| {
        let path = dir.join(name);
        weights::save_initial(&path, Variant::Minishogi, &config, seed).unwrap();
        std::fs::read(path).unwrap()
    };
    let a = write("a.pnet", 9);
    assert!(write("b.pnet", 9) == a, "two nets from seed 9 differ");
    assert!(write("c.pnet", 10) != a, "seeds 9 and 10 gave the same net");
    // A loaded net writes back the bytes it came from.
    let loaded = weights::load(&a, None, &Device::flex()).unwrap();
    assert!(weights::to_bytes(Variant::Minishogi, &loaded.config, &loaded.net).unwrap() == a);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_device_clock_counts_batches_and_the_waits_between_them() {
    let variant = Variant::Minishogi;
    let device = Device::flex();
    let config = tiny(variant);
    let eval = NetEvaluator::new(config.init(&device), config, variant, device, 8, "clock".into());
    // One batch at a time on the CPU; two in flight on a GPU.
    assert_eq!(eval.pipeline_depth(), 1);
    eval.set_pipeline_depth(3);
    assert_eq!(eval.pipeline_depth(), 3);
    let reqs = requests(variant, 2);
    for _ in 0..3 {
        eval.evaluate(&reqs);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let idle = eval.device_idle();
    assert_eq!(idle.batches, 3);
    // Two waits of at least 20 ms between the three batches (the time
    // before the first batch does not count).
    assert!(idle.idle >= std::time::Duration::from_millis(40), "{idle:?}");
    eval.reset_device_idle();
    assert_eq!(eval.device_idle().batches, 0);
}

#[test]
fn one_optimiser_step_lowers_the_loss() {
    let variant = Variant::Minishogi;
    let layout = Layout::new(variant);
    let device = Device::flex().autodiff();
    let config = tiny(variant);
    let mut model = config.init_seeded(&device, 3);
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
        let mask = Tensor::<2>::ones([n, 1], &device);
        let (logits, v) = model.forward(x);
        let (policy_loss, value_loss) = pantheon::train::batch_losses(logits, v, pi, mask, zt);
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
        let eval = NetEvaluator::load(variant, &pantheon::nn::ModelSource::Shipped, pantheon::nn::DeviceChoice::Cpu, 8)
            .unwrap();
        let reqs = requests(variant, 2);
        assert_eq!(eval.evaluate(&reqs).len(), 2);
    }
}

#[test]
fn on_the_cpu_shipped_is_the_small_net_and_batch_0_is_the_cpu_default() {
    use pantheon::nn::{DeviceChoice, LoadError, ModelSource, shipped, shipped_large};
    for variant in Variant::ALL {
        let small = weights::load(shipped(variant), Some(variant), &Device::flex()).unwrap().config;
        let eval = NetEvaluator::load(variant, &ModelSource::Shipped, DeviceChoice::Cpu, 0).unwrap();
        assert_eq!(eval.config(), &small, "{variant}");
        assert_eq!(eval.max_batch(), pantheon::nn::evaluator::default_batch(false));
        assert!(eval.name().contains("shipped small"), "{}", eval.name());
        match (NetEvaluator::load(variant, &ModelSource::ShippedLarge, DeviceChoice::Cpu, 8), shipped_large(variant)) {
            (Err(LoadError::NoLargeNet(v)), None) => assert_eq!(v, variant),
            (Ok(eval), Some(bytes)) => {
                assert_eq!(eval.config(), &weights::load(bytes, Some(variant), &Device::flex()).unwrap().config)
            }
            (got, large) => {
                panic!("{variant}: shipped-large gave {:?} with a large net {}", got.err(), large.is_some())
            }
        }
    }
}

#[test]
fn pantheons_cpu_forward_pass_matches_burns() {
    // The shipped nets have trained batch-norm statistics, so the folding
    // is exercised; the batch sizes split unevenly between threads.
    for variant in Variant::ALL {
        let device = Device::flex();
        let loaded = weights::load(pantheon::nn::shipped(variant), Some(variant), &device).unwrap();
        let mut eval = NetEvaluator::new(loaded.net, loaded.config, variant, device, 64, "t".into());
        assert!(eval.cpu_forward(), "the CPU uses Pantheon's forward pass by default");
        assert!(eval.name().ends_with(", Pantheon's forward pass"), "{}", eval.name());
        let layout = Layout::with_features(variant, eval.config().features);
        for n in [1, 7, 20] {
            let mut input = vec![0.0f32; n * layout.input_len()];
            for (req, chunk) in requests(variant, n).iter().zip(input.chunks_mut(layout.input_len())) {
                layout.encode(&req.position, req.repetitions, chunk);
            }
            eval.set_cpu_forward(true);
            let (logits, values) = eval.forward_raw(input.clone(), n);
            eval.set_cpu_forward(false);
            assert!(!eval.cpu_forward());
            assert!(eval.name().ends_with(", burn's forward pass"), "{}", eval.name());
            let input_copy = input.clone();
            let (want_logits, want_values) = eval.forward_raw(input, n);
            assert_eq!((logits.len(), values.len()), (want_logits.len(), want_values.len()));
            let worst = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
            assert!(worst(&logits, &want_logits) < 2e-3, "{variant} n={n}: logits {}", worst(&logits, &want_logits));
            assert!(worst(&values, &want_values) < 1e-4, "{variant} n={n}: values {}", worst(&values, &want_values));
            // In bf16 (where the CPU has it) the products lose precision:
            // the outputs stay close, the policy's order mostly the same.
            eval.set_cpu_forward(true);
            if eval.set_precision(pantheon::nn::Precision::Bf16).is_ok() {
                let (logits, values) = eval.forward_raw(input_copy.clone(), n);
                // AMX and AVX-512 BF16 multiply the same bf16 numbers in
                // the trunk and differ there only in the order of the f32
                // sums (values by millionths, or where the order moves an
                // activation's rounding to bf16 by a step, 1 in 256, by up
                // to a few ten-thousandths); on AMX the policy head's 1x1
                // convolution multiplies in bf16 too, which moves the
                // logits by up to about 0.07.
                if Kernel::Amx.available() {
                    eval.set_bf16_kernel(Kernel::Avx512).unwrap();
                    assert!(eval.name().ends_with(", bf16 on avx512"), "{}", eval.name());
                    let (vector_logits, vector_values) = eval.forward_raw(input_copy.clone(), n);
                    eval.set_bf16_kernel(Kernel::Amx).unwrap();
                    assert!(eval.name().ends_with(", bf16 on amx"), "{}", eval.name());
                    let (dl, dv) = (worst(&logits, &vector_logits), worst(&values, &vector_values));
                    println!("{variant} n={n}: AMX against AVX-512 logits {dl}, values {dv}");
                    assert!(dl < 0.15 && dv < 5e-3, "{variant} n={n}: AMX logits {dl}, values {dv}");
                }
                eval.set_precision(pantheon::nn::Precision::F32).unwrap();
                println!(
                    "{variant} n={n}: bf16 logits {}, values {}",
                    worst(&logits, &want_logits),
                    worst(&values, &want_values)
                );
                assert!(
                    worst(&logits, &want_logits) < 0.25,
                    "{variant} n={n}: bf16 logits {}",
                    worst(&logits, &want_logits)
                );
                assert!(
                    worst(&values, &want_values) < 0.05,
                    "{variant} n={n}: bf16 values {}",
                    worst(&values, &want_values)
                );
            }
        }
    }
}
