//! `pantheon bench mates`: playouts until the search proves the mate
//! problems of the search tests, and random mates in 3 and 5, with the
//! uniform evaluator and with a net.

use crate::mcts::{Evaluator, Limits, Proof, SearchParams, Searcher, UniformEvaluator};
use crate::nn::{DeviceChoice, ModelSource, NetEvaluator};
use crate::notation::parse_position;
use crate::rules::{Game, Variant};
use anyhow::Result;
use clap::Args;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

#[derive(Args, Debug)]
pub struct MatesBench {
    /// Only this variant's problems.
    #[arg(long)]
    variant: Option<Variant>,
    /// Model file (needs --variant; default: each variant's shipped net).
    #[arg(long)]
    model: Option<ModelSource>,
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
    #[arg(long, default_value_t = crate::mcts::POLICY_TEMPERATURE, value_parser = crate::cli::parse_policy_temperature)]
    policy_temperature: f64,
}

/// Playouts and the proven length of a solved problem; None when the
/// budget ran out first.
type Solved = Option<(u64, u16)>;

impl MatesBench {
    pub fn run(self) -> Result<()> {
        anyhow::ensure!(self.model.is_none() || self.variant.is_some(), "--model needs --variant");
        let mut nets =
            Nets { model: self.model.clone().unwrap_or_default(), batch: self.batch as usize, loaded: Vec::new() };
        self.problems(&mut nets)?;
        if self.random > 0 {
            self.random_mates(&mut nets)?;
        }
        Ok(())
    }

    fn variants(&self) -> Vec<Variant> {
        self.variant.map_or_else(|| Variant::ALL.to_vec(), |v| vec![v])
    }

    /// Playouts until the root is proven won, and the distance proven (the
    /// first proof found can be longer than the shortest).
    fn solve(&self, evaluator: Arc<dyn Evaluator>, game: &Game) -> Solved {
        let params = SearchParams {
            threads: 1,
            batch_size: self.batch as usize,
            hash_mib: 256,
            mate_plies: self.mate_plies,
            policy_temperature: self.policy_temperature,
            ..SearchParams::default()
        };
        let mut searcher = Searcher::new(evaluator, params);
        searcher.set_position(game);
        let limits = Limits { nodes: Some(self.nodes), ..Limits::default() };
        let r = searcher.search(&limits, &AtomicBool::new(false), &mut |_| {});
        match r.proof {
            Proof::Win(plies) => Some((r.info.playouts, plies)),
            _ => None,
        }
    }

    /// The search tests' problems, one line each.
    fn problems(&self, nets: &mut Nets) -> Result<()> {
        let (batch, nodes, mate_plies) = (self.batch, self.nodes, self.mate_plies);
        outln!(
            "playouts to prove each problem (1 thread, batch {batch}, budget {nodes}, leaf mate search {mate_plies} \
             plies, prior temperature {})",
            self.policy_temperature
        );
        outln!("{:<16} {:<13} {:>16} {:>16} {:>6}  net", "variant", "problem", "uniform", "net", "ratio");
        let show = |n: Solved, plies: u32| match n {
            Some((n, p)) if u32::from(p) == plies => n.to_string(),
            Some((n, p)) => format!("{n} ({p} plies)"),
            None => format!(">{nodes}"),
        };
        for p in crate::mcts::problems::all().into_iter().filter(|p| self.variant.is_none_or(|v| v == p.variant)) {
            let net = nets.get(p.variant)?;
            let game = Game::new(parse_position(p.variant, p.sfen).map_err(|e| anyhow::anyhow!("{}: {e}", p.sfen))?);
            let uniform = self.solve(Arc::new(UniformEvaluator), &game);
            let with_net = self.solve(net.clone(), &game);
            let ratio = match (uniform, with_net) {
                (Some((u, _)), Some((n, _))) => format!("{:.2}", u as f64 / n.max(1) as f64),
                _ => "-".into(),
            };
            outln!(
                "{:<16} {:<13} {:>16} {:>16} {:>6}  {}",
                p.variant.name(),
                format!("{} in {}", p.kind, p.plies),
                show(uniform, p.plies),
                show(with_net, p.plies),
                ratio,
                net.name()
            );
        }
        Ok(())
    }

    /// Held-out random mates in 3 and 5, one line per variant.
    fn random_mates(&self, nets: &mut Nets) -> Result<()> {
        let (random, seed) = (self.random as usize, self.random_seed);
        outln!();
        outln!(
            "{random} random mates in 3 and 5 per variant (seed {seed}): solved within the budget, median \
             playouts, total playouts (an unsolved one counts the budget)"
        );
        outln!(
            "{:<16} {:>9} {:>22} {:>22} {:>22}  net",
            "variant",
            "in 3/in 5",
            "uniform",
            "net",
            "faster: net/uniform/="
        );
        for variant in self.variants() {
            let net = nets.get(variant)?;
            // A seed stream of its own, apart from the training samples'.
            let seed = seed.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ 0x0062_656e_6368;
            let mut source = crate::selfplay::RandomMates::new(variant, seed, 5, 20_000, 0.0);
            let (mut by_length, mut uniform, mut with_net) = ([0usize; 2], Vec::new(), Vec::new());
            while uniform.len() < random {
                let Some(problem) = source.next_until(u64::MAX) else { break };
                by_length[usize::from(problem.plies == 5)] += 1;
                uniform.push(self.solve(Arc::new(UniformEvaluator), &problem.game).map(|(n, _)| n));
                with_net.push(self.solve(net.clone(), &problem.game).map(|(n, _)| n));
            }
            let key = |n: &Option<u64>| n.unwrap_or(u64::MAX);
            let net_faster = uniform.iter().zip(&with_net).filter(|(u, n)| key(n) < key(u)).count();
            let uniform_faster = uniform.iter().zip(&with_net).filter(|(u, n)| key(u) < key(n)).count();
            outln!(
                "{:<16} {:>9} {:>22} {:>22} {:>22}  {}",
                variant.name(),
                format!("{}/{}", by_length[0], by_length[1]),
                self.summary(&uniform),
                self.summary(&with_net),
                format!("{net_faster}/{uniform_faster}/{}", uniform.len() - net_faster - uniform_faster),
                net.name()
            );
        }
        Ok(())
    }

    /// "solved/count median total" of one evaluator's playouts; an
    /// unsolved problem sorts last for the median and counts the budget in
    /// the total.
    fn summary(&self, playouts: &[Option<u64>]) -> String {
        let solved = playouts.iter().filter(|n| n.is_some()).count();
        let mut sorted: Vec<u64> = playouts.iter().map(|n| n.unwrap_or(u64::MAX)).collect();
        sorted.sort_unstable();
        let median = match sorted.get(sorted.len() / 2) {
            Some(&u64::MAX) | None => format!(">{}", self.nodes),
            Some(n) => n.to_string(),
        };
        let total = playouts.iter().map(|n| n.unwrap_or(self.nodes)).sum::<u64>();
        format!("{solved}/{} {median} {total}", playouts.len())
    }
}

/// Each variant's net, loaded on the CPU when first asked for.
struct Nets {
    model: ModelSource,
    batch: usize,
    loaded: Vec<(Variant, Arc<dyn Evaluator>)>,
}

impl Nets {
    fn get(&mut self, variant: Variant) -> Result<Arc<dyn Evaluator>> {
        if let Some((_, n)) = self.loaded.iter().find(|(v, _)| *v == variant) {
            return Ok(n.clone());
        }
        let n: Arc<dyn Evaluator> = Arc::new(NetEvaluator::load(variant, &self.model, DeviceChoice::Cpu, self.batch)?);
        self.loaded.push((variant, n.clone()));
        Ok(n)
    }
}
