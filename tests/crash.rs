//! Crash safety of long runs: `selfplay`, `train`, `loop` and `match`
//! (with `--results`) killed with
//! SIGKILL at random moments, several times, then run again with the same
//! command. After every kill no shard, net, checkpoint or state file may
//! be damaged, and the finished run must equal one that was never
//! interrupted.

use pantheon::mcts::Rng;
use pantheon::rules::Variant;
use pantheon::selfplay::{Shard, read_dir};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_pantheon");

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pantheon-crash-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[String]) {
    let out = Command::new(BIN).args(args).output().expect("binary runs");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Starts the command and kills it after `after`; returns whether it was
/// still running (and so really killed).
fn kill_after(args: &[String], after: Duration) -> bool {
    let mut child = Command::new(BIN).args(args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let deadline = Instant::now() + after;
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    true
}

fn tiny_net(dir: &Path) -> String {
    let path = dir.join("tiny.pnet");
    let args = ["net", "init", "--variant", "minishogi", "--blocks", "1", "--channels", "8", "--out"];
    let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    args.push(path.display().to_string());
    run(&args);
    path.display().to_string()
}

/// Every file under `dir` that the runs write must read back whole.
fn check_intact(dir: &Path) {
    for entry in walk(dir) {
        let name = entry.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with('.') || name.contains(".tmp") {
            continue; // a writer's temporary file, never read
        }
        match entry.extension().and_then(|e| e.to_str()) {
            Some("shard") => {
                Shard::read(&entry).unwrap_or_else(|e| panic!("{}: {e}", entry.display()));
            }
            Some("pnet") => {
                let bytes = std::fs::read(&entry).unwrap();
                pantheon::nn::weights::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", entry.display()));
            }
            _ if name == "state" => {
                let text = std::fs::read_to_string(&entry).unwrap();
                assert!(text.ends_with('\n') && text.lines().count() >= 2, "{}: {text:?}", entry.display());
            }
            _ => {}
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}

/// Runs `args` (which name `out` as their output) three times killed at
/// random moments from `within`, checking the files after each kill, then
/// to the end.
fn kill_and_resume(args: &[String], out: &Path, within: (u64, u64), seed: u64) -> usize {
    let mut rng = Rng::new(seed);
    let mut killed = 0;
    for _ in 0..3 {
        let ms = within.0 + rng.below((within.1 - within.0) as usize) as u64;
        killed += kill_after(args, Duration::from_millis(ms)) as usize;
        check_intact(out);
    }
    run(args);
    check_intact(out);
    killed
}

/// Whether two weight files hold the same net: the same outputs, bit for
/// bit, on positions along a fixed line (the files' bytes also carry
/// burn's random parameter ids, which differ from run to run).
fn same_net(a: &Path, b: &Path) -> bool {
    use pantheon::mcts::{EvalRequest, Evaluator};
    use pantheon::rules::{Game, Position};
    let load = |p: &Path| {
        let device = burn::prelude::Device::flex();
        let l = pantheon::nn::weights::load_file(p, Some(Variant::Minishogi), &device).unwrap();
        pantheon::nn::NetEvaluator::new(l.net, l.config, Variant::Minishogi, device, 16, "t".into())
    };
    let mut game = Game::new(Position::startpos(Variant::Minishogi));
    let mut requests = Vec::new();
    for _ in 0..12 {
        let moves = game.legal_moves();
        if moves.is_empty() {
            break;
        }
        requests.push(EvalRequest { position: game.position().clone(), moves: moves.clone(), repetitions: 1 });
        game.play(moves[moves.len() / 2]);
    }
    load(a).evaluate(&requests) == load(b).evaluate(&requests)
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

#[test]
fn selfplay_killed_and_rerun_writes_the_same_games() {
    let dir = temp_dir("selfplay");
    let net = tiny_net(&dir);
    let args = |out: &Path| {
        let mut a = strings(&["selfplay", "--variant", "minishogi", "--games", "8", "--parallel", "2"]);
        a.extend(strings(&[
            "--visits",
            "16",
            "--fast-visits",
            "4",
            "--max-plies",
            "60",
            "--seed",
            "9",
            "--model",
            &net,
        ]));
        a.extend(["--out".to_string(), out.display().to_string()]);
        a
    };
    let straight = dir.join("straight");
    run(&args(&straight));
    let killed = dir.join("killed");
    assert!(kill_and_resume(&args(&killed), &killed, (50, 1500), 1) > 0, "no kill landed");
    let (a, _) = read_dir(&straight, Variant::Minishogi, usize::MAX).unwrap();
    let (b, _) = read_dir(&killed, Variant::Minishogi, usize::MAX).unwrap();
    assert_eq!(a.len(), b.len());
    assert!(a == b, "the resumed run's records differ");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn train_killed_and_rerun_writes_the_same_net() {
    let dir = temp_dir("train");
    let net = tiny_net(&dir);
    let data = dir.join("data");
    let mut sp =
        strings(&["selfplay", "--variant", "minishogi", "--games", "4", "--visits", "16", "--fast-visits", "4"]);
    sp.extend(strings(&["--max-plies", "60", "--model", &net, "--out", data.to_str().unwrap()]));
    run(&sp);
    let args = |out: &Path| {
        let mut a = strings(&["train", "--variant", "minishogi", "--data", data.to_str().unwrap(), "--from", &net]);
        a.extend(strings(&["--steps", "400", "--batch", "16", "--checkpoint-every", "7", "--seed", "4"]));
        a.extend(["--out".to_string(), out.display().to_string()]);
        a
    };
    let straight = dir.join("straight");
    std::fs::create_dir_all(&straight).unwrap();
    run(&args(&straight.join("net.pnet")));
    let killed = dir.join("killed");
    std::fs::create_dir_all(&killed).unwrap();
    assert!(kill_and_resume(&args(&killed.join("net.pnet")), &killed, (30, 1000), 2) > 0, "no kill landed");
    assert!(same_net(&straight.join("net.pnet"), &killed.join("net.pnet")), "the resumed training wrote another net");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn loop_killed_and_rerun_reaches_the_same_end() {
    let dir = temp_dir("loop");
    let net = tiny_net(&dir);
    let args = |out: &Path| {
        let mut a = strings(&["loop", "--variant", "minishogi", "--generations", "2", "--from", &net]);
        a.extend(strings(&["--games", "4", "--parallel", "2", "--visits", "12", "--fast-visits", "4"]));
        a.extend(strings(&["--steps", "8", "--batch", "16", "--gate-games", "2", "--gate-nodes", "8"]));
        a.extend(strings(&["--max-plies", "50", "--tsume", "20", "--seed", "3"]));
        a.extend(["--dir".to_string(), out.display().to_string()]);
        a
    };
    let straight = dir.join("straight");
    run(&args(&straight));
    let killed = dir.join("killed");
    assert!(kill_and_resume(&args(&killed), &killed, (100, 3000), 3) > 0, "no kill landed");
    for g in 1..=2 {
        let name = format!("nets/gen{g}.pnet");
        assert!(same_net(&straight.join(&name), &killed.join(&name)), "{name} differs after the kills");
    }
    let state = |d: &Path| std::fs::read_to_string(d.join("state")).unwrap().replace(d.to_str().unwrap(), "DIR");
    assert_eq!(state(&straight), state(&killed));
    // The log's figures, without the times (the columns from the wall
    // seconds on: wall and CPU seconds, in all and by phase).
    let log = |d: &Path| -> Vec<String> {
        std::fs::read_to_string(d.join("log.csv"))
            .unwrap()
            .lines()
            .map(|l| l.split(',').take(8).collect::<Vec<_>>().join(","))
            .collect()
    };
    assert_eq!(log(&straight), log(&killed));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn match_killed_and_rerun_plays_the_same_games() {
    let dir = temp_dir("match");
    let args = |results: &Path| {
        let mut a = strings(&["match", "--variant", "minishogi", "--a", "uniform", "--b", "greedy"]);
        a.extend(strings(&["--nodes", "100", "--games", "16", "--seed", "6", "--results", results.to_str().unwrap()]));
        a
    };
    let lines = |path: &Path| -> Vec<String> {
        let mut lines: Vec<String> = std::fs::read_to_string(path).unwrap().lines().map(String::from).collect();
        lines.sort();
        lines
    };
    let straight = dir.join("straight.txt");
    run(&args(&straight));
    let killed = dir.join("killed.txt");
    assert!(kill_and_resume(&args(&killed), &dir, (20, 800), 4) > 0, "no kill landed");
    // The same 16 games, whatever order the runs wrote them in.
    assert_eq!(lines(&straight).len(), 17);
    assert_eq!(lines(&straight), lines(&killed));
    let _ = std::fs::remove_dir_all(&dir);
}
