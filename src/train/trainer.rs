//! The training loop.

use super::checkpoint::{Checkpoint, read_checkpoint, write_checkpoint};
use super::material::{MaterialTarget, links, material_targets};
use crate::mcts::Rng;
use crate::nn::weights;
use crate::nn::{AuxHeads, DeviceChoice, Layout};
use crate::rules::Variant;
use crate::selfplay::label::{best_line_cp, merge_labelled, score_cp, teacher_value};
use crate::selfplay::{Sample, read_dir};
use burn::optim::{AdamWConfig, GradientsParams};
use burn::prelude::*;
use burn::tensor::activation::log_softmax;
use std::path::{Path, PathBuf};

/// What to train and how.
#[derive(Clone, Debug)]
pub struct TrainConfig {
    pub variant: Variant,
    /// Directories of shards (self-play, tsume, teacher labels); each
    /// gives at most `window` of its newest samples.
    pub data: Vec<PathBuf>,
    /// How teacher-labelled samples are trained.
    pub teacher: TeacherTargets,
    /// Share of the search's root value in the value target of samples
    /// that carry one (self-play records; the rest is the game result).
    pub search_value_weight: f32,
    /// The auxiliary material target (off at weight 0).
    pub material: MaterialTarget,
    /// Weight of the auxiliary reply target's loss (0: off): a second
    /// policy head learns the policy target of the position after the move
    /// played, the opponent's reply (KataGo's opponent-policy target).
    pub reply_weight: f32,
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
    /// Where the forward and backward passes run (burn's autodiff on the
    /// CPU or on the wgpu device).
    pub device: DeviceChoice,
    /// When to stop early: after the step that passes it, with a
    /// checkpoint, so that rerunning the same command carries on; the net
    /// is written only when all the steps are done.
    pub deadline: Option<std::time::Instant>,
}

/// The targets of samples that carry a teacher label.
#[derive(Clone, Debug, PartialEq)]
pub struct TeacherTargets {
    /// Share of the teacher's value in the value target (the rest is the
    /// game result).
    pub value_weight: f32,
    /// Scale of the score -> value curve in centipawns (see
    /// [`teacher_value`]); `None`: fitted on the data's teacher games.
    pub scale: Option<f64>,
    /// Softmax temperature in centipawns of the policy target over the
    /// teacher's MultiPV moves; 0: its best move alone.
    pub policy_temperature: f64,
}

impl Default for TeacherTargets {
    fn default() -> Self {
        TeacherTargets { value_weight: 0.7, scale: None, policy_temperature: 100.0 }
    }
}

/// Why training failed.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    #[error("no {variant} samples in {dirs}")]
    NoSamples { variant: Variant, dirs: String },
    #[error("no teacher samples with centipawn scores to fit the score -> value scale on; give the scale")]
    NoScale,
    #[error(transparent)]
    Shards(#[from] crate::selfplay::ShardError),
    #[error(transparent)]
    Weights(#[from] weights::WeightsError),
    #[error(transparent)]
    Device(#[from] crate::nn::DeviceError),
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: String, source: std::io::Error },
    #[error("checkpoint {dir}: {what}")]
    Checkpoint { dir: String, what: String },
}

/// Loss figures of one step.
#[derive(Clone, Debug, PartialEq)]
pub struct StepLoss {
    pub step: usize,
    pub policy: f32,
    pub value: f32,
    /// The material head's loss, when it is trained.
    pub material: Option<f32>,
    /// The reply head's loss, when it is trained.
    pub reply: Option<f32>,
}

/// How many auxiliary losses a step can have.
const AUX_LOSSES: usize = 2;

impl StepLoss {
    const AUX_NAMES: [&'static str; AUX_LOSSES] = ["material", "reply"];

    /// The auxiliary losses, in the order of [`StepLoss::AUX_NAMES`].
    fn aux(&self) -> [Option<f32>; AUX_LOSSES] {
        [self.material, self.reply]
    }
}

/// What a training run did.
#[derive(Clone, Debug)]
pub struct TrainReport {
    pub samples: usize,
    /// Samples with a teacher label, and the score -> value scale used.
    pub teacher_samples: usize,
    pub teacher_scale: Option<f64>,
    pub warnings: Vec<String>,
    pub resumed_from: Option<usize>,
    pub losses: Vec<StepLoss>,
    /// Stopped at the deadline before the last step (the net is not
    /// written; the checkpoint is).
    pub stopped_early: bool,
}

/// The checkpoint directory of a run writing `out`.
pub fn checkpoint_dir(out: &Path) -> PathBuf {
    let mut name = out.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".ckpt");
    out.with_file_name(name)
}

/// Trains, resuming from the checkpoint of an interrupted run with the
/// same output, and calls `progress` after each step.
pub fn train(config: &TrainConfig, progress: &mut dyn FnMut(&StepLoss)) -> Result<TrainReport, TrainError> {
    let Data { samples, warnings, teacher_samples, teacher_scale, targets, material, linked } = read_data(config)?;
    let device = crate::nn::device(config.device)?.autodiff();
    let ckpt = checkpoint_dir(&config.out);
    let Checkpoint { mut net, config: mut net_config, mut optim, mut rng, step: start, mut losses } =
        start(config, &ckpt, &device)?;
    let aux = AuxHeads { material: config.material.weight > 0.0, reply: config.reply_weight > 0.0 };
    net_config.material_head |= aux.material;
    net_config.reply_head |= aux.reply;
    net = net.with_heads(&net_config, &device);
    let layout = Layout::with_features(config.variant, net_config.features);
    let resumed_from = (start > 0).then_some(start);
    let mut stopped_early = false;
    let aux_data = AuxData { material: aux.material.then_some(&material[..]), linked: &linked, reply: aux.reply };
    for step in start..config.steps {
        let picks: Vec<usize> = (0..config.batch_size).map(|_| rng.below(samples.len())).collect();
        let batch = batch_tensors(&layout, &picks, &samples, &aux_data, &targets, &device);
        let out = net.forward_train(batch.input, aux);
        let (policy_loss, value_loss) =
            batch_losses(out.logits, out.value, batch.policy, batch.policy_mask, batch.value);
        let mut loss = policy_loss.clone() + value_loss.clone();
        let mut material_loss = None;
        if let (Some(m), Some((target, mask))) = (out.material, batch.material) {
            let l = masked_mse(m, target, mask);
            loss = loss + l.clone().mul_scalar(config.material.weight);
            material_loss = Some(l);
        }
        let mut reply_loss = None;
        if let (Some(r), Some((target, mask))) = (out.reply, batch.reply) {
            let l = masked_cross_entropy(r, target, mask);
            loss = loss + l.clone().mul_scalar(config.reply_weight);
            reply_loss = Some(l);
        }
        let grads = GradientsParams::from_grads(loss.backward(), &net);
        net = optim.step(config.learning_rate, net, grads);
        let l = StepLoss {
            step: step + 1,
            policy: policy_loss.into_scalar(),
            value: value_loss.into_scalar(),
            material: material_loss.map(|l| l.into_scalar()),
            reply: reply_loss.map(|l| l.into_scalar()),
        };
        losses.push(l.clone());
        let out_of_time = step + 1 < config.steps && config.deadline.is_some_and(|d| std::time::Instant::now() >= d);
        if (step + 1) % config.checkpoint_every.max(1) == 0 || step + 1 == config.steps || out_of_time {
            write_checkpoint(&ckpt, config.variant, &net_config, &net, &optim, &rng, step + 1, &losses)?;
        }
        progress(&l);
        if out_of_time {
            stopped_early = true;
            break;
        }
    }
    if !stopped_early {
        weights::save(&config.out, config.variant, &net_config, &net)?;
        write_losses(&config.out, &losses)?;
        let _ = std::fs::remove_dir_all(&ckpt);
    }
    Ok(TrainReport {
        samples: samples.len(),
        teacher_samples,
        teacher_scale,
        warnings,
        resumed_from,
        losses,
        stopped_early,
    })
}

/// The samples of a run and what each teaches.
struct Data {
    samples: Vec<Sample>,
    warnings: Vec<String>,
    teacher_samples: usize,
    teacher_scale: Option<f64>,
    targets: Targets,
    /// Per sample, in their order: the material target (empty when it is
    /// not trained), and whether the next sample follows it in a game
    /// (empty when no auxiliary target is trained).
    material: Vec<Option<f32>>,
    linked: Vec<bool>,
}

fn read_data(config: &TrainConfig) -> Result<Data, TrainError> {
    let (mut samples, mut warnings) = (Vec::new(), Vec::new());
    for dir in &config.data {
        let (s, w) = read_dir(dir, config.variant, config.window)?;
        samples.extend(s);
        warnings.extend(w);
    }
    if samples.is_empty() {
        let dirs: Vec<String> = config.data.iter().map(|d| d.display().to_string()).collect();
        return Err(TrainError::NoSamples { variant: config.variant, dirs: dirs.join(", ") });
    }
    let samples = merge_labelled(samples);
    let teacher_samples = samples.iter().filter(|s| s.teacher.is_some()).count();
    let teacher_scale = match config.teacher.scale {
        Some(s) => Some(s),
        None if teacher_samples > 0 => {
            Some(crate::selfplay::label::fit_scale(&samples).map(|(s, _)| s).ok_or(TrainError::NoScale)?)
        }
        None => None,
    };
    let targets = Targets {
        teacher: config.teacher.clone(),
        scale: teacher_scale.unwrap_or(1.0),
        search_value_weight: config.search_value_weight,
    };
    let linked = if config.material.weight > 0.0 || config.reply_weight > 0.0 { links(&samples) } else { Vec::new() };
    let material = if config.material.weight > 0.0 {
        material_targets(&samples, &linked, config.material.plies)
    } else {
        Vec::new()
    };
    Ok(Data { samples, warnings, teacher_samples, teacher_scale, targets, material, linked })
}

/// The training losses of a batch: the policy's [`masked_cross_entropy`]
/// (the mask is 1 for the samples with a policy target) and the mean
/// squared error of the values `v` against `z` (both `[B, 1]`).
pub fn batch_losses(
    logits: Tensor<2>,
    v: Tensor<2>,
    pi: Tensor<2>,
    mask: Tensor<2>,
    z: Tensor<2>,
) -> (Tensor<1>, Tensor<1>) {
    let policy_loss = masked_cross_entropy(logits, pi, mask);
    let value_loss = (v - z).powi_scalar(2).mean();
    (policy_loss, value_loss)
}

/// The soft cross-entropy of `logits` `[B, P]` against the targets `pi`
/// `[B, P]`, averaged over the samples whose `mask` `[B, 1]` is 1.
pub fn masked_cross_entropy(logits: Tensor<2>, pi: Tensor<2>, mask: Tensor<2>) -> Tensor<1> {
    masked_mean((log_softmax(logits, 1) * pi).sum_dim(1).neg(), mask)
}

/// The mean squared error of `prediction` against `target` (both
/// `[B, 1]`) over the samples whose `mask` is 1.
pub fn masked_mse(prediction: Tensor<2>, target: Tensor<2>, mask: Tensor<2>) -> Tensor<1> {
    masked_mean((prediction - target).powi_scalar(2), mask)
}

/// The mean of `per_sample` `[B, 1]` over the samples whose `mask` is 1
/// (0 when none is).
fn masked_mean(per_sample: Tensor<2>, mask: Tensor<2>) -> Tensor<1> {
    let weight = mask.clone().sum().clamp_min(1.0);
    (per_sample * mask).sum() / weight
}

/// Where training starts: a checkpoint of the same run, else the starting
/// weights with a fresh optimiser.
fn start(config: &TrainConfig, ckpt: &Path, device: &Device) -> Result<Checkpoint, TrainError> {
    if let Some(c) = read_checkpoint(ckpt, config.variant, device)? {
        return Ok(c);
    }
    let bytes = match &config.from {
        Some(p) => std::fs::read(p).map_err(|source| TrainError::Read { path: p.display().to_string(), source })?,
        None => crate::nn::shipped(config.variant).to_vec(),
    };
    let loaded = weights::load(&bytes, Some(config.variant), device)?;
    let optim = AdamWConfig::new().with_weight_decay(config.weight_decay).init();
    Ok(Checkpoint {
        net: loaded.net,
        config: loaded.config,
        optim,
        rng: Rng::new(config.seed),
        step: 0,
        losses: Vec::new(),
    })
}

/// What a sample teaches: its value target and its policy target (`None`:
/// it trains the value only).
struct Targets {
    teacher: TeacherTargets,
    /// The score -> value scale in use.
    scale: f64,
    search_value_weight: f32,
}

impl Targets {
    fn of(&self, s: &Sample) -> (f32, Option<Vec<(crate::rules::Move, f32)>>) {
        let Some(t) = &s.teacher else {
            return (self.search_value(s), if s.full_search { search_policy(s) } else { None });
        };
        let w = self.teacher.value_weight;
        let value = w * teacher_value(t.score, self.scale) + (1.0 - w) * s.value;
        let policy = if t.moves.is_empty() {
            None
        } else if self.teacher.policy_temperature <= 0.0 {
            Some(vec![(t.moves[0].0, 1.0)])
        } else {
            let best = best_line_cp(t);
            let e: Vec<f64> = t
                .moves
                .iter()
                .map(|&(_, sc)| ((score_cp(sc) - best).max(-5_000.0) / self.teacher.policy_temperature).exp())
                .collect();
            let total: f64 = e.iter().sum();
            Some(t.moves.iter().zip(&e).map(|(&(m, _), &x)| (m, (x / total) as f32)).collect())
        };
        (value, policy)
    }
}

impl Targets {
    /// The game result mixed with the search's root value, where the
    /// sample has one.
    fn search_value(&self, s: &Sample) -> f32 {
        let w = self.search_value_weight;
        match &s.search {
            Some(t) if w > 0.0 => w * t.value.clamp(-1.0, 1.0) + (1.0 - w) * s.value,
            _ => s.value,
        }
    }
}

/// A search's policy target: Gumbel's improved policy where the record
/// has one, else the visit counts, normalised; None when both are empty.
fn search_policy(s: &Sample) -> Option<Vec<(crate::rules::Move, f32)>> {
    let weights: Vec<f32> = match &s.search {
        Some(t) if !t.improved.is_empty() && t.improved.len() == s.policy.len() => t.improved.clone(),
        _ => s.policy.iter().map(|p| p.1 as f32).collect(),
    };
    let total: f32 = weights.iter().sum();
    (total > 0.0).then(|| s.policy.iter().zip(&weights).map(|(&(m, _), &w)| (m, w / total)).collect())
}

/// One batch's tensors.
struct Batch {
    /// `[B, planes, H, W]`
    input: Tensor<4>,
    /// Policy targets `[B, policy]` and their mask `[B, 1]` (1 where the
    /// sample has a full-search target).
    policy: Tensor<2>,
    policy_mask: Tensor<2>,
    /// Value targets `[B, 1]`.
    value: Tensor<2>,
    /// Material targets `[B, 1]` and their mask (1 where there is one),
    /// when the material target is trained.
    material: Option<(Tensor<2>, Tensor<2>)>,
    /// Reply targets `[B, policy]` ([`Layout::reply_index`]) and their
    /// mask `[B, 1]` (1 where the next sample follows and has a policy
    /// target), when the reply target is trained.
    reply: Option<(Tensor<2>, Tensor<2>)>,
}

/// What the auxiliary targets need, per sample in their order.
struct AuxData<'a> {
    /// The material targets, when they are trained.
    material: Option<&'a [Option<f32>]>,
    linked: &'a [bool],
    /// Whether the reply targets are built.
    reply: bool,
}

/// The batch of the samples `picks`, with their auxiliary targets.
fn batch_tensors(
    layout: &Layout,
    picks: &[usize],
    samples: &[Sample],
    aux_data: &AuxData,
    targets: &Targets,
    device: &Device,
) -> Batch {
    let n = picks.len();
    let (len, plen) = (layout.input_len(), layout.policy_len());
    let mut input = vec![0.0f32; n * len];
    let mut target = vec![0.0f32; n * plen];
    let mut mask = vec![0.0f32; n];
    let mut value = vec![0.0f32; n];
    let (mut material, mut material_mask) =
        if aux_data.material.is_some() { (vec![0.0f32; n], vec![0.0f32; n]) } else { Default::default() };
    let (mut reply, mut reply_mask) =
        if aux_data.reply { (vec![0.0f32; n * plen], vec![0.0f32; n]) } else { Default::default() };
    for (i, &k) in picks.iter().enumerate() {
        let s = &samples[k];
        layout.encode(&s.position, s.repetitions, &mut input[i * len..(i + 1) * len]);
        let (v, policy) = targets.of(s);
        if let Some(policy) = policy {
            mask[i] = 1.0;
            for (m, p) in policy {
                target[i * plen + layout.index(&s.position, m)] = p;
            }
        }
        value[i] = v;
        if let Some(Some(m)) = aux_data.material.map(|targets| targets[k]) {
            (material[i], material_mask[i]) = (m, 1.0);
        }
        if aux_data.reply && aux_data.linked[k] {
            let next = &samples[k + 1];
            if let (_, Some(policy)) = targets.of(next) {
                reply_mask[i] = 1.0;
                for (m, p) in policy {
                    reply[i * plen + layout.reply_index(&next.position, m)] = p;
                }
            }
        }
    }
    let column = |v: Vec<f32>| Tensor::from_data(TensorData::new(v, [n, 1]), device);
    Batch {
        input: Tensor::from_data(TensorData::new(input, [n, layout.planes, layout.height, layout.width]), device),
        policy: Tensor::from_data(TensorData::new(target, [n, plen]), device),
        policy_mask: column(mask),
        value: column(value),
        material: aux_data.material.map(|_| (column(material), column(material_mask))),
        reply: aux_data
            .reply
            .then(|| (Tensor::from_data(TensorData::new(reply, [n, plen]), device), column(reply_mask))),
    }
}

pub(super) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), TrainError> {
    crate::atomic_file::write(path, bytes)
        .map_err(|source| TrainError::Write { path: path.display().to_string(), source })
}

/// Writes `<out>.losses.csv` and the chart `<out>.losses.svg`.
fn write_losses(out: &Path, losses: &[StepLoss]) -> Result<(), TrainError> {
    // The auxiliary columns, each where any step has it.
    let aux: Vec<usize> = (0..AUX_LOSSES).filter(|&i| losses.iter().any(|l| l.aux()[i].is_some())).collect();
    let mut csv = String::from("step,policy_loss,value_loss");
    for &i in &aux {
        csv.push_str(&format!(",{}_loss", StepLoss::AUX_NAMES[i]));
    }
    csv.push('\n');
    for l in losses {
        csv.push_str(&format!("{},{},{}", l.step, l.policy, l.value));
        for &i in &aux {
            csv.push_str(&l.aux()[i].map_or(",".to_string(), |x| format!(",{x}")));
        }
        csv.push('\n');
    }
    write_atomic(&with_suffix(out, ".losses.csv"), csv.as_bytes())?;
    let mut series = vec![
        ("policy", losses.iter().map(|l| (l.step as f64, l.policy as f64)).collect::<Vec<_>>()),
        ("value", losses.iter().map(|l| (l.step as f64, l.value as f64)).collect::<Vec<_>>()),
    ];
    for &i in &aux {
        let points = losses.iter().filter_map(|l| Some((l.step as f64, l.aux()[i]? as f64))).collect();
        series.push((StepLoss::AUX_NAMES[i], points));
    }
    let chart = super::plot::Chart { title: "Training losses", x_label: "step", y_label: "loss", series: &series };
    write_atomic(&with_suffix(out, ".losses.svg"), super::plot::line_chart(&chart, 640, 360).as_bytes())
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(suffix);
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Position;
    use crate::selfplay::SearchTargets;

    fn sample(search: Option<SearchTargets>) -> Sample {
        let position = Position::startpos(Variant::Minishogi);
        let moves = position.legal_moves();
        Sample {
            policy: vec![(moves[0], 3), (moves[1], 1)],
            position,
            repetitions: 1,
            value: 1.0,
            full_search: true,
            teacher: None,
            search,
        }
    }

    fn targets(search_value_weight: f32) -> Targets {
        Targets { teacher: TeacherTargets::default(), scale: 1.0, search_value_weight }
    }

    #[test]
    fn visits_are_the_policy_target_without_an_improved_policy() {
        let s = sample(Some(SearchTargets { value: -0.5, improved: Vec::new() }));
        let (value, policy) = targets(0.0).of(&s);
        assert_eq!(value, 1.0);
        let policy = policy.unwrap();
        assert_eq!(policy.iter().map(|p| p.1).collect::<Vec<_>>(), vec![0.75, 0.25]);
    }

    #[test]
    fn the_improved_policy_and_the_search_value_are_used_where_recorded() {
        let s = sample(Some(SearchTargets { value: -0.5, improved: vec![0.2, 0.6] }));
        let (value, policy) = targets(0.25).of(&s);
        assert!((value - (0.25 * -0.5 + 0.75 * 1.0)).abs() < 1e-6);
        let p: Vec<f32> = policy.unwrap().iter().map(|p| p.1).collect();
        assert!((p[0] - 0.25).abs() < 1e-6 && (p[1] - 0.75).abs() < 1e-6, "{p:?}");
        // A fast search trains the value only.
        let fast = Sample { full_search: false, ..s };
        assert!(targets(0.0).of(&fast).1.is_none());
    }

    #[test]
    fn a_later_teacher_line_scoring_above_the_first_gives_a_finite_policy() {
        // Each rank keeps the teacher's last line, maybe of another depth:
        // here the second scores a mate against the first's 50 cp.
        let s = sample(None);
        let moves = s.position.legal_moves();
        let label = crate::selfplay::TeacherLabel {
            score: crate::mcts::Score::Cp(50),
            moves: vec![(moves[0], crate::mcts::Score::Cp(50)), (moves[1], crate::mcts::Score::Mate(3))],
        };
        let t = Targets {
            teacher: TeacherTargets { policy_temperature: 100.0, ..TeacherTargets::default() },
            scale: 600.0,
            search_value_weight: 0.0,
        };
        let (value, policy) = t.of(&Sample { teacher: Some(label), ..s });
        assert!(value.is_finite());
        let p: Vec<f32> = policy.unwrap().iter().map(|p| p.1).collect();
        assert!(p[0] < 1e-6 && (p[1] - 1.0).abs() < 1e-6, "{p:?}");
    }

    #[test]
    fn the_reply_target_is_the_next_samples_policy_where_it_follows() {
        // Three plies of a game, then an unrelated position; the second
        // sample's search was a fast one (no policy target).
        let v = Variant::Minishogi;
        let mut pos = Position::startpos(v);
        let mut samples = Vec::new();
        for (ply, mv) in ["2e3d", "4a2c", "3d2c"].into_iter().enumerate() {
            let moves = pos.legal_moves();
            let played = crate::notation::parse_move(&pos, mv).unwrap();
            let other = *moves.iter().find(|&&m| m != played).unwrap();
            samples.push(Sample { policy: vec![(played, 3), (other, 1)], full_search: ply != 1, ..sample(None) });
            samples.last_mut().unwrap().position = pos.clone();
            pos = pos.play(played);
        }
        samples.push(sample(None));
        let linked = links(&samples);
        assert_eq!(linked, vec![true, true, false, false]);
        let layout = Layout::new(v);
        let aux = AuxData { material: None, linked: &linked, reply: true };
        let device = Device::flex();
        let batch = batch_tensors(&layout, &[0, 1, 2, 3], &samples, &aux, &targets(0.0), &device);
        assert!(batch.material.is_none(), "no material targets are built when they are not trained");
        let (reply, mask) = batch.reply.expect("reply targets asked for");
        let mask = mask.into_data().try_to_vec::<f32>().unwrap();
        // Sample 0's next has no policy target, sample 2 and 3 have no next.
        assert_eq!(mask, vec![0.0, 1.0, 0.0, 0.0]);
        let reply = reply.into_data().try_to_vec::<f32>().unwrap();
        let plen = layout.policy_len();
        let row = &reply[plen..2 * plen];
        let next = &samples[2];
        let want: Vec<(usize, f32)> =
            next.policy.iter().map(|&(m, n)| (layout.reply_index(&next.position, m), n as f32 / 4.0)).collect();
        for &(i, p) in &want {
            assert_eq!(row[i], p);
        }
        assert_eq!(row.iter().filter(|&&x| x != 0.0).count(), want.len());
        assert!(reply[..plen].iter().chain(&reply[2 * plen..]).all(|&x| x == 0.0));
    }
}
