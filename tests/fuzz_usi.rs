//! A fuzz run of the USI session, in process (no pipes, a uniform
//! evaluator instead of a net), so that a hundred thousand inputs take
//! seconds: transcripts of real sessions, mutated at the byte level (bit
//! flips, bytes that are not UTF-8, cut and spliced lines, extreme
//! numbers, very long tokens), all fed to one session (`usi::feed`, the
//! loop `usi::run` uses), so state left by one input meets the next.
//! After each input the session must still answer `isready` and play a
//! legal move; a panic fails the test and a watchdog fails it when one
//! input takes too long.
//!
//! `PANTHEON_FUZZ_INPUTS` sets the count (default 100,000) and
//! `PANTHEON_FUZZ_SEED` the seed.

use pantheon::mcts::Rng;
use pantheon::notation::UsiMove;
use pantheon::rules::{Game, Position, Variant};
use pantheon::usi::{Flow, Output, Session};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

mod common;
use common::{Buffer, Uniform};

/// Lines of real sessions: GUIs, match runners, the engine's own tests.
const CORPUS: &[&str] = &[
    "usi",
    "isready",
    "usinewgame",
    "setoption name USI_Variant value minishogi",
    "setoption name USI_Variant value mansindam",
    "setoption name UCI_Variant value pandemonium",
    "setoption name USI_Variant value pandemonium2022",
    "setoption name Threads value 1",
    "setoption name USI_Hash value 16",
    "setoption name MultiPV value 3",
    "setoption name MatePlies value 3",
    "setoption name RootMatePlies value 0",
    "setoption name PolicyTemperature value 150",
    "setoption name CPuct value 200",
    "setoption name ByoyomiMargin value 50",
    "setoption name USI_Ponder value true",
    "setoption name ModelFile value /nonexistent.pnet",
    "setoption name Device value cpu",
    "position startpos",
    "position startpos moves 5d5c 1b1c",
    "position startpos moves 2e3d 4a3b 3d4c",
    "position sfen rbsgk/4p/5/P4/KGSBR b - 1",
    "position sfen 4k/5/5/5/K4 b P 1 moves P*3c",
    "position startpos moves 7g7f 3c3d 8h2b+",
    "position sfen rnbakqcnm/9/ppppppppp/9/9/9/PPPPPPPPP/9/MNCQKABNR b - 1 moves 5g5f 5c5d",
    "go nodes 20",
    "go nodes 50 depth 3",
    "go btime 1000 wtime 1000 byoyomi 100",
    "go btime 0 wtime 0 byoyomi 30",
    "go btime 5000 wtime 4000 binc 100 winc 100",
    "go movetime 10",
    "go infinite",
    "go ponder btime 1000 wtime 1000 byoyomi 100",
    "ponderhit",
    "stop",
    "go mate 20",
    "go mate infinite",
    "gameover win",
    "gameover lose",
    "setoption name Clear Hash",
];

const EXTREMES: &[&str] =
    &["-9223372036854775808", "9223372036854775807", "18446744073709551616", "-1", "0", "4294967296", "1e9", "NaN", ""];

fn mutate(rng: &mut Rng, lines: &mut Vec<Vec<u8>>) {
    let pick = |rng: &mut Rng, n: usize| rng.below(n.max(1));
    let i = pick(rng, lines.len());
    let op = rng.below(9);
    // Splice in another corpus line, or drop this one.
    if op == 5 {
        let other = CORPUS[rng.below(CORPUS.len())].as_bytes().to_vec();
        lines.insert(pick(rng, lines.len() + 1), other);
        return;
    }
    if op == 6 && lines.len() > 1 {
        lines.remove(i);
        return;
    }
    let line = &mut lines[i];
    match op {
        // Flip a bit.
        0 if !line.is_empty() => {
            let at = pick(rng, line.len());
            line[at] ^= 1 << rng.below(8);
        }
        // Insert raw bytes: not UTF-8, control characters, line ends.
        1 => {
            let at = pick(rng, line.len() + 1);
            let bytes: &[&[u8]] =
                &[b"\xff", b"\xc3", b"\xe2\x82", b"\0", b"\r", b"\t", b"\n", b"\xf0\x9f\x98\x80", b" "];
            let b = bytes[rng.below(bytes.len())];
            line.splice(at..at, b.iter().copied());
        }
        // Cut a piece out.
        2 if !line.is_empty() => {
            let a = pick(rng, line.len());
            let b = (a + 1 + rng.below(8)).min(line.len());
            line.drain(a..b);
        }
        // An extreme number in place of a token.
        3 => {
            let text = String::from_utf8_lossy(line).into_owned();
            let mut words: Vec<&str> = text.split(' ').collect();
            let w = pick(rng, words.len());
            words[w] = EXTREMES[rng.below(EXTREMES.len())];
            *line = words.join(" ").into_bytes();
        }
        // Duplicate a token many times (a long line).
        4 => {
            let text = String::from_utf8_lossy(line).into_owned();
            let words: Vec<&str> = text.split(' ').collect();
            let w = words[pick(rng, words.len())];
            let times = [2, 10, 1000, 20_000][rng.below(4)];
            line.extend(std::iter::repeat_n(format!(" {w}"), times).flat_map(|s| s.into_bytes()));
        }
        // Truncate.
        7 if !line.is_empty() => {
            let at = pick(rng, line.len());
            line.truncate(at);
        }
        // Random printable garbage.
        _ => {
            let n = 1 + rng.below(12);
            let junk: Vec<u8> = (0..n).map(|_| b' ' + rng.below(95) as u8).collect();
            let at = pick(rng, line.len() + 1);
            line.splice(at..at, junk);
        }
    }
}

/// One input: a few corpus lines, mutated.
fn input(rng: &mut Rng) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> =
        (0..1 + rng.below(6)).map(|_| CORPUS[rng.below(CORPUS.len())].as_bytes().to_vec()).collect();
    for _ in 0..1 + rng.below(4) {
        mutate(rng, &mut lines);
    }
    // Whoever sends `quit` ends the session; the check needs it running.
    lines.retain(|l| String::from_utf8_lossy(l).split_whitespace().next() != Some("quit"));
    let mut bytes = lines.join(&b'\n');
    if rng.below(4) != 0 {
        bytes.push(b'\n');
    }
    bytes
}

/// After the fuzz input: stop any search, then a known game and a move.
const CHECK: &[u8] = b"\nstop\nsetoption name USI_Variant value minishogi\nsetoption name MultiPV value 1\nsetoption name RootMatePlies value 0\nisready\nposition startpos moves 5d5c\ngo nodes 8\n";

#[test]
fn hostile_input_never_stops_the_session() {
    let count: u64 = std::env::var("PANTHEON_FUZZ_INPUTS").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let seed: u64 = std::env::var("PANTHEON_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(2026);
    let mut rng = Rng::new(seed);
    // The watchdog: one input may take a few seconds at most.
    let progress = Arc::new(AtomicU64::new(0));
    let watched = Arc::clone(&progress);
    std::thread::spawn(move || {
        let mut last = (u64::MAX, Instant::now());
        loop {
            std::thread::sleep(Duration::from_millis(500));
            let now = watched.load(Ordering::SeqCst);
            if now == u64::MAX {
                return;
            }
            if now != last.0 {
                last = (now, Instant::now());
            } else if last.1.elapsed() > Duration::from_secs(30) {
                eprintln!("input {now} (seed {seed}) hangs the session");
                std::process::abort();
            }
        }
    });
    let started = Instant::now();
    let (mut errors, mut sessions) = (0usize, 1usize);
    let buffer = Buffer::default();
    let mut session = Session::new(Output::new(buffer.clone()), Box::new(Uniform));
    for n in 0..count {
        progress.store(n, Ordering::SeqCst);
        let mut bytes = input(&mut rng);
        bytes.extend_from_slice(CHECK);
        buffer.0.lock().clear();
        if pantheon::usi::feed(&mut session, &bytes[..]) == Flow::Quit {
            // A mutation made a `quit`: the session ended as it should.
            session = Session::new(Output::new(buffer.clone()), Box::new(Uniform));
            sessions += 1;
            continue;
        }
        // The check's search answers on its own thread.
        let out = loop {
            let out = buffer.text();
            let answered = out.rsplit("readyok").next().is_some_and(|after| after.contains("bestmove "));
            if out.contains("readyok") && answered {
                break out;
            }
            std::thread::sleep(Duration::from_micros(50));
        };
        errors += out.matches("info string error").count();
        let after = out.rsplit("readyok").next().unwrap_or("");
        let best = after.lines().rev().find_map(|l| l.strip_prefix("bestmove ")).unwrap_or("");
        let mv = best.split_whitespace().next().unwrap_or("");
        let mut game = Game::new(Position::startpos(Variant::Minishogi));
        game.play(UsiMove::parse("5d5c", Variant::Minishogi.geometry()).unwrap().to_game_move(&game).unwrap());
        let legal = UsiMove::parse(mv, Variant::Minishogi.geometry()).is_ok_and(|m| m.to_game_move(&game).is_ok());
        assert!(
            legal,
            "input {n} (seed {seed}): bestmove '{mv}' is not legal\ninput: {:?}\noutput:\n{out}",
            String::from_utf8_lossy(&bytes)
        );
    }
    progress.store(u64::MAX, Ordering::SeqCst);
    eprintln!(
        "{count} fuzz inputs (seed {seed}) in {:.1} s, {errors} error answers, {sessions} sessions",
        started.elapsed().as_secs_f64()
    );
    assert!(errors > count as usize / 10, "the mutations reach the error paths");
}
