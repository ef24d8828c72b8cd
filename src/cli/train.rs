//! `pantheon train`: a net fitted to records and teacher labels.

use super::*;

#[derive(Args, Debug)]
pub struct TrainCommand {
    #[arg(long)]
    variant: Variant,
    /// Directory of shards: self-play, tsume, teacher labels
    /// (repeatable; each gives at most --window samples).
    #[arg(long, required = true)]
    data: Vec<std::path::PathBuf>,
    #[command(flatten)]
    teacher: TeacherTargetArgs,
    /// Share of the search's root value in the value target of self-play
    /// samples that record one (KataGo's search-value target; the rest is
    /// the game result).
    #[arg(long, default_value_t = 0.0)]
    search_value_weight: f32,
    #[command(flatten)]
    aux: AuxArgs,
    /// Starting weights (default: the variant's shipped net).
    #[arg(long)]
    from: Option<std::path::PathBuf>,
    /// The trained net; also OUT.losses.csv and the chart OUT.losses.svg.
    #[arg(long)]
    out: std::path::PathBuf,
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    steps: u64,
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=65536))]
    batch: u64,
    #[arg(long, default_value_t = 1e-3)]
    lr: f64,
    #[arg(long, default_value_t = 1e-4)]
    weight_decay: f32,
    /// Replay window: the newest samples used.
    #[arg(long, default_value_t = 500_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    window: u64,
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    checkpoint_every: u64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// auto (a real GPU if there is one, else the CPU), gpu or cpu.
    #[arg(long, default_value = "auto")]
    device: crate::nn::DeviceChoice,
    /// Stop after this many seconds, with a checkpoint: rerunning the
    /// command carries on (the net is written when all steps are done).
    #[arg(long, value_parser = parse_seconds)]
    time_limit: Option<f64>,
    /// Also write the run's figures (steps, rates, last losses) to
    /// this file as JSON.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
}

impl TrainCommand {
    pub fn run(self) -> Result<()> {
        let json = self.json.clone();
        let config = self.config()?;
        let started = Instant::now();
        let every = (config.steps / 50).max(1);
        let report = crate::train::train(&config, &mut |l| {
            if l.step % every == 0 || l.step == config.steps {
                print_progress(l, config.steps, started);
            }
        })?;
        let secs = started.elapsed().as_secs_f64();
        let steps_done = report.losses.len() - report.resumed_from.unwrap_or(0);
        print_report(&config, &report);
        outln!(
            "{steps_done} steps in {secs:.1} s: {:.2} steps/s, {:.0} samples/s",
            steps_done as f64 / secs,
            (steps_done * config.batch_size) as f64 / secs
        );
        let Some(path) = json else { return Ok(()) };
        let last = report.losses.last();
        let figures = serde_json::json!({
            "variant": config.variant.name(), "device": config.device.to_string(), "samples": report.samples,
            "steps": steps_done, "batch": config.batch_size, "seconds": secs,
            "steps_per_s": steps_done as f64 / secs, "samples_per_s": (steps_done * config.batch_size) as f64 / secs,
            "policy_loss": last.map(|l| l.policy), "value_loss": last.map(|l| l.value),
            "stopped_early": report.stopped_early,
        });
        write_json(&path, &figures)
    }

    fn config(self) -> Result<crate::train::TrainConfig> {
        anyhow::ensure!(self.lr.is_finite() && self.lr > 0.0 && self.lr < 10.0, "--lr must be a small positive number");
        anyhow::ensure!(self.weight_decay.is_finite() && self.weight_decay >= 0.0, "--weight-decay must be 0 or more");
        anyhow::ensure!(
            (0.0..=1.0).contains(&self.search_value_weight),
            "--search-value-weight must be between 0 and 1"
        );
        Ok(crate::train::TrainConfig {
            variant: self.variant,
            data: self.data,
            teacher: self.teacher.targets()?,
            search_value_weight: self.search_value_weight,
            material: self.aux.material()?,
            reply_weight: self.aux.reply_weight()?,
            from: self.from,
            out: self.out,
            steps: self.steps as usize,
            batch_size: self.batch as usize,
            learning_rate: self.lr,
            weight_decay: self.weight_decay,
            window: self.window as usize,
            checkpoint_every: self.checkpoint_every as usize,
            seed: self.seed,
            device: self.device,
            deadline: self.time_limit.map(|s| Instant::now() + std::time::Duration::from_secs_f64(s)),
        })
    }
}

/// One progress line: a bar, the step, the losses and the time so far.
fn print_progress(l: &crate::train::StepLoss, steps: usize, started: Instant) {
    let pct = 100.0 * l.step as f64 / steps as f64;
    let filled = (pct / 5.0) as usize;
    let bar = format!("{}{}", "#".repeat(filled), ".".repeat(20 - filled.min(20)));
    let material = l.material.map_or(String::new(), |m| format!("  material loss {m:.4}"));
    let reply = l.reply.map_or(String::new(), |r| format!("  reply loss {r:.4}"));
    outln!(
        "[{bar}] step {:>7}/{steps} ({pct:5.1}%)  policy loss {:.4}  value loss {:.4}{material}{reply}  {:.1} s",
        l.step,
        l.policy,
        l.value,
        started.elapsed().as_secs_f64()
    );
}

/// The run's warnings, resumption, teacher labels and how it ended.
fn print_report(config: &crate::train::TrainConfig, report: &crate::train::TrainReport) {
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(step) = report.resumed_from {
        outln!("resumed from the checkpoint at step {step}");
    }
    if let Some(scale) = report.teacher_scale {
        outln!(
            "{} samples carry teacher labels; score -> value scale {scale:.0} cp{}",
            report.teacher_samples,
            if config.teacher.scale.is_some() { "" } else { " (fitted on the data)" }
        );
    }
    if report.stopped_early {
        let done = report.losses.last().map_or(0, |l| l.step);
        outln!(
            "stopped at the time limit after step {done} of {}; the checkpoint keeps it, rerun to carry on",
            config.steps
        );
    } else {
        outln!("trained on {} samples; wrote {}", report.samples, config.out.display());
    }
}
