//! `pantheon bench`: perft, network, mate and search speed, medians over
//! several runs.

use crate::notation::parse_position;
use crate::rules::{Game, Variant, perft};
use anyhow::Result;
use clap::Subcommand;
use std::time::Instant;

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Perft on the start positions and a middlegame with full hands
    /// (single thread, bulk counting at the leaves), checking each count.
    Perft {
        /// Runs per position; the median is reported.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
        runs: u32,
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
        /// Playouts per run.
        #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
        nodes: u64,
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
            BenchCommand::Nn { variant, device, batch, model, runs } => bench_nn(variant, device, &batch, &model, runs),
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
            BenchCommand::Search { variant, nodes, threads, batch, runs, mate_plies } => {
                bench_search(variant, nodes, (&threads, &mate_plies), batch as usize, runs)
            }
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
    batches: &[usize],
    model: &crate::nn::ModelSource,
    runs: u32,
) -> Result<()> {
    use crate::mcts::EvalRequest;
    use crate::nn::NetEvaluator;
    anyhow::ensure!(batches.iter().all(|&b| (1..=4096).contains(&b)), "--batch sizes must be 1 to 4096");
    let max = batches.iter().copied().max().unwrap_or(1);
    let mut eval = NetEvaluator::load(variant, model, device, max)?;
    eval.set_stage_timing(true);
    let c = eval.config().clone();
    // On the GPU both policy paths are measured: every logit read back and
    // the softmax on the CPU ("plain"), or the WGSL masked-softmax kernel.
    let paths: &[bool] = if eval.policy_kernel() { &[false, true] } else { &[false] };
    println!(
        "{} ({} parameters, {:.1} MFLOP per position)",
        crate::mcts::Evaluator::name(&eval),
        c.parameters(),
        c.flops_per_position() as f64 / 1e6
    );
    // Positions from a short seeded random game, so hands and promotions appear.
    let mut rng = crate::mcts::Rng::new(7);
    let mut game = Game::new(crate::rules::Position::startpos(variant));
    let mut positions = Vec::new();
    while positions.len() < max {
        let moves = game.legal_moves();
        if moves.is_empty() || game.outcome().is_some() || game.moves().len() > 60 {
            game = Game::new(crate::rules::Position::startpos(variant));
            continue;
        }
        positions.push(EvalRequest {
            position: game.position().clone(),
            moves: moves.clone(),
            repetitions: game.repetitions(),
        });
        game.play(moves[rng.below(moves.len())]);
    }
    println!(
        "{:>6} {:>7} {:>12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "batch", "softmax", "positions/s", "total ms", "encode", "upload", "forward", "download", "policy"
    );
    for (&b, &kernel) in batches.iter().flat_map(|b| paths.iter().map(move |k| (b, k))) {
        eval.set_policy_kernel(kernel);
        let batch = &positions[..b];
        let _ = eval.evaluate_timed(batch); // warm-up
        let mut runs_t: Vec<crate::nn::Timings> = (0..runs).map(|_| eval.evaluate_timed(batch).1).collect();
        let total = |t: &crate::nn::Timings| t.encode + t.upload + t.forward + t.download + t.policy;
        runs_t.sort_by_key(total);
        let m = &runs_t[runs_t.len() / 2];
        let ms = |d: std::time::Duration| format!("{:.2}", d.as_secs_f64() * 1e3);
        println!(
            "{:>6} {:>7} {:>12.0} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
            b,
            if kernel {
                "kernel"
            } else if paths.len() > 1 {
                "plain"
            } else {
                "cpu"
            },
            b as f64 / total(m).as_secs_f64(),
            ms(total(m)),
            ms(m.encode),
            ms(m.upload),
            ms(m.forward),
            ms(m.download),
            ms(m.policy)
        );
    }
    Ok(())
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

fn bench_search(
    variant: Variant,
    nodes: u64,
    (threads, mate_plies): (&[usize], &[u32]),
    batch: usize,
    runs: u32,
) -> Result<()> {
    use crate::mcts::{EvalRequest, Evaluation, Evaluator, Limits, SearchParams, Searcher, UniformEvaluator};
    use crate::nn::{DeviceChoice, NetEvaluator};
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
    }

    anyhow::ensure!(threads.iter().all(|&t| (1..=256).contains(&t)), "--threads must be 1 to 256");
    anyhow::ensure!(mate_plies.iter().all(|&p| p <= 9), "--mate-plies must be 0 to 9");
    let net: Arc<dyn Evaluator> =
        Arc::new(NetEvaluator::load(variant, &crate::nn::ModelSource::Shipped, DeviceChoice::Cpu, batch)?);
    // The network's raw throughput at this batch size, from positions of a
    // short search so they look like search leaves.
    let raw = {
        let mut game = Game::new(crate::rules::Position::startpos(variant));
        let mut batch_reqs = Vec::new();
        let mut rng = crate::mcts::Rng::new(11);
        while batch_reqs.len() < batch {
            let moves = game.legal_moves();
            if moves.is_empty() || game.outcome().is_some() {
                game = Game::new(crate::rules::Position::startpos(variant));
                continue;
            }
            batch_reqs.push(EvalRequest { position: game.position().clone(), moves: moves.clone(), repetitions: 1 });
            game.play(moves[rng.below(moves.len())]);
        }
        net.evaluate(&batch_reqs);
        let mut times: Vec<f64> = (0..15)
            .map(|_| {
                let t = Instant::now();
                net.evaluate(&batch_reqs);
                t.elapsed().as_secs_f64()
            })
            .collect();
        times.sort_by(f64::total_cmp);
        batch as f64 / times[7]
    };
    println!("network: {}; raw throughput at batch {batch}: {raw:.0} positions/s", net.name());
    println!(
        "{:<12} {:<16} {:>4} {:>7} {:>6} {:>10} {:>10} {:>12} {:>12} {:>10} {:>8}",
        "evaluator",
        "variant",
        "mate",
        "threads",
        "batch",
        "playouts",
        "median s",
        "playouts/s",
        "evals/s",
        "avg batch",
        "vs raw"
    );
    for (label, evaluator, budget) in [
        ("uniform", Arc::new(UniformEvaluator) as Arc<dyn Evaluator>, nodes),
        ("network", net.clone(), nodes.min(4000)),
    ] {
        for (&mate, &t) in mate_plies.iter().flat_map(|m| threads.iter().map(move |t| (m, t))) {
            let mut samples = Vec::new();
            for _ in 0..runs {
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
                samples.push((secs, result.info.playouts, counting.1.load(Ordering::Relaxed), calls));
            }
            samples.sort_by(|a, b| a.0.total_cmp(&b.0));
            let (secs, playouts, evals, calls) = samples[samples.len() / 2];
            let evals_per_s = evals as f64 / secs;
            let vs_raw = if label == "network" { format!("{:.0}%", 100.0 * evals_per_s / raw) } else { "-".into() };
            println!(
                "{:<12} {:<16} {:>4} {:>7} {:>6} {:>10} {:>10.3} {:>12.0} {:>12.0} {:>10.1} {:>8}",
                label,
                variant.name(),
                mate,
                t,
                batch,
                playouts,
                secs,
                playouts as f64 / secs,
                evals_per_s,
                evals as f64 / calls as f64,
                vs_raw
            );
        }
    }
    Ok(())
}
