//! The command line: every `pantheon` command (USI, analysis, perft and
//! show, self-play, training, labels, matches, the loop, nets and
//! benchmarks), parsed with clap; `anyhow` only here.

use crate::notation::sfen::piece_str;
use crate::notation::{format_move, to_sfen};
use crate::rules::{Color, Game, Variant, perft};
use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Instant;

/// `print!` for the commands' output: a reader that has gone (`pantheon
/// data ... | head`) ends the process quietly, as it ends other Unix tools,
/// and any other failure to write is an error message, never a panic.
/// SIGPIPE stays ignored because `label` and `match` write to engines'
/// pipes, where a dead engine must be an error, not the end of the run.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::write_stdout(format_args!($($arg)*))
    };
}

/// `println!` for the commands' output, with [`out!`]'s handling of a
/// closed stdout.
macro_rules! outln {
    () => {
        $crate::cli::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

mod analysis;
mod bench;
mod matches;
mod net;
mod rl;
mod teacher;
mod train;

pub use analysis::show;
pub use bench::BenchCommand;
pub use net::NetCommand;

#[derive(Parser, Debug)]
#[command(name = "pantheon", version, about = "AlphaZero-style engine for Minishogi, Mansindam and Pandemonium")]
pub struct Cli {
    /// Without a command, Pantheon speaks USI on stdin/stdout.
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Speak USI on stdin/stdout (the default).
    Usi,
    /// Analyse a position in the terminal: a table of the best moves,
    /// refreshed while searching, then the best line.
    Analyse {
        #[command(flatten)]
        game: GameArgs,
        /// Seconds to search (default: 10 when --nodes is not given).
        #[arg(long, conflicts_with = "nodes")]
        time: Option<f64>,
        /// Playouts to search.
        #[arg(long)]
        nodes: Option<u64>,
        #[command(flatten)]
        engine: EngineArgs,
    },
    /// Count legal move sequences (perft) from a position.
    Perft {
        #[command(flatten)]
        game: GameArgs,
        /// Number of plies.
        #[arg(long)]
        depth: u32,
        /// First print "MOVE COUNT" for each legal move.
        #[arg(long)]
        divide: bool,
    },
    /// Print a position: board, hands, SFEN, side to move, check, result.
    Show {
        #[command(flatten)]
        game: GameArgs,
    },
    /// Play games against itself and write training records (one shard per
    /// game) into a directory. Several processes may write into the same
    /// directory at once.
    Selfplay(rl::SelfplayCommand),
    /// Write mate problems from random playouts as training samples (the
    /// mating line: the attacker's moves as policy targets, value +1 and
    /// -1), for `pantheon train` or a loop's data directory.
    Tsume(rl::TsumeCommand),
    /// What a directory of training records teaches: samples, results, and
    /// how the result goes with material (and with a net's value).
    Data(rl::DataCommand),
    /// Train a net on self-play records (burn autodiff, on the CPU or the
    /// GPU); resumes an interrupted run with the same --out from its
    /// checkpoint.
    Train(train::TrainCommand),
    /// Label positions with a teacher USI engine's scores and MultiPV
    /// lines: the teacher's own games, or the positions of existing records.
    Label(teacher::LabelArgs),
    /// Play two players against each other: paired games from the same
    /// random openings with colours swapped; prints the score and the Elo
    /// difference of A over B with a 95% interval.
    Match(matches::MatchCommand),
    /// The reinforcement-learning loop: generations of self-play, training,
    /// a gating match and promotion, in a run directory; rerun the same
    /// command to resume.
    Loop(rl::LoopCommand),
    /// Network files: make a freshly initialised net, describe a file.
    Net {
        #[command(subcommand)]
        what: NetCommand,
    },
    /// Measure speed (medians over several runs).
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
}

/// Engine settings shared by the commands that search (same meaning as
/// the USI options).
#[derive(Args, Debug, Clone)]
pub struct EngineArgs {
    /// Search threads.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
    /// Tree memory in MiB.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub hash: u64,
    /// Moves shown with their lines.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=500))]
    pub multipv: u64,
    /// Weight file, or `shipped` (the default: the variant's shipped net for
    /// the device, the large one on a GPU where there is one; `shipped-small`
    /// and `shipped-large` name one).
    #[arg(long, default_value = "shipped")]
    pub model: crate::nn::ModelSource,
    /// auto, gpu or cpu.
    #[arg(long, default_value = "auto")]
    pub device: crate::nn::DeviceChoice,
    /// Evaluator batch size.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub batch: u64,
    /// Longest mate looked for at each leaf of the tree, in plies (0: none).
    #[arg(long, default_value_t = crate::mcts::MATE_PLIES, value_parser = clap::value_parser!(u32).range(0..=9))]
    pub mate_plies: u32,
    /// Longest mate looked for at the root by a thread of its own, in plies (0: none).
    #[arg(long, default_value_t = crate::mcts::ENGINE_ROOT_MATE_PLIES, value_parser = clap::value_parser!(u32).range(0..=31))]
    pub root_mate_plies: u32,
    /// Softmax temperature of the net's priors (0.1 to 10; 1: the net's own).
    #[arg(long, default_value_t = crate::mcts::POLICY_TEMPERATURE, value_parser = parse_policy_temperature)]
    pub policy_temperature: f64,
    /// The PUCT exploration constant c_init (0.1 to 10; higher explores
    /// more moves before it settles on the best). Default: the variant's,
    /// 2.0 in minishogi, 1.25 in the 9x9 variants.
    #[arg(long, value_parser = parse_cpuct)]
    pub cpuct: Option<f64>,
}

/// How samples labelled by a teacher (`pantheon label`) are trained.
#[derive(Args, Debug, Clone)]
pub struct TeacherTargetArgs {
    /// Share of the teacher's value in a labelled sample's value target;
    /// the rest is the game result.
    #[arg(long, default_value_t = 0.7)]
    pub teacher_value_weight: f32,
    /// Scale of the teacher's score -> value curve, in centipawns
    /// (value = tanh(cp / (2 scale))); default: fitted on the teacher
    /// games' results in the data.
    #[arg(long)]
    pub teacher_scale: Option<f64>,
    /// Softmax temperature, in centipawns, of the policy target over the
    /// teacher's MultiPV moves; 0: its best move alone.
    #[arg(long, default_value_t = 100.0)]
    pub teacher_policy_temperature: f64,
}

impl TeacherTargetArgs {
    fn targets(&self) -> Result<crate::train::TeacherTargets> {
        anyhow::ensure!((0.0..=1.0).contains(&self.teacher_value_weight), "--teacher-value-weight must be 0 to 1");
        if let Some(s) = self.teacher_scale {
            anyhow::ensure!(s.is_finite() && s > 0.0, "--teacher-scale must be above 0");
        }
        anyhow::ensure!(
            self.teacher_policy_temperature.is_finite() && self.teacher_policy_temperature >= 0.0,
            "--teacher-policy-temperature must be 0 or more"
        );
        Ok(crate::train::TeacherTargets {
            value_weight: self.teacher_value_weight,
            scale: self.teacher_scale,
            policy_temperature: self.teacher_policy_temperature,
        })
    }
}

/// The auxiliary targets: the net's material head learns the material
/// balance a few plies later in the game, its reply head the opponent's
/// reply (the next position's policy target).
#[derive(Args, Debug, Clone)]
pub struct AuxArgs {
    /// Weight of the material head's loss (0: off; a net without the head
    /// gets a fresh one).
    #[arg(long, default_value_t = 0.0)]
    pub material_weight: f32,
    /// How many plies ahead the material balance is taken.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub material_plies: u64,
    /// Weight of the reply head's loss (0: off; a net without the head gets
    /// a fresh one). KataGo weights its opponent-policy target 0.15.
    #[arg(long, default_value_t = 0.0)]
    pub reply_weight: f32,
}

impl AuxArgs {
    fn material(&self) -> Result<crate::train::MaterialTarget> {
        let weight = aux_weight(self.material_weight, "--material-weight")?;
        Ok(crate::train::MaterialTarget { weight, plies: self.material_plies as usize })
    }

    fn reply_weight(&self) -> Result<f32> {
        aux_weight(self.reply_weight, "--reply-weight")
    }
}

fn aux_weight(weight: f32, flag: &str) -> Result<f32> {
    anyhow::ensure!(weight.is_finite() && (0.0..=100.0).contains(&weight), "{flag} must be between 0 and 100");
    Ok(weight)
}

/// A match flag's values for players A and B: one for both, or A,B.
fn per_player<T: Copy>(values: &[T], flag: &str) -> Result<[T; 2]> {
    match *values {
        [both] => Ok([both, both]),
        [a, b] => Ok([a, b]),
        _ => anyhow::bail!("{flag} takes one value or two (A,B)"),
    }
}

/// A number from 0.1 to 10; `what` names it in the error.
fn parse_tenth_to_ten(text: &str, what: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if (0.1..=10.0).contains(&v) => Ok(v),
        _ => Err(format!("'{text}' is not {what} from 0.1 to 10")),
    }
}

/// A prior temperature from 0.1 to 10.
fn parse_policy_temperature(text: &str) -> Result<f64, String> {
    parse_tenth_to_ten(text, "a temperature")
}

/// A PUCT exploration constant from 0.1 to 10.
fn parse_cpuct(text: &str) -> Result<f64, String> {
    parse_tenth_to_ten(text, "an exploration constant")
}

/// How tsume samples are made (`pantheon tsume`, `pantheon loop --tsume`).
#[derive(Args, Debug, Clone)]
pub struct TsumeArgs {
    /// Longest mate looked for, in plies (odd).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=9))]
    pub tsume_plies: u32,
    /// Mate search budget per position tried, in positions.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub tsume_budget: u64,
    /// Share of the mates in one kept (the commonest, and the easiest).
    #[arg(long, default_value_t = 0.25)]
    pub tsume_mate_in_one: f64,
}

impl TsumeArgs {
    fn config(
        &self,
        variant: Variant,
        samples: u64,
        (threads, seed): (u64, u64),
        out: std::path::PathBuf,
    ) -> Result<crate::selfplay::TsumeConfig> {
        anyhow::ensure!(self.tsume_plies % 2 == 1, "--tsume-plies must be odd (the attacker moves last)");
        anyhow::ensure!((0.0..=1.0).contains(&self.tsume_mate_in_one), "--tsume-mate-in-one must be between 0 and 1");
        Ok(crate::selfplay::TsumeConfig {
            variant,
            samples: samples as usize,
            max_plies: self.tsume_plies,
            budget: self.tsume_budget,
            mate_in_one_share: self.tsume_mate_in_one,
            threads: threads as usize,
            seed,
            out,
        })
    }
}

/// A position given as variant, start SFEN and moves played from it.
#[derive(Args, Debug)]
pub struct GameArgs {
    /// minishogi, mansindam, pandemonium or pandemonium2022.
    #[arg(long)]
    pub variant: Variant,
    /// Start position (default: the variant's start position).
    #[arg(long)]
    pub sfen: Option<String>,
    /// USI moves played from the start position.
    #[arg(long, num_args = 1.., allow_hyphen_values = false)]
    pub moves: Vec<String>,
}

impl GameArgs {
    /// The game after the start SFEN and the moves, or an error naming the
    /// bad SFEN or the first illegal move and why.
    pub fn game(&self) -> Result<Game> {
        let sfen = self.sfen.as_deref().unwrap_or("startpos");
        Ok(crate::notation::parse_game(self.variant, sfen, &self.moves)?)
    }
}

/// Runs the command line; errors go to stderr with exit code 1.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

pub fn run(cli: Cli) -> Result<()> {
    let Some(command) = cli.command else {
        return run_usi();
    };
    match command {
        Command::Usi => run_usi(),
        Command::Analyse { game, time, nodes, engine } => analysis::analyse(&game, time, nodes, &engine),
        Command::Perft { game, depth, divide } => analysis::run_perft(&game, depth, divide),
        Command::Show { game } => {
            out!("{}", show(&game.game()?));
            Ok(())
        }
        Command::Bench { what } => what.run(),
        Command::Net { what } => what.run(),
        Command::Loop(args) => args.run(),
        Command::Label(args) => args.run(),
        Command::Match(args) => args.run(),
        Command::Tsume(args) => args.run(),
        Command::Data(args) => args.run(),
        Command::Train(args) => args.run(),
        Command::Selfplay(args) => args.run(),
    }
}

/// Writes to stdout for [`out!`] and [`outln!`]: exits with success when
/// the reader has closed the pipe, with an error message on any other
/// failure.
fn write_stdout(args: std::fmt::Arguments) {
    use std::io::Write as _;
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to stdout: {e}");
        std::process::exit(1);
    }
}

/// A number of seconds for `--time-limit`: positive and finite.
fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1e9 => Ok(v),
        _ => Err(format!("'{s}' is not a positive number of seconds")),
    }
}

/// Writes a command's figures as JSON (`--json`).
fn write_json(path: &std::path::Path, value: &serde_json::Value) -> Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    crate::atomic_file::write(path, text.as_bytes()).with_context(|| format!("cannot write {}", path.display()))
}

fn run_usi() -> Result<()> {
    let stdin = std::io::stdin();
    crate::usi::run(stdin.lock(), crate::usi::Output::new(std::io::stdout()), Box::new(EngineNets));
    Ok(())
}

/// Where the USI engine's evaluators come from: the nets, through `nn`
/// (the two layers meet here, above both).
struct EngineNets;

impl crate::usi::Networks for EngineNets {
    fn load(
        &mut self,
        variant: Variant,
        model_file: &str,
        device: &str,
        precision: &str,
        batch: usize,
    ) -> Result<std::sync::Arc<dyn crate::mcts::Evaluator>, crate::nn::LoadError> {
        let choice: crate::nn::DeviceChoice = device.parse()?;
        let precision: crate::nn::Precision = precision.parse()?;
        let model = model_file.parse().unwrap_or_default();
        let mut net = crate::nn::NetEvaluator::load(variant, &model, choice, batch)?;
        net.set_precision(precision)?;
        Ok(std::sync::Arc::new(net))
    }
}
