//! Training checkpoints in `<out>.ckpt/`: the model and the optimiser
//! state of one step (`model-N.pnet`, `optim-N.bin`) and the progress
//! (`state`: the step, the RNG state, the losses so far), written so that
//! a killed run resumes from the last complete one.

use super::trainer::{StepLoss, TrainError, write_atomic};
use crate::mcts::Rng;
use crate::nn::NetConfig;
use crate::nn::weights;
use crate::rules::Variant;
use burn::optim::AdamWConfig;
use burn::prelude::*;
use std::path::Path;

pub(super) struct Checkpoint {
    pub(super) net: crate::nn::Net,
    pub(super) config: NetConfig,
    pub(super) optim: burn::optim::ModuleOptimizer,
    pub(super) rng: Rng,
    pub(super) step: usize,
    pub(super) losses: Vec<StepLoss>,
}

/// Writes model, optimiser and progress; `state` (naming the step) is
/// renamed into place last, so a checkpoint is complete or ignored.
#[allow(clippy::too_many_arguments)]
pub(super) fn write_checkpoint(
    dir: &Path,
    variant: Variant,
    config: &NetConfig,
    net: &crate::nn::Net,
    optim: &burn::optim::ModuleOptimizer,
    rng: &Rng,
    step: usize,
    losses: &[StepLoss],
) -> Result<(), TrainError> {
    std::fs::create_dir_all(dir).map_err(|source| TrainError::Write { path: dir.display().to_string(), source })?;
    let model = dir.join(format!("model-{step}.pnet"));
    weights::save(&model, variant, config, net)?;
    let optim_bytes = optim.clone().into_bytes().map_err(|e| TrainError::Checkpoint {
        dir: dir.display().to_string(),
        what: format!("optimiser state: {e:?}"),
    })?;
    let optim_path = dir.join(format!("optim-{step}.bin"));
    write_atomic(&optim_path, &optim_bytes)?;
    let mut state = format!("step {step}\nrng {}\n", rng.state());
    for l in losses {
        state.push_str(&format!("loss {} {} {}", l.step, l.policy, l.value));
        if let Some(m) = l.material {
            state.push_str(&format!(" {m}"));
        }
        if let Some(r) = l.reply {
            state.push_str(&format!(" reply={r}"));
        }
        state.push('\n');
    }
    write_atomic(&dir.join("state"), state.as_bytes())?;
    // Older files are no longer referenced.
    let entries =
        std::fs::read_dir(dir).map_err(|source| TrainError::Read { path: dir.display().to_string(), source })?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let stale = (name.starts_with("model-") || name.starts_with("optim-")) && !name.contains(&format!("-{step}."));
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(())
}

pub(super) fn read_checkpoint(dir: &Path, variant: Variant, device: &Device) -> Result<Option<Checkpoint>, TrainError> {
    let path = dir.join("state");
    let read = crate::atomic_file::read_if_present(&path);
    let Some(state) = read.map_err(|source| TrainError::Read { path: path.display().to_string(), source })? else {
        return Ok(None);
    };
    let bad = |what: &str| TrainError::Checkpoint { dir: dir.display().to_string(), what: what.to_string() };
    let mut step = None;
    let mut rng = None;
    let mut losses = Vec::new();
    for line in state.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            ["step", n] => step = n.parse().ok(),
            ["rng", s] => rng = s.parse().ok().map(Rng::new),
            // The material loss is a bare number (as before the reply
            // loss existed), the reply loss `reply=X`.
            ["loss", s, p, v, rest @ ..] if rest.len() <= 2 => {
                let num = |x: &str| x.parse::<f32>().map_err(|_| bad("bad loss line"));
                let (mut material, mut reply) = (None, None);
                for x in rest {
                    match x.strip_prefix("reply=") {
                        Some(r) if reply.is_none() => reply = Some(num(r)?),
                        None if material.is_none() && reply.is_none() => material = Some(num(x)?),
                        _ => return Err(bad("bad loss line")),
                    }
                }
                losses.push(StepLoss {
                    step: s.parse().map_err(|_| bad("bad loss line"))?,
                    policy: num(p)?,
                    value: num(v)?,
                    material,
                    reply,
                });
            }
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
