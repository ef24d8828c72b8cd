//! The reinforcement-learning loop: generations of self-play -> training
//! -> a gating match -> promotion, resumable after interruption, with a
//! per-generation log and a plot of strength. Self-play uses the best
//! (last promoted) net; training always continues from the newest net.
//!
//! A run directory holds:
//! ```text
//! state            "generation N" and "best PATH" (rewritten atomically)
//! nets/gen0.pnet   the starting net; nets/genN.pnet each candidate
//! data/            self-play (and tsume) shards of all generations
//! log.csv          one line per finished generation (CPU seconds in all
//!                  and by phase: self-play, training, gate)
//! strength.svg     cumulative Elo of the accepted nets (redrawn on resume)
//! ```

use super::trainer::{TrainConfig, train};
use crate::mcts::Evaluator;
use crate::nn::{NetEvaluator, Precision};
use crate::rules::Variant;
use crate::selfplay::{MatchConfig, Player, SelfPlayConfig, TsumeConfig, play, play_match, summary};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Settings of a loop run.
#[derive(Clone, Debug)]
pub struct LoopConfig {
    pub variant: Variant,
    pub dir: PathBuf,
    /// Generations to reach (counting those already done).
    pub generations: usize,
    /// Starting weights for a new run (`None`: the shipped net).
    pub from: Option<PathBuf>,
    pub selfplay: SelfPlayConfig,
    /// Training settings; `data` lists directories read beside the run's
    /// own `data/` each generation (e.g. teacher labels); `device` is where
    /// self-play, the gate matches and training run.
    pub train: TrainConfig,
    pub gate: MatchConfig,
    /// A candidate is promoted when it scores at least this share.
    pub gate_score: f64,
    /// Mate samples added to the data each generation (`samples` 0: none);
    /// `out` and `seed` are set per generation.
    pub tsume: TsumeConfig,
    /// CPU seconds the run may spend, over all its generations (resumed
    /// runs included): no generation starts once they are spent, so runs
    /// compared at one budget end within a generation of it.
    pub cpu_budget: Option<f64>,
    /// The number format of self-play and the gate matches (training is
    /// f32): bf16 plays more games an hour on CPUs with a bf16 kernel.
    pub precision: Precision,
}

/// Why the loop stopped.
#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    #[error("{path}: {what}")]
    State { path: String, what: String },
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: String, source: std::io::Error },
    #[error("the starting net: {0}")]
    Start(#[from] crate::nn::WeightsError),
    #[error(transparent)]
    Load(#[from] crate::nn::LoadError),
    #[error(transparent)]
    SelfPlay(#[from] crate::selfplay::SelfPlayError),
    #[error(transparent)]
    Train(#[from] super::trainer::TrainError),
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), LoopError> {
    crate::atomic_file::write(path, bytes)
        .map_err(|source| LoopError::Write { path: path.display().to_string(), source })
}

/// A file of the run (`state`, `log.csv`): `None` before it is written.
fn read_file(path: &Path) -> Result<Option<String>, LoopError> {
    crate::atomic_file::read_if_present(path)
        .map_err(|source| LoopError::Read { path: path.display().to_string(), source })
}

/// One finished generation.
#[derive(Clone, Debug)]
pub struct GenerationLog {
    pub generation: usize,
    pub games: usize,
    pub positions: usize,
    pub policy_loss: f32,
    pub value_loss: f32,
    pub score: f64,
    pub elo: f64,
    pub accepted: bool,
    pub seconds: f64,
    /// The process's CPU time in the generation, all threads (the wall
    /// seconds where the system does not say).
    pub cpu_seconds: f64,
    /// That CPU time by phase: self-play (with tsume), training and the
    /// gating match (`None` in logs written before the columns existed,
    /// or where the system does not say).
    pub cpu_phases: Option<CpuPhases>,
}

/// A generation's CPU seconds by phase.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuPhases {
    pub selfplay: f64,
    pub train: f64,
    pub gate: f64,
}

fn state_path(dir: &Path) -> PathBuf {
    dir.join("state")
}

fn read_state(dir: &Path) -> Result<Option<(usize, PathBuf)>, LoopError> {
    let Some(text) = read_file(&state_path(dir))? else { return Ok(None) };
    let mut generation = None;
    let mut best = None;
    for line in text.lines() {
        match line.split_once(' ') {
            Some(("generation", n)) => generation = n.trim().parse().ok(),
            Some(("best", p)) => best = Some(PathBuf::from(p.trim())),
            _ => {
                let (path, what) = (state_path(dir).display().to_string(), format!("bad line '{line}'"));
                return Err(LoopError::State { path, what });
            }
        }
    }
    match (generation, best) {
        (Some(g), Some(b)) => Ok(Some((g, b))),
        _ => Err(LoopError::State {
            path: state_path(dir).display().to_string(),
            what: "missing generation or best".into(),
        }),
    }
}

fn write_state(dir: &Path, generation: usize, best: &Path) -> Result<(), LoopError> {
    write_file(&state_path(dir), format!("generation {generation}\nbest {}\n", best.display()).as_bytes())
}

fn load(config: &LoopConfig, path: &Path, batch: usize) -> Result<Arc<dyn Evaluator>, LoopError> {
    let model = crate::nn::ModelSource::File(path.to_path_buf());
    let mut net = NetEvaluator::load(config.variant, &model, config.train.device, batch)?;
    net.set_precision(config.precision).map_err(crate::nn::LoadError::from)?;
    Ok(Arc::new(net))
}

/// Runs (or resumes) the loop, calling `report` with progress lines.
pub fn run(config: &LoopConfig, report: &mut dyn FnMut(&str)) -> Result<Vec<GenerationLog>, LoopError> {
    let dir = &config.dir;
    let (mut done, mut best) = start_or_resume(config, report)?;
    let mut logs = read_log(dir)?;
    if !logs.is_empty() {
        // Redraws the plot (not the log, which stays as read), so a
        // finished run's plot can be redrawn.
        write_plot(dir, &logs)?;
    }
    while done < config.generations {
        let spent: f64 = logs.iter().map(|l| l.cpu_seconds).sum();
        if let Some(budget) = config.cpu_budget.filter(|&b| spent >= b) {
            report(&format!("CPU budget spent: {spent:.0} of {budget:.0} s after generation {done}"));
            break;
        }
        let g = done + 1;
        let (log, candidate) = generation(config, g, &best, report)?;
        if log.accepted {
            best = candidate;
        }
        logs.push(log);
        write_log(dir, &logs)?;
        write_state(dir, g, &best)?;
        done = g;
    }
    Ok(logs)
}

/// The state of a run in `config.dir`: the generations done and the best
/// net, read back, or a new run's generation 0 written from `--from` (or
/// the shipped net).
fn start_or_resume(config: &LoopConfig, report: &mut dyn FnMut(&str)) -> Result<(usize, PathBuf), LoopError> {
    let dir = &config.dir;
    std::fs::create_dir_all(dir.join("nets"))
        .map_err(|source| LoopError::Write { path: dir.display().to_string(), source })?;
    if let Some((done, best)) = read_state(dir)? {
        report(&format!("resuming after generation {done}, best net {}", best.display()));
        return Ok((done, best));
    }
    let first = dir.join("nets/gen0.pnet");
    let bytes = match &config.from {
        Some(p) => std::fs::read(p).map_err(|source| LoopError::Read { path: p.display().to_string(), source })?,
        None => crate::nn::shipped(config.variant).to_vec(),
    };
    crate::nn::weights::parse(&bytes)?;
    write_file(&first, &bytes)?;
    write_state(dir, 0, &first)?;
    Ok((0, first))
}

/// Generation `g`: self-play (and tsume samples) with the best net, a
/// candidate trained on the data, and the gate match against the best.
/// Returns the generation's log and the candidate's path.
fn generation(
    config: &LoopConfig,
    g: usize,
    best: &Path,
    report: &mut dyn FnMut(&str),
) -> Result<(GenerationLog, PathBuf), LoopError> {
    let dir = &config.dir;
    let started = Instant::now();
    let cpu_started = cpu_seconds();
    let net = load(config, best, 64)?;
    // The evaluator's name starts with the net's path.
    report(&format!("generation {g}: self-play with {}", net.name()));
    let sp = SelfPlayConfig {
        out: dir.join("data"),
        model_id: best.display().to_string(),
        seed: config.selfplay.seed.wrapping_add(g as u64),
        ..config.selfplay.clone()
    };
    let games = play(&sp, net, &|_| {})?;
    report(&format!("generation {g}: {}", summary(&games, started.elapsed())));
    if config.tsume.samples > 0 {
        let tsume_started = Instant::now();
        let tc = TsumeConfig {
            out: dir.join("data"),
            seed: config.tsume.seed.wrapping_add(g as u64),
            ..config.tsume.clone()
        };
        let made = crate::selfplay::tsume::write_samples(&tc)?;
        report(&format!("generation {g}: tsume: {made} in {:.1} s", tsume_started.elapsed().as_secs_f64()));
    }
    let selfplay_done = cpu_seconds();
    let candidate = dir.join(format!("nets/gen{g}.pnet"));
    let (policy_loss, value_loss) = train_candidate(config, g, best, &candidate)?;
    let train_done = cpu_seconds();
    report(&format!("generation {g}: trained, policy loss {policy_loss:.4}, value loss {value_loss:.4}"));
    let gate = MatchConfig { seed: config.gate.seed.wrapping_add(g as u64), ..config.gate.clone() };
    let result = play_match(
        &gate,
        Player::Search(load(config, &candidate, 8)?),
        Player::Search(load(config, best, 8)?),
        &mut |_| std::ops::ControlFlow::Continue(()),
    );
    let gate_done = cpu_seconds();
    let accepted = result.score() >= config.gate_score;
    report(&format!("generation {g}: candidate vs best {result}; {}", if accepted { "promoted" } else { "rejected" }));
    let log = GenerationLog {
        generation: g,
        games: games.len(),
        positions: games.iter().map(|r| r.samples).sum(),
        policy_loss,
        value_loss,
        score: result.score(),
        elo: result.elo().0,
        accepted,
        seconds: started.elapsed().as_secs_f64(),
        cpu_seconds: match (cpu_started, gate_done) {
            (Some(a), Some(b)) => b - a,
            _ => started.elapsed().as_secs_f64(),
        },
        cpu_phases: match (cpu_started, selfplay_done, train_done, gate_done) {
            (Some(a), Some(b), Some(c), Some(d)) => Some(CpuPhases { selfplay: b - a, train: c - b, gate: d - c }),
            _ => None,
        },
    };
    if let Some(p) = log.cpu_phases {
        report(&format!(
            "generation {g}: CPU {:.1} s: self-play {:.1}, training {:.1}, gate {:.1}",
            log.cpu_seconds, p.selfplay, p.train, p.gate
        ));
    }
    Ok((log, candidate))
}

/// Trains generation `g`'s candidate into `candidate`; returns its mean
/// policy and value losses over the last 10 steps.
fn train_candidate(config: &LoopConfig, g: usize, best: &Path, candidate: &Path) -> Result<(f32, f32), LoopError> {
    let dir = &config.dir;
    // Training continues from the newest net, promoted or not (as in
    // AlphaGo Zero: the gate decides which net plays self-play, not
    // where optimisation restarts); restarting from the best net would
    // cap training at one generation's steps while candidates fail.
    let newest = dir.join(format!("nets/gen{}.pnet", g - 1));
    // The run's own records, then any fixed data the run was given
    // (teacher labels: `train.data`).
    let mut data = vec![dir.join("data")];
    data.extend(config.train.data.iter().cloned());
    let tc = TrainConfig {
        data,
        from: Some(if newest.exists() { newest } else { best.to_path_buf() }),
        out: candidate.to_path_buf(),
        seed: config.train.seed.wrapping_add(g as u64),
        ..config.train.clone()
    };
    let trained = train(&tc, &mut |_| {})?;
    let tail = &trained.losses[trained.losses.len().saturating_sub(10)..];
    let mean = |f: fn(&super::trainer::StepLoss) -> f32| tail.iter().map(f).sum::<f32>() / tail.len().max(1) as f32;
    Ok((mean(|l| l.policy), mean(|l| l.value)))
}

/// The CPU time this process has used, all threads, in seconds.
#[cfg(unix)]
fn cpu_seconds() -> Option<f64> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes the struct it is given and nothing else.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: initialised by the successful call above.
    let usage = unsafe { usage.assume_init() };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Some(seconds(usage.ru_utime) + seconds(usage.ru_stime))
}

#[cfg(not(unix))]
fn cpu_seconds() -> Option<f64> {
    None
}

/// The run's `log.csv`, row by row; a row that does not parse is an error
/// (the log is rewritten after each generation, and would lose it).
fn read_log(dir: &Path) -> Result<Vec<GenerationLog>, LoopError> {
    let path = dir.join("log.csv");
    let Some(text) = read_file(&path)? else { return Ok(Vec::new()) };
    text.lines()
        .skip(1)
        .map(|l| {
            let bad = || LoopError::State { path: path.display().to_string(), what: format!("bad log row '{l}'") };
            parse_log_row(l).ok_or_else(bad)
        })
        .collect()
}

fn parse_log_row(l: &str) -> Option<GenerationLog> {
    let f: Vec<&str> = l.split(',').collect();
    Some(GenerationLog {
        generation: f.first()?.parse().ok()?,
        games: f.get(1)?.parse().ok()?,
        positions: f.get(2)?.parse().ok()?,
        policy_loss: f.get(3)?.parse().ok()?,
        value_loss: f.get(4)?.parse().ok()?,
        score: f.get(5)?.parse().ok()?,
        elo: f.get(6)?.parse().ok()?,
        accepted: f.get(7)? == &"true",
        seconds: f.get(8)?.parse().ok()?,
        // Logs written before the column have wall seconds only.
        cpu_seconds: f.get(9).and_then(|c| c.parse().ok()).or_else(|| f.get(8)?.parse().ok())?,
        // Empty (or absent, in older logs) where not measured.
        cpu_phases: read_phases(f.get(10..).unwrap_or_default()),
    })
}

/// The CPU phase columns of a log line: three numbers, else `None`.
fn read_phases(fields: &[&str]) -> Option<CpuPhases> {
    let [a, b, c] = fields else { return None };
    Some(CpuPhases { selfplay: a.parse().ok()?, train: b.parse().ok()?, gate: c.parse().ok()? })
}

fn write_log(dir: &Path, logs: &[GenerationLog]) -> Result<(), LoopError> {
    let mut csv = String::from(
        "generation,games,positions,policy_loss,value_loss,score_vs_best,elo_vs_best,accepted,seconds,cpu_seconds,\
         selfplay_cpu_seconds,train_cpu_seconds,gate_cpu_seconds\n",
    );
    for l in logs {
        let phases =
            l.cpu_phases.map_or(",,".to_string(), |p| format!("{:.3},{:.3},{:.3}", p.selfplay, p.train, p.gate));
        csv.push_str(&format!(
            "{},{},{},{},{},{},{},{},{:.1},{:.3},{phases}\n",
            l.generation,
            l.games,
            l.positions,
            l.policy_loss,
            l.value_loss,
            l.score,
            l.elo,
            l.accepted,
            l.seconds,
            l.cpu_seconds
        ));
    }
    write_file(&dir.join("log.csv"), csv.as_bytes())?;
    write_plot(dir, logs)
}

/// `strength.svg`: cumulative Elo of promoted candidates (clamped, as an
/// all-won gate has an infinite estimate); `log.csv` holds the figures.
fn write_plot(dir: &Path, logs: &[GenerationLog]) -> Result<(), LoopError> {
    let mut total = 0.0;
    let mut points = vec![(0.0, 0.0)];
    for l in logs {
        if l.accepted {
            total += l.elo.clamp(-800.0, 800.0);
        }
        points.push((l.generation as f64, total));
    }
    let series = [("promoted nets", points)];
    let chart = super::plot::Chart {
        title: "Cumulative Elo of the promoted nets (gate matches)",
        x_label: "generation",
        y_label: "Elo over generation 0",
        series: &series,
    };
    write_file(&dir.join("strength.svg"), super::plot::line_chart(&chart, 640, 360).as_bytes())
}
