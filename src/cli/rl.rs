//! The reinforcement-learning commands: self-play, tsume, data and the
//! loop, each an argument struct with its own `run` (`train` and `match`
//! have modules of their own).

use super::*;

/// How self-play games are played, the same for `selfplay` and `loop`.
#[derive(Args, Debug, Clone)]
pub struct SelfPlayTuning {
    /// Games played at once; their leaves share network batches.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=4096))]
    parallel: u64,
    /// Share of moves searched fully (playout-cap randomisation;
    /// default: 0.25 for selfplay, 1 for loop).
    #[arg(long)]
    full_share: Option<f64>,
    /// Moves played at temperature 1 from the start.
    #[arg(long, default_value_t = 12)]
    temperature_plies: usize,
    /// Resign below minus this value (0..1).
    #[arg(long, default_value_t = 0.95)]
    resign_value: f64,
    /// Share of games that never resign (to check resignations).
    #[arg(long, default_value_t = 0.1)]
    no_resign_share: f64,
    /// Share of games with the material-greedy 1-ply player on one side
    /// instead of the net (it takes every hung piece; its positions
    /// train the value only).
    #[arg(long, default_value_t = 0.0)]
    greedy_share: f64,
    /// Games end unfinished after this many plies.
    #[arg(long, default_value_t = 400)]
    max_plies: usize,
    /// The root's search: puct (visit counts as the policy target,
    /// Dirichlet noise, a temperature schedule) or gumbel (Gumbel
    /// AlphaZero: Sequential Halving over Gumbel-top-k moves, the improved
    /// policy as the target). Default: puct for selfplay, gumbel for loop.
    #[arg(long, value_enum)]
    root: Option<Root>,
    /// Gumbel root: moves considered (m).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=1024))]
    gumbel_considered: u64,
    /// Gumbel root: c_visit of sigma(q) = (c_visit + max visits) * c_scale * q.
    #[arg(long, default_value_t = 50.0)]
    gumbel_c_visit: f64,
    /// Gumbel root: c_scale of sigma.
    #[arg(long, default_value_t = 1.0)]
    gumbel_c_scale: f64,
    /// PUCT root: KataGo's forced playouts in full searches, k (0: none;
    /// KataGo's is 2), with policy target pruning: the records' policy
    /// target is then the pruned visits.
    #[arg(long, default_value_t = 0.0)]
    forced_playouts: f64,
    /// PUCT's exploration constant c_init in the self-play searches and
    /// the loop's gate matches (0.1 to 10; higher explores more).
    #[arg(long, default_value_t = crate::mcts::CPUCT_INIT, value_parser = parse_cpuct)]
    cpuct: f64,
}

/// The root's search in self-play.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root {
    Puct,
    Gumbel,
}

/// A command's defaults for the root and the share of full searches:
/// `selfplay` keeps AlphaZero's PUCT; `loop` takes the recipe that learned
/// the most per CPU-hour (Gumbel, every move a full search; see
/// docs/strength.md).
const SELFPLAY_ROOT: (Root, f64) = (Root::Puct, 0.25);
const LOOP_ROOT: (Root, f64) = (Root::Gumbel, 1.0);

impl SelfPlayTuning {
    /// Self-play of `games` games at `visits` (full, fast) playouts a
    /// move into `out`, checking the flags; no model id and no deadline.
    /// `defaults`: the root and full-search share where no flag sets them.
    fn config(
        &self,
        variant: Variant,
        (games, visits): (u64, (u64, u64)),
        seed: u64,
        out: std::path::PathBuf,
        defaults: (Root, f64),
    ) -> Result<crate::selfplay::SelfPlayConfig> {
        let root = self.root.unwrap_or(defaults.0);
        let full_share = self.full_share.unwrap_or(defaults.1);
        for (name, v) in [
            ("--full-share", full_share),
            ("--resign-value", self.resign_value),
            ("--no-resign-share", self.no_resign_share),
            ("--greedy-share", self.greedy_share),
        ] {
            anyhow::ensure!((0.0..=1.0).contains(&v), "{name} must be between 0 and 1");
        }
        anyhow::ensure!(self.max_plies >= 1, "--max-plies must be at least 1");
        for (name, v) in [
            ("--gumbel-c-visit", self.gumbel_c_visit),
            ("--gumbel-c-scale", self.gumbel_c_scale),
            ("--forced-playouts", self.forced_playouts),
        ] {
            anyhow::ensure!(v.is_finite() && (0.0..=1e6).contains(&v), "{name} must be a number from 0 to 1e6");
        }
        let gumbel = (root == Root::Gumbel).then_some(crate::mcts::GumbelParams {
            considered: self.gumbel_considered as usize,
            c_visit: self.gumbel_c_visit,
            c_scale: self.gumbel_c_scale,
            noise: true,
        });
        Ok(crate::selfplay::SelfPlayConfig {
            variant,
            games: games as usize,
            parallel: self.parallel as usize,
            visits: visits.0,
            fast_visits: visits.1,
            full_share,
            temperature_plies: self.temperature_plies,
            resign_value: self.resign_value,
            no_resign_share: self.no_resign_share,
            max_plies: self.max_plies,
            greedy_share: self.greedy_share,
            leaves_per_game: 8,
            seed,
            out,
            model_id: String::new(),
            gumbel,
            forced_playouts: (self.forced_playouts > 0.0).then_some(self.forced_playouts),
            cpuct_init: self.cpuct,
            deadline: None,
        })
    }
}

#[derive(Args, Debug)]
pub struct SelfplayCommand {
    #[arg(long)]
    variant: Variant,
    /// Weight file, or `shipped` (the default: the variant's shipped net for
    /// the device, the large one on a GPU where there is one; `shipped-small`
    /// and `shipped-large` name one).
    #[arg(long, default_value = "shipped")]
    model: crate::nn::ModelSource,
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    games: u64,
    #[arg(long)]
    out: std::path::PathBuf,
    /// Playouts of a full search (policy target).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    visits: u64,
    /// Playouts of a fast search (no policy target).
    #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    fast_visits: u64,
    #[command(flatten)]
    tuning: SelfPlayTuning,
    /// auto, gpu or cpu.
    #[arg(long, default_value = "auto")]
    device: crate::nn::DeviceChoice,
    /// Network batch size.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=4096))]
    batch: u64,
    /// The net's number format: f32 (the default: the same games on
    /// every CPU for a seed), bf16 (the CPU device on CPUs with AMX or
    /// AVX-512 BF16: more games an hour, the games then depending on
    /// which of the two kernels ran), f16 (GPU) or auto.
    #[arg(long, default_value_t = crate::nn::Precision::F32)]
    precision: crate::nn::Precision,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Stop after this many seconds: no game starts later, and the
    /// games still going are dropped (rerunning the command plays them).
    #[arg(long, value_parser = parse_seconds)]
    time_limit: Option<f64>,
    /// Also write the run's figures (games, positions, rates) to this
    /// file as JSON.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
}

impl SelfplayCommand {
    pub fn run(self) -> Result<()> {
        let model_id = match &self.model {
            crate::nn::ModelSource::File(path) => path.display().to_string(),
            shipped => format!("{shipped}-{}", self.variant),
        };
        let config = crate::selfplay::SelfPlayConfig {
            model_id,
            deadline: self.time_limit.map(|s| Instant::now() + std::time::Duration::from_secs_f64(s)),
            ..self.tuning.config(
                self.variant,
                (self.games, (self.visits, self.fast_visits)),
                self.seed,
                self.out.clone(),
                SELFPLAY_ROOT,
            )?
        };
        let mut net = crate::nn::NetEvaluator::load(self.variant, &self.model, self.device, self.batch as usize)?;
        net.set_precision(self.precision)?;
        let evaluator = crate::mcts::Evaluator::name(&net);
        eprintln!("evaluator: {evaluator}");
        let started = Instant::now();
        let reports = crate::selfplay::play(&config, std::sync::Arc::new(net), &|r| {
            let against = match r.greedy {
                Some(c) => format!(" (greedy played {c})"),
                None => String::new(),
            };
            outln!(
                "game {}/{}{against}: {} after {} plies, {} samples -> {}",
                r.index + 1,
                config.games,
                r.result,
                r.plies,
                r.samples,
                r.path.display()
            );
        })?;
        let elapsed = started.elapsed();
        outln!("{}", crate::selfplay::summary(&reports, elapsed));
        let Some(path) = &self.json else { return Ok(()) };
        let secs = elapsed.as_secs_f64();
        let positions: usize = reports.iter().map(|r| r.samples).sum();
        let figures = serde_json::json!({
            "variant": self.variant.name(), "device": self.device.to_string(), "parallel": config.parallel,
            "batch": self.batch, "evaluator": evaluator, "visits": self.visits, "fast_visits": self.fast_visits,
            "games": reports.len(),
            "positions": positions, "seconds": secs, "games_per_hour": reports.len() as f64 * 3600.0 / secs,
            "positions_per_s": positions as f64 / secs,
        });
        write_json(path, &figures)
    }
}

#[derive(Args, Debug)]
pub struct TsumeCommand {
    #[arg(long)]
    variant: Variant,
    /// Directory of the shards (created if missing).
    #[arg(long)]
    out: std::path::PathBuf,
    /// Samples to write.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    samples: u64,
    #[command(flatten)]
    mates: TsumeArgs,
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: u64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

impl TsumeCommand {
    pub fn run(self) -> Result<()> {
        let TsumeCommand { variant, out, samples, mates, threads, seed } = self;
        let config = mates.config(variant, samples, (threads, seed), out)?;
        let started = Instant::now();
        let report = crate::selfplay::tsume::write_samples(&config)?;
        outln!("{report} in {:.1} s", started.elapsed().as_secs_f64());
        for path in &report.shards {
            outln!("wrote {}", path.display());
        }
        Ok(())
    }
}

#[derive(Args, Debug)]
pub struct DataCommand {
    #[arg(long)]
    variant: Variant,
    /// Directory of shards (a loop's `data`).
    #[arg(long)]
    dir: std::path::PathBuf,
    /// The newest samples read, tsume samples included (whole shards).
    #[arg(long, default_value_t = 20000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    samples: u64,
    /// Also evaluate the self-play positions with this weight file
    /// (`shipped`: the variant's shipped net).
    #[arg(long)]
    model: Option<crate::nn::ModelSource>,
    /// auto, gpu or cpu.
    #[arg(long, default_value = "auto")]
    device: crate::nn::DeviceChoice,
}

impl DataCommand {
    pub fn run(self) -> Result<()> {
        let DataCommand { variant, dir, samples, model, device } = self;
        use crate::nn::NetEvaluator;
        let (shards, warnings) = crate::selfplay::read_shards(&dir, variant, samples as usize)?;
        for w in &warnings {
            eprintln!("warning: {w}");
        }
        anyhow::ensure!(!shards.is_empty(), "no {variant} shards in {}", dir.display());
        let net = match model {
            Some(m) => Some(NetEvaluator::load(variant, &m, device, 256)?),
            None => None,
        };
        let evaluator = net.as_ref().map(|n| n as &dyn crate::mcts::Evaluator);
        out!("{}", crate::selfplay::data_stats(&shards, evaluator));
        Ok(())
    }
}

#[derive(Args, Debug)]
pub struct LoopCommand {
    #[arg(long)]
    variant: Variant,
    #[arg(long)]
    dir: std::path::PathBuf,
    /// Generations to reach (counting those already done).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    generations: u64,
    /// Starting weights of a new run (default: the shipped net).
    #[arg(long)]
    from: Option<std::path::PathBuf>,
    /// Self-play games per generation.
    #[arg(long, default_value_t = 192, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    games: u64,
    /// Playouts of a full search (the defaults, 192 games of Gumbel at 8
    /// playouts a generation, learned the most per CPU-hour; PUCT's were
    /// 64 games at 100 and 25 with --root puct --full-share 0.25).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    visits: u64,
    /// Playouts of a fast search.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    fast_visits: u64,
    /// Training steps per generation.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    steps: u64,
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u64).range(1..=65536))]
    batch: u64,
    #[arg(long, default_value_t = 1e-3)]
    lr: f64,
    /// Replay window (newest samples).
    #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    window: u64,
    /// Games of the gating match (candidate vs best).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(2..=1_000_000))]
    gate_games: u64,
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    gate_nodes: u64,
    /// Score share a candidate needs to be promoted.
    #[arg(long, default_value_t = 0.55)]
    gate_score: f64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Directories of fixed training data read beside the run's own
    /// records every generation, e.g. teacher labels (repeatable).
    #[arg(long)]
    extra_data: Vec<std::path::PathBuf>,
    #[command(flatten)]
    teacher: TeacherTargetArgs,
    /// Share of the search's root value in the value target of self-play
    /// samples that record one (KataGo's search-value target; the rest is
    /// the game result).
    #[arg(long, default_value_t = 0.0)]
    search_value_weight: f32,
    #[command(flatten)]
    aux: AuxArgs,
    /// Tsume samples (mates from random playouts, see `pantheon tsume`)
    /// added to the data each generation (0: none).
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(0..=100_000_000))]
    tsume: u64,
    #[command(flatten)]
    tsume_mates: TsumeArgs,
    #[command(flatten)]
    tuning: SelfPlayTuning,
    /// Stop once the run's generations have used this many CPU seconds
    /// (all threads, resumed runs included): the budget of a comparison.
    #[arg(long, value_parser = parse_seconds)]
    cpu_budget: Option<f64>,
    /// Where self-play, the gate matches and training run: auto (a
    /// real GPU if there is one, else the CPU), gpu or cpu.
    #[arg(long, default_value = "auto")]
    device: crate::nn::DeviceChoice,
    /// The net's number format in self-play and the gate matches
    /// (training is f32): f32 (the default: the same run on every CPU for
    /// a seed), bf16 (CPUs with AMX or AVX-512 BF16: more games an hour),
    /// f16 (GPU) or auto.
    #[arg(long, default_value_t = crate::nn::Precision::F32)]
    precision: crate::nn::Precision,
}

impl LoopCommand {
    pub fn run(self) -> Result<()> {
        for (name, v) in
            [("--gate-score", self.gate_score), ("--search-value-weight", f64::from(self.search_value_weight))]
        {
            anyhow::ensure!((0.0..=1.0).contains(&v), "{name} must be between 0 and 1");
        }
        anyhow::ensure!(self.lr.is_finite() && self.lr > 0.0 && self.lr < 10.0, "--lr must be a small positive number");
        let variant = self.variant;
        let data = self.dir.join("data");
        let selfplay = self.tuning.config(
            variant,
            (self.games, (self.visits, self.fast_visits)),
            self.seed,
            data.clone(),
            LOOP_ROOT,
        )?;
        let train = crate::train::TrainConfig {
            variant,
            data: self.extra_data,
            teacher: self.teacher.targets()?,
            search_value_weight: self.search_value_weight,
            material: self.aux.material()?,
            reply_weight: self.aux.reply_weight()?,
            from: None,
            out: self.dir.join("nets/candidate.pnet"),
            steps: self.steps as usize,
            batch_size: self.batch as usize,
            learning_rate: self.lr,
            weight_decay: 1e-4,
            window: self.window as usize,
            checkpoint_every: 100,
            seed: self.seed,
            device: self.device,
            deadline: None,
        };
        let gate = crate::selfplay::MatchConfig {
            variant,
            games: self.gate_games as usize,
            limit: crate::selfplay::MoveLimit::Nodes(self.gate_nodes),
            threads: 1,
            opening_plies: 4,
            max_plies: selfplay.max_plies,
            mate_plies: [crate::mcts::MATE_PLIES; 2],
            // As in self-play: the net's own priors.
            policy_temperature: [1.0; 2],
            cpuct_init: [selfplay.cpuct_init; 2],
            gumbel: [None; 2],
            time_margin: crate::selfplay::DEFAULT_TIME_MARGIN,
            seed: self.seed,
        };
        let tsume = self.tsume_mates.config(variant, self.tsume, (crate::mcts::cores() as u64, self.seed), data)?;
        let config = crate::train::LoopConfig {
            variant,
            dir: self.dir,
            generations: self.generations as usize,
            from: self.from,
            selfplay,
            train,
            gate,
            gate_score: self.gate_score,
            tsume,
            cpu_budget: self.cpu_budget,
            precision: self.precision,
        };
        crate::train::generations::run(&config, &mut |line| outln!("{line}"))?;
        Ok(())
    }
}
