//! `pantheon match`: two players (nets, baselines or external USI
//! engines) in paired games, our rules the arbiter.

use super::*;

#[derive(Args, Debug)]
pub struct MatchCommand {
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
}

impl MatchCommand {
    pub fn run(self) -> Result<()> {
        let MatchCommand {
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
        } = self;
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
            Some(path) => {
                Some((std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?, path))
            }
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
}
