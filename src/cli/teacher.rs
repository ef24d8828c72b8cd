//! `pantheon label`: training samples labelled by a teacher USI engine, and
//! the flags that describe an external engine.

use crate::rules::Variant;
use crate::selfplay::label::{LabelConfig, LabelReport, LabelSource, label};
use crate::usi::client::{EngineSpec, UsiEngine};
use anyhow::{Context, Result};
use clap::Args;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

/// Splits a command line on whitespace, keeping text in double quotes
/// together (`"/opt/my engine/fsf" --flag`).
pub fn split_command(text: &str) -> Result<Vec<String>> {
    let (mut words, mut word, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
    for c in text.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    anyhow::ensure!(!quoted, "unbalanced quote in engine command '{text}'");
    if any {
        words.push(word);
    }
    anyhow::ensure!(!words.is_empty(), "the engine command is empty");
    Ok(words)
}

/// An engine spec from the command text, `NAME=VALUE` options, `go`
/// limits and a timeout in seconds.
pub fn engine_spec(command: &str, options: &[String], go: &str, timeout: f64) -> Result<EngineSpec> {
    anyhow::ensure!(
        timeout.is_finite() && timeout > 0.0 && timeout <= 86_400.0,
        "the engine timeout must be above 0 and at most 86400 s"
    );
    let options = options.iter().map(|o| EngineSpec::parse_option(o)).collect::<Result<Vec<_>, _>>()?;
    EngineSpec::check_go(go)?;
    Ok(EngineSpec {
        command: split_command(command)?,
        options,
        go: go.to_string(),
        timeout: Duration::from_secs_f64(timeout),
    })
}

/// `pantheon label`.
#[derive(Args, Debug)]
pub struct LabelArgs {
    #[arg(long)]
    pub variant: Variant,
    /// The teacher's command line (program and arguments).
    #[arg(long)]
    pub teacher: String,
    /// A teacher option as NAME=VALUE (repeatable), e.g.
    /// VariantPath=/path/variants.ini, Threads=1, Hash=64. USI_Variant and
    /// MultiPV are set from --variant and --multipv unless given here.
    #[arg(long = "teacher-option")]
    pub teacher_options: Vec<String>,
    /// The teacher's search per position, as `go` arguments.
    #[arg(long, default_value = "depth 8")]
    pub teacher_go: String,
    /// Seconds the teacher may take for one answer before it counts as hung.
    #[arg(long, default_value_t = 120.0)]
    pub teacher_timeout: f64,
    /// Teacher processes at once.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub jobs: u64,
    /// Play this many teacher games (each position labelled).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000_000), required_unless_present = "positions")]
    pub games: Option<u64>,
    /// Or label every distinct position of the shards in this directory
    /// (self-play, matches), keeping their game results.
    #[arg(long, conflicts_with = "games")]
    pub positions: Option<PathBuf>,
    /// Output directory (one shard per game or per chunk of positions);
    /// rerun the same command to resume.
    #[arg(long)]
    pub out: PathBuf,
    /// MultiPV lines per position (the soft policy target).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub multipv: u64,
    /// Random plies at the start of a teacher game: 0 to this many.
    #[arg(long, default_value_t = 6)]
    pub opening_plies: usize,
    /// Plies after the opening whose move is drawn from the MultiPV lines.
    #[arg(long, default_value_t = 20)]
    pub sample_plies: usize,
    /// Temperature of that draw, in centipawns.
    #[arg(long, default_value_t = 60.0)]
    pub sample_temperature: f64,
    /// Only lines within this many centipawns of the best are drawn.
    #[arg(long, default_value_t = 150)]
    pub sample_margin: i32,
    #[arg(long, default_value_t = 400)]
    pub max_plies: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl LabelArgs {
    pub fn run(self) -> Result<()> {
        anyhow::ensure!(
            self.sample_temperature.is_finite() && self.sample_temperature > 0.0,
            "--sample-temperature must be above 0"
        );
        anyhow::ensure!(self.sample_margin >= 0, "--sample-margin must be 0 or more");
        anyhow::ensure!(self.max_plies >= 1, "--max-plies must be at least 1");
        anyhow::ensure!(
            self.opening_plies <= self.max_plies && self.sample_plies <= self.max_plies,
            "--opening-plies and --sample-plies must be at most --max-plies ({})",
            self.max_plies
        );
        anyhow::ensure!(self.max_plies <= 100_000, "--max-plies must be at most 100000");
        let teacher = engine_spec(&self.teacher, &self.teacher_options, &self.teacher_go, self.teacher_timeout)?;
        let source = match (self.games, &self.positions) {
            (Some(n), _) => LabelSource::Games(n as usize),
            (None, Some(dir)) => LabelSource::Records(dir.clone()),
            (None, None) => anyhow::bail!("give --games or --positions"),
        };
        let config = LabelConfig {
            variant: self.variant,
            teacher,
            jobs: self.jobs as usize,
            source,
            out: self.out.clone(),
            multipv: self.multipv as usize,
            opening_plies: self.opening_plies,
            sample_plies: self.sample_plies,
            sample_temperature: self.sample_temperature,
            sample_margin: self.sample_margin,
            max_plies: self.max_plies,
            seed: self.seed,
        };
        let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
        let last = parking_lot::Mutex::new(std::time::Instant::now() - Duration::from_secs(60));
        let progress = |r: &LabelReport| {
            let mut last = last.lock();
            let now = std::time::Instant::now();
            if now.duration_since(*last) < Duration::from_secs(if tty { 1 } else { 30 }) && r.done < r.units {
                return;
            }
            *last = now;
            let line = progress_line(r);
            let mut err = std::io::stderr().lock();
            let _ = if tty { write!(err, "\r{line}\x1b[K") } else { writeln!(err, "{line}") };
        };
        let report = label(&config, &progress).context("labelling failed")?;
        if tty {
            eprintln!();
        }
        outln!("{report}");
        let (shards, _) = crate::selfplay::read_shards(&self.out, self.variant, usize::MAX)?;
        let samples: Vec<_> = shards.iter().flat_map(|s| &s.samples).collect();
        if let LabelSource::Games(_) = config.source {
            match crate::selfplay::label::fit_scale(samples.iter().copied()) {
                Some((scale, n)) => outln!(
                    "score -> value scale fitted on {n} positions of the teacher's games in {}: {scale:.0} cp (value = tanh(cp / {:.0}))",
                    self.out.display(),
                    2.0 * scale
                ),
                None => outln!("no centipawn scores with results to fit the score -> value scale on"),
            }
        }
        // The shards written are kept, but the run is not complete.
        anyhow::ensure!(
            report.skipped == 0,
            "{} units skipped after {} teacher failures each; rerun the same command to try them again",
            report.skipped,
            crate::selfplay::label::MAX_RESTARTS
        );
        Ok(())
    }
}

/// `[#####-----] 12/100 units, 840 positions, 35.2 positions/s, ETA 41 min`.
fn progress_line(r: &LabelReport) -> String {
    let width = 24;
    let filled = (r.done * width).checked_div(r.units).unwrap_or(width);
    let bar: String = (0..width).map(|i| if i < filled { '#' } else { '-' }).collect();
    let fresh = r.done - r.resumed;
    let eta = if fresh > 0 {
        let s = r.seconds / fresh as f64 * (r.units - r.done) as f64;
        format!(", ETA {:.0} min", s / 60.0)
    } else {
        String::new()
    };
    format!(
        "[{bar}] {}/{} units, {} positions, {:.1} positions/s, {} forbidden lines{eta}",
        r.done,
        r.units,
        r.positions,
        r.positions_per_second(),
        r.forbidden
    )
}

/// Starts an engine once and stops it, so a bad command fails before a
/// match begins.
pub fn check_engine(spec: &EngineSpec, variant: Variant) -> Result<String> {
    let engine = UsiEngine::start(spec, &[("USI_Variant", variant.name().to_string())])?;
    Ok(engine.name.clone())
}
