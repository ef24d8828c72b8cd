//! `pantheon bench search`: playouts per second with the uniform evaluator
//! (the search's own overhead) and with the shipped net, per thread count,
//! leaf mate search and pipeline depth, against the net's raw throughput.

use super::{median, sample_positions, write_json};
use crate::mcts::{EvalRequest, Evaluation, Evaluator, Limits, SearchParams, Searcher, UniformEvaluator};
use crate::nn::{DeviceChoice, ModelSource, NetEvaluator};
use crate::rules::{Game, Position, Variant};
use anyhow::Result;
use clap::Args;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

#[derive(Args, Debug)]
pub struct SearchBench {
    #[arg(long, default_value = "mansindam")]
    variant: Variant,
    /// Where the net runs: auto, gpu or cpu.
    #[arg(long, default_value = "cpu")]
    device: DeviceChoice,
    /// Playouts per run with the uniform evaluator.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    nodes: u64,
    /// Playouts per run with the net.
    #[arg(long, default_value_t = 4000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    net_nodes: u64,
    /// Batches in flight at once on the net's device, comma-separated
    /// (default: the device's own, 2 on a GPU and 1 on the CPU).
    #[arg(long, value_delimiter = ',')]
    pipeline: Vec<usize>,
    /// Also write the figures to this file as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Thread counts to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    threads: Vec<usize>,
    /// Evaluator batch size.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..=4096))]
    batch: u64,
    /// Runs per setting; the median is reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    runs: u32,
    /// Leaf mate search lengths to measure (plies, 0: none), comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [crate::mcts::MATE_PLIES])]
    mate_plies: Vec<u32>,
}

/// Counts the positions the search sends to the evaluator, and calls.
struct Counting {
    inner: Arc<dyn Evaluator>,
    positions: AtomicU64,
    calls: AtomicU64,
}

impl Evaluator for Counting {
    fn evaluate(&self, batch: &[EvalRequest]) -> Vec<Evaluation> {
        self.positions.fetch_add(batch.len() as u64, Ordering::Relaxed);
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.evaluate(batch)
    }
    fn max_batch(&self) -> usize {
        self.inner.max_batch()
    }
    fn preferred_batch(&self) -> usize {
        self.inner.preferred_batch()
    }
    fn name(&self) -> String {
        self.inner.name()
    }
    fn pipeline_depth(&self) -> usize {
        self.inner.pipeline_depth()
    }
}

/// One timed search.
#[derive(Clone, Copy)]
struct Sample {
    secs: f64,
    playouts: u64,
    evals: u64,
    calls: u64,
    /// The device's wait per batch, in ms.
    idle_ms: f64,
}

/// One line of the table: an evaluator and its settings.
struct Setting {
    label: &'static str,
    pipeline: usize,
    budget: u64,
    mate: u32,
    threads: usize,
}

impl SearchBench {
    pub fn run(self) -> Result<()> {
        anyhow::ensure!(self.threads.iter().all(|&t| (1..=256).contains(&t)), "--threads must be 1 to 256");
        anyhow::ensure!(self.mate_plies.iter().all(|&p| p <= 9), "--mate-plies must be 0 to 9");
        anyhow::ensure!(self.pipeline.iter().all(|&p| (1..=16).contains(&p)), "--pipeline depths must be 1 to 16");
        let batch = self.batch as usize;
        let net = Arc::new(NetEvaluator::load(self.variant, &ModelSource::Shipped, self.device, batch)?);
        let raw = raw_throughput(&net, self.variant, batch);
        outln!("network: {}; raw throughput at batch {batch}: {raw:.0} positions/s", net.name());
        print_header();
        let uniform: Arc<dyn Evaluator> = Arc::new(UniformEvaluator);
        let mut rows = Vec::new();
        for setting in self.settings(net.pipeline_depth()) {
            net.set_pipeline_depth(setting.pipeline);
            let evaluator: Arc<dyn Evaluator> = if setting.label == "uniform" { uniform.clone() } else { net.clone() };
            let samples: Vec<Sample> = (0..self.runs).map(|_| self.sample(&net, evaluator.clone(), &setting)).collect();
            let secs = median(samples.iter().map(|s| s.secs).collect());
            let sample = *samples.iter().find(|s| s.secs == secs).expect("the median is a sample");
            rows.push(self.row(&setting, sample, raw));
        }
        write_json(
            self.json.as_deref(),
            &json!({
                "variant": self.variant.name(), "network": net.name(), "raw_positions_per_s": raw,
                "batch": batch, "rows": rows,
            }),
        )
    }

    /// The uniform evaluator once, then the net at each pipeline depth
    /// (the device's own when none is given); each at every leaf mate
    /// search length and thread count.
    fn settings(&self, device_depth: usize) -> Vec<Setting> {
        let pipelines = if self.pipeline.is_empty() { vec![device_depth] } else { self.pipeline.clone() };
        let evaluators = std::iter::once(("uniform", 1, self.nodes))
            .chain(pipelines.into_iter().map(|p| ("network", p, self.net_nodes)));
        evaluators
            .flat_map(|(label, pipeline, budget)| {
                self.mate_plies.iter().flat_map(move |&mate| {
                    self.threads.iter().map(move |&threads| Setting { label, pipeline, budget, mate, threads })
                })
            })
            .collect()
    }

    /// One search from the start position with the setting's budget.
    fn sample(&self, net: &NetEvaluator, evaluator: Arc<dyn Evaluator>, s: &Setting) -> Sample {
        net.reset_device_idle();
        let counting = Arc::new(Counting { inner: evaluator, positions: AtomicU64::new(0), calls: AtomicU64::new(0) });
        let params = SearchParams {
            threads: s.threads,
            batch_size: self.batch as usize,
            mate_plies: s.mate,
            ..SearchParams::default()
        };
        let mut searcher = Searcher::new(counting.clone(), params);
        searcher.set_position(&Game::new(Position::startpos(self.variant)));
        let limits = Limits { nodes: Some(s.budget), ..Limits::default() };
        let started = Instant::now();
        let result = searcher.search(&limits, &AtomicBool::new(false), &mut |_| {});
        Sample {
            secs: started.elapsed().as_secs_f64(),
            playouts: result.info.playouts,
            evals: counting.positions.load(Ordering::Relaxed),
            calls: counting.calls.load(Ordering::Relaxed).max(1),
            idle_ms: net.device_idle().per_batch().as_secs_f64() * 1e3,
        }
    }

    /// Prints a setting's median sample and returns it as JSON.
    fn row(&self, s: &Setting, m: Sample, raw: f64) -> Value {
        let evals_per_s = m.evals as f64 / m.secs;
        let avg_batch = m.evals as f64 / m.calls as f64;
        let is_net = s.label == "network";
        let vs_raw = is_net.then(|| 100.0 * evals_per_s / raw);
        outln!(
            "{:<9} {:<16} {:>4} {:>7} {:>5} {:>6} {:>9} {:>9.3} {:>11.0} {:>10.0} {:>9.1} {:>7} {:>10}",
            s.label,
            self.variant.name(),
            s.mate,
            s.threads,
            s.pipeline,
            self.batch,
            m.playouts,
            m.secs,
            m.playouts as f64 / m.secs,
            evals_per_s,
            avg_batch,
            vs_raw.map_or("-".into(), |v| format!("{v:.0}%")),
            if is_net { format!("{:.2} ms", m.idle_ms) } else { "-".into() }
        );
        json!({
            "evaluator": s.label, "mate_plies": s.mate, "threads": s.threads, "pipeline": s.pipeline,
            "batch": self.batch, "playouts": m.playouts, "seconds": m.secs,
            "playouts_per_s": m.playouts as f64 / m.secs, "evals_per_s": evals_per_s, "avg_batch": avg_batch,
            "vs_raw_percent": vs_raw, "device_idle_ms_per_batch": is_net.then_some(m.idle_ms),
        })
    }
}

fn print_header() {
    outln!(
        "{:<9} {:<16} {:>4} {:>7} {:>5} {:>6} {:>9} {:>9} {:>11} {:>10} {:>9} {:>7} {:>10}",
        "evaluator",
        "variant",
        "mate",
        "threads",
        "pipe",
        "batch",
        "playouts",
        "median s",
        "playouts/s",
        "evals/s",
        "avg batch",
        "vs raw",
        "idle/batch"
    );
}

/// The network's raw throughput at this batch size, one batch at a time,
/// from positions of random games so they look like search leaves.
fn raw_throughput(net: &NetEvaluator, variant: Variant, batch: usize) -> f64 {
    let reqs = sample_positions(variant, batch, 11);
    net.evaluate(&reqs);
    let times: Vec<f64> = (0..15)
        .map(|_| {
            let t = Instant::now();
            net.evaluate(&reqs);
            t.elapsed().as_secs_f64()
        })
        .collect();
    batch as f64 / median(times)
}
