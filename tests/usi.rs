//! USI transcripts against the real binary over pipes, and a self-match of
//! two engine processes with a rule arbiter.

use pantheon::notation::{UsiMove, format_move, parse_position};
use pantheon::rules::{Game, Variant};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// Generous bound for answers that should come at once: only a hang
/// trips it on a loaded machine.
const PATIENCE: Duration = Duration::from_secs(20);

struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    transcript: Vec<String>,
}

impl Engine {
    fn start() -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pantheon"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("engine starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Engine { child, stdin, lines, transcript: Vec::new() }
    }

    fn send_bytes(&mut self, bytes: &[u8]) {
        self.transcript.push(format!("> {}", String::from_utf8_lossy(bytes)));
        self.stdin.write_all(bytes).expect("engine reads");
    }

    fn send(&mut self, line: &str) {
        self.transcript.push(format!("> {line}"));
        writeln!(self.stdin, "{line}").expect("engine reads");
    }

    /// Lines up to and including the first one starting with `prefix`.
    fn until(&mut self, prefix: &str) -> Vec<String> {
        let deadline = Instant::now() + PATIENCE;
        let mut got = Vec::new();
        loop {
            match self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) => {
                    self.transcript.push(format!("< {line}"));
                    let done = line.starts_with(prefix);
                    got.push(line);
                    if done {
                        return got;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no '{prefix}' in time; transcript:\n{}", self.transcript.join("\n"))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("engine exited before '{prefix}'; transcript:\n{}", self.transcript.join("\n"))
                }
            }
        }
    }

    fn bestmove(&mut self) -> String {
        let lines = self.until("bestmove");
        lines.last().unwrap().split_whitespace().nth(1).unwrap().to_string()
    }

    fn quit(mut self) {
        self.send("quit");
        let deadline = Instant::now() + PATIENCE;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                assert!(status.success(), "engine exit status {status}");
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        panic!("engine did not quit");
    }
}

fn legal_in(variant: Variant, moves: &[String], mv: &str) -> bool {
    let mut game = Game::new(parse_position(variant, "startpos").unwrap());
    for m in moves {
        let m = UsiMove::parse(m, variant.geometry()).unwrap().to_game_move(&game).unwrap();
        game.play(m);
    }
    UsiMove::parse(mv, variant.geometry()).is_ok_and(|u| u.to_game_move(&game).is_ok())
}

#[test]
fn handshake_lists_options_and_variants() {
    let mut e = Engine::start();
    e.send("usi");
    let lines = e.until("usiok");
    assert!(lines[0].starts_with("id name Pantheon"));
    assert!(lines.iter().any(|l| l.starts_with("id author")));
    let variant = lines.iter().find(|l| l.contains("name USI_Variant")).expect("variant option");
    for v in ["minishogi", "mansindam", "pandemonium", "pandemonium2022"] {
        assert!(variant.contains(&format!("var {v}")), "{variant}");
    }
    for name in [
        "USI_Hash",
        "Threads",
        "MultiPV",
        "USI_Ponder",
        "ModelFile",
        "Device",
        "Precision",
        "BatchSize",
        "ByoyomiMargin",
        "MatePlies",
        "RootMatePlies",
        "PolicyTemperature",
        "CPuct",
    ] {
        assert!(lines.iter().any(|l| l.starts_with(&format!("option name {name} "))), "{name}");
    }
    e.send("isready");
    e.until("readyok");
    e.quit();
}

#[test]
fn plays_a_game_loop_in_every_variant() {
    for variant in Variant::ALL {
        let mut e = Engine::start();
        // Fairy-Stockfish-based hosts send UCI_Variant.
        let option = if variant == Variant::Pandemonium { "UCI_Variant" } else { "USI_Variant" };
        e.send(&format!("setoption name {option} value {variant}"));
        e.send("setoption name Threads value 1");
        e.send("isready");
        e.until("readyok");
        e.send("usinewgame");
        let mut moves: Vec<String> = Vec::new();
        for _ in 0..6 {
            let position = if moves.is_empty() {
                "position startpos".to_string()
            } else {
                format!("position startpos moves {}", moves.join(" "))
            };
            e.send(&position);
            e.send("go byoyomi 100");
            let mv = e.bestmove();
            assert!(legal_in(variant, &moves, &mv), "{variant}: illegal {mv} after {moves:?}");
            moves.push(mv);
        }
        e.quit();
    }
}

#[test]
fn infinite_search_stops_promptly_and_isready_does_not_interrupt() {
    let mut e = Engine::start();
    e.send("setoption name USI_Variant value mansindam");
    e.send("position startpos");
    e.send("go infinite");
    std::thread::sleep(Duration::from_millis(300));
    e.send("isready");
    e.until("readyok");
    std::thread::sleep(Duration::from_millis(1200));
    e.send("stop");
    let lines = e.until("bestmove");
    assert!(lines.iter().any(|l| l.starts_with("info depth")), "progress reported: {lines:?}");
    let mv = lines.last().unwrap().split_whitespace().nth(1).unwrap().to_string();
    assert!(legal_in(Variant::Mansindam, &[], &mv));
    e.quit();
}

#[test]
fn ponder_then_ponderhit() {
    let mut e = Engine::start();
    e.send("setoption name USI_Ponder value true");
    e.send("position startpos moves 1e1d");
    e.send("go ponder btime 0 wtime 0 byoyomi 200");
    std::thread::sleep(Duration::from_millis(300));
    e.send("ponderhit");
    let mv = e.bestmove();
    assert!(legal_in(Variant::Minishogi, &["1e1d".to_string()], &mv));
    e.quit();
}

#[test]
fn pondering_on_a_finished_game_waits_for_stop() {
    let mut e = Engine::start();
    // Gote is checkmated: there is nothing to search, but a ponder search
    // must still wait for stop before answering.
    e.send("position sfen 3rk/4S/3G1/5/K4 w - 2");
    e.send("go ponder byoyomi 100");
    std::thread::sleep(Duration::from_millis(300));
    e.send("isready");
    let lines = e.until("readyok");
    assert!(!lines.iter().any(|l| l.starts_with("bestmove")), "answered before stop: {lines:?}");
    e.send("stop");
    assert_eq!(e.bestmove(), "resign");
    e.quit();
}

#[test]
fn multipv_three_prints_three_lines() {
    let mut e = Engine::start();
    e.send("setoption name MultiPV value 3");
    e.send("position startpos");
    e.send("go nodes 2000");
    let lines = e.until("bestmove");
    for k in 1..=3 {
        assert!(lines.iter().any(|l| l.contains(&format!(" multipv {k} pv "))), "multipv {k}: {lines:?}");
    }
    e.quit();
}

#[test]
fn bad_input_gets_an_error_and_the_engine_stays_usable() {
    let bad = [
        "flip the board",
        "position",
        "position sfen rbsgk/4p/5/P4/KGSBRR b - 1",
        "position startpos moves 2e2d",
        "position startpos moves 7g7f",
        "setoption name Threads value 300",
        "setoption name MultiPV value lots",
        "setoption name USI_Variant value chess",
        "setoption name NoSuchOption value 1",
        "go nodes many",
        "go sideways",
        "ponderhit",
    ];
    let mut e = Engine::start();
    for line in bad {
        e.send(line);
        let got = e.until("info string error");
        assert!(got.last().unwrap().len() > "info string error: ".len(), "{line}");
        // After each bad command, a correct search works.
        e.send("position startpos moves 1e1d");
        e.send("go nodes 50");
        let mv = e.bestmove();
        assert!(legal_in(Variant::Minishogi, &["1e1d".to_string()], &mv), "after '{line}': {mv}");
    }
    // `go` after a failed `position` answers, names the problem, resigns.
    e.send("position sfen 5/5/5/5/5 b - 1");
    e.until("info string error");
    e.send("go nodes 10");
    let lines = e.until("bestmove");
    assert!(lines.iter().any(|l| l.contains("no valid position")));
    assert_eq!(lines.last().unwrap(), "bestmove resign");
    // Commands during a search are refused without stopping it.
    e.send("position startpos");
    e.send("go infinite");
    e.send("go nodes 5");
    e.until("info string error");
    e.send("setoption name Threads value 3");
    e.until("info string error");
    e.send("stop");
    e.bestmove();
    e.quit();
}

#[test]
fn a_line_that_is_not_utf8_gets_an_error_and_the_engine_goes_on() {
    let mut e = Engine::start();
    e.send("setoption name USI_Variant value minishogi");
    e.send_bytes(b"position startpos moves 5d5c\xff\xfe\n");
    e.send_bytes(b"\x80\x81\x82 garbage\r\n");
    e.send("isready");
    let lines = e.until("readyok");
    let errors = lines.iter().filter(|l| l.starts_with("info string error: an input line is not valid UTF-8")).count();
    assert_eq!(errors, 2, "{lines:?}");
    e.send("position startpos");
    e.send("go nodes 20");
    let mv = e.bestmove();
    assert!(legal_in(Variant::Minishogi, &[], &mv), "{mv}");
    e.quit();
}

#[test]
fn go_movetime_is_used_almost_whole() {
    let mut e = Engine::start();
    e.send("setoption name USI_Variant value minishogi");
    e.send("setoption name RootMatePlies value 0");
    e.send("isready");
    e.until("readyok");
    e.send("position startpos");
    let started = Instant::now();
    e.send("go movetime 400");
    e.bestmove();
    // At most the movetime margin (10 ms) is kept back: a lower bound,
    // which a loaded machine can only make longer.
    let used = started.elapsed();
    assert!(used >= Duration::from_millis(385), "{used:?}");
    e.quit();
}

#[test]
fn go_mate_answers_the_mate_line_nomate_or_timeout() {
    let mut e = Engine::start();
    e.send("usi");
    e.until("usiok");
    // A mate in 3 (minishogi): the line is legal and ends in checkmate.
    let sfen = "3Bk/1pg2/P1G2/KSb2/2R1s b R 25";
    e.send(&format!("position sfen {sfen}"));
    e.send("go mate 60000");
    let answer = e.until("checkmate").pop().unwrap();
    let moves: Vec<&str> = answer.split_whitespace().skip(1).collect();
    assert_eq!(moves.len(), 3, "{answer}");
    let mut game = Game::new(parse_position(Variant::Minishogi, sfen).unwrap());
    for m in &moves {
        let mv = UsiMove::parse(m, Variant::Minishogi.geometry()).unwrap().to_game_move(&game).expect(&answer);
        game.play(mv);
    }
    assert_eq!(game.outcome().map(|o| o.reason.name()), Some("checkmate"), "{answer}");
    // No check at all in the start position: no mate.
    e.send("position startpos");
    e.send("go mate 60000");
    assert_eq!(e.until("checkmate").pop().unwrap(), "checkmate nomate");
    // Checks without end in sight: `stop` ends the search.
    e.send("position sfen 5/5/2k2/5/K4 b RB 1");
    e.send("go mate infinite");
    std::thread::sleep(Duration::from_millis(200));
    e.send("stop");
    assert_eq!(e.until("checkmate").pop().unwrap(), "checkmate timeout");
    // And so does the time limit.
    e.send("go mate 200");
    assert_eq!(e.until("checkmate").pop().unwrap(), "checkmate timeout");
    // The engine still searches normally afterwards.
    e.send("go nodes 20");
    e.bestmove();
    e.quit();
}

/// Two engine processes play each other under a rule arbiter.
#[test]
fn self_match_with_arbiter_has_no_illegal_move_crash_or_time_loss() {
    const BYOYOMI_MS: u64 = 100;
    const MAX_PLIES: usize = 40;
    for variant in Variant::ALL {
        for game_no in 0..2 {
            let mut engines = [Engine::start(), Engine::start()];
            for e in &mut engines {
                e.send(&format!("setoption name USI_Variant value {variant}"));
                e.send("setoption name Threads value 1");
                e.send("isready");
                e.until("readyok");
                e.send("usinewgame");
            }
            let mut game = Game::new(parse_position(variant, "startpos").unwrap());
            let mut moves: Vec<String> = Vec::new();
            let mut slowest = Duration::ZERO;
            while game.outcome().is_none() && moves.len() < MAX_PLIES {
                let e = &mut engines[(moves.len() + game_no) % 2];
                let position = if moves.is_empty() {
                    "position startpos".into()
                } else {
                    format!("position startpos moves {}", moves.join(" "))
                };
                e.send(&position);
                let started = Instant::now();
                e.send(&format!("go btime 0 wtime 0 byoyomi {BYOYOMI_MS}"));
                let mv = e.bestmove();
                slowest = slowest.max(started.elapsed());
                if mv == "resign" {
                    break;
                }
                let usi = UsiMove::parse(&mv, variant.geometry()).unwrap_or_else(|e| panic!("{variant}: {e}"));
                let m = usi.to_game_move(&game).unwrap_or_else(|e| panic!("{variant} after {moves:?}: {e}"));
                game.play(m);
                moves.push(format_move(variant, m));
            }
            // A hang, not a few milliseconds of scheduling noise, fails here.
            assert!(slowest < Duration::from_millis(BYOYOMI_MS) + PATIENCE / 4, "{variant}: a move took {slowest:?}");
            for e in engines {
                e.quit();
            }
        }
    }
}

#[test]
fn a_bad_model_file_is_reported_the_shipped_net_used_and_the_device_named() {
    let mut e = Engine::start();
    e.send("setoption name ModelFile value /nonexistent/net.pnet");
    e.send("isready");
    let lines = e.until("readyok");
    assert!(
        lines.iter().any(|l| l.starts_with("info string error") && l.contains("/nonexistent/net.pnet")),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l.contains("shipped small minishogi net")), "{lines:?}");
    e.send("position startpos");
    e.send("go nodes 100");
    let mv = e.bestmove();
    assert!(legal_in(Variant::Minishogi, &[], &mv));
    // A net for another variant is refused too.
    let dir = std::env::temp_dir().join(format!("pantheon-usi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mansindam.pnet");
    std::fs::write(&path, pantheon::nn::shipped(Variant::Mansindam)).unwrap();
    e.send(&format!("setoption name ModelFile value {}", path.display()));
    e.send("isready");
    let lines = e.until("readyok");
    assert!(lines.iter().any(|l| l.contains("not minishogi")), "{lines:?}");
    e.send("setoption name ModelFile value <empty>");
    // Precision auto (the default): bf16 on the CPU where it multiplies
    // bf16 matrices, on its fastest kernel; f32 elsewhere.
    e.send("setoption name Device value cpu");
    e.send("go nodes 50");
    let lines = e.until("bestmove");
    let evaluator = lines.iter().find(|l| l.starts_with("info string evaluator:")).expect("the evaluator is named");
    match pantheon::nn::bf16::Kernel::best() {
        Some(kernel) => assert!(evaluator.ends_with(&format!(", bf16 on {kernel}")), "{evaluator}"),
        None => assert!(!evaluator.contains("bf16"), "{evaluator}"),
    }
    // bf16 on the CPU where it has AMX or AVX-512 BF16; elsewhere a clear
    // error and the f32 net.
    e.send("setoption name Precision value bf16");
    e.send("go nodes 50");
    let lines = e.until("bestmove");
    if pantheon::nn::bf16::supported() {
        assert!(lines.iter().any(|l| l.starts_with("info string evaluator:") && l.contains(", bf16 on ")), "{lines:?}");
    } else {
        assert!(lines.iter().any(|l| l.starts_with("info string error") && l.contains("bf16")), "{lines:?}");
    }
    e.send("setoption name Precision value f32");
    // Threads and BatchSize 0 (the defaults): a thread per core, the
    // device's batch (32 on the CPU); set ones are kept.
    e.send("setoption name Threads value 3");
    e.send("setoption name BatchSize value 12");
    e.send("go nodes 50");
    let lines = e.until("bestmove");
    assert!(lines.contains(&"info string search: 3 threads, batch 12".to_string()), "{lines:?}");
    e.send("setoption name Threads value 0");
    e.send("setoption name BatchSize value 0");
    e.send("go nodes 50");
    let lines = e.until("bestmove");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(lines.contains(&format!("info string search: {cores} threads, batch 32")), "{lines:?}");
    e.send("setoption name Device value gpu");
    e.send("go nodes 50");
    let lines = e.until("bestmove");
    if cfg!(feature = "gpu") {
        // The GPU build runs on any wgpu adapter (llvmpipe in CI) and
        // names it.
        assert!(lines.iter().any(|l| l.starts_with("info string evaluator:") && l.contains(" on gpu: ")), "{lines:?}");
    } else {
        assert!(lines.iter().any(|l| l.starts_with("info string error") && l.contains("GPU")), "{lines:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    e.quit();
}

/// The same protocol in process: a session with a uniform evaluator (no
/// net, no pipes), so a transcript takes milliseconds.
mod common;

mod in_process {
    use super::common::{Buffer, Uniform};
    use pantheon::rules::Variant;
    use pantheon::usi::{Output, Session};
    use std::time::{Duration, Instant};

    /// Feeds `lines` and waits until the output holds `until` (the search
    /// answers on its own thread); returns the output.
    fn transcript(lines: &[&str], until: &str) -> String {
        let buffer = Buffer::default();
        let mut session = Session::new(Output::new(buffer.clone()), Box::new(Uniform));
        for line in lines {
            session.handle(line);
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let out = buffer.text();
            if out.contains(until) || Instant::now() > deadline {
                session.handle("quit");
                return out;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_game_loop_answers_with_legal_moves() {
        let out = transcript(
            &[
                "usi",
                "setoption name USI_Variant value mansindam",
                "setoption name Threads value 1",
                "isready",
                "position startpos moves 5g5f",
                "go nodes 30",
            ],
            "bestmove",
        );
        assert!(out.contains("usiok") && out.contains("readyok"), "{out}");
        let mv = out.lines().find_map(|l| l.strip_prefix("bestmove ")).unwrap().split_whitespace().next().unwrap();
        assert!(super::legal_in(Variant::Mansindam, &["5g5f".to_string()], mv), "{mv}");
    }

    #[test]
    fn errors_are_answered_in_order_and_the_session_goes_on() {
        let out = transcript(
            &[
                "setoption name USI_Variant value chess",
                "position startpos moves 9z9y",
                "go depth -3",
                "setoption name ModelFile value missing.pnet",
                "isready",
                "position startpos",
                "go nodes 10",
            ],
            "bestmove",
        );
        let errors: Vec<&str> = out.lines().filter(|l| l.starts_with("info string error")).collect();
        assert!(errors.len() >= 4, "{out}");
        assert!(errors[0].contains("chess"), "{}", errors[0]);
        assert!(errors[1].contains("9z9y"), "{}", errors[1]);
        assert!(errors[2].contains("'depth' must be 1 to"), "{}", errors[2]);
        assert!(out.contains("cannot load the network"), "{out}");
        let mv = out.lines().find_map(|l| l.strip_prefix("bestmove ")).unwrap().split_whitespace().next().unwrap();
        assert!(super::legal_in(Variant::Minishogi, &[], mv), "{mv}");
    }
}
