//! The other side of the protocol: Pantheon driving an external USI engine
//! (a teacher for labels, an opponent in matches). The engine runs as a
//! child process; a reader thread turns its output into lines, so every
//! wait has a deadline and a dead or silent engine is an error, never a
//! hang.

use crate::mcts::Score;
use crate::notation::{format_move, to_sfen};
use crate::rules::{Game, Move};
use crossbeam::channel::{Receiver, RecvTimeoutError, bounded};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The longest line read from an engine, in bytes; the rest of a longer
/// line is skipped.
const MAX_LINE: u64 = 1 << 16;

/// How to start and drive an external engine.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineSpec {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// `setoption`s sent after `usiok`, in order.
    pub options: Vec<(String, String)>,
    /// What follows `go` for each move, e.g. `depth 8`, `nodes 1000` or
    /// `movetime 200`.
    pub go: String,
    /// Longest wait for any one answer (the engine's start, `readyok`, a
    /// `bestmove`) before the engine counts as hung.
    pub timeout: Duration,
}

impl EngineSpec {
    /// Parses `NAME=VALUE` option text.
    pub fn parse_option(text: &str) -> Result<(String, String), EngineError> {
        match text.split_once('=') {
            Some((name, value)) if !name.trim().is_empty() => Ok((name.trim().to_string(), value.trim().to_string())),
            _ => Err(EngineError::BadSpec(format!("option '{text}' is not NAME=VALUE"))),
        }
    }

    /// The longest a move may take under the `go` limits: `movetime`, or
    /// `byoyomi` when the main clocks (`btime`, `wtime`) are zero or
    /// absent; `None` for depth or node limits and running clocks.
    pub fn time_limit(&self) -> Option<Duration> {
        let words: Vec<&str> = self.go.split_whitespace().collect();
        let value =
            |key: &str| words.chunks(2).find(|p| p.len() == 2 && p[0] == key).and_then(|p| p[1].parse::<u64>().ok());
        if let Some(ms) = value("movetime") {
            return Some(Duration::from_millis(ms));
        }
        let clocks_run = value("btime").unwrap_or(0) > 0 || value("wtime").unwrap_or(0) > 0;
        match value("byoyomi") {
            Some(ms) if !clocks_run => Some(Duration::from_millis(ms)),
            _ => None,
        }
    }

    /// Checks the `go` arguments: one or more `KEY N` pairs of the limits
    /// USI defines for a search that ends in `bestmove` (`depth`, `nodes`,
    /// `movetime`, `byoyomi`, the clocks). `mate` is refused (its answer
    /// is `checkmate`, never a move), and so is 0 for `depth`, `nodes`,
    /// `movetime` and `byoyomi`: engines of the Stockfish family read it
    /// as "no limit" and never answer, and a 0 ms move time loses every
    /// move on time.
    pub fn check_go(go: &str) -> Result<(), EngineError> {
        let words: Vec<&str> = go.split_whitespace().collect();
        let bad = |why: &str| EngineError::BadSpec(format!("go limits '{go}': {why}"));
        if words.is_empty() || !words.len().is_multiple_of(2) {
            return Err(bad("not KEY N pairs (e.g. 'depth 8', 'nodes 1000')"));
        }
        for pair in words.chunks(2) {
            let known = ["depth", "nodes", "movetime", "byoyomi", "btime", "wtime", "binc", "winc"];
            if pair[0] == "mate" {
                return Err(bad("'mate' asks for a mate search, whose answer is not a move"));
            }
            let Some(n) = known.contains(&pair[0]).then(|| pair[1].parse::<u64>().ok()).flatten() else {
                return Err(bad("not KEY N pairs (e.g. 'depth 8', 'nodes 1000')"));
            };
            if n == 0 && ["depth", "nodes", "movetime", "byoyomi"].contains(&pair[0]) {
                return Err(bad(&format!("{} must be at least 1", pair[0])));
            }
        }
        Ok(())
    }
}

/// Why talking to an engine failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EngineError {
    #[error("{0}")]
    BadSpec(String),
    #[error("cannot start engine '{program}': {reason}")]
    Spawn { program: String, reason: String },
    #[error("engine '{program}' ended while Pantheon waited for {waiting_for}{}", tail(.stderr))]
    Died { program: String, waiting_for: String, stderr: String },
    #[error("engine '{program}' gave no {waiting_for} within {seconds:.1} s")]
    Timeout { program: String, waiting_for: String, seconds: f64 },
    #[error("engine '{program}' has no option '{option}' (it lists: {known})")]
    UnknownOption { program: String, option: String, known: String },
    #[error("engine '{program}': cannot write to it: {reason}")]
    Write { program: String, reason: String },
}

/// The engine's last error output on one line (a results file or a log
/// keeps one line per game), its lines joined by " | ".
fn tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    if lines.is_empty() { String::new() } else { format!("; its last error output: {}", lines.join(" | ")) }
}

/// One line of the engine's last `info ... multipv k score ... pv ...`.
#[derive(Clone, Debug, PartialEq)]
pub struct PvLine {
    /// 1-based rank.
    pub rank: usize,
    /// From the side to move's view.
    pub score: Score,
    /// Whether the score is only a bound (`lowerbound`/`upperbound`).
    pub bound: bool,
    pub depth: u32,
    /// The line as the engine wrote it.
    pub pv: Vec<String>,
}

/// What the engine answered to one `go`.
#[derive(Clone, Debug, PartialEq)]
pub struct Thought {
    /// `bestmove`'s move text (`resign` and `win` are kept as written).
    pub best: String,
    /// The last line reported for each rank, best first.
    pub lines: Vec<PvLine>,
    /// Nodes of the last `info` that gave a count.
    pub nodes: u64,
}

/// A running external engine.
pub struct UsiEngine {
    spec: EngineSpec,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr: Arc<parking_lot::Mutex<String>>,
    /// Set when the engine's error output has ended.
    stderr_closed: Arc<AtomicBool>,
    /// The name from `id name`, else the program.
    pub name: String,
    /// The options the engine declared (`option name ...`).
    options: Vec<String>,
}

impl UsiEngine {
    /// Starts the engine, waits for `usiok`, sets the spec's options, then
    /// each of `defaults` that the engine has and the spec does not set
    /// (e.g. `USI_Variant`, `MultiPV`), then waits for `readyok`.
    pub fn start(spec: &EngineSpec, defaults: &[(&str, String)]) -> Result<UsiEngine, EngineError> {
        let program = spec.command.first().cloned().unwrap_or_default();
        if program.is_empty() {
            return Err(EngineError::BadSpec("the engine command is empty".into()));
        }
        if !spec.go.is_empty() {
            EngineSpec::check_go(&spec.go)?;
        }
        let mut child = Command::new(&program)
            .args(&spec.command[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| EngineError::Spawn { program: program.clone(), reason: e.to_string() })?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr_pipe = child.stderr.take().expect("piped stderr");
        // Bounded: an engine that prints faster than its lines are read
        // waits on its pipe instead of filling memory.
        let (tx, rx) = bounded(4096);
        std::thread::spawn(move || {
            // Bytes, not text: one bad byte must not end the conversation.
            // A line longer than MAX_LINE is cut there and its rest skipped.
            let mut reader = BufReader::new(stdout);
            let mut buf = Vec::new();
            while matches!((&mut reader).take(MAX_LINE).read_until(b'\n', &mut buf), Ok(n) if n > 0) {
                if buf.last() != Some(&b'\n') {
                    let mut rest = Vec::new();
                    while matches!((&mut reader).take(MAX_LINE).read_until(b'\n', &mut rest), Ok(n) if n > 0)
                        && rest.last() != Some(&b'\n')
                    {
                        rest.clear();
                    }
                }
                let line = String::from_utf8_lossy(&buf).trim_end().to_string();
                buf.clear();
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(parking_lot::Mutex::new(String::new()));
        let stderr_closed = Arc::new(AtomicBool::new(false));
        let (sink, closed) = (Arc::clone(&stderr), Arc::clone(&stderr_closed));
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            let mut pipe = stderr_pipe;
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut s = sink.lock();
                s.push_str(&String::from_utf8_lossy(&buf[..n]));
                // Keep the tail only.
                if s.len() > 2000 {
                    let cut = s.len() - 1000;
                    let cut = (cut..s.len()).find(|&i| s.is_char_boundary(i)).unwrap_or(s.len());
                    s.drain(..cut);
                }
            }
            closed.store(true, Ordering::Release);
        });
        let mut engine = UsiEngine {
            spec: spec.clone(),
            child,
            stdin,
            lines: rx,
            stderr,
            stderr_closed,
            name: program.clone(),
            options: Vec::new(),
        };
        engine.send("usi")?;
        let mut options = Vec::new();
        engine.wait_for("usiok", |line, e| {
            if let Some(name) = line.strip_prefix("id name ") {
                e.name = name.trim().to_string();
            }
            if let Some(rest) = line.strip_prefix("option name ") {
                let name = rest.split(" type ").next().unwrap_or(rest).trim();
                options.push(name.to_string());
            }
            line == "usiok"
        })?;
        engine.options = options.clone();
        let has = |name: &str| options.iter().any(|o| o.eq_ignore_ascii_case(name));
        for (name, value) in &spec.options {
            if !has(name) {
                return Err(EngineError::UnknownOption { program, option: name.clone(), known: options.join(", ") });
            }
            engine.send(&format!("setoption name {name} value {value}"))?;
        }
        for (name, value) in defaults {
            let set = spec.options.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
            if has(name) && !set {
                engine.send(&format!("setoption name {name} value {value}"))?;
            }
        }
        engine.ready()?;
        Ok(engine)
    }

    /// Whether the engine declared the option `name` (ASCII case ignored).
    pub fn has_option(&self, name: &str) -> bool {
        self.options.iter().any(|o| o.eq_ignore_ascii_case(name))
    }

    /// Sends `isready` and waits for `readyok`.
    pub fn ready(&mut self) -> Result<(), EngineError> {
        self.send("isready")?;
        self.wait_for("readyok", |line, _| line == "readyok")?;
        Ok(())
    }

    /// `usinewgame`, then `isready`.
    pub fn new_game(&mut self) -> Result<(), EngineError> {
        self.send("usinewgame")?;
        self.ready()
    }

    /// Sends the game as `position sfen ... moves ...` and `go` with the
    /// spec's limits (restricted to `searchmoves` when not empty), and
    /// collects the answer.
    pub fn think(&mut self, game: &Game, searchmoves: &[Move]) -> Result<Thought, EngineError> {
        let variant = game.start().variant();
        let mut line = format!("position sfen {}", to_sfen(game.start()));
        if !game.moves().is_empty() {
            line.push_str(" moves");
            for &mv in game.moves() {
                line.push(' ');
                line.push_str(&format_move(variant, mv));
            }
        }
        self.send(&line)?;
        let go = self.spec.go.clone();
        let mut command = format!("go {go}");
        if !searchmoves.is_empty() {
            command.push_str(" searchmoves");
            for &mv in searchmoves {
                command.push(' ');
                command.push_str(&format_move(variant, mv));
            }
        }
        self.send(&command)?;
        // A time limit in the go command extends the deadline.
        let words: Vec<&str> = go.split_whitespace().collect();
        let extra: u64 = words
            .chunks(2)
            .filter(|p| p.len() == 2 && ["movetime", "byoyomi", "btime", "wtime"].contains(&p[0]))
            .filter_map(|p| p[1].parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        let within = self.spec.timeout + Duration::from_millis(extra);
        let mut lines: Vec<PvLine> = Vec::new();
        let mut nodes = 0;
        let mut best = String::new();
        self.wait_until("bestmove", within, |line| {
            if let Some(rest) = line.strip_prefix("bestmove") {
                best = rest.split_whitespace().next().unwrap_or("").to_string();
                return true;
            }
            if line.starts_with("info ") {
                let info = parse_info(line);
                if let Some(n) = info.nodes {
                    nodes = n;
                }
                if let (Some(score), false) = (info.score, info.pv.is_empty()) {
                    let rank = info.multipv.unwrap_or(1).max(1);
                    let pv = PvLine { rank, score, bound: info.bound, depth: info.depth.unwrap_or(0), pv: info.pv };
                    match lines.iter_mut().find(|l| l.rank == rank) {
                        Some(old) => *old = pv,
                        None => lines.push(pv),
                    }
                }
            }
            false
        })?;
        lines.sort_by_key(|l| l.rank);
        Ok(Thought { best, lines, nodes })
    }

    fn send(&mut self, line: &str) -> Result<(), EngineError> {
        let program = self.spec.command[0].clone();
        let Err(e) = writeln!(self.stdin, "{line}").and_then(|_| self.stdin.flush()) else { return Ok(()) };
        // A closed pipe usually means the engine has ended: say so.
        let deadline = Instant::now() + Duration::from_millis(200);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                let stderr = self.last_words();
                let waiting_for = format!("it to read '{}'", line.split_whitespace().next().unwrap_or(line));
                return Err(EngineError::Died { program, waiting_for, stderr });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Err(EngineError::Write { program, reason: e.to_string() })
    }

    /// The ended engine's last error output: what the stderr reader has
    /// once the pipe closes, or after 500 ms (a process the engine started
    /// may hold the pipe open).
    fn last_words(&self) -> String {
        let deadline = Instant::now() + Duration::from_millis(500);
        while !self.stderr_closed.load(Ordering::Acquire) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        self.stderr.lock().clone()
    }

    fn wait_for(&mut self, what: &str, mut done: impl FnMut(&str, &mut Self) -> bool) -> Result<(), EngineError> {
        let within = self.spec.timeout;
        let deadline = Instant::now() + within;
        loop {
            let line = self.next_line(what, deadline, within)?;
            if done(&line, self) {
                return Ok(());
            }
        }
    }

    fn wait_until(
        &mut self,
        what: &str,
        within: Duration,
        mut done: impl FnMut(&str) -> bool,
    ) -> Result<(), EngineError> {
        let deadline = Instant::now() + within;
        loop {
            let line = self.next_line(what, deadline, within)?;
            if done(&line) {
                return Ok(());
            }
        }
    }

    /// The engine's next line, until `deadline` (`within` after the wait
    /// began). The deadline is checked before each line, so an engine
    /// that prints without end still times out.
    fn next_line(&mut self, what: &str, deadline: Instant, within: Duration) -> Result<String, EngineError> {
        let program = self.spec.command[0].clone();
        let timeout = || EngineError::Timeout {
            program: program.clone(),
            waiting_for: what.to_string(),
            seconds: within.as_secs_f64(),
        };
        let now = Instant::now();
        if now >= deadline {
            return Err(timeout());
        }
        match self.lines.recv_timeout(deadline - now) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => Err(timeout()),
            Err(RecvTimeoutError::Disconnected) => {
                let _ = self.child.wait();
                let stderr = self.last_words();
                Err(EngineError::Died { program, waiting_for: what.to_string(), stderr })
            }
        }
    }
}

impl Drop for UsiEngine {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit").and_then(|_| self.stdin.flush());
        let deadline = Instant::now() + Duration::from_millis(500);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The fields of one `info` line that a client uses.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Info {
    pub depth: Option<u32>,
    pub multipv: Option<usize>,
    pub score: Option<Score>,
    pub bound: bool,
    pub nodes: Option<u64>,
    pub pv: Vec<String>,
}

/// Parses an `info` line; unknown fields are skipped, `string` ends it.
pub fn parse_info(line: &str) -> Info {
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut info = Info::default();
    let mut i = 1;
    while i < words.len() {
        match words[i] {
            "string" => break,
            "pv" => {
                info.pv = words[i + 1..].iter().map(|s| s.to_string()).collect();
                break;
            }
            "depth" => info.depth = words.get(i + 1).and_then(|w| w.parse().ok()),
            "multipv" => info.multipv = words.get(i + 1).and_then(|w| w.parse().ok()),
            "nodes" => info.nodes = words.get(i + 1).and_then(|w| w.parse().ok()),
            "lowerbound" | "upperbound" => info.bound = true,
            "score" => {
                let (kind, value) = (words.get(i + 1).copied(), words.get(i + 2).copied());
                info.score = match (kind, value) {
                    (Some("cp"), Some(v)) => v.parse().ok().map(Score::Cp),
                    // USI allows a bare sign for a mate of unknown length.
                    (Some("mate"), Some("+")) => Some(Score::Mate(1)),
                    (Some("mate"), Some("-")) => Some(Score::Mate(-1)),
                    (Some("mate"), Some(v)) => v.parse().ok().map(Score::Mate),
                    _ => None,
                };
                i += 2;
            }
            _ => {}
        }
        i += 1;
    }
    info
}
