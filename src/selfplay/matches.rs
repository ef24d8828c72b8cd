//! Matches between two players: paired games from the same random
//! openings with colours swapped, an arbiter applying the rules, and the
//! result as an Elo difference with a 95% confidence interval.

use super::baselines::{greedy_move, material_values, random_move};
use crate::mcts::{Evaluator, Limits, Rng, SearchParams, Searcher};
use crate::notation::UsiMove;
use crate::rules::{Color, Game, Move, Position, Variant};
use crate::usi::client::{EngineSpec, UsiEngine};
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// How long a searching player thinks per move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MoveLimit {
    /// Playouts per move (reproducible with one thread).
    Nodes(u64),
    /// Wall time per move.
    Time(Duration),
}

/// A match participant.
#[derive(Clone)]
pub enum Player {
    /// MCTS guided by an evaluator (a net, or the uniform evaluator).
    Search(Arc<dyn Evaluator>),
    /// A uniformly random legal move.
    Random,
    /// The material-greedy 1-ply player of [`super::baselines`].
    Greedy,
    /// An external USI engine with its own `go` limits. It loses a game
    /// by an illegal move, `resign`, a crash or a hang (then it is
    /// restarted for the next game).
    Usi(EngineSpec),
}

/// Match settings.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    pub variant: Variant,
    /// Games in all (rounded up to an even number: pairs).
    pub games: usize,
    /// Thinking limit of searching players, both sides.
    pub limit: MoveLimit,
    /// Search threads of searching players.
    pub threads: usize,
    /// Random plies of each opening, played before the engines take over.
    pub opening_plies: usize,
    /// Games longer than this are scored as draws.
    pub max_plies: usize,
    /// Leaf mate search length of searching players A and B, in plies
    /// (see [`SearchParams::mate_plies`]).
    pub mate_plies: [u32; 2],
    /// Prior temperature of searching players A and B (see
    /// [`SearchParams::policy_temperature`]).
    pub policy_temperature: [f64; 2],
    /// PUCT exploration constant c_init of searching players A and B (see
    /// [`SearchParams::cpuct_init`]).
    pub cpuct_init: [f64; 2],
    /// A Gumbel root (Sequential Halving's move, no noise) for searching
    /// players A and B at a playout limit; None: PUCT.
    pub gumbel: [Option<crate::mcts::GumbelParams>; 2],
    /// How late an external engine's answer may come past its `byoyomi`
    /// or `movetime` before the arbiter scores the game as lost on time
    /// (the pipes and process switches of a loaded machine; see
    /// [`DEFAULT_TIME_MARGIN`]).
    pub time_margin: Duration,
    pub seed: u64,
}

/// The score of A against B.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MatchResult {
    pub wins: usize,
    pub draws: usize,
    pub losses: usize,
    /// Milliseconds each move took, for external engines (A, B): from
    /// sending `go` to reading `bestmove`.
    pub think_ms: [Vec<u32>; 2],
    /// Games each external engine lost on time (A, B).
    pub time_losses: [usize; 2],
}

impl MatchResult {
    pub fn games(&self) -> usize {
        self.wins + self.draws + self.losses
    }

    /// A's score share in [0, 1].
    pub fn score(&self) -> f64 {
        (self.wins as f64 + 0.5 * self.draws as f64) / self.games().max(1) as f64
    }

    /// Elo difference of A over B and its 95% interval (normal
    /// approximation of the score's standard error); infinite when one
    /// side scored everything. Then the standard error is zero and says
    /// nothing, so the interval is the Elo of the Wilson interval instead
    /// (40 wins of 40: +407 to infinity).
    pub fn elo(&self) -> (f64, f64, f64) {
        let n = self.games().max(1) as f64;
        let s = self.score();
        let var = (self.wins as f64 * (1.0 - s).powi(2)
            + self.draws as f64 * (0.5 - s).powi(2)
            + self.losses as f64 * s.powi(2))
            / n;
        let se = (var / n).sqrt();
        let elo = |p: f64| -400.0 * (1.0 / p.clamp(0.0, 1.0) - 1.0).log10();
        if se == 0.0 && self.games() > 0 {
            let (lo, hi) = self.score_interval();
            return (elo(s), elo(lo), elo(hi));
        }
        (elo(s), elo(s - 1.96 * se), elo(s + 1.96 * se))
    }

    /// 95% Wilson interval of A's score share: unlike the Elo interval it
    /// stays finite and informative when one side scored everything.
    pub fn score_interval(&self) -> (f64, f64) {
        let n = self.games() as f64;
        if n == 0.0 {
            return (0.0, 1.0);
        }
        let (p, z) = (self.score(), 1.96f64);
        let centre = p + z * z / (2.0 * n);
        let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
        let d = 1.0 + z * z / n;
        // At a score of 0 or 1 that bound is exact; rounding would leave
        // it a hair inside (and its Elo finite).
        let lo = if p == 0.0 { 0.0 } else { ((centre - half) / d).max(0.0) };
        let hi = if p == 1.0 { 1.0 } else { ((centre + half) / d).min(1.0) };
        (lo, hi)
    }
}

/// Median, 99th percentile and maximum of move times in milliseconds
/// (`None` without moves).
pub fn think_summary(ms: &[u32]) -> Option<(u32, u32, u32)> {
    let mut v = ms.to_vec();
    v.sort_unstable();
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (!v.is_empty()).then(|| (at(0.5), at(0.99), v[v.len() - 1]))
}

impl std::fmt::Display for MatchResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (elo, lo, hi) = self.elo();
        let (s_lo, s_hi) = self.score_interval();
        write!(
            f,
            "+{} ={} -{} ({} games, score {:.1}% [{:.1}%, {:.1}%]), Elo {:+.0} [{:+.0}, {:+.0}] (95%)",
            self.wins,
            self.draws,
            self.losses,
            self.games(),
            100.0 * self.score(),
            100.0 * s_lo,
            100.0 * s_hi,
            elo,
            lo,
            hi
        )
    }
}

/// A player with its engine state: a searching player owns its searcher.
enum Seat {
    Search(Box<Searcher>),
    Random,
    Greedy,
    Usi(Box<UsiSeat>),
}

/// An external engine's seat: how to start it, the running process, and
/// how long its moves took.
struct UsiSeat {
    spec: EngineSpec,
    time_margin: Duration,
    engine: Option<UsiEngine>,
    think_ms: Vec<u32>,
    time_losses: usize,
}

/// The default [`MatchConfig::time_margin`]: engines told `movetime 1000`
/// answer a few milliseconds past it on an idle machine.
pub const DEFAULT_TIME_MARGIN: Duration = Duration::from_millis(50);

/// A seat's answer: a move, or why the player lost the game.
enum Choice {
    Move(Move),
    /// The player has no move to offer (a search found none).
    None,
    Lost(String),
}

impl Seat {
    fn new(player: Player, config: &MatchConfig, i: usize) -> Seat {
        let (mate_plies, policy_temperature, cpuct_init) =
            (config.mate_plies[i], config.policy_temperature[i], config.cpuct_init[i]);
        match player {
            Player::Search(e) => {
                let params = SearchParams {
                    threads: config.threads.max(1),
                    batch_size: 8,
                    hash_mib: 64,
                    mate_plies,
                    policy_temperature,
                    cpuct_init,
                    gumbel: config.gumbel[i].map(|g| crate::mcts::GumbelParams { noise: false, ..g }),
                    ..SearchParams::default()
                };
                Seat::Search(Box::new(Searcher::new(e, params)))
            }
            Player::Random => Seat::Random,
            Player::Greedy => Seat::Greedy,
            Player::Usi(spec) => Seat::Usi(Box::new(UsiSeat {
                spec,
                time_margin: config.time_margin,
                engine: None,
                think_ms: Vec::new(),
                time_losses: 0,
            })),
        }
    }

    /// Gets the seat ready for a new game: a fresh tree, or a running
    /// engine told `usinewgame` (started, or restarted after a failure).
    fn new_game(&mut self, variant: Variant) -> Result<(), crate::usi::client::EngineError> {
        match self {
            Seat::Search(e) => e.clear(),
            Seat::Usi(usi) => {
                let UsiSeat { spec, engine, .. } = &mut **usi;
                let mut running = match engine.take() {
                    Some(e) => e,
                    None => UsiEngine::start(spec, &[("USI_Variant", variant.name().to_string())])?,
                };
                running.new_game()?;
                *engine = Some(running);
            }
            Seat::Random | Seat::Greedy => {}
        }
        Ok(())
    }

    fn choose(&mut self, game: &Game, limits: &Limits, values: &[f32], rng: &mut Rng) -> Choice {
        let found = |mv: Option<Move>| mv.map_or(Choice::None, Choice::Move);
        match self {
            Seat::Search(engine) => {
                engine.set_position(game);
                found(engine.search(limits, &AtomicBool::new(false), &mut |_| {}).best)
            }
            Seat::Greedy => found(greedy_move(game, values, rng)),
            Seat::Random => found(random_move(game, rng)),
            Seat::Usi(usi) => {
                let Some(engine) = usi.engine.as_mut() else {
                    return Choice::Lost("the engine is not running".into());
                };
                let started = std::time::Instant::now();
                let thought = match engine.think(game, &[]) {
                    Ok(t) => t,
                    Err(e) => {
                        // Dropped: restarted for the next game.
                        usi.engine = None;
                        return Choice::Lost(e.to_string());
                    }
                };
                let took = started.elapsed();
                usi.think_ms.push(took.as_millis().min(u32::MAX as u128) as u32);
                if let Some(limit) = usi.spec.time_limit()
                    && took > limit + usi.time_margin
                {
                    usi.time_losses += 1;
                    return Choice::Lost(format!(
                        "lost on time: {} ms for a limit of {} ms",
                        took.as_millis(),
                        limit.as_millis()
                    ));
                }
                if thought.best == "resign" {
                    return Choice::Lost("resigned".into());
                }
                let geometry = game.position().variant().geometry();
                match UsiMove::parse(&thought.best, geometry)
                    .map_err(|e| e.to_string())
                    .and_then(|m| m.to_game_move(game).map_err(|e| e.to_string()))
                {
                    Ok(mv) => Choice::Move(mv),
                    Err(e) => Choice::Lost(format!("proposed an illegal move: {e}")),
                }
            }
        }
    }
}

/// One finished game of a match.
#[derive(Debug)]
pub struct MatchGame<'a> {
    /// 0-based, in the order played.
    pub index: usize,
    /// A's score: 1, 0.5 or 0.
    pub score: f64,
    /// The colour A played.
    pub a_color: Color,
    /// The game, the random opening included.
    pub game: &'a Game,
    /// Why it ended: the rules' outcome, the ply cap, or an illegal move.
    pub ending: String,
}

impl MatchGame<'_> {
    /// The winner (`None`: a draw).
    pub fn winner(&self) -> Option<Color> {
        match self.score {
            s if s > 0.75 => Some(self.a_color),
            s if s < 0.25 => Some(!self.a_color),
            _ => None,
        }
    }

    /// The game's positions after the random opening as value-only
    /// training samples (the result from the side to move's view), e.g. for
    /// `pantheon label --positions`: the positions a match reached.
    pub fn samples(&self, opening_plies: usize) -> Vec<super::Sample> {
        let winner = self.winner();
        let mut game = Game::new(self.game.start().clone());
        let mut samples = Vec::new();
        for (ply, &mv) in self.game.moves().iter().enumerate() {
            if ply >= opening_plies {
                let side = game.position().side_to_move();
                samples.push(super::Sample {
                    position: game.position().clone(),
                    repetitions: game.repetitions(),
                    value: winner.map_or(0.0, |w| if w == side { 1.0 } else { -1.0 }),
                    full_search: false,
                    policy: Vec::new(),
                    teacher: None,
                    search: None,
                });
            }
            game.play(mv);
        }
        samples
    }
}

/// Plays the match; `on_game` gets each finished game, and stops the match
/// by returning `Break` (the result then counts the games played).
pub fn play_match(
    config: &MatchConfig,
    a: Player,
    b: Player,
    on_game: &mut dyn FnMut(&MatchGame<'_>) -> ControlFlow<()>,
) -> MatchResult {
    continue_match(config, a, b, &BTreeMap::new(), on_game)
}

/// Plays the games of the match that `done` (A's score by game index)
/// does not hold, counting those it holds as given; `on_game` gets each
/// game played (and stops the match by returning `Break`). Every game
/// depends only on the seed and its index (the pair's opening, its own
/// random moves), so a match cut short and continued this way plays the
/// games an uninterrupted one would.
pub fn continue_match(
    config: &MatchConfig,
    a: Player,
    b: Player,
    done: &BTreeMap<usize, f64>,
    on_game: &mut dyn FnMut(&MatchGame<'_>) -> ControlFlow<()>,
) -> MatchResult {
    let seat = |player, i: usize| Seat::new(player, config, i);
    let mut seats = [seat(a, 0), seat(b, 1)];
    let mut rng = Rng::new(config.seed);
    let values = material_values(config.variant);
    let mut result = MatchResult::default();
    let mut count = |score: f64| match score {
        s if s > 0.75 => result.wins += 1,
        s if s < 0.25 => result.losses += 1,
        _ => result.draws += 1,
    };
    let pairs = config.games.div_ceil(2);
    'pairs: for pair in 0..pairs {
        let opening = random_opening(config.variant, config.opening_plies, &mut rng);
        for swap in [false, true] {
            let index = pair * 2 + swap as usize;
            if let Some(&score) = done.get(&index) {
                count(score);
                continue;
            }
            // A plays sente in the first game of a pair, gote in the second.
            let a_color = if swap { Color::Gote } else { Color::Sente };
            let mut move_rng = game_rng(config.seed, index);
            let (game, score, ending) = play_game(config, &opening, &mut seats, a_color, &values, &mut move_rng);
            count(score);
            if on_game(&MatchGame { index, score, a_color, game: &game, ending }).is_break() {
                break 'pairs;
            }
        }
    }
    for (i, seat) in seats.iter_mut().enumerate() {
        if let Seat::Usi(usi) = seat {
            result.think_ms[i] = std::mem::take(&mut usi.think_ms);
            result.time_losses[i] = usi.time_losses;
        }
    }
    result
}

/// The random moves of game `index` (random and greedy players): a stream
/// of its own, so that a game does not depend on the games before it.
fn game_rng(seed: u64, index: usize) -> Rng {
    let base = Rng::new(seed ^ 0x9e37_79b9_7f4a_7c15).next_u64();
    Rng::new(base ^ (index as u64).wrapping_mul(0xd6e8_feb8_6659_fd93))
}

fn random_opening(variant: Variant, plies: usize, rng: &mut Rng) -> Game {
    loop {
        let mut game = Game::new(Position::startpos(variant));
        for _ in 0..plies {
            let moves = game.legal_moves();
            if moves.is_empty() || game.outcome().is_some() {
                break;
            }
            game.play(moves[rng.below(moves.len())]);
        }
        if game.outcome().is_none() {
            return game;
        }
    }
}

/// One game from `opening`: the game, A's score and why it ended.
fn play_game(
    config: &MatchConfig,
    opening: &Game,
    seats: &mut [Seat; 2],
    a_color: Color,
    values: &[f32],
    rng: &mut Rng,
) -> (Game, f64, String) {
    let mut game = opening.clone();
    let score_for_a = |winner: Option<Color>| match winner {
        Some(w) if w == a_color => 1.0,
        Some(_) => 0.0,
        None => 0.5,
    };
    for (i, seat) in seats.iter_mut().enumerate() {
        if let Err(e) = seat.new_game(config.variant) {
            // A player that cannot start loses the game.
            let (loser, name) = if i == 0 { (a_color, "A") } else { (!a_color, "B") };
            return (game, score_for_a(Some(!loser)), format!("{name} ({loser}) could not start: {e}"));
        }
    }
    let limits = match config.limit {
        MoveLimit::Nodes(n) => Limits { nodes: Some(n), ..Limits::default() },
        MoveLimit::Time(t) => Limits { movetime: Some(t), ..Limits::default() },
    };
    loop {
        // The outcome first: a game won on the last ply allowed is a win.
        if let Some(o) = game.outcome() {
            return (game, score_for_a(o.winner), o.to_string());
        }
        if game.moves().len() >= config.max_plies {
            let ending = format!("draw by the {}-ply cap", config.max_plies);
            return (game, 0.5, ending);
        }
        let side = game.position().side_to_move();
        let seat = &mut seats[if side == a_color { 0 } else { 1 }];
        let mv = match seat.choose(&game, &limits, values, rng) {
            Choice::Move(mv) => mv,
            Choice::None => return (game, 0.5, format!("{side} found no move")),
            Choice::Lost(why) => return (game, score_for_a(Some(!side)), format!("{side} loses: {why}")),
        };
        // The players only propose legal moves; the arbiter checks anyway.
        if !game.legal_moves().contains(&mv) {
            return (game, score_for_a(Some(!side)), format!("{side} proposed an illegal move"));
        }
        game.play(mv);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elo_of_known_scores() {
        let even = MatchResult { wins: 10, draws: 0, losses: 10, ..Default::default() };
        assert!(even.elo().0.abs() < 1e-9);
        let (elo, lo, hi) = MatchResult { wins: 75, draws: 0, losses: 25, ..Default::default() }.elo();
        assert!((elo - 190.8).abs() < 0.5, "{elo}");
        assert!(lo < elo && elo < hi);
        assert!(MatchResult { wins: 4, draws: 0, losses: 0, ..Default::default() }.elo().0.is_infinite());
        // One side scored everything: the interval keeps a finite bound.
        let (elo, lo, hi) = MatchResult { wins: 40, draws: 0, losses: 0, ..Default::default() }.elo();
        assert!(elo == f64::INFINITY && hi == f64::INFINITY && (lo - 407.0).abs() < 1.0, "{lo}");
        let (elo, lo, hi) = MatchResult { wins: 0, draws: 0, losses: 40, ..Default::default() }.elo();
        assert!(elo == f64::NEG_INFINITY && lo == f64::NEG_INFINITY && (hi + 407.0).abs() < 1.0, "{hi}");
        let (_, lo, hi) = MatchResult { wins: 0, draws: 0, losses: 27, ..Default::default() }.elo();
        assert!(lo == f64::NEG_INFINITY && (hi + 339.0).abs() < 1.0, "{lo} {hi}");
        let (elo, lo, hi) = MatchResult { wins: 0, draws: 6, losses: 0, ..Default::default() }.elo();
        assert!(elo.abs() < 1e-9 && lo < -100.0 && hi > 100.0, "{lo} {hi}");
        // Wilson: 10 wins of 10 still leaves the true score above 72%.
        let (lo, hi) = MatchResult { wins: 10, draws: 0, losses: 0, ..Default::default() }.score_interval();
        assert!((lo - 0.7225).abs() < 1e-3 && hi == 1.0, "{lo} {hi}");
        let (lo, hi) = MatchResult { wins: 5, draws: 0, losses: 5, ..Default::default() }.score_interval();
        assert!((lo + hi - 1.0).abs() < 1e-9 && lo > 0.2 && lo < 0.25, "{lo} {hi}");
    }
}
