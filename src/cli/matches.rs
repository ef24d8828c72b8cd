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
    /// Milliseconds an external engine's answer may come past its
    /// `movetime` or `byoyomi` before it loses on time (cutechess-cli's
    /// timemargin): raise it on a loaded machine.
    #[arg(long, default_value_t = crate::selfplay::DEFAULT_TIME_MARGIN.as_millis() as u64,
          value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    time_margin: u64,
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
    /// Random plies before the players take over (0 to 60).
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
    /// PUCT exploration constant c_init of searching players (0.1 to 10):
    /// one value for both, or A,B. Default: the variant's, 2.0 in
    /// minishogi, 1.25 in the 9x9 variants.
    #[arg(long, value_delimiter = ',', value_parser = super::parse_cpuct)]
    cpuct: Vec<f64>,
    /// The root's search of searching players: puct or gumbel
    /// (Sequential Halving's move at the playout limit; with --movetime
    /// the root stays PUCT): one value for both, or A,B.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [super::rl::Root::Puct])]
    root: Vec<super::rl::Root>,
    /// The nets' number format: f32, bf16 (CPU with AMX or AVX-512 BF16),
    /// f16 (GPU) or auto (bf16 where it can be, else f32; what the USI
    /// engine plays by default): one value for both, or A,B.
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
    /// Keep each finished game's result in this file (created if need
    /// be). Rerunning the same command with the same file plays only the
    /// games it does not hold yet: a match cut short resumes where it
    /// was, and a larger --games extends a finished one.
    #[arg(long)]
    results: Option<std::path::PathBuf>,
}

impl MatchCommand {
    pub fn run(self) -> Result<()> {
        let config = self.config()?;
        // Games are played in pairs.
        let games = config.games.div_ceil(2) * 2;
        let precision = per_player(&self.precision, "--precision")?;
        let (pa, id_a) = self.player(&self.a, &self.a_options, &self.a_go, precision[0])?;
        let (pb, id_b) = self.player(&self.b, &self.b_options, &self.b_go, precision[1])?;
        let (results, done) = match &self.results {
            Some(path) => {
                let fingerprint = self.fingerprint([(&pa, &id_a), (&pb, &id_b)], config.cpuct_init);
                let (file, done) = ResultsFile::open(path, &fingerprint, games)?;
                if !done.is_empty() {
                    eprintln!("{}: {} games played before, {} to play", path.display(), done.len(), games - done.len());
                }
                (Some(file), done)
            }
            None => (None, Default::default()),
        };
        let to_play = games - done.len();
        let mut writer = GameWriter::new(&self, results, !done.is_empty())?;
        let result = crate::selfplay::continue_match(&config, pa, pb, &done, &mut |g| writer.game(g));
        outln!("{} vs {}: {result}", self.a, self.b);
        let now = if done.is_empty() { String::new() } else { format!(" in the {to_play} games played now") };
        for (i, name) in [(0, &self.a), (1, &self.b)] {
            if let Some((median, p99, max)) = crate::selfplay::think_summary(&result.think_ms[i]) {
                outln!(
                    "{name}: {} moves{now}, time per move median {median} ms, 99th percentile {p99} ms, max {max} ms; {} games lost on time",
                    result.think_ms[i].len(),
                    result.time_losses[i]
                );
            }
        }
        writer.error.map_or(Ok(()), Err)
    }

    /// The settings and players that decide the games, as one line: a
    /// results file holds games of one match only. The number of games is
    /// not part of it (the first games of a longer match are the same).
    /// `players` are A and B with what plays (an engine's name, a net's
    /// weights), so that a changed weight file or engine does not resume
    /// another's match; `cpuct_init` is the searching players' c_init.
    fn fingerprint(&self, players: [(&crate::selfplay::Player, &str); 2], cpuct_init: [f64; 2]) -> String {
        let [(_, id_a), (_, id_b)] = players;
        let limit = match self.movetime {
            Some(ms) => format!("movetime={ms}"),
            None => format!("nodes={}", self.nodes),
        };
        // c_init matters only to the players that search here (nets,
        // `uniform`). It is named unless each of them plays 1.25, the one
        // value matches were played with before the flag existed, so that
        // their files still resume.
        let at_old_value = |((player, _), c): ((&crate::selfplay::Player, &str), f64)| {
            !matches!(player, crate::selfplay::Player::Search(_)) || c == crate::mcts::CPUCT_INIT
        };
        let cpuct = if players.into_iter().zip(cpuct_init).all(at_old_value) {
            String::new()
        } else {
            format!(" cpuct={cpuct_init:?}")
        };
        format!(
            "variant={} a={:?} b={:?} a-option={:?} b-option={:?} a-go={:?} b-go={:?} {limit} threads={} \
             opening-plies={} max-plies={} mate-plies={:?} policy-temperature={:?}{cpuct} root={:?} precision={:?} \
             device={:?} seed={} a-is={id_a:?} b-is={id_b:?}",
            self.variant.name(),
            self.a,
            self.b,
            self.a_options,
            self.b_options,
            self.a_go,
            self.b_go,
            self.threads,
            self.opening_plies,
            self.max_plies,
            self.mate_plies,
            self.policy_temperature,
            self.root,
            self.precision,
            self.device,
            self.seed
        )
    }

    fn config(&self) -> Result<crate::selfplay::MatchConfig> {
        let mate_plies = per_player(&self.mate_plies, "--mate-plies")?;
        let policy_temperature = per_player(&self.policy_temperature, "--policy-temperature")?;
        // The searching players' c_init: `--cpuct`, or the variant's.
        let cpuct_init = match self.cpuct.as_slice() {
            [] => [crate::mcts::engine_cpuct(self.variant); 2],
            c => per_player(c, "--cpuct")?,
        };
        let root = per_player(&self.root, "--root")?;
        let gumbel = root.map(|r| (r == super::rl::Root::Gumbel).then(crate::mcts::GumbelParams::default));
        anyhow::ensure!(mate_plies.iter().all(|&p| p <= 9), "--mate-plies must be 0 to 9");
        // Random openings are drawn again until one does not end the game:
        // a bound keeps that quick, and the players must get a move.
        anyhow::ensure!(self.opening_plies <= MAX_OPENING_PLIES, "--opening-plies must be 0 to {MAX_OPENING_PLIES}");
        anyhow::ensure!(
            self.max_plies > self.opening_plies,
            "--max-plies must be more than --opening-plies ({})",
            self.opening_plies
        );
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
            max_plies: self.max_plies,
            mate_plies,
            policy_temperature,
            cpuct_init,
            gumbel,
            time_margin: std::time::Duration::from_millis(self.time_margin),
            seed: self.seed,
        })
    }

    /// A player from its `--a`/`--b` spec: an external engine (checked
    /// to answer as a USI engine of this variant), a baseline or a net;
    /// with what it is (the engine's name, the net's weight-file CRC).
    fn player(
        &self,
        spec: &str,
        options: &[String],
        go: &str,
        precision: crate::nn::Precision,
    ) -> Result<(crate::selfplay::Player, String)> {
        use crate::selfplay::Player;
        if let Some(command) = spec.strip_prefix("usi:") {
            let engine = teacher::engine_spec(command, options, go, self.engine_timeout)?;
            let name = teacher::check_engine(&engine, self.variant)?;
            eprintln!("engine '{command}' is {name}; go {go}");
            return Ok((Player::Usi(engine), name));
        }
        anyhow::ensure!(options.is_empty(), "engine options are only for usi: players");
        Ok(match spec {
            "uniform" => (Player::Search(std::sync::Arc::new(crate::mcts::UniformEvaluator)), spec.into()),
            "random" => (Player::Random, spec.into()),
            "greedy" => (Player::Greedy, spec.into()),
            model => {
                let model: crate::nn::ModelSource = model.parse()?;
                let mut net = crate::nn::NetEvaluator::load(self.variant, &model, self.device, 8)?;
                net.set_precision(precision)?;
                let id = match net.weights_crc() {
                    Some(crc) => format!("weights {crc:08x}"),
                    None => spec.into(),
                };
                (Player::Search(std::sync::Arc::new(net)), id)
            }
        })
    }
}

/// Writes each finished game to the `--record` file, as a shard into
/// `--record-shards` and last to the `--results` file; the first write
/// error stops all three and is kept.
struct GameWriter {
    variant: Variant,
    players: (String, String),
    opening_plies: usize,
    seed: u64,
    record: Option<(std::fs::File, std::path::PathBuf)>,
    shards: Option<std::path::PathBuf>,
    results: Option<ResultsFile>,
    error: Option<anyhow::Error>,
}

impl GameWriter {
    /// `resumed`: the match continues, so the record file is appended to.
    fn new(m: &MatchCommand, results: Option<ResultsFile>, resumed: bool) -> Result<GameWriter> {
        let record = match &m.record {
            Some(path) => Some((
                std::fs::OpenOptions::new()
                    .create(true)
                    .write(true)
                    .append(resumed)
                    .truncate(!resumed)
                    .open(path)
                    .with_context(|| format!("cannot create {}", path.display()))?,
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
            results,
            error: None,
        })
    }

    /// Prints the game's line, then writes it where asked (on one line:
    /// the results file is read back line by line). A failed write stops
    /// the match: games played on would not be kept.
    fn game(&mut self, g: &crate::selfplay::MatchGame<'_>) -> std::ops::ControlFlow<()> {
        let plies = g.game.moves().len();
        let ending = g.ending.replace(['\n', '\r'], " ");
        let summary = format!("A ({}) scores {}: {ending}, {plies} plies", g.a_color, g.score);
        let line = format!("game {}: {summary}", g.index + 1);
        outln!("{line}");
        self.error = self
            .write_shard(g)
            .and_then(|()| self.write_record(g, &summary))
            .and_then(|()| self.results.as_mut().map_or(Ok(()), |r| r.append(&line)))
            .err();
        if self.error.is_some() { std::ops::ControlFlow::Break(()) } else { std::ops::ControlFlow::Continue(()) }
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

/// The `--results` file: a header line naming the match's settings, then
/// one line per finished game as the match prints it (`game N: A (sente)
/// scores 1: ...`).
struct ResultsFile {
    path: std::path::PathBuf,
    file: std::fs::File,
}

/// The most random plies an opening may have.
const MAX_OPENING_PLIES: usize = 60;

const RESULTS_HEADER: &str = "# pantheon match results: ";

impl ResultsFile {
    /// Opens or creates the file for a match of `games` games with these
    /// settings, with A's score in each game it holds by 0-based index; a
    /// line cut short by a kill (no newline yet) is dropped.
    fn open(
        path: &std::path::Path,
        fingerprint: &str,
        games: usize,
    ) -> Result<(ResultsFile, std::collections::BTreeMap<usize, f64>)> {
        use std::io::Write as _;
        let shown = path.display();
        let header = format!("{RESULTS_HEADER}{fingerprint}");
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e).with_context(|| format!("cannot read {shown}")),
        };
        let text =
            String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{shown} is not a match results file (not text)"))?;
        let complete = text.rfind('\n').map_or(0, |i| i + 1);
        if complete < text.len() {
            eprintln!("{shown}: dropping an unfinished last line");
        }
        let mut lines = text[..complete].lines();
        let mut done = std::collections::BTreeMap::new();
        match lines.next() {
            None => {}
            Some(first) if first == header => {}
            Some(first) if first.starts_with(RESULTS_HEADER) => anyhow::bail!(
                "{shown} holds the games of another match:\n  {}\nthis one is:\n  {fingerprint}\n(use another file, or the same settings)",
                &first[RESULTS_HEADER.len()..]
            ),
            Some(_) => anyhow::bail!(
                "{shown} is not a match results file (its first line is not a '{RESULTS_HEADER}...' line)"
            ),
        }
        for (number, line) in lines.enumerate() {
            let (index, score) =
                parse_result_line(line).with_context(|| format!("{shown} line {}: '{line}'", number + 2))?;
            anyhow::ensure!(index < games, "{shown} holds game {}, but this match has {games} games", index + 1);
            anyhow::ensure!(done.insert(index, score).is_none(), "{shown} holds game {} twice", index + 1);
        }
        // Appending: every line lands at the end, even beside another
        // writer.
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot create {shown}"))?;
        if complete < text.len() {
            file.set_len(complete as u64).with_context(|| format!("cannot write {shown}"))?;
        }
        if complete == 0 {
            writeln!(file, "{header}").and_then(|()| file.flush()).with_context(|| format!("cannot write {shown}"))?;
        }
        Ok((ResultsFile { path: path.to_path_buf(), file }, done))
    }

    fn append(&mut self, line: &str) -> Result<()> {
        use std::io::Write as _;
        // One write per line, so that a kill leaves at most a line without
        // its newline, which `open` drops.
        self.file
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| self.file.flush())
            .with_context(|| format!("cannot write {}", self.path.display()))
    }
}

/// `game N: A (COLOUR) scores S: ...` -> (N - 1, S).
fn parse_result_line(line: &str) -> Result<(usize, f64)> {
    let bad = || anyhow::anyhow!("not a game result ('game N: A (sente|gote) scores 1|0.5|0: ...')");
    let rest = line.strip_prefix("game ").ok_or_else(bad)?;
    let (number, rest) = rest.split_once(": A (").ok_or_else(bad)?;
    let number: usize = number.parse().map_err(|_| bad())?;
    let (_colour, rest) = rest.split_once(") scores ").ok_or_else(bad)?;
    let (score, _ending) = rest.split_once(':').ok_or_else(bad)?;
    let score = match score {
        "1" => 1.0,
        "0.5" => 0.5,
        "0" => 0.0,
        _ => return Err(bad()),
    };
    anyhow::ensure!(number >= 1, "games are numbered from 1");
    Ok((number - 1, score))
}
