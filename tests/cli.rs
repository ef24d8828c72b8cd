//! The `pantheon` binary: output format and error handling.

use std::process::{Command, Output};

#[path = "support/nets.rs"]
mod nets;

fn pantheon(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pantheon")).args(args).output().expect("binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// An empty directory of this test run's own.
fn fresh_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pantheon-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn perft_prints_the_count_last() {
    let o = pantheon(&["perft", "--variant", "minishogi", "--depth", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().last(), Some("2512"));
}

#[test]
fn perft_divide_lists_each_move_then_the_total() {
    let o = pantheon(&["perft", "--variant", "mansindam", "--depth", "2", "--divide"]);
    assert!(o.status.success());
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 32, "31 moves and the total");
    assert_eq!(lines[31], "961");
    let sum: u64 = lines[..31].iter().map(|l| l.split(' ').nth(1).unwrap().parse::<u64>().unwrap()).sum();
    assert_eq!(sum, 961);
    assert!(lines.iter().any(|l| l.starts_with("5g5f ")));
}

#[test]
fn perft_from_sfen_and_moves() {
    let o = pantheon(&[
        "perft",
        "--variant",
        "pandemonium2022",
        "--sfen",
        "rnbsksbnr/2a1f1u2/p1p1p1p1p/4v4/9/4V4/P1P1P1P1P/2U1F1A2/RNBSKSBNR b - 1",
        "--moves",
        "5f5e",
        "--depth",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let direct = pantheon(&[
        "perft",
        "--variant",
        "pandemonium2022",
        "--sfen",
        "rnbsksbnr/2a1f1u2/p1p1p1p1p/4v4/9/4V4/P1P1P1P1P/2U1F1A2/RNBSKSBNR b - 1",
        "--depth",
        "2",
        "--divide",
    ]);
    let line = stdout(&direct).lines().find(|l| l.starts_with("5f5e ")).unwrap().to_string();
    assert_eq!(line.split(' ').nth(1), stdout(&o).lines().last());
}

#[test]
fn show_prints_board_sfen_side_check_and_result() {
    let o = pantheon(&["show", "--variant", "minishogi", "--sfen", "3rk/5/3G1/5/K4 b S 1", "--moves", "S*1b"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("sfen: 3rk/4S/3G1/5/K4 w - 2"), "{out}");
    assert!(out.contains("side to move: gote"));
    assert!(out.contains("in check: yes"));
    assert!(out.lines().any(|l| l == "result: sente wins (checkmate)"), "{out}");
    let start = stdout(&pantheon(&["show", "--variant", "mansindam"]));
    assert!(start.contains("result: ongoing"));
    let promoted = stdout(&pantheon(&["show", "--variant", "pandemonium"]));
    assert!(promoted.contains("+F") && promoted.contains("+u"), "{promoted}");
}

#[test]
fn output_to_a_closed_pipe_ends_quietly_and_a_full_disk_is_an_error() {
    // The pipe's reader is gone before the process starts, so its first
    // write fails with a broken pipe, as when `| head` has read enough.
    let divide_into = |stdout: std::process::Stdio| {
        Command::new(env!("CARGO_BIN_EXE_pantheon"))
            .args(["perft", "--variant", "minishogi", "--depth", "2", "--divide"])
            .stdout(stdout)
            .output()
            .expect("binary runs")
    };
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = divide_into(writer.into());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
        let o = divide_into(full.into());
        assert_eq!(o.status.code(), Some(1));
        assert!(stderr(&o).starts_with("error: writing to stdout:"), "{}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
}

#[test]
fn bad_input_fails_cleanly_with_a_message() {
    let cases: [(&[&str], &str); 10] = [
        (&["perft", "--variant", "chess", "--depth", "1"], "unknown variant 'chess'"),
        (
            &["perft", "--variant", "minishogi", "--sfen", "rbsgk/4p/5/P4/KGSBX b - 1", "--depth", "1"],
            "unknown piece letter 'X'",
        ),
        (&["show", "--variant", "minishogi", "--moves", "2e2d"], "illegal move 2e2d: a bishop on 2e cannot move to 2d"),
        (&["show", "--variant", "minishogi", "--moves", "7g7f"], "off the 5x5 board"),
        (&["show", "--variant", "mansindam", "--moves", "5g5f", "5c5d", "zz"], "move 3"),
        (&["show", "--variant", "minishogi", "--sfen", "4k/5/5/5/K4 b - 1", "--moves", "P*3c"], "no pawn in hand"),
        (
            &["selfplay", "--variant", "minishogi", "--games", "1", "--out", "unused", "--greedy-share", "1.5"],
            "--greedy-share must be between 0 and 1",
        ),
        (&["loop", "--variant", "minishogi", "--dir", "unused", "--greedy-share=2"], "--greedy-share must be"),
        (
            &["selfplay", "--variant", "minishogi", "--games", "1", "--out", "unused", "--cpuct", "0"],
            "'0' is not an exploration constant from 0.1 to 10",
        ),
        (&["loop", "--variant", "minishogi", "--dir", "unused", "--cpuct=wide"], "is not an exploration constant"),
    ];
    for (args, message) in cases {
        let o = pantheon(args);
        assert!(!o.status.success(), "{args:?} succeeded");
        let err = stderr(&o);
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn selfplay_plays_in_bf16_where_the_cpu_has_a_kernel_and_says_so_where_not() {
    let dir = fresh_dir("selfplay-bf16");
    let out = dir.join("games");
    let o = pantheon(&[
        "selfplay",
        "--variant",
        "minishogi",
        "--games",
        "1",
        "--visits",
        "8",
        "--fast-visits",
        "2",
        "--device",
        "cpu",
        "--precision",
        "bf16",
        "--out",
        out.to_str().unwrap(),
    ]);
    match pantheon::nn::bf16::Kernel::best() {
        Some(kernel) => {
            assert!(o.status.success(), "{}", stderr(&o));
            assert!(stderr(&o).contains(&format!(", bf16 on {kernel}")), "{}", stderr(&o));
            assert!(stdout(&o).contains("game 1/1"), "{}", stdout(&o));
        }
        None => {
            assert!(!o.status.success());
            assert!(stderr(&o).contains("bf16"), "{}", stderr(&o));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unreadable_or_damaged_loop_state_is_an_error_not_a_fresh_start() {
    let dir = fresh_dir("loop-state");
    let run = |d: &std::path::Path| {
        pantheon(&["loop", "--variant", "minishogi", "--generations", "1", "--dir", d.to_str().unwrap()])
    };
    // A state that cannot be read (here a directory) is not "no state".
    let unreadable = dir.join("unreadable");
    std::fs::create_dir_all(unreadable.join("state")).unwrap();
    let o = run(&unreadable);
    assert!(!o.status.success() && stderr(&o).contains("cannot read"), "{}", stderr(&o));
    assert!(!unreadable.join("nets/gen0.pnet").exists(), "the run started afresh");
    // A log row that does not parse stops the run before it rewrites the log.
    let damaged = dir.join("damaged");
    std::fs::create_dir_all(damaged.join("nets")).unwrap();
    std::fs::write(damaged.join("state"), "generation 1\nbest nets/gen1.pnet\n").unwrap();
    let log = "generation,games\n1,x\n";
    std::fs::write(damaged.join("log.csv"), log).unwrap();
    let o = run(&damaged);
    assert!(!o.status.success() && stderr(&o).contains("bad log row '1,x'"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(damaged.join("log.csv")).unwrap(), log);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn match_openings_must_leave_the_players_a_move() {
    let random_match = |extra: &[&str]| {
        let args = ["match", "--variant", "minishogi", "--a", "random", "--b", "random", "--games", "2"];
        pantheon(&[&args[..], extra].concat())
    };
    let o = random_match(&["--opening-plies", "61"]);
    assert!(!o.status.success() && stderr(&o).contains("--opening-plies must be 0 to 60"), "{}", stderr(&o));
    let o = random_match(&["--opening-plies", "8", "--max-plies", "8"]);
    assert!(
        !o.status.success() && stderr(&o).contains("--max-plies must be more than --opening-plies"),
        "{}",
        stderr(&o)
    );
    // The longest openings are still found at once.
    let o = random_match(&["--opening-plies", "60"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[cfg(target_os = "linux")]
#[test]
fn a_match_stops_at_the_first_game_it_cannot_write() {
    // /dev/full takes the file open and fails every write.
    let o = pantheon(&[
        "match",
        "--variant",
        "minishogi",
        "--a",
        "random",
        "--b",
        "random",
        "--games",
        "6",
        "--record",
        "/dev/full",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("/dev/full"), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().filter(|l| l.starts_with("game ")).count(), 1, "{}", stdout(&o));
}

#[test]
fn match_against_baseline_players() {
    // Deterministic: one search thread, fixed playouts, seeded openings
    // and random moves.
    let o = pantheon(&["match", "--variant", "minishogi", "--a", "uniform", "--b", "random", "--games", "4"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let last = out.lines().last().unwrap();
    assert!(last.starts_with("uniform vs random: +"), "{out}");
    let wins: usize = last["uniform vs random: +".len()..].split(' ').next().unwrap().parse().unwrap();
    assert!(wins >= 3, "a 100-playout search should beat random play: {out}");
    // Two games of greedy against random, with more flags.
    let greedy_vs_random = |extra: &[&str]| {
        let mut args = vec!["match", "--variant", "minishogi", "--a", "greedy", "--b", "random", "--games", "2"];
        args.extend_from_slice(extra);
        pantheon(&args)
    };
    let record = std::env::temp_dir().join(format!("pantheon-cli-record-{}.txt", std::process::id()));
    let o = greedy_vs_random(&["--record", record.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.lines().last().unwrap().contains("(2 games"), "{out}");
    assert!(out.starts_with("game 1: A (sente) scores "), "{out}");
    // Each recorded game replays to the result the match printed.
    let text = std::fs::read_to_string(&record).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    for pair in lines.chunks(2) {
        assert!(pair[0].starts_with("# game ") && pair[0].contains("A = greedy, B = random"), "{text}");
        let rest = pair[1].strip_prefix("position sfen ").expect(&text);
        let (sfen, moves) = rest.split_once(" moves ").expect(&text);
        let mut args = vec!["show", "--variant", "minishogi", "--sfen", sfen, "--moves"];
        args.extend(moves.split(' '));
        let shown = stdout(&pantheon(&args));
        let result = shown.lines().find_map(|l| l.trim().strip_prefix("result: ")).expect(&shown);
        if result != "ongoing" {
            assert!(pair[0].contains(result), "{}: {shown}", pair[0]);
        }
    }
    std::fs::remove_file(&record).unwrap();
    let o = greedy_vs_random(&["--record", "/no/such/dir/games.txt"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("cannot create /no/such/dir/games.txt"), "{}", stderr(&o));
    let o = greedy_vs_random(&["--mate-plies", "1,2,3"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--mate-plies takes one value or two"), "{}", stderr(&o));
    let o = greedy_vs_random(&["--policy-temperature", "1,1.5,2"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--policy-temperature takes one value or two"), "{}", stderr(&o));
    for bad in ["0", "hot", "11"] {
        let o = greedy_vs_random(&["--policy-temperature", bad]);
        assert!(!o.status.success(), "{bad}");
        assert!(stderr(&o).contains("is not a temperature from 0.1 to 10"), "{bad}: {}", stderr(&o));
        let o = greedy_vs_random(&["--cpuct", bad]);
        assert!(!o.status.success(), "{bad}");
        assert!(stderr(&o).contains("is not an exploration constant from 0.1 to 10"), "{bad}: {}", stderr(&o));
    }
    let o = greedy_vs_random(&["--cpuct", "1,2,3"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--cpuct takes one value or two"), "{}", stderr(&o));
    let o = pantheon(&["match", "--variant", "minishogi", "--a", "no/such.pnet", "--b", "random", "--games", "2"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no/such.pnet"), "{}", stderr(&o));
}

#[test]
fn a_match_with_a_results_file_resumes_and_extends() {
    let dir = fresh_dir("results");
    let results = dir.join("results.txt");
    let greedy_vs_random = |games: &str, extra: &[&str]| {
        let mut args = vec!["match", "--variant", "minishogi", "--a", "greedy", "--b", "random", "--seed", "5"];
        args.extend_from_slice(&["--games", games]);
        args.extend_from_slice(extra);
        pantheon(&args)
    };
    let with_file = ["--results", results.to_str().unwrap()];
    let games =
        |out: &str| -> Vec<String> { out.lines().filter(|l| l.starts_with("game ")).map(String::from).collect() };
    let straight = greedy_vs_random("6", &[]);
    assert!(straight.status.success(), "{}", stderr(&straight));
    let straight = stdout(&straight);

    // Two games, then the same match extended to six: only games 3 to 6
    // are played, and the totals are the uninterrupted match's.
    let o = greedy_vs_random("2", &with_file);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(games(&stdout(&o)), games(&straight)[..2]);
    let o = greedy_vs_random("6", &with_file);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("2 games played before, 4 to play"), "{}", stderr(&o));
    assert_eq!(games(&stdout(&o)), games(&straight)[2..]);
    let total = |out: &str| out.lines().find(|l| l.starts_with("greedy vs random: ")).map(String::from);
    assert_eq!(total(&stdout(&o)), total(&straight));
    let text = std::fs::read_to_string(&results).unwrap();
    assert_eq!(text.lines().count(), 7, "{text}");
    assert!(text.starts_with("# pantheon match results: variant=minishogi a=\"greedy\" b=\"random\""), "{text}");
    // Players that do not search have no exploration constant to name.
    assert!(!text.contains("cpuct"), "{text}");

    // Finished: nothing left to play (with any --cpuct: these players do
    // not search).
    for extra in [&[][..], &["--cpuct", "1.25"]] {
        let o = greedy_vs_random("6", &[&with_file[..], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(games(&stdout(&o)).is_empty(), "{}", stdout(&o));
        assert_eq!(total(&stdout(&o)), total(&straight));
    }

    // A line cut short by a kill is dropped and its game played again.
    let mut torn = text.clone();
    let last = torn.trim_end().rfind('\n').unwrap() + 1;
    torn.truncate(last + 12);
    std::fs::write(&results, &torn).unwrap();
    let o = greedy_vs_random("6", &with_file);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("dropping an unfinished last line"), "{}", stderr(&o));
    assert_eq!(games(&stdout(&o)), games(&straight)[5..]);
    assert_eq!(std::fs::read_to_string(&results).unwrap(), text);

    // Another match's file, a damaged line, too few games, not a results
    // file, an unwritable path: clear errors, and the file is left as it was.
    let cases: Vec<(Vec<&str>, String, &str)> = vec![
        (vec!["--max-plies", "200"], text.clone(), "holds the games of another match"),
        (vec![], format!("{text}game seven: A (sente) scores 1: x, 3 plies\n"), "line 8: 'game seven"),
        (vec![], format!("{text}game 3: A (sente) scores 1: x, 3 plies\n"), "holds game 3 twice"),
        (vec![], format!("{text}game 4: A (gote) scores 2: x, 3 plies\n"), "line 8"),
        (vec![], "position startpos\n".to_string(), "is not a match results file"),
    ];
    for (extra, content, message) in cases {
        std::fs::write(&results, &content).unwrap();
        let mut args = with_file.to_vec();
        args.extend(extra);
        let o = greedy_vs_random("6", &args);
        assert!(!o.status.success(), "{message}");
        assert!(stderr(&o).contains(message), "{message}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&results).unwrap(), content);
    }
    std::fs::write(&results, &text).unwrap();
    let o = greedy_vs_random("4", &with_file);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("holds game 5, but this match has 4 games"), "{}", stderr(&o));
    std::fs::write(&results, [0xff, 0xfe, 0x00]).unwrap();
    let o = greedy_vs_random("4", &with_file);
    assert!(stderr(&o).contains("is not a match results file (not text)"), "{}", stderr(&o));
    let o = greedy_vs_random("2", &["--results", "/no/such/dir/results.txt"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("cannot create /no/such/dir/results.txt"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_results_file_is_not_resumed_with_other_weights_or_exploration_constant() {
    let dir = fresh_dir("results-net");
    let net = dir.join("net.pnet");
    let results = dir.join("results.txt");
    let play_with = |games: &str, extra: &[&str]| {
        let mut args = vec![
            "match",
            "--variant",
            "minishogi",
            "--a",
            net.to_str().unwrap(),
            "--b",
            "random",
            "--nodes",
            "8",
            "--device",
            "cpu",
            "--games",
            games,
            "--seed",
            "3",
            "--results",
            results.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        pantheon(&args)
    };
    let play = |games: &str| play_with(games, &[]);
    nets::init_tiny_net(&net, 1);
    let first = std::fs::read(&net).unwrap();
    let o = play("2");
    assert!(o.status.success(), "{}", stderr(&o));
    // The same file name, other weights: not the same match.
    nets::init_tiny_net(&net, 2);
    let before = std::fs::read_to_string(&results).unwrap();
    let o = play("4");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("holds the games of another match"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&results).unwrap(), before);
    // The first weights again: it resumes.
    std::fs::write(&net, &first).unwrap();
    let o = play("4");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("2 games played before, 2 to play"), "{}", stderr(&o));
    // The net searches with minishogi's exploration constant, which the
    // file names; another one is another match.
    let text = std::fs::read_to_string(&results).unwrap();
    assert!(text.lines().next().unwrap().contains(" cpuct=[2.0, 2.0] "), "{text}");
    let o = play_with("4", &["--cpuct", "2,1.25"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("holds the games of another match"), "{}", stderr(&o));
    // At 1.25, the one value before `--cpuct` existed, it is not named, so
    // that the files of those matches still resume.
    std::fs::remove_file(&results).unwrap();
    let o = play_with("2", &["--cpuct", "1.25"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let header = std::fs::read_to_string(&results).unwrap();
    assert!(header.starts_with("# pantheon match results: ") && !header.contains("cpuct"), "{header}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_mates_reports_playouts_to_each_proof() {
    let o = pantheon(&[
        "bench",
        "mates",
        "--variant",
        "minishogi",
        "--nodes",
        "50000",
        "--mate-plies",
        "3",
        "--random",
        "3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("minishogi")).collect();
    assert_eq!(rows.len(), 4, "{out}");
    // The held-out random mates: 3 of them, each proven by the uniform
    // search's leaf mate search (3 plies) or the tree.
    let random: Vec<&str> = rows[3].split_whitespace().collect();
    let lengths: Vec<usize> = random[1].split('/').map(|n| n.parse().unwrap()).collect();
    assert_eq!(lengths.iter().sum::<usize>(), 3, "{out}");
    assert!(random[2].ends_with("/3"), "{out}");
    // Then the median and the total playouts of the three.
    let (median, total): (u64, u64) = (random[3].parse().expect(&out), random[4].parse().expect(&out));
    assert!(median >= 1 && total >= 3 && total >= median, "{out}");
    assert!(rows[0].contains("mate in 1") && rows[1].contains("mate in 3") && rows[2].contains("mate in 5"), "{out}");
    // The uniform column of the mates in 1 and 3: proven at the first
    // playout by the leaf mate search.
    assert_eq!(rows[0].split_whitespace().nth(4), Some("1"), "{out}");
    assert_eq!(rows[1].split_whitespace().nth(4), Some("1"), "{out}");
    // The mate in 5 needs the tree: more playouts, and a number.
    let n: u64 = rows[2].split_whitespace().nth(4).and_then(|n| n.parse().ok()).expect(&out);
    assert!(n > 1, "{out}");
    let o = pantheon(&["bench", "mates", "--model", "x.pnet"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--model needs --variant"), "{}", stderr(&o));
}

#[test]
fn tsume_writes_samples_that_data_reads_and_both_reject_bad_input() {
    let dir = std::env::temp_dir().join(format!("pantheon-cli-tsume-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.to_str().unwrap();
    let o = pantheon(&["tsume", "--variant", "minishogi", "--out", out, "--samples", "12", "--tsume-plies", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains(" samples from ") && text.contains("wrote "), "{text}");
    assert!(std::fs::read_dir(&dir).unwrap().count() >= 1);
    // `pantheon data` on them: tsume samples only, and a clear error for a
    // directory without shards of the variant.
    let o = pantheon(&["data", "--variant", "minishogi", "--dir", out, "--model", "shipped"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(": 0 game samples (0 with a search policy target, 0 with a teacher label), ")
            && text.contains("nothing to relate"),
        "{text}"
    );
    let o = pantheon(&["data", "--variant", "mansindam", "--dir", out]);
    assert!(!o.status.success() && stderr(&o).contains("no mansindam shards in"), "{}", stderr(&o));
    let o = pantheon(&["data", "--variant", "minishogi", "--dir", out, "--model", "no-such.pnet"]);
    assert!(!o.status.success() && stderr(&o).contains("no-such.pnet"), "{}", stderr(&o));
    let o = pantheon(&["tsume", "--variant", "minishogi", "--out", out, "--tsume-plies", "4"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--tsume-plies must be odd"), "{}", stderr(&o));
    let o = pantheon(&["tsume", "--variant", "minishogi", "--out", out, "--tsume-mate-in-one", "2"]);
    assert!(stderr(&o).contains("between 0 and 1"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn net_init_is_reproducible_and_net_grow_grows_or_says_why_not() {
    let dir = fresh_dir("grow");
    let (a, b, large) = (dir.join("a.pnet"), dir.join("b.pnet"), dir.join("large.pnet"));
    nets::init_tiny_net(&a, 5);
    nets::init_tiny_net(&b, 5);
    assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(), "one seed wrote two nets");
    let grow = |input: &std::path::Path, blocks: &str, channels: &str| {
        let (input, out) = (input.to_str().unwrap(), large.to_str().unwrap());
        pantheon(&["net", "grow", "--in", input, "--blocks", blocks, "--channels", channels, "--out", out])
    };
    let o = grow(&a, "2", "12");
    assert!(o.status.success(), "{}", stderr(&o));
    let info = stdout(&pantheon(&["net", "info", large.to_str().unwrap()]));
    assert!(info.contains("blocks: 2, channels: 12"), "{info}");
    let o = grow(&large, "1", "12");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("a net grows, never shrinks"), "{}", stderr(&o));
    let o = grow(&dir.join("missing.pnet"), "2", "12");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("cannot read"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}
