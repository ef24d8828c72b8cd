//! `pantheon bench`: perft, network, mate and search speed, medians over
//! several runs.

use crate::notation::parse_position;
use crate::rules::{Game, Variant, perft};
use anyhow::Result;
use clap::Subcommand;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Writes a benchmark's figures as JSON when `--json` names a file.
fn write_json(path: Option<&Path>, value: &Value) -> Result<()> {
    path.map_or(Ok(()), |p| super::write_json(p, value))
}

fn bench_device(choice: crate::nn::DeviceChoice, json_path: Option<&Path>) -> Result<()> {
    let device = crate::nn::device(choice)?;
    let about = crate::nn::describe(&device);
    let f16 = crate::nn::supports_f16(&device);
    println!("device: {about}");
    println!("f16: {}", if f16 { "supported" } else { "not supported" });
    let mut peaks = serde_json::Map::new();
    for (precision, peak) in crate::nn::peak_flops(&device) {
        match peak {
            Ok(flops) => {
                println!("peak {precision}: {:.1} GFLOP/s (measured)", flops / 1e9);
                peaks.insert(precision.to_string(), json!(flops));
            }
            Err(e) => {
                println!("peak {precision}: none ({e})");
                peaks.insert(precision.to_string(), Value::Null);
            }
        }
    }
    write_json(json_path, &json!({ "device": about, "f16": f16, "peak_flops": peaks }))
}

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Perft on the start positions and a middlegame with full hands
    /// (single thread, bulk counting at the leaves), checking each count.
    Perft {
        /// Runs per position; the median is reported.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
        runs: u32,
    },
    /// The device: what it is, whether it computes in f16, and its peak
    /// arithmetic rate as measured by cubecl's throughput probe (GPU).
    Device {
        /// auto, gpu or cpu.
        #[arg(long, default_value = "auto")]
        device: crate::nn::DeviceChoice,
        /// Also write the figures to this file as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Network throughput per batch size, and the time split into encode,
    /// upload, forward, download and policy softmax.
    Nn {
        #[arg(long, default_value = "mansindam")]
        variant: Variant,
        /// auto, gpu or cpu.
        #[arg(long, default_value = "cpu")]
        device: crate::nn::DeviceChoice,
        /// Batch sizes, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "1,16,64,256")]
        batch: Vec<usize>,
        /// Weight file, or `shipped` (the default: the variant's shipped net).
        #[arg(long, default_value = "shipped")]
        model: crate::nn::ModelSource,
        /// Forward passes per batch size; the median is reported.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
        runs: u32,
        /// Precisions, comma-separated: f32, f16 (GPU; skipped, saying so,
        /// where the adapter has no f16).
        #[arg(long, value_delimiter = ',', default_value = "f32")]
        precision: Vec<crate::nn::Precision>,
        /// Also write the figures to this file as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Playouts needed to prove the mate and campmate problems of the
    /// search tests, with the uniform evaluator and with a net (one thread,
    /// reproducible).
    Mates {
        /// Only this variant's problems.
        #[arg(long)]
        variant: Option<Variant>,
        /// Model file (needs --variant; default: each variant's shipped net).
        #[arg(long)]
        model: Option<crate::nn::ModelSource>,
        /// Playout budget per problem.
        #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
        nodes: u64,
        /// Evaluator batch size.
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=4096))]
        batch: u64,
        /// Longest mate searched at each leaf, in plies (0: none).
        #[arg(long, default_value_t = crate::mcts::MATE_PLIES, value_parser = clap::value_parser!(u32).range(0..=9))]
        mate_plies: u32,
        /// Also this many held-out mates in 3 and 5 per variant, from
        /// random playouts as `pantheon tsume` makes them (another seed).
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=100_000))]
        random: u64,
        #[arg(long, default_value_t = 1)]
        random_seed: u64,
        /// Softmax temperature of the net's priors (0.1 to 10; 1: the net's own).
        #[arg(long, default_value_t = crate::mcts::POLICY_TEMPERATURE, value_parser = super::parse_policy_temperature)]
        policy_temperature: f64,
    },
    /// Search playouts per second from the start position with the uniform
    /// evaluator (the search's own overhead) and with the shipped net on
    /// the CPU, per thread count, against the net's raw throughput.
    Search {
        #[arg(long, default_value = "mansindam")]
        variant: Variant,
        /// Where the net runs: auto, gpu or cpu.
        #[arg(long, default_value = "cpu")]
        device: crate::nn::DeviceChoice,
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
    },
}

impl BenchCommand {
    pub fn run(self) -> Result<()> {
        match self {
            BenchCommand::Perft { runs } => bench_perft(runs),
            BenchCommand::Device { device, json } => bench_device(device, json.as_deref()),
            BenchCommand::Nn { variant, device, batch, model, runs, precision, json } => {
                bench_nn(variant, device, (&batch, &precision), &model, runs, json.as_deref())
            }
            BenchCommand::Mates {
                variant,
                model,
                nodes,
                batch,
                mate_plies,
                random,
                random_seed,
                policy_temperature,
            } => bench_mates(
                variant,
                model.as_ref(),
                (nodes, batch as usize, mate_plies, policy_temperature),
                (random as usize, random_seed),
            ),
            BenchCommand::Search {
                variant,
                device,
                nodes,
                net_nodes,
                pipeline,
                json,
                threads,
                batch,
                runs,
                mate_plies,
            } => bench_search(
                SearchBench { variant, device, nodes, net_nodes, batch: batch as usize, runs },
                (&threads, &mate_plies, &pipeline),
                json.as_deref(),
            ),
        }
    }
}

fn bench_perft(runs: u32) -> Result<()> {
    println!("{:<32} {:>5} {:>12} {:>10} {:>14}", "position", "depth", "leaves", "median s", "leaves/s");
    for case in perft::BENCH_POSITIONS {
        let pos = parse_position(case.variant, case.sfen)?;
        let mut times = Vec::new();
        for _ in 0..runs {
            let started = Instant::now();
            let n = perft::perft(&mut Game::new(pos.clone()), case.depth);
            times.push(started.elapsed().as_secs_f64());
            anyhow::ensure!(n == case.count, "{}: perft {} but expected {}", case.name, n, case.count);
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        println!(
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

fn bench_nn(
    variant: Variant,
    device: crate::nn::DeviceChoice,
    (batches, precisions): (&[usize], &[crate::nn::Precision]),
    model: &crate::nn::ModelSource,
    runs: u32,
    json_path: Option<&Path>,
) -> Result<()> {
    use crate::nn::{NetEvaluator, Timings};
    anyhow::ensure!(batches.iter().all(|&b| (1..=4096).contains(&b)), "--batch sizes must be 1 to 4096");
    let max = batches.iter().copied().max().unwrap_or(1);
    let positions = sample_positions(variant, max, 7);
    let mut rows = Vec::new();
    let mut header = None;
    for &precision in precisions {
        let mut eval = NetEvaluator::load(variant, model, device, max)?;
        if let Err(e) = eval.set_precision(precision) {
            println!("{precision}: skipped ({e})");
            continue;
        }
        eval.set_stage_timing(true);
        let c = eval.config().clone();
        let flops = c.flops_per_position() as f64;
        if header.is_none() {
            let name = crate::mcts::Evaluator::name(&eval);
            println!("{name} ({} parameters, {:.1} MFLOP per position)", c.parameters(), flops / 1e6);
            println!(
                "{:>4} {:>6} {:>7} {:>12} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8}",
                "prec",
                "batch",
                "softmax",
                "positions/s",
                "GFLOP/s",
                "total ms",
                "encode",
                "upload",
                "forward",
                "download",
                "policy"
            );
            header = Some(json!({ "net": name, "parameters": c.parameters(), "flops_per_position": flops }));
        }
        // On the GPU both policy paths are measured: every logit read back
        // and the softmax on the CPU ("plain"), or the WGSL masked-softmax
        // kernel.
        let paths: &[bool] = if eval.policy_kernel() { &[false, true] } else { &[false] };
        for (&b, &kernel) in batches.iter().flat_map(|b| paths.iter().map(move |k| (b, k))) {
            eval.set_policy_kernel(kernel);
            let batch = &positions[..b];
            let _ = eval.evaluate_timed(batch); // warm-up
            let mut runs_t: Vec<Timings> = (0..runs).map(|_| eval.evaluate_timed(batch).1).collect();
            let total = |t: &Timings| t.encode + t.upload + t.forward + t.download + t.policy;
            runs_t.sort_by_key(total);
            let m = &runs_t[runs_t.len() / 2];
            let per_s = b as f64 / total(m).as_secs_f64();
            let softmax = if kernel {
                "kernel"
            } else if paths.len() > 1 {
                "plain"
            } else {
                "cpu"
            };
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
            println!(
                "{:>4} {:>6} {:>7} {:>12.0} {:>9.1} {:>9.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2}",
                precision.to_string(),
                b,
                softmax,
                per_s,
                per_s * flops / 1e9,
                ms(total(m)),
                ms(m.encode),
                ms(m.upload),
                ms(m.forward),
                ms(m.download),
                ms(m.policy)
            );
            rows.push(json!({
                "precision": precision.to_string(), "batch": b, "softmax": softmax,
                "positions_per_s": per_s, "gflops": per_s * flops / 1e9, "total_ms": ms(total(m)),
                "encode_ms": ms(m.encode), "upload_ms": ms(m.upload), "forward_ms": ms(m.forward),
                "download_ms": ms(m.download), "policy_ms": ms(m.policy),
            }));
        }
    }
    let mut out = header.unwrap_or_else(|| json!({}));
    out["variant"] = json!(variant.name());
    out["rows"] = Value::Array(rows);
    write_json(json_path, &out)
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

fn bench_mates(
    only: Option<Variant>,
    model: Option<&crate::nn::ModelSource>,
    (nodes, batch, mate_plies, policy_temperature): (u64, usize, u32, f64),
    (random, random_seed): (usize, u64),
) -> Result<()> {
    use crate::mcts::{Evaluator, Limits, Proof, SearchParams, Searcher, UniformEvaluator};
    use crate::nn::{DeviceChoice, NetEvaluator};
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    anyhow::ensure!(model.is_none() || only.is_some(), "--model needs --variant");
    // Playouts until the root is proven won, and the distance proven (the
    // first proof found can be longer than the shortest); None within the
    // budget.
    let solve = |evaluator: Arc<dyn Evaluator>, game: &Game| -> Option<(u64, u16)> {
        let params = SearchParams {
            threads: 1,
            batch_size: batch,
            hash_mib: 256,
            mate_plies,
            policy_temperature,
            ..SearchParams::default()
        };
        let mut searcher = Searcher::new(evaluator, params);
        searcher.set_position(game);
        let r =
            searcher.search(&Limits { nodes: Some(nodes), ..Limits::default() }, &AtomicBool::new(false), &mut |_| {});
        match r.proof {
            Proof::Win(plies) => Some((r.info.playouts, plies)),
            _ => None,
        }
    };
    let show = |n: Option<(u64, u16)>, plies: u32| match n {
        Some((n, p)) if u32::from(p) == plies => n.to_string(),
        Some((n, p)) => format!("{n} ({p} plies)"),
        None => format!(">{nodes}"),
    };
    let mut nets: Vec<(Variant, Arc<dyn Evaluator>)> = Vec::new();
    let mut net_for = |variant: Variant| -> Result<Arc<dyn Evaluator>> {
        if let Some((_, n)) = nets.iter().find(|(v, _)| *v == variant) {
            return Ok(n.clone());
        }
        let n: Arc<dyn Evaluator> = Arc::new(NetEvaluator::load(
            variant,
            model.unwrap_or(&crate::nn::ModelSource::Shipped),
            DeviceChoice::Cpu,
            batch,
        )?);
        nets.push((variant, n.clone()));
        Ok(n)
    };
    println!(
        "playouts to prove each problem (1 thread, batch {batch}, budget {nodes}, leaf mate search {mate_plies} \
         plies, prior temperature {policy_temperature})"
    );
    println!("{:<16} {:<13} {:>16} {:>16} {:>6}  net", "variant", "problem", "uniform", "net", "ratio");
    for p in crate::mcts::problems::all() {
        if only.is_some_and(|v| v != p.variant) {
            continue;
        }
        let net = net_for(p.variant)?;
        let game = Game::new(parse_position(p.variant, p.sfen).map_err(|e| anyhow::anyhow!("{}: {e}", p.sfen))?);
        let uniform = solve(Arc::new(UniformEvaluator), &game);
        let with_net = solve(net.clone(), &game);
        let ratio = match (uniform, with_net) {
            (Some((u, _)), Some((n, _))) => format!("{:.2}", u as f64 / n.max(1) as f64),
            _ => "-".into(),
        };
        println!(
            "{:<16} {:<13} {:>16} {:>16} {:>6}  {}",
            p.variant.name(),
            format!("{} in {}", p.kind, p.plies),
            show(uniform, p.plies),
            show(with_net, p.plies),
            ratio,
            net.name()
        );
    }
    if random == 0 {
        return Ok(());
    }
    println!();
    println!(
        "{random} random mates in 3 and 5 per variant (seed {random_seed}): solved within the budget, median \
         playouts, total playouts (an unsolved one counts the budget)"
    );
    println!(
        "{:<16} {:>9} {:>22} {:>22} {:>22}  net",
        "variant", "in 3/in 5", "uniform", "net", "faster: net/uniform/="
    );
    let variants: Vec<Variant> = match only {
        Some(v) => vec![v],
        None => Variant::ALL.to_vec(),
    };
    for variant in variants {
        let net = net_for(variant)?;
        // A seed stream of its own, apart from the training samples'.
        let seed = random_seed.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ 0x0062_656e_6368;
        let mut source = crate::selfplay::RandomMates::new(variant, seed, 5, 20_000, 0.0);
        let (mut by_length, mut uniform, mut with_net) = ([0usize; 2], Vec::new(), Vec::new());
        while uniform.len() < random {
            let Some(problem) = source.next_until(u64::MAX) else { break };
            by_length[usize::from(problem.plies == 5)] += 1;
            uniform.push(solve(Arc::new(UniformEvaluator), &problem.game).map(|(n, _)| n));
            with_net.push(solve(net.clone(), &problem.game).map(|(n, _)| n));
        }
        let solved = |v: &[Option<u64>]| v.iter().filter(|n| n.is_some()).count();
        // Unsolved problems sort last (as if they took forever).
        let median = |v: &[Option<u64>]| {
            let mut v: Vec<u64> = v.iter().map(|n| n.unwrap_or(u64::MAX)).collect();
            v.sort_unstable();
            match v.get(v.len() / 2) {
                Some(&u64::MAX) | None => format!(">{nodes}"),
                Some(n) => n.to_string(),
            }
        };
        let total = |v: &[Option<u64>]| v.iter().map(|n| n.unwrap_or(nodes)).sum::<u64>();
        let key = |n: &Option<u64>| n.unwrap_or(u64::MAX);
        let net_faster = uniform.iter().zip(&with_net).filter(|(u, n)| key(n) < key(u)).count();
        let uniform_faster = uniform.iter().zip(&with_net).filter(|(u, n)| key(u) < key(n)).count();
        println!(
            "{:<16} {:>9} {:>22} {:>22} {:>22}  {}",
            variant.name(),
            format!("{}/{}", by_length[0], by_length[1]),
            format!("{}/{} {} {}", solved(&uniform), uniform.len(), median(&uniform), total(&uniform)),
            format!("{}/{} {} {}", solved(&with_net), with_net.len(), median(&with_net), total(&with_net)),
            format!("{net_faster}/{uniform_faster}/{}", uniform.len() - net_faster - uniform_faster),
            net.name()
        );
    }
    Ok(())
}

/// What `bench search` measures.
struct SearchBench {
    variant: Variant,
    device: crate::nn::DeviceChoice,
    nodes: u64,
    net_nodes: u64,
    batch: usize,
    runs: u32,
}

fn bench_search(
    b: SearchBench,
    (threads, mate_plies, pipelines): (&[usize], &[u32], &[usize]),
    json_path: Option<&Path>,
) -> Result<()> {
    use crate::mcts::{EvalRequest, Evaluation, Evaluator, Limits, SearchParams, Searcher, UniformEvaluator};
    use crate::nn::NetEvaluator;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    /// Counts the positions the search sends to the evaluator, and calls.
    struct Counting(Arc<dyn Evaluator>, AtomicU64, AtomicU64);
    impl Evaluator for Counting {
        fn evaluate(&self, batch: &[EvalRequest]) -> Vec<Evaluation> {
            self.1.fetch_add(batch.len() as u64, Ordering::Relaxed);
            self.2.fetch_add(1, Ordering::Relaxed);
            self.0.evaluate(batch)
        }
        fn max_batch(&self) -> usize {
            self.0.max_batch()
        }
        fn name(&self) -> String {
            self.0.name()
        }
        fn pipeline_depth(&self) -> usize {
            self.0.pipeline_depth()
        }
    }

    anyhow::ensure!(threads.iter().all(|&t| (1..=256).contains(&t)), "--threads must be 1 to 256");
    anyhow::ensure!(mate_plies.iter().all(|&p| p <= 9), "--mate-plies must be 0 to 9");
    anyhow::ensure!(pipelines.iter().all(|&p| (1..=16).contains(&p)), "--pipeline depths must be 1 to 16");
    let (variant, batch) = (b.variant, b.batch);
    let net = Arc::new(NetEvaluator::load(variant, &crate::nn::ModelSource::Shipped, b.device, batch)?);
    let pipelines: Vec<usize> = if pipelines.is_empty() { vec![net.pipeline_depth()] } else { pipelines.to_vec() };
    // The network's raw throughput at this batch size, one batch at a
    // time, from positions of random games so they look like search leaves.
    let raw = {
        let reqs = sample_positions(variant, batch, 11);
        net.evaluate(&reqs);
        let mut times: Vec<f64> = (0..15)
            .map(|_| {
                let t = Instant::now();
                net.evaluate(&reqs);
                t.elapsed().as_secs_f64()
            })
            .collect();
        times.sort_by(f64::total_cmp);
        batch as f64 / times[7]
    };
    println!("network: {}; raw throughput at batch {batch}: {raw:.0} positions/s", net.name());
    println!(
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
    let mut rows = Vec::new();
    let uniform: Arc<dyn Evaluator> = Arc::new(UniformEvaluator);
    let mut settings = vec![("uniform", 1, b.nodes)];
    settings.extend(pipelines.iter().map(|&p| ("network", p, b.net_nodes)));
    for (label, pipeline, budget) in settings {
        net.set_pipeline_depth(pipeline);
        let evaluator: Arc<dyn Evaluator> = if label == "uniform" { uniform.clone() } else { net.clone() };
        for (&mate, &t) in mate_plies.iter().flat_map(|m| threads.iter().map(move |t| (m, t))) {
            let mut samples = Vec::new();
            for _ in 0..b.runs {
                net.reset_device_idle();
                let counting = Arc::new(Counting(evaluator.clone(), AtomicU64::new(0), AtomicU64::new(0)));
                let params =
                    SearchParams { threads: t, batch_size: batch, mate_plies: mate, ..SearchParams::default() };
                let mut searcher = Searcher::new(counting.clone(), params);
                searcher.set_position(&Game::new(crate::rules::Position::startpos(variant)));
                let limits = Limits { nodes: Some(budget), ..Limits::default() };
                let started = Instant::now();
                let result = searcher.search(&limits, &AtomicBool::new(false), &mut |_| {});
                let secs = started.elapsed().as_secs_f64();
                let calls = counting.2.load(Ordering::Relaxed).max(1);
                let idle = net.device_idle().per_batch().as_secs_f64() * 1e3;
                samples.push((secs, result.info.playouts, counting.1.load(Ordering::Relaxed), calls, idle));
            }
            samples.sort_by(|a, b| a.0.total_cmp(&b.0));
            let (secs, playouts, evals, calls, idle) = samples[samples.len() / 2];
            let evals_per_s = evals as f64 / secs;
            let is_net = label == "network";
            let vs_raw = is_net.then(|| 100.0 * evals_per_s / raw);
            println!(
                "{:<9} {:<16} {:>4} {:>7} {:>5} {:>6} {:>9} {:>9.3} {:>11.0} {:>10.0} {:>9.1} {:>7} {:>10}",
                label,
                variant.name(),
                mate,
                t,
                pipeline,
                batch,
                playouts,
                secs,
                playouts as f64 / secs,
                evals_per_s,
                evals as f64 / calls as f64,
                vs_raw.map_or("-".into(), |v| format!("{v:.0}%")),
                if is_net { format!("{idle:.2} ms") } else { "-".into() }
            );
            rows.push(json!({
                "evaluator": label, "mate_plies": mate, "threads": t, "pipeline": pipeline, "batch": batch,
                "playouts": playouts, "seconds": secs, "playouts_per_s": playouts as f64 / secs,
                "evals_per_s": evals_per_s, "avg_batch": evals as f64 / calls as f64,
                "vs_raw_percent": vs_raw, "device_idle_ms_per_batch": is_net.then_some(idle),
            }));
        }
    }
    write_json(
        json_path,
        &json!({ "variant": variant.name(), "network": net.name(), "raw_positions_per_s": raw, "batch": batch, "rows": rows }),
    )
}
