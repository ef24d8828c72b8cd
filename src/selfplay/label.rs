//! Training samples labelled by a teacher: any USI engine searches each
//! position to a fixed depth or node count, and its MultiPV scores become
//! the sample's [`TeacherLabel`]. Two sources of positions:
//!
//! - the teacher's own games ([`LabelSource::Games`]): a few random plies,
//!   then moves drawn from the teacher's MultiPV lines by their scores for
//!   a while, then its best move; every position is labelled and the game
//!   result recorded (what [`fit_scale`] fits the score -> value curve on);
//! - positions from existing records ([`LabelSource::Records`]: self-play,
//!   matches), deduplicated, keeping their game results.
//!
//! Our rules are the arbiter: every teacher move is checked against the
//! legal moves of the game (history rules included); a line whose first
//! move our rules forbid is dropped and counted, and when no legal line is
//! left the teacher is asked again with `searchmoves`. Work is cut into
//! units (a game, or a chunk of positions) written as one shard each, so a
//! killed run resumes where it stopped: rerun the same command.

use super::record::{Sample, Shard, TeacherLabel, read_dir};
use crate::mcts::{Rng, Score};
use crate::notation::UsiMove;
use crate::rules::{Color, Game, Move, Position, Variant};
use crate::usi::client::{EngineError, EngineSpec, Thought, UsiEngine};
use parking_lot::Mutex;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Where the positions come from.
#[derive(Clone, Debug, PartialEq)]
pub enum LabelSource {
    /// This many games of the teacher against itself.
    Games(usize),
    /// Every distinct position of the shards in this directory.
    Records(PathBuf),
}

/// A labelling run.
#[derive(Clone, Debug)]
pub struct LabelConfig {
    pub variant: Variant,
    pub teacher: EngineSpec,
    /// Teacher processes run at once.
    pub jobs: usize,
    pub source: LabelSource,
    pub out: PathBuf,
    /// MultiPV lines asked for (the teacher's `MultiPV` option).
    pub multipv: usize,
    /// Random plies at the start of a teacher game: drawn from 0 to this.
    pub opening_plies: usize,
    /// Plies after the opening whose move is drawn from the MultiPV lines.
    pub sample_plies: usize,
    /// Softmax temperature of that draw, in centipawns.
    pub sample_temperature: f64,
    /// Only lines within this many centipawns of the best are drawn.
    pub sample_margin: i32,
    /// Games longer than this end as draws.
    pub max_plies: usize,
    pub seed: u64,
}

/// Progress, reported after each unit of work.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LabelReport {
    /// Units (games or chunks) in the run, and how many are done.
    pub units: usize,
    pub done: usize,
    /// Done before this process started (a resumed run).
    pub resumed: usize,
    /// Positions labelled by this process.
    pub positions: usize,
    /// Teacher lines whose first move our rules forbid (dropped).
    pub forbidden: usize,
    /// Positions where no line was legal and the teacher was asked again.
    pub reasked: usize,
    /// Teacher processes restarted after a crash or hang.
    pub restarts: usize,
    /// Units given up after [`MAX_RESTARTS`] failures of the teacher on
    /// them (no shard written: a rerun tries them again).
    pub skipped: usize,
    /// Results of the teacher's games: sente wins, gote wins, draws.
    pub results: [usize; 3],
    pub seconds: f64,
}

impl LabelReport {
    pub fn positions_per_second(&self) -> f64 {
        self.positions as f64 / self.seconds.max(1e-9)
    }
}

impl std::fmt::Display for LabelReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{} done ({} before), {} positions in {:.0} s ({:.1}/s), {} teacher lines forbidden by our rules, {} positions asked again, {} teacher restarts",
            self.done,
            self.units,
            self.resumed,
            self.positions,
            self.seconds,
            self.positions_per_second(),
            self.forbidden,
            self.reasked,
            self.restarts
        )?;
        if self.skipped > 0 {
            write!(f, ", {} units skipped (rerun the same command to try them again)", self.skipped)?;
        }
        if self.results.iter().sum::<usize>() > 0 {
            let [s, g, d] = self.results;
            write!(f, "; games: sente +{s}, gote +{g}, draws {d}")?;
        }
        Ok(())
    }
}

/// Why a labelling run failed.
#[derive(Debug, thiserror::Error)]
pub enum LabelError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Shard(#[from] super::record::ShardError),
    #[error("{0}")]
    Io(String),
    #[error("{0}")]
    Config(String),
}

/// Positions per unit when labelling records.
pub const CHUNK: usize = 256;
/// Failures of the teacher on one unit that make a job give the unit up.
/// A job that gives up two units in a row ends the run: the teacher
/// fails everywhere, not on one position.
pub const MAX_RESTARTS: usize = 5;

/// Runs the labelling; `progress` sees the report after every unit.
pub fn label(config: &LabelConfig, progress: &(dyn Fn(&LabelReport) + Sync)) -> Result<LabelReport, LabelError> {
    if config.multipv == 0 || config.jobs == 0 {
        return Err(LabelError::Config("multipv and jobs must be at least 1".into()));
    }
    std::fs::create_dir_all(&config.out)
        .map_err(|e| LabelError::Io(format!("cannot create {}: {e}", config.out.display())))?;
    let units = Units::new(config)?;
    let todo: Vec<usize> = (0..units.len()).filter(|&i| !config.out.join(units.file(i)).exists()).collect();
    let report = LabelReport {
        units: units.len(),
        done: units.len() - todo.len(),
        resumed: units.len() - todo.len(),
        ..LabelReport::default()
    };
    // The first teacher starts here, so a bad command fails at once.
    let first = start_teacher(config)?;
    check_settings(config, &units, &first.name)?;
    let first = Mutex::new(Some(first));
    let jobs = Jobs {
        config,
        units,
        todo,
        next: AtomicUsize::new(0),
        report: Mutex::new(report),
        failure: Mutex::new(None),
        started: Instant::now(),
        progress,
    };
    std::thread::scope(|scope| {
        for _ in 0..config.jobs.min(jobs.todo.len().max(1)) {
            scope.spawn(|| {
                // Taken in a statement of its own: a guard left in the
                // call's argument would hold the lock for the whole job
                // and keep every other job waiting until it ends.
                let teacher = first.lock().take();
                jobs.job(teacher)
            });
        }
    });
    if let Some(e) = jobs.failure.into_inner() {
        return Err(e);
    }
    let mut r = jobs.report.into_inner();
    r.seconds = jobs.started.elapsed().as_secs_f64();
    Ok(r)
}

/// What the labelling jobs share: the units still to do, the report and
/// the first failure, which stops every job.
struct Jobs<'a> {
    config: &'a LabelConfig,
    units: Units,
    todo: Vec<usize>,
    /// The next index into `todo`.
    next: AtomicUsize,
    report: Mutex<LabelReport>,
    failure: Mutex<Option<LabelError>>,
    started: Instant,
    progress: &'a (dyn Fn(&LabelReport) + Sync),
}

impl Jobs<'_> {
    /// One job: units from the shared list until none is left or a job
    /// has failed. A unit the teacher keeps failing on (a position that
    /// crashes or hangs it) is skipped, unless the job's unit before it
    /// was skipped too.
    fn job(&self, mut teacher: Option<UsiEngine>) {
        let mut skipped_last = false;
        while self.failure.lock().is_none() {
            let k = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(&unit) = self.todo.get(k) else { return };
            match self.unit(unit, &mut teacher) {
                Ok(()) => skipped_last = false,
                Err(LabelError::Engine(e)) if !skipped_last => {
                    skipped_last = true;
                    self.report.lock().skipped += 1;
                    eprintln!("warning: {} skipped after {MAX_RESTARTS} teacher failures: {e}", self.units.name(unit));
                }
                Err(e) => {
                    *self.failure.lock() = Some(e);
                    return;
                }
            }
        }
    }

    /// Labels one unit. A teacher that crashes or hangs is replaced by a
    /// fresh one that does the unit again, up to [`MAX_RESTARTS`] times.
    fn unit(&self, unit: usize, teacher: &mut Option<UsiEngine>) -> Result<(), LabelError> {
        let mut failures = 0;
        loop {
            let mut engine = match teacher.take() {
                Some(t) => t,
                None => start_teacher(self.config)?,
            };
            match self.units.run(self.config, unit, &mut engine) {
                Ok(done) => {
                    *teacher = Some(engine);
                    let mut r = self.report.lock();
                    r.done += 1;
                    r.positions += done.positions;
                    r.forbidden += done.forbidden;
                    r.reasked += done.reasked;
                    if let Some(winner) = done.result {
                        r.results[winner] += 1;
                    }
                    r.seconds = self.started.elapsed().as_secs_f64();
                    (self.progress)(&r);
                    return Ok(());
                }
                Err(LabelError::Engine(e)) => {
                    failures += 1;
                    self.report.lock().restarts += 1;
                    if failures >= MAX_RESTARTS {
                        return Err(LabelError::Engine(e));
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// Resuming goes by the shards' file names, so the settings that decide
/// what a unit holds are kept beside them (`label-settings-SEED` for
/// teacher games, `label-settings-chunks` for positions, with a digest of
/// the positions in chunk order): a rerun with other settings, another
/// teacher (by its `id name`), or positions that changed since, is refused
/// instead of mixing two runs.
fn check_settings(config: &LabelConfig, units: &Units, teacher: &str) -> Result<(), LabelError> {
    let t = &config.teacher;
    let mut text = format!(
        "variant={} teacher={teacher:?} teacher-option={:?} teacher-go={:?} multipv={}",
        config.variant.name(),
        t.options,
        t.go,
        config.multipv
    );
    let name = match units {
        Units::Games { seed, .. } => {
            text += &format!(
                " opening-plies={} sample-plies={} sample-temperature={} sample-margin={} max-plies={} seed={seed}",
                config.opening_plies,
                config.sample_plies,
                config.sample_temperature,
                config.sample_margin,
                config.max_plies
            );
            format!("label-settings-{seed:x}")
        }
        Units::Chunks(chunks) => {
            let mut digest = Rng::new(chunks.len() as u64).next_u64();
            for s in chunks.iter().flatten() {
                digest = Rng::new(digest ^ s.position.hash() ^ s.repetitions as u64).next_u64();
            }
            text += &format!(" positions={} digest={digest:016x}", chunks.iter().map(Vec::len).sum::<usize>());
            "label-settings-chunks".to_string()
        }
    };
    let text = text + "\n";
    let path = config.out.join(name);
    let io = |e: std::io::Error| LabelError::Io(format!("{}: {e}", path.display()));
    match crate::atomic_file::read_if_present(&path).map_err(io)? {
        Some(old) if old != text => Err(LabelError::Config(format!(
            "{} holds units of another labelling run ({}); label into another --out, or repeat that run's command",
            config.out.display(),
            old.trim()
        ))),
        Some(_) => Ok(()),
        None => crate::atomic_file::write(&path, text.as_bytes()).map_err(io),
    }
}

/// The names engines give the number of lines they report: `MultiPV` (most
/// USI engines) or `USI_MultiPV` (Fairy-Stockfish in USI mode).
const MULTIPV_OPTIONS: [&str; 2] = ["MultiPV", "USI_MultiPV"];

/// Starts a teacher with the variant and the number of lines set, unless
/// the user's options set them. A teacher that cannot report more than one
/// line when more are asked for is an error, not a silent single line.
fn start_teacher(config: &LabelConfig) -> Result<UsiEngine, LabelError> {
    let is_multipv = |name: &str| MULTIPV_OPTIONS.iter().any(|m| m.eq_ignore_ascii_case(name));
    let given = config.teacher.options.iter().any(|(name, _)| is_multipv(name));
    let mut defaults = vec![("USI_Variant", config.variant.name().to_string())];
    if !given {
        defaults.extend(MULTIPV_OPTIONS.iter().map(|&name| (name, config.multipv.to_string())));
    }
    let mut engine = UsiEngine::start(&config.teacher, &defaults)?;
    if config.multipv > 1 && !given && !MULTIPV_OPTIONS.iter().any(|m| engine.has_option(m)) {
        return Err(LabelError::Config(format!(
            "the teacher '{}' declares neither a MultiPV nor a USI_MultiPV option, so it reports one line a position; \
             run with --multipv 1 (the policy target is then its best move) or set its option with --teacher-option",
            engine.name
        )));
    }
    engine.new_game()?;
    Ok(engine)
}

/// What one unit of work gave.
struct UnitDone {
    positions: usize,
    forbidden: usize,
    reasked: usize,
    /// Index into `LabelReport::results` of a teacher game's result.
    result: Option<usize>,
}

/// The run's units of work.
enum Units {
    Games { count: usize, seed: u64 },
    Chunks(Vec<Vec<Sample>>),
}

impl Units {
    fn new(config: &LabelConfig) -> Result<Units, LabelError> {
        match &config.source {
            LabelSource::Games(n) => Ok(Units::Games { count: *n, seed: config.seed }),
            LabelSource::Records(dir) => {
                // In file-name order: a rerun cuts the same chunks.
                let (samples, warnings) = read_dir(dir, config.variant, usize::MAX)?;
                if let Some(w) = warnings.first() {
                    eprintln!("warning: {w} (and {} more)", warnings.len() - 1);
                }
                let samples = distinct_positions(samples);
                if samples.is_empty() {
                    return Err(LabelError::Config(format!("no {} positions in {}", config.variant, dir.display())));
                }
                Ok(Units::Chunks(samples.chunks(CHUNK).map(|c| c.to_vec()).collect()))
            }
        }
    }

    fn len(&self) -> usize {
        match self {
            Units::Games { count, .. } => *count,
            Units::Chunks(c) => c.len(),
        }
    }

    /// The shard file of unit `i` (its name holds the seed, so runs with
    /// other seeds can share a directory).
    fn file(&self, i: usize) -> String {
        format!("{}.{}", self.name(i), super::record::SHARD_EXTENSION)
    }

    fn name(&self, i: usize) -> String {
        match self {
            Units::Games { seed, .. } => format!("teacher-game-{seed:x}-{i:07}"),
            Units::Chunks(_) => format!("teacher-chunk-{i:07}"),
        }
    }

    fn run(&self, config: &LabelConfig, i: usize, teacher: &mut UsiEngine) -> Result<UnitDone, LabelError> {
        let (samples, done) = match self {
            Units::Games { .. } => teacher_game(config, i, teacher)?,
            Units::Chunks(chunks) => relabel(&chunks[i], teacher)?,
        };
        let shard = Shard { variant: config.variant, model_id: format!("teacher:{}", teacher.name), samples };
        shard.write(&config.out, &self.name(i))?;
        Ok(done)
    }
}

/// Each position once (same board, hands, side and repetition count), in
/// the order first seen; the first sample's result and policy are kept.
pub fn distinct_positions(samples: impl IntoIterator<Item = Sample>) -> Vec<Sample> {
    let mut seen = HashSet::new();
    samples.into_iter().filter(|s| seen.insert((s.position.hash(), s.repetitions))).collect()
}

/// The samples with each teacher-labelled position once: duplicates
/// (the same position and repetition count, e.g. the openings of many
/// teacher games) merge into the first, whose value becomes the mean of
/// their results. Samples without a teacher label pass unchanged.
pub fn merge_labelled(samples: Vec<Sample>) -> Vec<Sample> {
    let mut first: std::collections::HashMap<(u64, u8), (usize, f64, u32)> = std::collections::HashMap::new();
    let mut out: Vec<Sample> = Vec::with_capacity(samples.len());
    for s in samples {
        if s.teacher.is_none() {
            out.push(s);
            continue;
        }
        match first.entry((s.position.hash(), s.repetitions)) {
            std::collections::hash_map::Entry::Occupied(mut e) => {
                let (_, sum, n) = e.get_mut();
                *sum += s.value as f64;
                *n += 1;
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert((out.len(), s.value as f64, 1));
                out.push(s);
            }
        }
    }
    for (i, sum, n) in first.into_values() {
        out[i].value = (sum / n as f64) as f32;
    }
    out
}

/// The teacher's verdict on the game's position (which has legal moves),
/// with only lines whose first move our rules allow; asked again among
/// the legal moves when the teacher's lines were all forbidden. `None`
/// when even then no line is legal: the position gets no label rather
/// than a made-up one.
fn ask(
    teacher: &mut UsiEngine,
    game: &Game,
    forbidden: &mut usize,
    reasked: &mut usize,
) -> Result<Option<TeacherLabel>, LabelError> {
    let thought = teacher.think(game, &[])?;
    if let Some(label) = legal_lines(game, &thought, forbidden) {
        return Ok(Some(label));
    }
    *reasked += 1;
    let thought = teacher.think(game, &game.legal_moves())?;
    Ok(legal_lines(game, &thought, forbidden))
}

fn parse_legal(game: &Game, text: &str) -> Option<Move> {
    UsiMove::parse(text, game.position().variant().geometry()).ok()?.to_game_move(game).ok()
}

fn legal_lines(game: &Game, thought: &Thought, forbidden: &mut usize) -> Option<TeacherLabel> {
    let mut moves = Vec::new();
    for line in &thought.lines {
        match parse_legal(game, &line.pv[0]) {
            Some(mv) if !moves.iter().any(|&(m, _)| m == mv) => moves.push((mv, line.score)),
            Some(_) => {}
            None => *forbidden += 1,
        }
    }
    let score = moves.first()?.1;
    Some(TeacherLabel { score, moves })
}

/// A score on one centipawn scale, mates beyond every centipawn score.
pub fn score_cp(score: Score) -> f64 {
    match score {
        Score::Cp(cp) => cp as f64,
        Score::Mate(n) if n > 0 => 100_000.0 - n as f64,
        Score::Mate(n) => -100_000.0 - n as f64,
    }
}

/// The highest score among the label's lines. It need not be the first
/// line's: each rank keeps the teacher's last line, maybe of another depth,
/// so a softmax over the lines takes its exponents relative to this.
pub fn best_line_cp(label: &TeacherLabel) -> f64 {
    label.moves.iter().map(|&(_, s)| score_cp(s)).fold(f64::MIN, f64::max)
}

/// One teacher game, every position labelled; the value targets are the
/// result.
fn teacher_game(
    config: &LabelConfig,
    index: usize,
    teacher: &mut UsiEngine,
) -> Result<(Vec<Sample>, UnitDone), LabelError> {
    let mut rng = Rng::new(config.seed ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    teacher.new_game()?;
    let opening = rng.below(config.opening_plies + 1);
    let mut game = Game::new(Position::startpos(config.variant));
    let mut samples: Vec<(Sample, Color)> = Vec::new();
    let (mut forbidden, mut reasked) = (0, 0);
    let winner = loop {
        if let Some(o) = game.outcome() {
            break o.winner;
        }
        if game.moves().len() >= config.max_plies {
            break None;
        }
        // Not over, so the position has legal moves.
        let label = ask(teacher, &game, &mut forbidden, &mut reasked)?;
        let ply = game.moves().len();
        let mv = match &label {
            Some(label) if ply >= opening && ply < opening + config.sample_plies => draw(label, config, &mut rng),
            Some(label) if ply >= opening => label.moves[0].0,
            // The random opening, or a position the teacher gave no legal
            // line for.
            _ => {
                let legal = game.legal_moves();
                legal[rng.below(legal.len())]
            }
        };
        let side = game.position().side_to_move();
        let sample = Sample {
            position: game.position().clone(),
            repetitions: game.repetitions(),
            value: 0.0,
            full_search: false,
            policy: Vec::new(),
            teacher: label,
            search: None,
        };
        samples.push((sample, side));
        game.play(mv);
    };
    let positions = samples.len();
    let samples = samples
        .into_iter()
        .map(|(mut s, side)| {
            s.value = match winner {
                Some(w) if w == side => 1.0,
                Some(_) => -1.0,
                None => 0.0,
            };
            s
        })
        .collect();
    let result = Some(match winner {
        Some(Color::Sente) => 0,
        Some(Color::Gote) => 1,
        None => 2,
    });
    Ok((samples, UnitDone { positions, forbidden, reasked, result }))
}

/// A move drawn from the lines within the margin, by softmax of their
/// scores.
fn draw(label: &TeacherLabel, config: &LabelConfig, rng: &mut Rng) -> Move {
    let best = best_line_cp(label).max(score_cp(label.score));
    let t = config.sample_temperature.max(1e-6);
    let weights: Vec<f64> = label
        .moves
        .iter()
        .map(|&(_, s)| {
            let d = score_cp(s) - best;
            if d < -(config.sample_margin as f64) { 0.0 } else { (d / t).exp() }
        })
        .collect();
    let total: f64 = weights.iter().sum();
    let mut x = rng.uniform() * total;
    for (i, w) in weights.iter().enumerate() {
        x -= w;
        if x < 0.0 {
            return label.moves[i].0;
        }
    }
    label.moves[0].0
}

/// Labels a chunk of existing samples (the position alone is sent: the
/// teacher does not see the game's history).
fn relabel(chunk: &[Sample], teacher: &mut UsiEngine) -> Result<(Vec<Sample>, UnitDone), LabelError> {
    let (mut forbidden, mut reasked) = (0, 0);
    let mut out = Vec::with_capacity(chunk.len());
    for s in chunk {
        let game = Game::new(s.position.clone());
        // A position without legal moves (a finished game) has nothing to ask.
        let label =
            if game.legal_moves().is_empty() { None } else { ask(teacher, &game, &mut forbidden, &mut reasked)? };
        out.push(Sample { teacher: label, ..s.clone() });
    }
    let positions = out.len();
    Ok((out, UnitDone { positions, forbidden, reasked, result: None }))
}

/// The score -> value curve: the teacher's win share of a score of `cp`
/// centipawns is `1 / (1 + exp(-cp / scale))`, so the value target (in
/// [-1, 1]) is `tanh(cp / (2 scale))`; mates are +-1.
pub fn teacher_value(score: Score, scale: f64) -> f32 {
    match score {
        Score::Cp(cp) => (cp as f64 / (2.0 * scale)).tanh() as f32,
        Score::Mate(n) if n > 0 => 1.0,
        Score::Mate(_) => -1.0,
    }
}

/// Fits the curve's scale to game results: the scale that maximises the
/// likelihood of the results (a draw counts as half a win) of the samples
/// that have a teacher label and a finished game, over centipawn scores
/// only. A golden-section search on log(scale) from 10 to 100,000
/// centipawns. `None` without usable samples.
pub fn fit_scale<'a>(samples: impl IntoIterator<Item = &'a Sample>) -> Option<(f64, usize)> {
    let points: Vec<(f64, f64)> = samples
        .into_iter()
        .filter_map(|s| match s.teacher.as_ref()?.score {
            Score::Cp(cp) => Some((cp as f64, (s.value as f64 + 1.0) / 2.0)),
            Score::Mate(_) => None,
        })
        .collect();
    if points.is_empty() || points.iter().all(|p| p.0 == 0.0) {
        return None;
    }
    let nll = |log_scale: f64| {
        let scale = log_scale.exp();
        points
            .iter()
            .map(|&(cp, y)| {
                let p = (1.0 / (1.0 + (-cp / scale).exp())).clamp(1e-9, 1.0 - 1e-9);
                -(y * p.ln() + (1.0 - y) * (1.0 - p).ln())
            })
            .sum::<f64>()
    };
    let (mut lo, mut hi) = (10f64.ln(), 100_000f64.ln());
    let phi = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..100 {
        let a = hi - phi * (hi - lo);
        let b = lo + phi * (hi - lo);
        if nll(a) < nll(b) {
            hi = b;
        } else {
            lo = a;
        }
    }
    Some((((lo + hi) / 2.0).exp(), points.len()))
}
