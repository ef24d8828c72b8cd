//! The USI session: state between commands, the search thread, and every
//! answer the engine writes.

use super::command::{self, Command, Go};
use super::options::{self, Options};
use crate::mcts::{
    Clock, Evaluator, Limits, Proof, Score, SearchInfo, SearchParams, SearchResult, Searcher, find_mate_until,
    mate_line,
};
use crate::notation::{GameTextError, format_move, parse_game};
use crate::rules::{Color, Game, Position, Variant};
use parking_lot::Mutex;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Where evaluators come from: the network layer loads a model file (or
/// the variant's shipped net) for a device.
pub trait Networks: Send {
    /// An evaluator for `variant` from `model_file` (empty: the shipped
    /// net) on `device` (`auto`, `gpu`, `cpu`) in `precision` (`f32`,
    /// `bf16`, `f16`) with batches up to `batch` (0: the device's default
    /// batch, which the evaluator's `max_batch` then reports).
    fn load(
        &mut self,
        variant: Variant,
        model_file: &str,
        device: &str,
        precision: &str,
        batch: usize,
    ) -> Result<Arc<dyn Evaluator>, crate::nn::LoadError>;
}

/// Shared, line-buffered output: every line is written and flushed whole.
#[derive(Clone)]
pub struct Output(Arc<Mutex<Box<dyn Write + Send>>>);

impl Output {
    pub fn new(w: impl Write + Send + 'static) -> Output {
        Output(Arc::new(Mutex::new(Box::new(w))))
    }

    pub fn line(&self, text: &str) {
        let mut w = self.0.lock();
        // A closed output (the GUI went away) is not an error worth dying for.
        let _ = writeln!(w, "{text}");
        let _ = w.flush();
    }

    fn error(&self, text: &str) {
        self.line(&format!("info string error: {text}"));
    }
}

/// A search running on its own thread.
struct Running {
    /// Set by the search thread just before it writes `bestmove`: from
    /// then on the GUI may send the next position, so the session treats
    /// the search as over (and joins the thread, which is about to end).
    answered: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    ponderhit: Arc<AtomicBool>,
    /// Gives the searcher back (none if the search panicked).
    handle: JoinHandle<Option<Searcher>>,
}

/// Whether to go on reading input.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Quit,
}

/// What an evaluator was loaded for: variant, model file, device,
/// precision, batch.
type NetKey = (Variant, String, String, String, usize);

/// The search threads for the `Threads` option: 0 is one per core.
fn search_threads(option: usize) -> usize {
    if option > 0 { option } else { crate::mcts::cores() }
}

/// The search's batch for the `BatchSize` option: 0 is the evaluator's
/// preferred batch (a net's is its device's).
fn search_batch(option: usize, evaluator: &dyn Evaluator) -> usize {
    if option > 0 { option } else { evaluator.preferred_batch() }
}

/// The engine between commands.
pub struct Session {
    out: Output,
    options: Options,
    /// The current position, or why the last `position` command failed.
    game: Result<Game, GameTextError>,
    /// The searcher when idle; taken by the search thread while running.
    searcher: Option<Searcher>,
    running: Option<Running>,
    networks: Box<dyn Networks>,
    /// The evaluator and the options it was loaded for.
    loaded: Option<(NetKey, Arc<dyn Evaluator>)>,
    /// The search threads and batch last reported (`info string search`).
    reported: Option<(usize, usize)>,
}

impl Session {
    pub fn new(out: Output, networks: Box<dyn Networks>) -> Session {
        let options = Options::default();
        let game = Ok(Game::new(Position::startpos(options.variant)));
        Session { out, options, game, searcher: None, running: None, networks, loaded: None, reported: None }
    }

    /// Answers with `info string error: {text}`.
    pub fn error(&self, text: &str) {
        self.out.error(text);
    }

    /// Handles one input line.
    pub fn handle(&mut self, line: &str) -> Flow {
        self.reap();
        let cmd = match command::parse(line) {
            Ok(c) => c,
            Err(e) => {
                self.out.error(&e.to_string());
                return Flow::Continue;
            }
        };
        let busy = self.running.is_some();
        match cmd {
            Command::Nothing => {}
            Command::Usi => {
                self.out.line(&format!("id name Pantheon {}", env!("CARGO_PKG_VERSION")));
                self.out.line("id author the Pantheon developers");
                for l in options::usi_lines() {
                    self.out.line(&l);
                }
                self.out.line("usiok");
            }
            Command::IsReady => {
                if !busy {
                    self.ensure_evaluator();
                }
                self.out.line("readyok");
            }
            Command::SetOption { .. } | Command::UsiNewGame | Command::Position { .. } if busy => {
                self.out.error("a search is running: send 'stop' first; command ignored");
            }
            Command::SetOption { name, value } => self.set_option(&name, value.as_deref()),
            Command::UsiNewGame => {
                if let Some(s) = &mut self.searcher {
                    s.clear();
                }
                self.game = Ok(Game::new(Position::startpos(self.options.variant)));
            }
            Command::Position { sfen, moves } => self.set_position(sfen.as_deref(), &moves),
            Command::Go(_) if busy => self.out.error("a search is already running; 'go' ignored"),
            Command::Go(go) => self.go(go),
            Command::Stop => self.stop_search(),
            Command::PonderHit => match &self.running {
                Some(r) => r.ponderhit.store(true, Ordering::SeqCst),
                None => self.out.error("ponderhit without a ponder search"),
            },
            Command::GameOver(_) => self.stop_search(),
            Command::Quit => {
                self.stop_search();
                return Flow::Quit;
            }
        }
        Flow::Continue
    }

    /// Joins a search thread that has answered `bestmove`.
    fn reap(&mut self) {
        let done = |r: &Running| r.answered.load(Ordering::SeqCst) || r.handle.is_finished();
        if self.running.as_ref().is_some_and(done) {
            self.join();
        }
    }

    fn join(&mut self) {
        if let Some(r) = self.running.take() {
            // A searcher lost to a failed search is made anew at the next `go`.
            self.searcher = r.handle.join().ok().flatten();
        }
    }

    fn stop_search(&mut self) {
        if let Some(r) = &self.running {
            r.stop.store(true, Ordering::SeqCst);
        }
        self.join();
    }

    fn set_option(&mut self, name: &str, value: Option<&str>) {
        let before = self.options.variant;
        match self.options.set(name, value) {
            Ok(()) => {
                if self.options.variant != before {
                    self.game = Ok(Game::new(Position::startpos(self.options.variant)));
                    if let Some(s) = &mut self.searcher {
                        s.clear();
                    }
                }
            }
            Err(e) => self.out.error(&e.to_string()),
        }
    }

    fn set_position(&mut self, sfen: Option<&str>, moves: &[String]) {
        self.game = parse_game(self.options.variant, sfen.unwrap_or("startpos"), moves);
        if let Err(e) = &self.game {
            self.out.error(&format!("position: {e}"));
        }
    }

    /// Loads the evaluator the options ask for, unless already loaded.
    fn ensure_evaluator(&mut self) -> Arc<dyn Evaluator> {
        let o = &self.options;
        let key = (o.variant, o.model_file.clone(), o.device.clone(), o.precision.clone(), o.batch_size);
        if let Some((k, e)) = &self.loaded
            && *k == key
        {
            return e.clone();
        }
        let evaluator = match self.networks.load(o.variant, &o.model_file, &o.device, &o.precision, o.batch_size) {
            Ok(e) => e,
            Err(err) => {
                self.out.error(&format!("cannot load the network: {err}; using the shipped net on the cpu"));
                match self.networks.load(o.variant, "", "cpu", "f32", o.batch_size) {
                    Ok(e) => e,
                    Err(err) => {
                        self.out.error(&format!("cannot load the shipped net either: {err}; searching without one"));
                        Arc::new(crate::mcts::UniformEvaluator)
                    }
                }
            }
        };
        self.out.line(&format!("info string evaluator: {}", evaluator.name()));
        self.loaded = Some((key, evaluator.clone()));
        if let Some(s) = &mut self.searcher {
            s.set_evaluator(evaluator.clone());
        }
        evaluator
    }

    fn go(&mut self, go: Go) {
        if go.mate {
            self.go_mate(&go);
            return;
        }
        let game = match &self.game {
            Ok(g) => g.clone(),
            Err(e) => {
                self.out.error(&format!("no valid position ({e}); send 'position' again"));
                self.out.line("bestmove resign");
                return;
            }
        };
        let evaluator = self.ensure_evaluator();
        let o = self.options.clone();
        let params = SearchParams {
            threads: search_threads(o.threads),
            batch_size: search_batch(o.batch_size, evaluator.as_ref()),
            hash_mib: o.hash_mib,
            multipv: o.multipv,
            mate_plies: o.mate_plies,
            root_mate_plies: o.root_mate_plies,
            policy_temperature: o.policy_temperature,
            cpuct_init: o.cpuct.unwrap_or_else(|| crate::mcts::engine_cpuct(o.variant)),
            ..SearchParams::default()
        };
        if self.reported != Some((params.threads, params.batch_size)) {
            self.reported = Some((params.threads, params.batch_size));
            self.out.line(&format!("info string search: {} threads, batch {}", params.threads, params.batch_size));
        }
        let mut searcher = self.searcher.take().unwrap_or_else(|| Searcher::new(evaluator.clone(), params.clone()));
        searcher.set_params(params);
        searcher.set_position(&game);
        let limits = limits(&go, game.position().side_to_move(), Duration::from_millis(o.byoyomi_margin_ms));
        let stop = Arc::new(AtomicBool::new(false));
        let ponderhit = Arc::new(AtomicBool::new(false));
        let answered = Arc::new(AtomicBool::new(false));
        let out = self.out.clone();
        let (s, p, a) = (stop.clone(), ponderhit.clone(), answered.clone());
        let variant = o.variant;
        let fallback = game.legal_moves().first().map(|&m| format_move(variant, m));
        let handle = std::thread::spawn(move || {
            let searched = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let result = searcher.search_pondering(&limits, &s, &p, &mut |info| {
                    for line in info_lines(variant, info) {
                        out.line(&line);
                    }
                });
                for line in info_lines(variant, &result.info) {
                    out.line(&line);
                }
                (searcher, result)
            }));
            match searched {
                Ok((searcher, result)) => {
                    a.store(true, Ordering::SeqCst);
                    out.line(&bestmove(variant, &result, &o));
                    Some(searcher)
                }
                Err(_) => {
                    // Never leave the GUI waiting: answer with a legal move.
                    out.line("info string error: the search failed; playing the first legal move");
                    a.store(true, Ordering::SeqCst);
                    out.line(&format!("bestmove {}", fallback.as_deref().unwrap_or("resign")));
                    None
                }
            }
        });
        self.running = Some(Running { answered, stop, ponderhit, handle });
    }

    /// `go mate`: the checks-only mate search (tsume), deepening two plies
    /// at a time, until a mate is found, none can exist, the time is up or
    /// `stop` comes. Answers `checkmate <moves>`, `checkmate nomate` or
    /// `checkmate timeout`.
    fn go_mate(&mut self, go: &Go) {
        let mut game = match &self.game {
            Ok(g) => g.clone(),
            Err(e) => {
                self.out.error(&format!("no valid position ({e}); send 'position' again"));
                self.out.line("checkmate nomate");
                return;
            }
        };
        let stop = Arc::new(AtomicBool::new(false));
        let answered = Arc::new(AtomicBool::new(false));
        let (out, s, a) = (self.out.clone(), stop.clone(), answered.clone());
        let variant = self.options.variant;
        let deadline = (!go.infinite).then(|| go.movetime.map(|t| std::time::Instant::now() + t)).flatten();
        let searcher = self.searcher.take();
        let handle = std::thread::spawn(move || {
            // The timer sets the same flag as `stop`.
            let timer = deadline.map(|d| {
                let s = s.clone();
                std::thread::spawn(move || {
                    while std::time::Instant::now() < d && !s.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(2));
                    }
                    s.store(true, Ordering::SeqCst);
                })
            });
            let answer = match mate_answer(&mut game, &s) {
                Some(line) if !line.is_empty() => {
                    let moves: Vec<String> = line.iter().map(|&m| format_move(variant, m)).collect();
                    format!("checkmate {}", moves.join(" "))
                }
                Some(_) => "checkmate timeout".to_string(),
                None if s.load(Ordering::SeqCst) => "checkmate timeout".to_string(),
                None => "checkmate nomate".to_string(),
            };
            s.store(true, Ordering::SeqCst);
            if let Some(t) = timer {
                let _ = t.join();
            }
            a.store(true, Ordering::SeqCst);
            out.line(&answer);
            searcher
        });
        self.running = Some(Running { answered, stop, ponderhit: Arc::new(AtomicBool::new(false)), handle });
    }
}

/// The mate line `go mate` answers with, if the side to move mates by
/// checks; `None` when there is none (every line runs out of checks before
/// 31 plies) or `stop` was set. A mate whose whole line could not be
/// rebuilt (it should not happen: the search proved every reply) gives an
/// empty line, answered as a timeout rather than as no mate.
fn mate_answer(game: &mut Game, stop: &AtomicBool) -> Option<Vec<crate::rules::Move>> {
    const MAX_PLIES: u32 = 31;
    if game.outcome().is_some() {
        return None;
    }
    let legal = game.legal_moves();
    let us = game.position().side_to_move();
    let (_, n) = find_mate_until(game, &legal, MAX_PLIES, u64::MAX, stop)?;
    let line = mate_line(game, us, n, u64::MAX);
    Some(if line.len() as u32 == n { line } else { Vec::new() })
}

/// What a fixed `go movetime` keeps back for answering: the time from the
/// search's stop to `bestmove` on the wire (the last batch in flight, the
/// pipe), not the byoyomi margin meant for a GUI's clock.
pub const MOVETIME_MARGIN: Duration = Duration::from_millis(10);

/// The search limits of a `go` command for the side to move; `margin` is
/// kept back from the clock (byoyomi), at most [`MOVETIME_MARGIN`] from a
/// fixed move time.
pub fn limits(go: &Go, side: Color, margin: Duration) -> Limits {
    let (time, inc) = match side {
        Color::Sente => (go.btime, go.binc),
        Color::Gote => (go.wtime, go.winc),
    };
    let clock = (time.is_some() || go.byoyomi.is_some() || inc.is_some()).then(|| Clock {
        remaining: time.unwrap_or_default(),
        increment: inc.unwrap_or_default(),
        byoyomi: go.byoyomi.unwrap_or_default(),
        moves_to_go: go.movestogo,
    });
    Limits {
        nodes: go.nodes,
        movetime: go.movetime.map(|t| t.saturating_sub(margin.min(MOVETIME_MARGIN)).max(Duration::from_millis(1))),
        clock,
        depth: go.depth,
        infinite: go.infinite,
        ponder: go.ponder,
        margin,
    }
}

/// `info` lines for a progress report, one per MultiPV line.
pub fn info_lines(variant: Variant, info: &SearchInfo) -> Vec<String> {
    info.lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let score = match line.score {
                Score::Cp(cp) => format!("cp {cp}"),
                Score::Mate(n) => format!("mate {n}"),
            };
            let pv: Vec<String> = line.pv.iter().map(|&m| format_move(variant, m)).collect();
            format!(
                "info depth {} seldepth {} time {} nodes {} nps {} hashfull {} score {score} multipv {} pv {}",
                info.depth.max(1),
                info.seldepth.max(1),
                info.elapsed.as_millis(),
                info.playouts,
                info.nps(),
                info.hashfull,
                i + 1,
                pv.join(" ")
            )
        })
        .collect()
}

/// The `bestmove` line: `resign` when there is no move or the loss is
/// proven or past the resign threshold.
pub fn bestmove(variant: Variant, result: &SearchResult, options: &Options) -> String {
    let Some(best) = result.best else {
        return "bestmove resign".into();
    };
    let lost = matches!(result.proof, Proof::Loss(_));
    let hopeless = options.resign_cp > 0
        && matches!(result.info.lines.first().map(|l| l.score), Some(Score::Cp(cp)) if (cp as i64) < -options.resign_cp);
    if lost || hopeless {
        return "bestmove resign".into();
    }
    match result.ponder.filter(|_| options.ponder) {
        Some(p) => format!("bestmove {} ponder {}", format_move(variant, best), format_move(variant, p)),
        None => format!("bestmove {}", format_move(variant, best)),
    }
}
