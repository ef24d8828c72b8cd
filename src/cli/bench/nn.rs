//! `pantheon bench nn`: the network's throughput per batch size, precision
//! and policy path, with the time of each stage of an evaluation.

use super::{sample_positions, write_json};
use crate::mcts::EvalRequest;
use crate::nn::bf16::Kernel as Bf16Kernel;
use crate::nn::{DeviceChoice, ModelSource, NetEvaluator, Precision, Timings};
use crate::rules::Variant;
use anyhow::Result;
use clap::Args;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;

/// Which forward pass runs on the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CpuForward {
    Own,
    Burn,
}

#[derive(Args, Debug)]
pub struct NnBench {
    #[arg(long, default_value = "mansindam")]
    variant: Variant,
    /// auto, gpu or cpu.
    #[arg(long, default_value = "cpu")]
    device: DeviceChoice,
    /// Batch sizes, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64,256")]
    batch: Vec<usize>,
    /// Weight file, or `shipped` (the default: the variant's shipped net for
    /// the device, the large one on a GPU where there is one; `shipped-small`
    /// and `shipped-large` name one).
    #[arg(long, default_value = "shipped")]
    model: ModelSource,
    /// Forward passes per batch size; the median is reported.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    runs: u32,
    /// Precisions, comma-separated: f32, f16 (GPU; skipped, saying so,
    /// where the adapter has no f16).
    #[arg(long, value_delimiter = ',', default_value = "f32")]
    precision: Vec<Precision>,
    /// On the CPU, the forward passes measured, comma-separated: own
    /// (Pantheon's, what play uses) and burn (burn's CPU backend), taken
    /// in turn at each batch size.
    #[arg(long, value_delimiter = ',', default_value = "own")]
    cpu_forward: Vec<CpuForward>,
    /// In bf16, the kernels of Pantheon's forward pass measured,
    /// comma-separated: amx (Intel's matrix tiles) and avx512 (AVX-512
    /// BF16's vectors); each row's path names its kernel. The default is
    /// the fastest this CPU has (what play uses).
    #[arg(long, value_delimiter = ',')]
    bf16_kernel: Vec<Bf16Kernel>,
    /// Also write the figures to this file as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
}

impl NnBench {
    pub fn run(self) -> Result<()> {
        anyhow::ensure!(self.batch.iter().all(|&b| (1..=4096).contains(&b)), "--batch sizes must be 1 to 4096");
        let max = self.batch.iter().copied().max().unwrap_or(1);
        let positions = sample_positions(self.variant, max, 7);
        let mut rows = Vec::new();
        let mut header = None;
        for &precision in &self.precision {
            let mut eval = NetEvaluator::load(self.variant, &self.model, self.device, max)?;
            if let Err(e) = eval.set_precision(precision) {
                outln!("{precision}: skipped ({e})");
                continue;
            }
            eval.set_stage_timing(true);
            let header = header.get_or_insert_with(|| print_header(&eval));
            let flops = header["flops_per_position"].as_f64().unwrap_or(0.0);
            // On the GPU both policy paths are measured: every logit read
            // back and the softmax on the CPU ("plain"), or the WGSL
            // masked-softmax kernel. On the CPU, the forward passes asked
            // for.
            let paths: Vec<&'static str> = if eval.policy_kernel() {
                vec!["plain", "kernel"]
            } else if eval.cpu_forward() {
                let kernels = match eval.bf16_kernel() {
                    Some(best) if self.bf16_kernel.is_empty() => vec![best],
                    Some(_) => self.bf16_kernel.clone(),
                    None => Vec::new(),
                };
                let own: Vec<&'static str> =
                    if kernels.is_empty() { vec!["own"] } else { kernels.iter().map(|k| k.name()).collect() };
                self.cpu_forward
                    .iter()
                    .flat_map(|f| if *f == CpuForward::Own { own.clone() } else { vec!["burn"] })
                    .collect()
            } else {
                vec!["cpu"]
            };
            for (&b, &path) in self.batch.iter().flat_map(|b| paths.iter().map(move |p| (b, p))) {
                eval.set_policy_kernel(path == "kernel");
                if let Ok(kernel) = path.parse::<Bf16Kernel>() {
                    if let Err(e) = eval.set_bf16_kernel(kernel) {
                        outln!("{precision} {path}: skipped ({e})");
                        continue;
                    }
                    eval.set_cpu_forward(true);
                } else if path == "own" || path == "burn" {
                    eval.set_cpu_forward(path == "own");
                }
                let row = Row {
                    precision: eval.precision(),
                    batch: b,
                    path,
                    flops,
                    stages: median_timings(&eval, &positions[..b], self.runs),
                };
                row.print();
                rows.push(row.json());
            }
        }
        let mut out = header.unwrap_or_else(|| json!({}));
        out["variant"] = json!(self.variant.name());
        out["rows"] = Value::Array(rows);
        write_json(self.json.as_deref(), &out)
    }
}

/// Prints the net's name and the table's header; returns the JSON header.
fn print_header(eval: &NetEvaluator) -> Value {
    let c = eval.config();
    let flops = c.flops_per_position() as f64;
    let name = crate::mcts::Evaluator::name(eval);
    outln!("{name} ({} parameters, {:.1} MFLOP per position)", c.parameters(), flops / 1e6);
    outln!(
        "{:>4} {:>6} {:>7} {:>12} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "prec",
        "batch",
        "path",
        "positions/s",
        "GFLOP/s",
        "total ms",
        "encode",
        "upload",
        "forward",
        "download",
        "policy"
    );
    json!({ "net": name, "parameters": c.parameters(), "flops_per_position": flops })
}

fn total(t: &Timings) -> Duration {
    t.encode + t.upload + t.forward + t.download + t.policy
}

/// The stage times of the run with the median total, after a warm-up.
fn median_timings(eval: &NetEvaluator, batch: &[EvalRequest], runs: u32) -> Timings {
    let _ = eval.evaluate_timed(batch);
    let mut timings: Vec<Timings> = (0..runs).map(|_| eval.evaluate_timed(batch).1).collect();
    timings.sort_by_key(total);
    timings.swap_remove(timings.len() / 2)
}

/// One line of the table: a precision, batch size and policy path.
struct Row {
    precision: Precision,
    batch: usize,
    /// The policy path on a GPU, the forward pass on the CPU.
    path: &'static str,
    /// FLOPs per position.
    flops: f64,
    stages: Timings,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

impl Row {
    fn positions_per_s(&self) -> f64 {
        self.batch as f64 / total(&self.stages).as_secs_f64()
    }

    fn print(&self) {
        let (per_s, t) = (self.positions_per_s(), &self.stages);
        outln!(
            "{:>4} {:>6} {:>7} {:>12.0} {:>9.1} {:>9.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2}",
            self.precision.to_string(),
            self.batch,
            self.path,
            per_s,
            per_s * self.flops / 1e9,
            ms(total(t)),
            ms(t.encode),
            ms(t.upload),
            ms(t.forward),
            ms(t.download),
            ms(t.policy)
        );
    }

    fn json(&self) -> Value {
        let (per_s, t) = (self.positions_per_s(), &self.stages);
        json!({
            "precision": self.precision.to_string(), "batch": self.batch, "path": self.path,
            "positions_per_s": per_s, "gflops": per_s * self.flops / 1e9, "total_ms": ms(total(t)),
            "encode_ms": ms(t.encode), "upload_ms": ms(t.upload), "forward_ms": ms(t.forward),
            "download_ms": ms(t.download), "policy_ms": ms(t.policy),
        })
    }
}
