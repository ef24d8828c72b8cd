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

mod bench;
mod teacher;

pub use bench::BenchCommand;

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
    Selfplay {
        #[arg(long)]
        variant: Variant,
        /// Weight file, or `shipped` (the default: the variant's shipped net).
        #[arg(long, default_value = "shipped")]
        model: crate::nn::ModelSource,
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
        games: u64,
        #[arg(long)]
        out: std::path::PathBuf,
        /// Games played at once; their leaves share network batches.
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=4096))]
        parallel: u64,
        /// Playouts of a full search (policy target).
        #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
        visits: u64,
        /// Playouts of a fast search (no policy target).
        #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
        fast_visits: u64,
        /// Share of moves searched fully (playout-cap randomisation).
        #[arg(long, default_value_t = 0.25)]
        full_share: f64,
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
        /// auto, gpu or cpu.
        #[arg(long, default_value = "auto")]
        device: crate::nn::DeviceChoice,
        /// Network batch size.
        #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=4096))]
        batch: u64,
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
    },
    /// Write mate problems from random playouts as training samples (the
    /// mating line: the attacker's moves as policy targets, value +1 and
    /// -1), for `pantheon train` or a loop's data directory.
    Tsume {
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
    },
    /// What a directory of training records teaches: samples, results, and
    /// how the result goes with material (and with a net's value).
    Data {
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
    },
    /// Train a net on self-play records (burn autodiff, on the CPU or the
    /// GPU); resumes an interrupted run with the same --out from its
    /// checkpoint.
    Train {
        #[arg(long)]
        variant: Variant,
        /// Directory of shards: self-play, tsume, teacher labels
        /// (repeatable; each gives at most --window samples).
        #[arg(long, required = true)]
        data: Vec<std::path::PathBuf>,
        #[command(flatten)]
        teacher: TeacherTargetArgs,
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
    },
    /// Label positions with a teacher USI engine's scores and MultiPV
    /// lines: the teacher's own games, or the positions of existing records.
    Label(teacher::LabelArgs),
    /// Play two players against each other: paired games from the same
    /// random openings with colours swapped; prints the score and the Elo
    /// difference of A over B with a 95% interval.
    Match {
        #[arg(long)]
        variant: Variant,
        /// Player A: a weight file, `shipped`, `uniform` (search without a
        /// net), `random` (random legal moves), `greedy` (material-greedy
        /// 1-ply) or `usi:COMMAND` (an external USI engine, e.g.
        /// `usi:/opt/fsf/fairy-stockfish`).
        #[arg(long)]
        a: String,
        /// Player B, the same choices.
        #[arg(long)]
        b: String,
        /// An option of engine A as NAME=VALUE (repeatable).
        #[arg(long = "a-option")]
        a_options: Vec<String>,
        /// An option of engine B as NAME=VALUE (repeatable).
        #[arg(long = "b-option")]
        b_options: Vec<String>,
        /// Engine A's `go` limits, e.g. `nodes 1000` or `movetime 1000`.
        #[arg(long, default_value = "movetime 1000")]
        a_go: String,
        /// Engine B's `go` limits.
        #[arg(long, default_value = "movetime 1000")]
        b_go: String,
        /// Seconds an external engine may take for one answer beyond its
        /// own time limit before it counts as hung (and loses).
        #[arg(long, default_value_t = 30.0)]
        engine_timeout: f64,
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
        games: u64,
        /// Playouts per move of searching players.
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
        nodes: u64,
        /// Milliseconds per move of searching players (instead of --nodes).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
        movetime: Option<u64>,
        /// Search threads of searching players.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
        threads: u64,
        /// Random plies before the players take over.
        #[arg(long, default_value_t = 4)]
        opening_plies: usize,
        /// Games longer than this count as draws.
        #[arg(long, default_value_t = 300)]
        max_plies: usize,
        #[arg(long, default_value = "auto")]
        device: crate::nn::DeviceChoice,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Leaf mate search of searching players in plies: one value for
        /// both, or A,B.
        #[arg(long, value_delimiter = ',', default_values_t = [crate::mcts::MATE_PLIES])]
        mate_plies: Vec<u32>,
        /// Softmax temperature of searching players' priors (0.1 to 10):
        /// one value for both, or A,B.
        #[arg(long, value_delimiter = ',', default_values_t = [crate::mcts::POLICY_TEMPERATURE],
              value_parser = parse_policy_temperature)]
        policy_temperature: Vec<f64>,
        /// Write each game to this file as it ends: a comment line with the
        /// players and the result, then a USI `position ... moves ...` line.
        #[arg(long)]
        record: Option<std::path::PathBuf>,
        /// Also write each game's positions (after the random opening) as a
        /// shard of value-only samples into this directory, to label with
        /// `pantheon label --positions`.
        #[arg(long)]
        record_shards: Option<std::path::PathBuf>,
    },
    /// The reinforcement-learning loop: generations of self-play, training,
    /// a gating match and promotion, in a run directory; rerun the same
    /// command to resume.
    Loop {
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
        #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
        games: u64,
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=4096))]
        parallel: u64,
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
        visits: u64,
        #[arg(long, default_value_t = 25, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
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
        #[arg(long, default_value_t = 400)]
        max_plies: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Share of games with the material-greedy 1-ply player on one side
        /// instead of the net (it takes every hung piece; its positions
        /// train the value only).
        #[arg(long, default_value_t = 0.0)]
        greedy_share: f64,
        /// Directories of fixed training data read beside the run's own
        /// records every generation, e.g. teacher labels (repeatable).
        #[arg(long)]
        extra_data: Vec<std::path::PathBuf>,
        #[command(flatten)]
        teacher: TeacherTargetArgs,
        /// Tsume samples (mates from random playouts, see `pantheon tsume`)
        /// added to the data each generation (0: none).
        #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(0..=100_000_000))]
        tsume: u64,
        #[command(flatten)]
        tsume_mates: TsumeArgs,
        /// Where self-play, the gate matches and training run: auto (a
        /// real GPU if there is one, else the CPU), gpu or cpu.
        #[arg(long, default_value = "auto")]
        device: crate::nn::DeviceChoice,
    },
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

#[derive(Subcommand, Debug)]
pub enum NetCommand {
    /// Write a randomly initialised net (the starting point of training).
    Init {
        #[arg(long)]
        variant: Variant,
        /// Residual blocks.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(0..=64))]
        blocks: u64,
        /// Trunk channels.
        #[arg(long, default_value_t = 48, value_parser = clap::value_parser!(u64).range(1..=1024))]
        channels: u64,
        /// Seed of the random weights.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Input features: base (pieces, hands, repetitions, side) or
        /// attacks (base plus attacker counts per square for both sides).
        #[arg(long, default_value_t = crate::nn::Features::Base)]
        features: crate::nn::Features,
        #[arg(long)]
        out: std::path::PathBuf,
    },
    /// Print a weight file's variant, size and encoding.
    Info { path: std::path::PathBuf },
    /// Make a base-feature net read the attack planes too: their weights
    /// start at zero, so it plays as before until trained further.
    AddAttackPlanes {
        #[arg(long = "in")]
        input: std::path::PathBuf,
        #[arg(long)]
        out: std::path::PathBuf,
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
    /// Weight file, or `shipped` (the default: the variant's shipped net).
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

/// A match flag's values for players A and B: one for both, or A,B.
fn per_player<T: Copy>(values: &[T], flag: &str) -> Result<[T; 2]> {
    match *values {
        [both] => Ok([both, both]),
        [a, b] => Ok([a, b]),
        _ => anyhow::bail!("{flag} takes one value or two (A,B)"),
    }
}

/// A prior temperature from 0.1 to 10.
fn parse_policy_temperature(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(t) if (0.1..=10.0).contains(&t) => Ok(t),
        _ => Err(format!("'{text}' is not a temperature from 0.1 to 10")),
    }
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
        Command::Analyse { game, time, nodes, engine } => analyse(&game, time, nodes, &engine),
        Command::Perft { game, depth, divide } => run_perft(&game, depth, divide),
        Command::Show { game } => {
            print!("{}", show(&game.game()?));
            Ok(())
        }
        Command::Bench { what } => what.run(),
        Command::Net { what: NetCommand::Init { variant, blocks, channels, seed, features, out } } => {
            net_init(variant, (blocks as usize, channels as usize), features, seed, &out)
        }
        Command::Net { what: NetCommand::Info { path } } => net_info(&path),
        Command::Net { what: NetCommand::AddAttackPlanes { input, out } } => net_add_attack_planes(&input, &out),
        Command::Loop {
            variant,
            dir,
            generations,
            from,
            games,
            parallel,
            visits,
            fast_visits,
            steps,
            batch,
            lr,
            window,
            gate_games,
            gate_nodes,
            gate_score,
            max_plies,
            seed,
            greedy_share,
            extra_data,
            teacher,
            tsume,
            tsume_mates,
            device,
        } => {
            for (name, v) in [("--gate-score", gate_score), ("--greedy-share", greedy_share)] {
                anyhow::ensure!((0.0..=1.0).contains(&v), "{name} must be between 0 and 1");
            }
            anyhow::ensure!(lr.is_finite() && lr > 0.0 && lr < 10.0, "--lr must be a small positive number");
            let selfplay = crate::selfplay::SelfPlayConfig {
                variant,
                games: games as usize,
                parallel: parallel as usize,
                visits,
                fast_visits,
                full_share: 0.25,
                temperature_plies: 12,
                resign_value: 0.95,
                no_resign_share: 0.1,
                max_plies: max_plies.max(1),
                greedy_share,
                leaves_per_game: 8,
                seed,
                out: dir.join("data"),
                model_id: String::new(),
                deadline: None,
            };
            let train = crate::train::TrainConfig {
                variant,
                data: extra_data,
                teacher: teacher.targets()?,
                from: None,
                out: dir.join("nets/candidate.pnet"),
                steps: steps as usize,
                batch_size: batch as usize,
                learning_rate: lr,
                weight_decay: 1e-4,
                window: window as usize,
                checkpoint_every: 100,
                seed,
                device,
                deadline: None,
            };
            let gate = crate::selfplay::MatchConfig {
                variant,
                games: gate_games as usize,
                limit: crate::selfplay::MoveLimit::Nodes(gate_nodes),
                threads: 1,
                opening_plies: 4,
                max_plies: max_plies.max(1),
                mate_plies: [crate::mcts::MATE_PLIES; 2],
                // As in self-play: the net's own priors.
                policy_temperature: [1.0; 2],
                seed,
            };
            let tsume = tsume_mates.config(variant, tsume, (cores() as u64, seed), dir.join("data"))?;
            let config = crate::train::LoopConfig {
                variant,
                dir,
                generations: generations as usize,
                from,
                selfplay,
                train,
                gate,
                gate_score,
                tsume,
            };
            crate::train::generations::run(&config, &mut |line| println!("{line}"))?;
            Ok(())
        }
        Command::Label(args) => args.run(),
        Command::Match {
            variant,
            a,
            b,
            a_options,
            b_options,
            a_go,
            b_go,
            engine_timeout,
            games,
            nodes,
            movetime,
            threads,
            opening_plies,
            max_plies,
            device,
            seed,
            mate_plies,
            policy_temperature,
            record,
            record_shards,
        } => {
            let mate_plies = per_player(&mate_plies, "--mate-plies")?;
            let policy_temperature = per_player(&policy_temperature, "--policy-temperature")?;
            anyhow::ensure!(mate_plies.iter().all(|&p| p <= 9), "--mate-plies must be 0 to 9");
            use crate::selfplay::Player;
            let choice = device;
            let player = |spec: &str, options: &[String], go: &str| -> Result<Player> {
                if let Some(command) = spec.strip_prefix("usi:") {
                    let engine = teacher::engine_spec(command, options, go, engine_timeout)?;
                    let name = teacher::check_engine(&engine, variant)?;
                    eprintln!("engine '{command}' is {name}; go {go}");
                    return Ok(Player::Usi(engine));
                }
                anyhow::ensure!(options.is_empty(), "engine options are only for usi: players");
                let net = |path: &str| -> Result<Player> {
                    let model: crate::nn::ModelSource = path.parse()?;
                    let e = crate::nn::NetEvaluator::load(variant, &model, choice, 8)?;
                    Ok(Player::Search(std::sync::Arc::new(e)))
                };
                match spec {
                    "uniform" => Ok(Player::Search(std::sync::Arc::new(crate::mcts::UniformEvaluator))),
                    "random" => Ok(Player::Random),
                    "greedy" => Ok(Player::Greedy),
                    "shipped" => net(""),
                    path => net(path),
                }
            };
            let (pa, pb) = (player(&a, &a_options, &a_go)?, player(&b, &b_options, &b_go)?);
            let limit = match movetime {
                Some(ms) => crate::selfplay::MoveLimit::Time(std::time::Duration::from_millis(ms)),
                None => crate::selfplay::MoveLimit::Nodes(nodes),
            };
            let config = crate::selfplay::MatchConfig {
                variant,
                games: games as usize,
                limit,
                threads: threads as usize,
                opening_plies,
                max_plies: max_plies.max(1),
                mate_plies,
                policy_temperature,
                seed,
            };
            let mut record = match &record {
                Some(path) => Some((
                    std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?,
                    path,
                )),
                None => None,
            };
            if let Some(dir) = &record_shards {
                std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            }
            let mut write_error = None;
            let result = crate::selfplay::play_match(&config, pa, pb, &mut |g| {
                let plies = g.game.moves().len();
                let summary = format!("A ({}) scores {}: {}, {plies} plies", g.a_color, g.score, g.ending);
                println!("game {}: {summary}", g.index + 1);
                if let Some(dir) = &record_shards
                    && write_error.is_none()
                {
                    let samples = g.samples(opening_plies);
                    let shard = crate::selfplay::Shard { variant, model_id: format!("match:{a}:{b}"), samples };
                    if let Err(e) = shard.write(dir, &format!("match-{seed:x}-{:06}", g.index)) {
                        write_error = Some(e.to_string());
                    }
                }
                if let Some((file, path)) = &mut record
                    && write_error.is_none()
                {
                    use std::io::Write as _;
                    let mut line = format!("position sfen {}", to_sfen(g.game.start()));
                    if plies > 0 {
                        line.push_str(" moves");
                        for &mv in g.game.moves() {
                            line.push(' ');
                            line.push_str(&format_move(variant, mv));
                        }
                    }
                    let text = format!("# game {}: A = {a}, B = {b}; {summary}\n{line}\n", g.index + 1);
                    if let Err(e) = file.write_all(text.as_bytes()).and_then(|_| file.flush()) {
                        write_error = Some(format!("cannot write {}: {e}", path.display()));
                    }
                }
            });
            println!("{a} vs {b}: {result}");
            for (i, name) in [(0, &a), (1, &b)] {
                if let Some((median, p99, max)) = crate::selfplay::think_summary(&result.think_ms[i]) {
                    println!(
                        "{name}: {} moves, time per move median {median} ms, 99th percentile {p99} ms, max {max} ms; {} games lost on time",
                        result.think_ms[i].len(),
                        result.time_losses[i]
                    );
                }
            }
            match write_error {
                Some(e) => Err(anyhow::anyhow!(e)),
                None => Ok(()),
            }
        }
        Command::Tsume { variant, out, samples, mates, threads, seed } => {
            let config = mates.config(variant, samples, (threads, seed), out)?;
            let started = Instant::now();
            let report = crate::selfplay::tsume::write_samples(&config)?;
            println!("{report} in {:.1} s", started.elapsed().as_secs_f64());
            for path in &report.shards {
                println!("wrote {}", path.display());
            }
            Ok(())
        }
        Command::Data { variant, dir, samples, model, device } => {
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
            print!("{}", crate::selfplay::data_stats(&shards, evaluator));
            Ok(())
        }
        Command::Train {
            variant,
            data,
            teacher,
            from,
            out,
            steps,
            batch,
            lr,
            weight_decay,
            window,
            checkpoint_every,
            seed,
            device,
            time_limit,
            json,
        } => {
            anyhow::ensure!(lr.is_finite() && lr > 0.0 && lr < 10.0, "--lr must be a small positive number");
            anyhow::ensure!(weight_decay.is_finite() && weight_decay >= 0.0, "--weight-decay must be 0 or more");
            let config = crate::train::TrainConfig {
                variant,
                data,
                teacher: teacher.targets()?,
                from,
                out,
                steps: steps as usize,
                batch_size: batch as usize,
                learning_rate: lr,
                weight_decay,
                window: window as usize,
                checkpoint_every: checkpoint_every as usize,
                seed,
                device,
                deadline: time_limit.map(|s| Instant::now() + std::time::Duration::from_secs_f64(s)),
            };
            let started = Instant::now();
            let every = (config.steps / 50).max(1);
            let report = crate::train::train(&config, &mut |l| {
                if l.step % every == 0 || l.step == config.steps {
                    let pct = 100.0 * l.step as f64 / config.steps as f64;
                    let filled = (pct / 5.0) as usize;
                    let bar = format!("{}{}", "#".repeat(filled), ".".repeat(20 - filled.min(20)));
                    println!(
                        "[{bar}] step {:>7}/{} ({pct:5.1}%)  policy loss {:.4}  value loss {:.4}  {:.1} s",
                        l.step,
                        config.steps,
                        l.policy,
                        l.value,
                        started.elapsed().as_secs_f64()
                    );
                }
            })?;
            for w in &report.warnings {
                eprintln!("warning: {w}");
            }
            if let Some(step) = report.resumed_from {
                println!("resumed from the checkpoint at step {step}");
            }
            if let Some(scale) = report.teacher_scale {
                println!(
                    "{} samples carry teacher labels; score -> value scale {scale:.0} cp{}",
                    report.teacher_samples,
                    if config.teacher.scale.is_some() { "" } else { " (fitted on the data)" }
                );
            }
            let secs = started.elapsed().as_secs_f64();
            let steps_done = report.losses.len() - report.resumed_from.unwrap_or(0);
            if report.stopped_early {
                let done = report.losses.last().map_or(0, |l| l.step);
                println!(
                    "stopped at the time limit after step {done} of {}; the checkpoint keeps it, rerun to carry on",
                    config.steps
                );
            } else {
                println!("trained on {} samples; wrote {}", report.samples, config.out.display());
            }
            println!(
                "{steps_done} steps in {secs:.1} s: {:.2} steps/s, {:.0} samples/s",
                steps_done as f64 / secs,
                (steps_done * config.batch_size) as f64 / secs
            );
            if let Some(path) = json {
                let last = report.losses.last();
                let figures = serde_json::json!({
                    "variant": variant.name(), "device": device.to_string(), "samples": report.samples,
                    "steps": steps_done, "batch": config.batch_size, "seconds": secs,
                    "steps_per_s": steps_done as f64 / secs, "samples_per_s": (steps_done * config.batch_size) as f64 / secs,
                    "policy_loss": last.map(|l| l.policy), "value_loss": last.map(|l| l.value),
                    "stopped_early": report.stopped_early,
                });
                write_json(&path, &figures)?;
            }
            Ok(())
        }
        Command::Selfplay {
            variant,
            model,
            games,
            out,
            parallel,
            visits,
            fast_visits,
            full_share,
            temperature_plies,
            resign_value,
            no_resign_share,
            greedy_share,
            max_plies,
            device,
            batch,
            seed,
            time_limit,
            json,
        } => {
            for (name, v) in [
                ("--full-share", full_share),
                ("--resign-value", resign_value),
                ("--no-resign-share", no_resign_share),
                ("--greedy-share", greedy_share),
            ] {
                anyhow::ensure!((0.0..=1.0).contains(&v), "{name} must be between 0 and 1");
            }
            anyhow::ensure!(max_plies >= 1, "--max-plies must be at least 1");
            let net = crate::nn::NetEvaluator::load(variant, &model, device, batch as usize)?;
            let model_id = match &model {
                crate::nn::ModelSource::Shipped => format!("shipped-{variant}"),
                file => file.to_string(),
            };
            let config = crate::selfplay::SelfPlayConfig {
                variant,
                games: games as usize,
                parallel: parallel as usize,
                visits,
                fast_visits,
                full_share,
                temperature_plies,
                resign_value,
                no_resign_share,
                max_plies,
                greedy_share,
                leaves_per_game: 8,
                seed,
                out,
                model_id,
                deadline: time_limit.map(|s| Instant::now() + std::time::Duration::from_secs_f64(s)),
            };
            let started = Instant::now();
            let total = config.games;
            let reports = crate::selfplay::play(&config, std::sync::Arc::new(net), &|r| {
                let against = match r.greedy {
                    Some(c) => format!(" (greedy played {c})"),
                    None => String::new(),
                };
                println!(
                    "game {}/{}{against}: {} after {} plies, {} samples -> {}",
                    r.index + 1,
                    total,
                    r.result,
                    r.plies,
                    r.samples,
                    r.path.display()
                );
            })?;
            let elapsed = started.elapsed();
            println!("{}", crate::selfplay::summary(&reports, elapsed));
            if let Some(path) = json {
                let secs = elapsed.as_secs_f64();
                let positions: usize = reports.iter().map(|r| r.samples).sum();
                let figures = serde_json::json!({
                    "variant": variant.name(), "device": device.to_string(), "parallel": parallel, "batch": batch,
                    "visits": visits, "fast_visits": fast_visits, "games": reports.len(), "positions": positions,
                    "seconds": secs, "games_per_hour": reports.len() as f64 * 3600.0 / secs,
                    "positions_per_s": positions as f64 / secs,
                });
                write_json(&path, &figures)?;
            }
            Ok(())
        }
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
        batch: usize,
    ) -> Result<std::sync::Arc<dyn crate::mcts::Evaluator>, String> {
        let choice: crate::nn::DeviceChoice = device.parse().map_err(|e: crate::nn::DeviceError| e.to_string())?;
        let model = model_file.parse().unwrap_or_default();
        let net = crate::nn::NetEvaluator::load(variant, &model, choice, batch).map_err(|e| e.to_string())?;
        Ok(std::sync::Arc::new(net))
    }
}

fn analyse(args: &GameArgs, time: Option<f64>, nodes: Option<u64>, engine: &EngineArgs) -> Result<()> {
    use crate::mcts::{Limits, Score, SearchParams, Searcher};
    use std::io::IsTerminal;
    use std::sync::atomic::AtomicBool;
    let game = args.game()?;
    print!("{}", show(&game));
    if let Some(outcome) = game.outcome() {
        println!("the game is over: {outcome}");
        return Ok(());
    }
    let evaluator = crate::nn::NetEvaluator::load(args.variant, &engine.model, engine.device, engine.batch as usize)?;
    let params = SearchParams {
        threads: engine.threads as usize,
        batch_size: engine.batch as usize,
        hash_mib: engine.hash as usize,
        multipv: engine.multipv as usize,
        mate_plies: engine.mate_plies,
        root_mate_plies: engine.root_mate_plies,
        policy_temperature: engine.policy_temperature,
        ..SearchParams::default()
    };
    if let Some(t) = time {
        anyhow::ensure!(t.is_finite() && t > 0.0 && t < 1e6, "--time must be a positive number of seconds");
    }
    let movetime = match (time, nodes) {
        (Some(t), _) => Some(std::time::Duration::from_secs_f64(t)),
        (None, None) => Some(std::time::Duration::from_secs(10)),
        _ => None,
    };
    let mut searcher = Searcher::new(std::sync::Arc::new(evaluator), params);
    searcher.set_position(&game);
    let limits = Limits { nodes, movetime, ..Limits::default() };
    let variant = args.variant;
    let tty = std::io::stdout().is_terminal();
    let mut shown = 0;
    let table = |info: &crate::mcts::SearchInfo| {
        let mut out = String::new();
        writeln!(out, "{:>4} {:<8} {:>9} {:>8} {:>8}  pv", "#", "move", "visits", "value", "score").ok();
        for (i, l) in info.lines.iter().enumerate() {
            let score = match l.score {
                Score::Cp(cp) => format!("{cp:+}"),
                Score::Mate(n) => format!("mate {n}"),
            };
            let pv: Vec<String> = l.pv.iter().map(|&m| format_move(variant, m)).collect();
            writeln!(
                out,
                "{:>4} {:<8} {:>9} {:>+8.3} {:>8}  {}",
                i + 1,
                format_move(variant, l.mv),
                l.visits,
                l.q,
                score,
                pv.join(" ")
            )
            .ok();
        }
        writeln!(
            out,
            "playouts {} ({} /s), depth {}/{}, {:.1} s",
            info.playouts,
            info.nps(),
            info.depth,
            info.seldepth,
            info.elapsed.as_secs_f64()
        )
        .ok();
        out
    };
    let result = searcher.search(&limits, &AtomicBool::new(false), &mut |info| {
        let text = table(info);
        if tty && shown > 0 {
            // Move the cursor up over the previous table and redraw it.
            print!("\x1b[{shown}A\x1b[J");
        }
        print!("{text}");
        shown = text.lines().count();
    });
    if tty && shown > 0 {
        print!("\x1b[{shown}A\x1b[J");
    }
    print!("{}", table(&result.info));
    match result.best {
        Some(best) => {
            let line: Vec<String> = result.info.lines[0].pv.iter().map(|&m| format_move(variant, m)).collect();
            println!("best line: {}", line.join(" "));
            println!("bestmove {}", format_move(variant, best));
        }
        None => println!("no move"),
    }
    Ok(())
}

fn run_perft(args: &GameArgs, depth: u32, divide: bool) -> Result<()> {
    let mut game = args.game()?;
    let started = Instant::now();
    let total = if divide {
        let mut total = 0;
        for (mv, n) in perft::divide(&mut game, depth) {
            println!("{} {n}", format_move(args.variant, mv));
            total += n;
        }
        total
    } else {
        perft::perft(&mut game, depth)
    };
    let secs = started.elapsed().as_secs_f64();
    eprintln!("time {:.3} s, {:.0} leaves/s", secs, total as f64 / secs.max(1e-9));
    println!("{total}");
    Ok(())
}

fn net_init(
    variant: Variant,
    (blocks, channels): (usize, usize),
    features: crate::nn::Features,
    seed: u64,
    out: &std::path::Path,
) -> Result<()> {
    use crate::nn::{Layout, NetConfig};
    let config = NetConfig::new(&Layout::with_features(variant, features), blocks, channels);
    crate::nn::weights::save_initial(out, variant, &config, seed)?;
    println!("wrote {} ({} parameters, {} blocks x {} channels)", out.display(), config.parameters(), blocks, channels);
    Ok(())
}

fn net_add_attack_planes(input: &std::path::Path, out: &std::path::Path) -> Result<()> {
    let config = crate::nn::weights::add_attack_planes(input, out)?;
    println!("wrote {} ({} input planes)", out.display(), config.planes);
    Ok(())
}

fn net_info(path: &std::path::Path) -> Result<()> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let (variant, c, record) = crate::nn::weights::parse(&bytes)?;
    println!("variant: {variant}");
    println!(
        "blocks: {}, channels: {}, value head: {} channels, {} hidden",
        c.blocks, c.channels, c.value_channels, c.value_hidden
    );
    println!(
        "encoding: {} features, {} planes, {} move types, {}x{}",
        c.features, c.planes, c.types, c.height, c.width
    );
    println!("parameters: {}", c.parameters());
    println!("weights: {} bytes", record.len());
    Ok(())
}

/// The text `pantheon show` prints for a game's current position.
pub fn show(game: &Game) -> String {
    let pos = game.position();
    let variant = pos.variant();
    let g = variant.geometry();
    let mut out = String::new();
    let hand_line = |color: Color| {
        let spec = variant.spec();
        let items: Vec<String> = (0..spec.hand_kinds)
            .filter(|&k| pos.hand(color).count(k) > 0)
            .map(|k| {
                let n = pos.hand(color).count(k);
                let name = spec.pieces[k as usize].name;
                if n > 1 { format!("{n} {name}") } else { name.to_string() }
            })
            .collect();
        if items.is_empty() { "-".to_string() } else { items.join(", ") }
    };
    writeln!(out, "gote hand:  {}", hand_line(Color::Gote)).ok();
    for file in (1..=g.files).rev() {
        write!(out, "{file:>3}").ok();
    }
    out.push('\n');
    for rank in 0..g.ranks {
        let cells: String = (1..=g.files)
            .rev()
            .map(|file| {
                let sq = crate::rules::Square::new(file, rank).expect("on board");
                let cell = pos.piece_at(sq).map(|p| piece_str(variant, p)).unwrap_or_else(|| ".".into());
                format!("{cell:>3}")
            })
            .collect();
        writeln!(out, "{cells}   {}", (b'a' + rank) as char).ok();
    }
    writeln!(out, "sente hand: {}", hand_line(Color::Sente)).ok();
    writeln!(out, "(upper case: sente, lower case: gote, +: promoted)").ok();
    writeln!(out, "variant: {variant}").ok();
    writeln!(out, "sfen: {}", to_sfen(pos)).ok();
    writeln!(out, "side to move: {}", pos.side_to_move()).ok();
    writeln!(out, "in check: {}", if pos.in_check() { "yes" } else { "no" }).ok();
    match game.outcome() {
        Some(outcome) => writeln!(out, "result: {outcome}").ok(),
        None => writeln!(out, "result: ongoing").ok(),
    };
    out
}

/// The CPU cores available to this process.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
