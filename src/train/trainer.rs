//! The training loop.

use crate::mcts::Rng;
use crate::nn::weights;
use crate::nn::{Layout, NetConfig};
use crate::rules::Variant;
use crate::selfplay::{Sample, read_dir};
use burn::optim::{AdamWConfig, GradientsParams};
use burn::prelude::*;
use burn::tensor::activation::log_softmax;
use std::path::{Path, PathBuf};

/// What to train and how.
#[derive(Clone, Debug)]
pub struct TrainConfig {
    pub variant: Variant,
    /// Directory of self-play shards.
    pub data: PathBuf,
    /// Starting weights (`None`: the variant's shipped net).
    pub from: Option<PathBuf>,
    /// Where the trained net is written.
    pub out: PathBuf,
    pub steps: usize,
    pub batch_size: usize,
    pub learning_rate: f64,
    pub weight_decay: f32,
    /// Replay window: the newest samples used.
    pub window: usize,
    /// Steps between checkpoints.
    pub checkpoint_every: usize,
    pub seed: u64,
}

/// Loss figures of one step.
#[derive(Clone, Debug, PartialEq)]
pub struct StepLoss {
    pub step: usize,
    pub policy: f32,
    pub value: f32,
}

/// What a training run did.
#[derive(Clone, Debug)]
pub struct TrainReport {
    pub samples: usize,
    pub warnings: Vec<String>,
    pub resumed_from: Option<usize>,
    pub losses: Vec<StepLoss>,
}

/// The checkpoint directory of a run writing `out`.
pub fn checkpoint_dir(out: &Path) -> PathBuf {
    let mut name = out.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".ckpt");
    out.with_file_name(name)
}

/// Trains, resuming from the checkpoint of an interrupted run with the
/// same output, and calls `progress` after each step.
pub fn train(config: &TrainConfig, progress: &mut dyn FnMut(&StepLoss)) -> Result<TrainReport, String> {
    let (samples, warnings) = read_dir(&config.data, config.variant, config.window).map_err(|e| e.to_string())?;
    if samples.is_empty() {
        return Err(format!("no {} samples in {}", config.variant, config.data.display()));
    }
    let layout = Layout::new(config.variant);
    let device = Device::flex().autodiff();
    let ckpt = checkpoint_dir(&config.out);
    let resume = read_checkpoint(&ckpt, config.variant, &device)?;
    let (mut net, net_config, mut optim, mut rng, start, mut losses) = match resume {
        Some(c) => (c.net, c.config, c.optim, c.rng, c.step, c.losses),
        None => {
            let bytes = match &config.from {
                Some(p) => std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?,
                None => crate::nn::shipped(config.variant).to_vec(),
            };
            let loaded = weights::load(&bytes, Some(config.variant), &device).map_err(|e| e.to_string())?;
            let optim = AdamWConfig::new().with_weight_decay(config.weight_decay).init();
            (loaded.net, loaded.config, optim, Rng::new(config.seed), 0, Vec::new())
        }
    };
    let resumed_from = (start > 0).then_some(start);
    for step in start..config.steps {
        let picks: Vec<&Sample> = (0..config.batch_size).map(|_| &samples[rng.below(samples.len())]).collect();
        let (x, pi, mask, z) = batch_tensors(&layout, &picks, &device);
        let (logits, v) = net.forward(x);
        // Soft cross-entropy against the visit distribution, only where a
        // full search gave one; squared error of the value.
        let per_sample = (log_softmax(logits, 1) * pi).sum_dim(1).neg();
        let weight = mask.clone().sum().clamp_min(1.0);
        let policy_loss = (per_sample * mask).sum() / weight;
        let value_loss = (v - z).powi_scalar(2).mean();
        let loss = policy_loss.clone() + value_loss.clone();
        let grads = GradientsParams::from_grads(loss.backward(), &net);
        net = optim.step(config.learning_rate, net, grads);
        let l = StepLoss { step: step + 1, policy: policy_loss.into_scalar(), value: value_loss.into_scalar() };
        losses.push(l.clone());
        if (step + 1) % config.checkpoint_every.max(1) == 0 || step + 1 == config.steps {
            write_checkpoint(&ckpt, config.variant, &net_config, &net, &optim, &rng, step + 1, &losses)?;
        }
        progress(&l);
    }
    weights::save(&config.out, config.variant, &net_config, &net).map_err(|e| e.to_string())?;
    write_losses(&config.out, &losses)?;
    let _ = std::fs::remove_dir_all(&ckpt);
    Ok(TrainReport { samples: samples.len(), warnings, resumed_from, losses })
}

type Batch = (Tensor<4>, Tensor<2>, Tensor<2>, Tensor<2>);

/// Inputs `[B, planes, H, W]`, policy targets `[B, policy]`, policy mask
/// `[B, 1]` (1 where the sample has a full-search target), values `[B, 1]`.
fn batch_tensors(layout: &Layout, picks: &[&Sample], device: &Device) -> Batch {
    let n = picks.len();
    let (len, plen) = (layout.input_len(), layout.policy_len());
    let mut input = vec![0.0f32; n * len];
    let mut target = vec![0.0f32; n * plen];
    let mut mask = vec![0.0f32; n];
    let mut value = vec![0.0f32; n];
    for (i, s) in picks.iter().enumerate() {
        layout.encode(&s.position, s.repetitions, &mut input[i * len..(i + 1) * len]);
        let total: u32 = s.policy.iter().map(|p| p.1).sum();
        if s.full_search && total > 0 {
            mask[i] = 1.0;
            for &(m, visits) in &s.policy {
                target[i * plen + layout.index(&s.position, m)] = visits as f32 / total as f32;
            }
        }
        value[i] = s.value;
    }
    let shape = [n, layout.planes, layout.height, layout.width];
    (
        Tensor::from_data(TensorData::new(input, shape), device),
        Tensor::from_data(TensorData::new(target, [n, plen]), device),
        Tensor::from_data(TensorData::new(mask, [n, 1]), device),
        Tensor::from_data(TensorData::new(value, [n, 1]), device),
    )
}

struct Checkpoint {
    net: crate::nn::Net,
    config: NetConfig,
    optim: burn::optim::ModuleOptimizer,
    rng: Rng,
    step: usize,
    losses: Vec<StepLoss>,
}

/// Writes model, optimiser and progress; `state` (naming the step) is
/// renamed into place last, so a checkpoint is complete or ignored.
#[allow(clippy::too_many_arguments)]
fn write_checkpoint(
    dir: &Path,
    variant: Variant,
    config: &NetConfig,
    net: &crate::nn::Net,
    optim: &burn::optim::ModuleOptimizer,
    rng: &Rng,
    step: usize,
    losses: &[StepLoss],
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let model = dir.join(format!("model-{step}.pnet"));
    weights::save(&model, variant, config, net).map_err(|e| e.to_string())?;
    let optim_bytes = optim.clone().into_bytes().map_err(|e| format!("optimiser state: {e:?}"))?;
    let optim_path = dir.join(format!("optim-{step}.bin"));
    write_atomic(&optim_path, &optim_bytes)?;
    let mut state = format!("step {step}\nrng {}\n", rng.state());
    for l in losses {
        state.push_str(&format!("loss {} {} {}\n", l.step, l.policy, l.value));
    }
    write_atomic(&dir.join("state"), state.as_bytes())?;
    // Older files are no longer referenced.
    for entry in std::fs::read_dir(dir).map_err(|e| e.to_string())?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let stale = (name.starts_with("model-") || name.starts_with("optim-")) && !name.contains(&format!("-{step}."));
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(())
}

fn read_checkpoint(dir: &Path, variant: Variant, device: &Device) -> Result<Option<Checkpoint>, String> {
    let Ok(state) = std::fs::read_to_string(dir.join("state")) else { return Ok(None) };
    let bad = |what: &str| format!("checkpoint {}: {what}", dir.display());
    let mut step = None;
    let mut rng = None;
    let mut losses = Vec::new();
    for line in state.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            ["step", n] => step = n.parse().ok(),
            ["rng", s] => rng = s.parse().ok().map(Rng::new),
            ["loss", s, p, v] => losses.push(StepLoss {
                step: s.parse().map_err(|_| bad("bad loss line"))?,
                policy: p.parse().map_err(|_| bad("bad loss line"))?,
                value: v.parse().map_err(|_| bad("bad loss line"))?,
            }),
            _ => return Err(bad(&format!("bad line '{line}'"))),
        }
    }
    let (Some(step), Some(rng)) = (step, rng) else { return Err(bad("missing step or rng")) };
    let loaded = weights::load_file(&dir.join(format!("model-{step}.pnet")), Some(variant), device)
        .map_err(|e| bad(&e.to_string()))?;
    let optim_bytes = std::fs::read(dir.join(format!("optim-{step}.bin"))).map_err(|e| bad(&e.to_string()))?;
    let optim = AdamWConfig::new()
        .init()
        .from_bytes(burn::tensor::Bytes::from_bytes_vec(optim_bytes))
        .map_err(|e| bad(&format!("optimiser state: {e:?}")))?;
    Ok(Some(Checkpoint { net: loaded.net, config: loaded.config, optim, rng, step, losses }))
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Writes `<out>.losses.csv` and `<out>.losses.png`.
fn write_losses(out: &Path, losses: &[StepLoss]) -> Result<(), String> {
    let mut csv = String::from("step,policy_loss,value_loss\n");
    for l in losses {
        csv.push_str(&format!("{},{},{}\n", l.step, l.policy, l.value));
    }
    write_atomic(&with_suffix(out, ".losses.csv"), csv.as_bytes())?;
    let series = [
        ("policy", losses.iter().map(|l| (l.step as f64, l.policy as f64)).collect::<Vec<_>>()),
        ("value", losses.iter().map(|l| (l.step as f64, l.value as f64)).collect::<Vec<_>>()),
    ];
    let png = super::plot::line_chart(&series, 640, 360);
    write_atomic(&with_suffix(out, ".losses.png"), &png)
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(suffix);
    path.with_file_name(name)
}
