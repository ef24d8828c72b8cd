//! Self-play: games in parallel threads whose searches share one batching
//! evaluator, with root noise, a temperature schedule, playout-cap
//! randomisation and checked resignation. Each finished game is written as
//! one shard, named by the run's seed and the game's index: rerunning the
//! same command skips the games already written (a killed run resumes).
//!
//! A share of the games can put the material-greedy 1-ply player
//! ([`greedy_move`]) on one side. Between weak nets a hung piece is often
//! not taken, so the results of pure self-play hardly depend on material
//! (`pantheon data` measures it); the greedy player takes every piece left
//! hanging, and its games teach the value head what material is worth. Its
//! positions are recorded with the game result but no policy target.

use super::baselines::{greedy_move, material_values};
use super::batching::BatchingEvaluator;
use super::record::{Sample, SearchTargets, SelfPlayError, Shard};
use crate::mcts::{Evaluator, Limits, Proof, Rng, SearchParams, Searcher};
use crate::rules::{Color, Game, Position, Variant};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Self-play settings.
#[derive(Clone, Debug)]
pub struct SelfPlayConfig {
    pub variant: Variant,
    pub games: usize,
    /// Games played at once (their leaves share network batches).
    pub parallel: usize,
    /// Playouts of a full search (its visit counts become policy targets).
    pub visits: u64,
    /// Playouts of a fast search (plays the move, no policy target).
    pub fast_visits: u64,
    /// Share of moves searched fully.
    pub full_share: f64,
    /// Moves played at temperature 1 from the start; greedy after.
    pub temperature_plies: usize,
    /// Resign when the root value is below minus this (or the loss is
    /// proven).
    pub resign_value: f64,
    /// Share of games that never resign, to check resignations.
    pub no_resign_share: f64,
    /// Games longer than this end unfinished (value 0).
    pub max_plies: usize,
    /// Chance of each game to have the material-greedy player on one side:
    /// gote in games of even index (0-based, so the 1st, 3rd, ... printed),
    /// sente in the others.
    pub greedy_share: f64,
    /// Leaves each game's search gathers per network round.
    pub leaves_per_game: usize,
    pub seed: u64,
    pub out: PathBuf,
    /// Identifies the net in the records.
    pub model_id: String,
    /// Gumbel AlphaZero's root instead of PUCT with Dirichlet noise: the
    /// move is Sequential Halving's choice (its Gumbel draws explore; no
    /// temperature), and full searches record the improved policy.
    pub gumbel: Option<crate::mcts::GumbelParams>,
    /// KataGo's forced playouts (k) in the full searches of a PUCT root;
    /// their records then hold the visits after policy target pruning as
    /// the improved policy (the raw visits stay).
    pub forced_playouts: Option<f64>,
    /// PUCT's exploration constant c_init in every search (see
    /// [`SearchParams::cpuct_init`]; [`crate::mcts::CPUCT_INIT`] by default).
    pub cpuct_init: f64,
    /// When to stop: no game starts after it, and the games still going
    /// are dropped unwritten (a rerun of the same command plays them).
    pub deadline: Option<Instant>,
}

/// How one game went.
#[derive(Clone, Debug)]
pub struct GameReport {
    pub index: usize,
    pub plies: usize,
    pub samples: usize,
    /// `sente wins (checkmate)`, `gote wins (resignation)`, `unfinished`.
    pub result: String,
    /// A resignation that a no-resign game would have made and then lost
    /// anyway is right; one it went on to win or draw is a false positive.
    pub false_resign: Option<bool>,
    /// The winner (`None`: a draw, or unfinished at the ply cap).
    pub winner: Option<Color>,
    /// The greedy player's colour in a game against it.
    pub greedy: Option<Color>,
    pub path: PathBuf,
}

/// Plays `config.games` games with `evaluator`, calling `on_game` after
/// each.
pub fn play(
    config: &SelfPlayConfig,
    evaluator: Arc<dyn Evaluator>,
    on_game: &(dyn Fn(&GameReport) + Sync),
) -> Result<Vec<GameReport>, SelfPlayError> {
    super::record::create_dir(&config.out)?;
    let shared: Arc<dyn Evaluator> = Arc::new(BatchingEvaluator::new(evaluator, Duration::from_millis(2)));
    let next = AtomicUsize::new(0);
    let reports = parking_lot::Mutex::new(Vec::new());
    let errors = parking_lot::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..config.parallel.max(1) {
            let (shared, next, reports, errors) = (&shared, &next, &reports, &errors);
            s.spawn(move || {
                let params = SearchParams {
                    threads: 1,
                    batch_size: config.leaves_per_game,
                    hash_mib: 64,
                    cache_entries: 1 << 14,
                    cpuct_init: config.cpuct_init,
                    ..SearchParams::default()
                };
                let mut searcher = Searcher::new(shared.clone(), params);
                loop {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    if index >= config.games || past(config.deadline) {
                        return;
                    }
                    // The game's seed depends on the run's seed and the
                    // game's index only, never on which thread plays it.
                    let seed = config.seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    if let Some(report) = written_game(config, index) {
                        on_game(&report);
                        reports.lock().push(report);
                        continue;
                    }
                    match play_one(config, &mut searcher, index, seed) {
                        Ok(Some(report)) => {
                            on_game(&report);
                            reports.lock().push(report);
                        }
                        Ok(None) => return,
                        Err(e) => errors.lock().push(e),
                    }
                }
            });
        }
    });
    if let Some(e) = errors.into_inner().into_iter().next() {
        return Err(e);
    }
    let mut reports = reports.into_inner();
    reports.sort_by_key(|r| r.index);
    Ok(reports)
}

fn past(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
}

/// A game's shard name: the variant, the run's seed and the game's index,
/// so that a rerun of the same command (a resumed run) finds the games it
/// already wrote, and workers with different seeds never collide.
fn shard_name(config: &SelfPlayConfig, index: usize) -> String {
    format!("{}-{:016x}-{index:06}", config.variant, config.seed)
}

/// The report of a game found already written by an earlier run of the
/// same command.
fn written_game(config: &SelfPlayConfig, index: usize) -> Option<GameReport> {
    let path = config.out.join(format!("{}.{}", shard_name(config, index), super::record::SHARD_EXTENSION));
    let shard = Shard::read(&path).ok()?;
    // The first position's value is the result from sente's view.
    let winner = match shard.samples.first().map(|s| (s.value, s.position.side_to_move())) {
        Some((v, side)) if v > 0.5 => Some(side),
        Some((v, side)) if v < -0.5 => Some(!side),
        _ => None,
    };
    Some(GameReport {
        index,
        plies: shard.samples.len(),
        samples: shard.samples.len(),
        result: "written before (resumed)".into(),
        false_resign: None,
        winner,
        greedy: None,
        path,
    })
}

fn play_one(
    config: &SelfPlayConfig,
    searcher: &mut Searcher,
    index: usize,
    seed: u64,
) -> Result<Option<GameReport>, SelfPlayError> {
    let mut rng = Rng::new(seed);
    let may_resign = rng.uniform() >= config.no_resign_share;
    // The random number is drawn only when greedy_share > 0, so seeds
    // without greedy games reproduce the games of earlier builds.
    let greedy = (config.greedy_share > 0.0 && rng.uniform() < config.greedy_share)
        .then_some(if index.is_multiple_of(2) { Color::Gote } else { Color::Sente });
    let mut g = OneGame {
        config,
        rng,
        may_resign,
        would_resign: None,
        game: Game::new(Position::startpos(config.variant)),
        samples: Vec::new(),
    };
    let piece_values = material_values(config.variant);
    searcher.clear();
    let stop = AtomicBool::new(false);
    // The winner, and the side that resigned.
    let (winner, resigned_by) = loop {
        if let Some(o) = g.game.outcome() {
            break (o.winner, None);
        }
        if g.game.moves().len() >= config.max_plies {
            break (None, None);
        }
        if past(config.deadline) {
            return Ok(None);
        }
        let side = g.game.position().side_to_move();
        let (mv, full, policy, search) = if greedy == Some(side) {
            let mv =
                greedy_move(&g.game, &piece_values, &mut g.rng).ok_or(SelfPlayError::NoMove("the greedy player"))?;
            (mv, false, Vec::new(), None)
        } else {
            match g.search_turn(searcher, &stop)? {
                Some(turn) => turn,
                None => break (Some(!side), Some(side)),
            }
        };
        g.samples.push(Sample {
            position: g.game.position().clone(),
            repetitions: g.game.repetitions(),
            value: 0.0,
            full_search: full,
            policy,
            teacher: None,
            search,
        });
        g.game.play(mv);
    };
    g.finish(index, greedy, winner, resigned_by).map(Some)
}

/// A move played, whether its search was full, the search's visits (the
/// policy target, full searches only) and its other targets.
type Turn = (crate::rules::Move, bool, Vec<(crate::rules::Move, u32)>, Option<SearchTargets>);

/// A self-play game being played.
struct OneGame<'a> {
    config: &'a SelfPlayConfig,
    rng: Rng,
    /// Whether this game may end by resignation.
    may_resign: bool,
    /// The first side whose search found its position hopeless.
    would_resign: Option<Color>,
    game: Game,
    samples: Vec<Sample>,
}

impl OneGame<'_> {
    /// The net's turn: a full search (with root noise, its visits the
    /// policy target) or a fast one, then the move at the schedule's
    /// temperature. None when the side resigns.
    fn search_turn(&mut self, searcher: &mut Searcher, stop: &AtomicBool) -> Result<Option<Turn>, SelfPlayError> {
        let config = self.config;
        let side = self.game.position().side_to_move();
        let full = self.rng.uniform() < config.full_share;
        let mut params = searcher.params().clone();
        params.root_noise = (full && config.gumbel.is_none()).then_some((0.3, 0.25));
        params.gumbel = config.gumbel;
        params.forced_playouts = config.forced_playouts.filter(|_| full && config.gumbel.is_none());
        params.seed = self.rng.next_u64();
        searcher.set_params(params);
        searcher.set_position(&self.game);
        let visits = if full { config.visits } else { config.fast_visits };
        let result = searcher.search(&Limits { nodes: Some(visits), ..Limits::default() }, stop, &mut |_| {});
        let hopeless = matches!(result.proof, Proof::Loss(_)) || result.root_q < -config.resign_value;
        if hopeless && self.would_resign.is_none() {
            self.would_resign = Some(side);
            if self.may_resign {
                return Ok(None);
            }
        }
        let temperature = if self.game.moves().len() < config.temperature_plies { 1.0 } else { 0.0 };
        let mv = match &result.improved_policy {
            Some(_) => result.best,
            None => searcher.pick_move(&result, temperature),
        };
        let mv = mv.ok_or(SelfPlayError::NoMove("the search"))?;
        let improved = match (&result.improved_policy, &result.pruned_visits) {
            (Some(p), _) if full => p.clone(),
            (None, Some(pruned)) if full => {
                let total = pruned.iter().sum::<u32>().max(1) as f32;
                pruned.iter().map(|&n| n as f32 / total).collect()
            }
            _ => Vec::new(),
        };
        let search = Some(SearchTargets { value: result.root_q as f32, improved });
        Ok(Some((mv, full, if full { result.visits } else { Vec::new() }, search)))
    }

    /// Gives every sample the game's result from its side's view, writes
    /// the game's shard and reports it.
    fn finish(
        mut self,
        index: usize,
        greedy: Option<Color>,
        winner: Option<Color>,
        resigned_by: Option<Color>,
    ) -> Result<GameReport, SelfPlayError> {
        for s in &mut self.samples {
            s.value = match winner {
                Some(w) if w == s.position.side_to_move() => 1.0,
                Some(_) => -1.0,
                None => 0.0,
            };
        }
        let result = match (resigned_by, self.game.outcome()) {
            (Some(side), _) => format!("{} wins (resignation)", !side),
            (None, Some(o)) => o.to_string(),
            (None, None) => "unfinished".to_string(),
        };
        let false_resign = match (self.may_resign, self.would_resign) {
            (false, Some(side)) => Some(winner != Some(!side)),
            _ => None,
        };
        let config = self.config;
        let shard = Shard { variant: config.variant, model_id: config.model_id.clone(), samples: self.samples };
        let path = shard.write(&config.out, &shard_name(config, index))?;
        Ok(GameReport {
            index,
            plies: self.game.moves().len(),
            samples: shard.samples.len(),
            result,
            false_resign,
            winner,
            greedy,
            path,
        })
    }
}

/// Throughput of a self-play run.
pub fn summary(reports: &[GameReport], elapsed: Duration) -> String {
    let positions: usize = reports.iter().map(|r| r.samples).sum();
    let secs = elapsed.as_secs_f64().max(1e-9);
    let checked: Vec<bool> = reports.iter().filter_map(|r| r.false_resign).collect();
    let false_resigns = checked.iter().filter(|&&f| f).count();
    let mut text = format!(
        "{} games, {} positions in {:.1} s: {:.0} games/hour, {:.1} positions/s; resignations checked: {}, false: {}",
        reports.len(),
        positions,
        secs,
        reports.len() as f64 * 3600.0 / secs,
        positions as f64 / secs,
        checked.len(),
        false_resigns
    );
    let against: Vec<&GameReport> = reports.iter().filter(|r| r.greedy.is_some()).collect();
    if !against.is_empty() {
        // The net's score: 1 for a win, 1/2 for a draw or an unfinished game.
        let score: f64 = against
            .iter()
            .map(|r| match r.winner {
                Some(w) if Some(w) == r.greedy => 0.0,
                Some(_) => 1.0,
                None => 0.5,
            })
            .sum();
        text.push_str(&format!("; against greedy: {} games, the net scored {score}", against.len()));
    }
    text
}
