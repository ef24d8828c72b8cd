//! `pantheon bench`: perft, device, network, mate and search speed, medians
//! over several runs. Each bench is an argument struct with its own `run`;
//! the network, mate and search benches have a module each.

mod mates;
mod nn;
mod search;

use crate::notation::parse_position;
use crate::rules::{Game, Variant, perft};
use anyhow::Result;
use clap::{Args, Subcommand};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Perft on the start positions and a middlegame with full hands
    /// (single thread, bulk counting at the leaves), checking each count.
    Perft(PerftBench),
    /// The device: what it is, whether it computes in f16, and its peak
    /// arithmetic rate as measured by cubecl's throughput probe (GPU).
    Device(DeviceBench),
    /// Network throughput per batch size, and the time split into encode,
    /// upload, forward, download and policy softmax.
    Nn(nn::NnBench),
    /// Playouts needed to prove the mate and campmate problems of the
    /// search tests, with the uniform evaluator and with a net (one thread,
    /// reproducible).
    Mates(mates::MatesBench),
    /// Search playouts per second from the start position with the uniform
    /// evaluator (the search's own overhead) and with the shipped net on
    /// the CPU, per thread count, against the net's raw throughput.
    Search(search::SearchBench),
}

impl BenchCommand {
    pub fn run(self) -> Result<()> {
        match self {
            BenchCommand::Perft(b) => b.run(),
            BenchCommand::Device(b) => b.run(),
            BenchCommand::Nn(b) => b.run(),
            BenchCommand::Mates(b) => b.run(),
            BenchCommand::Search(b) => b.run(),
        }
    }
}

/// Writes a benchmark's figures as JSON when `--json` names a file.
fn write_json(path: Option<&Path>, value: &Value) -> Result<()> {
    path.map_or(Ok(()), |p| super::write_json(p, value))
}

/// The median of `values` (the upper one of an even count).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[derive(Args, Debug)]
pub struct PerftBench {
    /// Runs per position; the median is reported.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    runs: u32,
}

impl PerftBench {
    fn run(self) -> Result<()> {
        outln!("{:<32} {:>5} {:>12} {:>10} {:>14}", "position", "depth", "leaves", "median s", "leaves/s");
        for case in perft::BENCH_POSITIONS {
            let pos = parse_position(case.variant, case.sfen)?;
            let mut times = Vec::new();
            for _ in 0..self.runs {
                let started = Instant::now();
                let n = perft::perft(&mut Game::new(pos.clone()), case.depth);
                times.push(started.elapsed().as_secs_f64());
                anyhow::ensure!(n == case.count, "{}: perft {} but expected {}", case.name, n, case.count);
            }
            let median = median(times);
            outln!(
                "{:<32} {:>5} {:>12} {:>10.3} {:>14.0}",
                case.name,
                case.depth,
                case.count,
                median,
                case.count as f64 / median
            );
        }
        Ok(())
    }
}

#[derive(Args, Debug)]
pub struct DeviceBench {
    /// auto, gpu or cpu.
    #[arg(long, default_value = "auto")]
    device: crate::nn::DeviceChoice,
    /// Also write the figures to this file as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
}

impl DeviceBench {
    fn run(self) -> Result<()> {
        let device = crate::nn::device(self.device)?;
        let about = crate::nn::describe(&device);
        let f16 = crate::nn::supports_f16(&device);
        outln!("device: {about}");
        outln!("f16: {}", if f16 { "supported" } else { "not supported" });
        let mut peaks = serde_json::Map::new();
        for (precision, peak) in crate::nn::peak_flops(&device) {
            match peak {
                Ok(flops) => {
                    outln!("peak {precision}: {:.1} GFLOP/s (measured)", flops / 1e9);
                    peaks.insert(precision.to_string(), json!(flops));
                }
                Err(e) => {
                    outln!("peak {precision}: none ({e})");
                    peaks.insert(precision.to_string(), Value::Null);
                }
            }
        }
        write_json(self.json.as_deref(), &json!({ "device": about, "f16": f16, "peak_flops": peaks }))
    }
}

/// `n` evaluation requests from seeded random games of at most 60 plies,
/// so that hands and promotions appear as in search leaves.
fn sample_positions(variant: Variant, n: usize, seed: u64) -> Vec<crate::mcts::EvalRequest> {
    let mut rng = crate::mcts::Rng::new(seed);
    let mut game = Game::new(crate::rules::Position::startpos(variant));
    let mut positions = Vec::new();
    while positions.len() < n {
        let moves = game.legal_moves();
        if moves.is_empty() || game.outcome().is_some() || game.moves().len() > 60 {
            game = Game::new(crate::rules::Position::startpos(variant));
            continue;
        }
        positions.push(crate::mcts::EvalRequest {
            position: game.position().clone(),
            moves: moves.clone(),
            repetitions: game.repetitions(),
        });
        game.play(moves[rng.below(moves.len())]);
    }
    positions
}
