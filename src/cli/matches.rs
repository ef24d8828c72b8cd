//! `pantheon match`: two players (nets, baselines or external USI
//! engines) in paired games, our rules the arbiter.

use super::*;

#[derive(Args, Debug)]
pub struct MatchCommand {
    #[arg(long)]
    variant: Variant,
    /// Player A: a weight file, `shipped` (the variant's net for the
    /// device; `shipped-small`, `shipped-large`), `uniform` (search without a
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
    /// The root's search of searching players: puct or gumbel
    /// (Sequential Halving's move at the playout limit; with --movetime
    /// the root stays PUCT): one value for both, or A,B.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [super::rl::Root::Puct])]
    root: Vec<super::rl::Root>,
    /// The nets' number format: f32, bf16 (CPU with AVX-512 BF16) or f16
    /// (GPU): one value for both, or A,B.
    #[arg(long, value_delimiter = ',', default_values_t = [crate::nn::Precision::F32])]
    precision: Vec<crate::nn::Precision>,
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
        let config = self.config()?;
        let precision = per_player(&self.precision, "--precision")?;
        let pa = self.player(&self.a, &self.a_options, &self.a_go, precision[0])?;
        let pb = self.player(&self.b, &self.b_options, &self.b_go, precision[1])?;
        let mut writer = GameWriter::new(&self)?;
        let result = crate::selfplay::play_match(&config, pa, pb, &mut |g| writer.game(g));
        println!("{} vs {}: {result}", self.a, self.b);
        for (i, name) in [(0, &self.a), (1, &self.b)] {
            if let Some((median, p99, max)) = crate::selfplay::think_summary(&result.think_ms[i]) {
                println!(
                    "{name}: {} moves, time per move median {median} ms, 99th percentile {p99} ms, max {max} ms; {} games lost on time",
                    result.think_ms[i].len(),
                    result.time_losses[i]
                );
            }
        }
        writer.error.map_or(Ok(()), Err)
    }

    fn config(&self) -> Result<crate::selfplay::MatchConfig> {
        let mate_plies = per_player(&self.mate_plies, "--mate-plies")?;
        let policy_temperature = per_player(&self.policy_temperature, "--policy-temperature")?;
        let root = per_player(&self.root, "--root")?;
        let gumbel = root.map(|r| (r == super::rl::Root::Gumbel).then(crate::mcts::GumbelParams::default));
        anyhow::ensure!(mate_plies.iter().all(|&p| p <= 9), "--mate-plies must be 0 to 9");
        let limit = match self.movetime {
            Some(ms) => crate::selfplay::MoveLimit::Time(std::time::Duration::from_millis(ms)),
            None => crate::selfplay::MoveLimit::Nodes(self.nodes),
        };
        Ok(crate::selfplay::MatchConfig {
            variant: self.variant,
            games: self.games as usize,
            limit,
            threads: self.threads as usize,
            opening_plies: self.opening_plies,
            max_plies: self.max_plies.max(1),
            mate_plies,
            policy_temperature,
            gumbel,
            seed: self.seed,
        })
    }

    /// A player from its `--a`/`--b` spec: an external engine (checked
    /// to answer as a USI engine of this variant), a baseline or a net.
    fn player(
        &self,
        spec: &str,
        options: &[String],
        go: &str,
        precision: crate::nn::Precision,
    ) -> Result<crate::selfplay::Player> {
        use crate::selfplay::Player;
        if let Some(command) = spec.strip_prefix("usi:") {
            let engine = teacher::engine_spec(command, options, go, self.engine_timeout)?;
            let name = teacher::check_engine(&engine, self.variant)?;
            eprintln!("engine '{command}' is {name}; go {go}");
            return Ok(Player::Usi(engine));
        }
        anyhow::ensure!(options.is_empty(), "engine options are only for usi: players");
        Ok(match spec {
            "uniform" => Player::Search(std::sync::Arc::new(crate::mcts::UniformEvaluator)),
            "random" => Player::Random,
            "greedy" => Player::Greedy,
            model => {
                let model: crate::nn::ModelSource = model.parse()?;
                let mut net = crate::nn::NetEvaluator::load(self.variant, &model, self.device, 8)?;
                net.set_precision(precision)?;
                Player::Search(std::sync::Arc::new(net))
            }
        })
    }
}

/// Writes each finished game to the `--record` file and as a shard into
/// `--record-shards`; the first write error stops both and is kept.
struct GameWriter {
    variant: Variant,
    players: (String, String),
    opening_plies: usize,
    seed: u64,
    record: Option<(std::fs::File, std::path::PathBuf)>,
    shards: Option<std::path::PathBuf>,
    error: Option<anyhow::Error>,
}

impl GameWriter {
    fn new(m: &MatchCommand) -> Result<GameWriter> {
        let record = match &m.record {
            Some(path) => Some((
                std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?,
                path.clone(),
            )),
            None => None,
        };
        if let Some(dir) = &m.record_shards {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        Ok(GameWriter {
            variant: m.variant,
            players: (m.a.clone(), m.b.clone()),
            opening_plies: m.opening_plies,
            seed: m.seed,
            record,
            shards: m.record_shards.clone(),
            error: None,
        })
    }

    /// Prints the game's line, then writes it where asked.
    fn game(&mut self, g: &crate::selfplay::MatchGame<'_>) {
        let plies = g.game.moves().len();
        let summary = format!("A ({}) scores {}: {}, {plies} plies", g.a_color, g.score, g.ending);
        println!("game {}: {summary}", g.index + 1);
        if self.error.is_none() {
            self.error = self.write_shard(g).and_then(|()| self.write_record(g, &summary)).err();
        }
    }

    fn write_shard(&self, g: &crate::selfplay::MatchGame<'_>) -> Result<()> {
        let Some(dir) = &self.shards else { return Ok(()) };
        let (a, b) = &self.players;
        let samples = g.samples(self.opening_plies);
        let shard = crate::selfplay::Shard { variant: self.variant, model_id: format!("match:{a}:{b}"), samples };
        shard.write(dir, &format!("match-{:x}-{:06}", self.seed, g.index)).map(drop).map_err(Into::into)
    }

    fn write_record(&mut self, g: &crate::selfplay::MatchGame<'_>, summary: &str) -> Result<()> {
        use std::io::Write as _;
        let Some((file, path)) = &mut self.record else { return Ok(()) };
        let mut line = format!("position sfen {}", to_sfen(g.game.start()));
        if !g.game.moves().is_empty() {
            line.push_str(" moves");
            for &mv in g.game.moves() {
                line.push(' ');
                line.push_str(&format_move(self.variant, mv));
            }
        }
        let (a, b) = &self.players;
        let text = format!("# game {}: A = {a}, B = {b}; {summary}\n{line}\n", g.index + 1);
        file.write_all(text.as_bytes())
            .and_then(|_| file.flush())
            .with_context(|| format!("cannot write {}", path.display()))
    }
}
