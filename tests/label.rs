//! Teacher labels: `pantheon label` driving a USI teacher (Pantheon itself
//! with a tiny net, or a scripted fake), the score -> value curve, the
//! training targets made from labels, and matches against a USI engine.

use pantheon::mcts::{Rng, Score};
use pantheon::notation::parse_position;
use pantheon::rules::{Game, Position, Variant};
use pantheon::selfplay::label::{fit_scale, merge_labelled, teacher_value};
use pantheon::selfplay::{Sample, Shard, TeacherLabel, read_dir};
use pantheon::usi::client::{EngineSpec, UsiEngine};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

#[path = "support/nets.rs"]
mod nets;

const BIN: &str = env!("CARGO_BIN_EXE_pantheon");

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pantheon-label-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn pantheon(args: &[&str]) -> std::process::Output {
    Command::new(BIN).args(args).output().expect("binary runs")
}

/// A one-block, 8-channel minishogi net written by `pantheon net init`.
fn tiny_net(dir: &Path) -> String {
    let path = dir.join("tiny.pnet");
    nets::init_tiny_net(&path, 1);
    path.display().to_string()
}

/// Pantheon with the tiny net as a deterministic teacher: one thread, no
/// root mate thread, a node limit.
fn pantheon_teacher(net: &str) -> Vec<String> {
    vec![
        "--teacher".into(),
        BIN.into(),
        "--teacher-option".into(),
        format!("ModelFile={net}"),
        "--teacher-option".into(),
        "Threads=1".into(),
        "--teacher-option".into(),
        "RootMatePlies=0".into(),
        "--teacher-option".into(),
        "Device=cpu".into(),
        "--teacher-go".into(),
        "nodes 24".into(),
    ]
}

fn label(args: &[String]) -> std::process::Output {
    Command::new(BIN).arg("label").args(args).output().expect("binary runs")
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn read_samples(dir: &Path) -> Vec<Sample> {
    let (samples, warnings) = read_dir(dir, Variant::Minishogi, usize::MAX).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    samples
}

#[test]
fn teacher_games_carry_the_teachers_answers() {
    let dir = temp_dir("games");
    let net = tiny_net(&dir);
    let out = dir.join("labels");
    let mut args = strings(&["--variant", "minishogi", "--games", "2", "--multipv", "3", "--max-plies", "30"]);
    args.extend(pantheon_teacher(&net));
    args.extend(strings(&["--out", out.to_str().unwrap()]));
    let run = label(&args);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(stdout.contains("2/2 done"), "{stdout}");
    assert!(read_samples(&out).len() >= 10);

    // Ask the same teacher about the same games, ply by ply as the run did
    // (a teacher may reuse its tree between the moves of a game): the
    // labels are its answers (its lines, scores and order).
    let spec = EngineSpec {
        command: vec![BIN.into()],
        options: vec![
            ("ModelFile".into(), net.clone()),
            ("Threads".into(), "1".into()),
            ("RootMatePlies".into(), "0".into()),
            ("Device".into(), "cpu".into()),
        ],
        go: "nodes 24".into(),
        timeout: Duration::from_secs(60),
    };
    let mut teacher = UsiEngine::start(&spec, &[("USI_Variant", "minishogi".into()), ("MultiPV", "3".into())]).unwrap();
    let mut checked = 0;
    for name in shards_in(&out) {
        let shard = Shard::read(&out.join(name)).unwrap();
        teacher.new_game().unwrap();
        let mut game = Game::new(Position::startpos(Variant::Minishogi));
        for (i, s) in shard.samples.iter().enumerate() {
            assert_eq!(game.position(), &s.position, "the shard holds the game's positions in order");
            let label = s.teacher.as_ref().expect("every teacher-game sample is labelled");
            assert!(!label.moves.is_empty() && label.moves.len() <= 3);
            assert_eq!(label.score, label.moves[0].1);
            assert!([1.0, -1.0, 0.0].contains(&s.value));
            let thought = teacher.think(&game, &[]).unwrap();
            let answered: Vec<_> = thought
                .lines
                .iter()
                .map(|l| {
                    (
                        pantheon::notation::UsiMove::parse(&l.pv[0], s.position.variant().geometry())
                            .unwrap()
                            .to_game_move(&game)
                            .unwrap(),
                        l.score,
                    )
                })
                .collect();
            assert_eq!(label.moves, answered, "game ply {i}");
            checked += 1;
            // The move played leads to the next sample's position.
            if let Some(next) = shard.samples.get(i + 1) {
                let mv = game
                    .legal_moves()
                    .iter()
                    .copied()
                    .find(|&m| game.position().hash_after(m) == next.position.hash())
                    .expect("consecutive samples are one move apart");
                game.play(mv);
            }
        }
    }
    assert!(checked >= 10);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_killed_run_resumes_to_the_same_shards() {
    let dir = temp_dir("resume");
    let net = tiny_net(&dir);
    let run_to = |out: &Path| {
        let mut args = strings(&["--variant", "minishogi", "--games", "6", "--max-plies", "24", "--seed", "5"]);
        args.extend(pantheon_teacher(&net));
        args.extend(strings(&["--out", out.to_str().unwrap()]));
        args
    };
    let straight = dir.join("straight");
    assert!(label(&run_to(&straight)).status.success());

    let killed = dir.join("killed");
    let mut child = Command::new(BIN)
        .arg("label")
        .args(run_to(&killed))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once the first game is written.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while shards_in(&killed).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let after_kill = shards_in(&killed).len();
    let resumed = label(&run_to(&killed));
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    let stdout = String::from_utf8_lossy(&resumed.stdout);
    assert!(stdout.contains(&format!("({after_kill} before)")), "{stdout}");
    let names = shards_in(&straight);
    assert_eq!(names, shards_in(&killed));
    for name in names {
        let a = Shard::read(&straight.join(&name)).unwrap();
        let b = Shard::read(&killed.join(&name)).unwrap();
        assert_eq!(a, b, "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn jobs_run_their_own_teachers_side_by_side() {
    let dir = temp_dir("jobs");
    let net = tiny_net(&dir);
    // The tiny-net teacher behind a script that notes each start's PID
    // (exec keeps it).
    let starts = dir.join("starts.txt");
    let teacher = write_script(
        &dir,
        "teacher.sh",
        &format!("#!/bin/sh\necho $$ >> '{}'\nexec '{BIN}' \"$@\"\n", starts.display()),
    );
    let mut args =
        strings(&["--variant", "minishogi", "--games", "4", "--max-plies", "24", "--seed", "5", "--jobs", "2"]);
    args.extend(pantheon_teacher(&net));
    let at = args.iter().position(|a| a == "--teacher").unwrap() + 1;
    args[at] = teacher;
    args.extend(strings(&["--out", dir.join("labels").to_str().unwrap()]));
    let run = label(&args);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let mut pids: Vec<String> = std::fs::read_to_string(&starts).unwrap().lines().map(str::to_string).collect();
    pids.sort();
    pids.dedup();
    // Each job claims a game as it starts, long before the first game
    // ends, so both start a teacher.
    assert_eq!(pids.len(), 2, "{pids:?}");
    assert_eq!(shards_in(&dir.join("labels")).len(), 4);
    let _ = std::fs::remove_dir_all(&dir);
}

fn shards_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".shard"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// A fake teacher: whatever the position, its best line starts with a
/// move our rules forbid (the rook on 1e cannot pass the pawn on 1b),
/// its second with the sente pawn's push.
const FAKE_TEACHER: &str = r#"#!/bin/sh
while read -r line; do
  case "$line" in
    usi) echo "id name fake"; echo "option name MultiPV type spin default 1 min 1 max 10"; echo usiok ;;
    isready) echo readyok ;;
    go*) echo "info depth 3 multipv 1 score cp 900 nodes 10 pv 1e1a"
         echo "info depth 3 multipv 2 score cp 35 nodes 10 pv 5d5c 1b1c"
         echo "bestmove 1e1a" ;;
    quit) exit 0 ;;
  esac
done
"#;

fn write_script(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path.display().to_string()
}

#[cfg(unix)]
#[test]
fn a_move_our_rules_forbid_is_dropped_and_counted() {
    let dir = temp_dir("forbidden");
    let teacher = write_script(&dir, "fake.sh", FAKE_TEACHER);
    let records = dir.join("records");
    std::fs::create_dir_all(&records).unwrap();
    let start = Position::startpos(Variant::Minishogi);
    let sample = record(start.clone());
    Shard { variant: Variant::Minishogi, model_id: "t".into(), samples: vec![sample.clone(), sample] }
        .write(&records, "one")
        .unwrap();
    let out = dir.join("labels");
    let args = strings(&[
        "--variant",
        "minishogi",
        "--teacher",
        &teacher,
        "--positions",
        records.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--teacher-go",
        "depth 3",
    ]);
    let run = label(&args);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let stdout = String::from_utf8_lossy(&run.stdout);
    // Two copies of one position: labelled once.
    assert!(stdout.contains("1 positions") && stdout.contains("1 teacher lines forbidden"), "{stdout}");
    let samples = read_samples(&out);
    assert_eq!(samples.len(), 1);
    let push = pantheon::notation::parse_move(&start, "5d5c").unwrap();
    let label = samples[0].teacher.clone().unwrap();
    assert_eq!(label, TeacherLabel { score: Score::Cp(35), moves: vec![(push, Score::Cp(35))] });
    // The record's result is kept.
    assert_eq!(samples[0].value, 1.0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A teacher that, like Fairy-Stockfish in USI mode, calls its number of
/// lines `USI_MultiPV` and reports a second line only when it is set.
const USI_MULTIPV_TEACHER: &str = r#"#!/bin/sh
n=1
while read -r line; do
  case "$line" in
    usi) echo "id name fake-usi-multipv"; echo "option name USI_MultiPV type spin default 1 min 1 max 500"; echo usiok ;;
    "setoption name USI_MultiPV value "*) n=${line##* } ;;
    isready) echo readyok ;;
    go*) echo "info depth 3 multipv 1 score cp 35 nodes 10 pv 5d5c 1b1c"
         if [ "$n" -ge 2 ]; then echo "info depth 3 multipv 2 score cp 10 nodes 10 pv 2e3d"; fi
         echo "bestmove 5d5c" ;;
    quit) exit 0 ;;
  esac
done
"#;

/// A teacher without any option for its number of lines.
const SINGLE_LINE_TEACHER: &str = r#"#!/bin/sh
while read -r line; do
  case "$line" in
    usi) echo "id name fake-single"; echo usiok ;;
    isready) echo readyok ;;
    go*) echo "info depth 3 score cp 35 nodes 10 pv 5d5c"; echo "bestmove 5d5c" ;;
    quit) exit 0 ;;
  esac
done
"#;

#[cfg(unix)]
#[test]
fn the_number_of_lines_reaches_a_teacher_that_calls_it_usi_multipv_and_one_that_cannot_is_an_error() {
    let dir = temp_dir("multipv");
    let records = dir.join("records");
    std::fs::create_dir_all(&records).unwrap();
    let start = Position::startpos(Variant::Minishogi);
    Shard { variant: Variant::Minishogi, model_id: "t".into(), samples: vec![record(start.clone())] }
        .write(&records, "one")
        .unwrap();
    let run = |teacher: &str, out: &str, extra: &[&str]| {
        let mut args = vec!["--variant", "minishogi", "--teacher", teacher, "--positions", records.to_str().unwrap()];
        let out = dir.join(out);
        args.extend(["--out", out.to_str().unwrap()]);
        args.extend(extra);
        (label(&strings(&args)), out)
    };
    // Asked for two lines, the USI_MultiPV teacher gives both.
    let teacher = write_script(&dir, "usi-multipv.sh", USI_MULTIPV_TEACHER);
    let (o, out) = run(&teacher, "two", &["--multipv", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let label = read_samples(&out)[0].teacher.clone().unwrap();
    let push = pantheon::notation::parse_move(&start, "5d5c").unwrap();
    let other = pantheon::notation::parse_move(&start, "2e3d").unwrap();
    assert_eq!(label.moves, vec![(push, Score::Cp(35)), (other, Score::Cp(10))]);
    // A teacher with no such option: an error when more than one line is
    // asked for, its single line with --multipv 1.
    let single = write_script(&dir, "single.sh", SINGLE_LINE_TEACHER);
    let (o, _) = run(&single, "refused", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("neither a MultiPV nor a USI_MultiPV option"), "{err}");
    let (o, out) = run(&single, "one", &["--multipv", "1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(read_samples(&out)[0].teacher.clone().unwrap().moves, vec![(push, Score::Cp(35))]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A sample as a record holds it before labelling: a position and a won
/// game's result, nothing else.
fn record(position: Position) -> Sample {
    Sample { position, repetitions: 1, value: 1.0, full_search: false, policy: Vec::new(), teacher: None, search: None }
}

/// A records directory of `n` distinct minishogi positions from random
/// games, the start position first.
fn distinct_records(dir: &Path, n: usize) -> PathBuf {
    let records = dir.join("records");
    std::fs::create_dir_all(&records).unwrap();
    let start = Position::startpos(Variant::Minishogi);
    let mut seen = std::collections::HashSet::new();
    let mut samples = Vec::new();
    let mut rng = Rng::new(11);
    let sample = |position| Sample { value: 0.0, ..record(position) };
    seen.insert(start.hash());
    samples.push(sample(start.clone()));
    while samples.len() < n {
        let mut game = Game::new(start.clone());
        while game.outcome().is_none() && game.moves().len() < 40 && samples.len() < n {
            let moves = game.legal_moves();
            game.play(moves[rng.below(moves.len())]);
            if seen.insert(game.position().hash()) {
                samples.push(sample(game.position().clone()));
            }
        }
    }
    Shard { variant: Variant::Minishogi, model_id: "t".into(), samples }.write(&records, "random").unwrap();
    records
}

#[cfg(unix)]
#[test]
fn a_unit_the_teacher_keeps_crashing_on_is_skipped_and_the_run_goes_on() {
    let dir = temp_dir("poison");
    // Two chunks; the fake teacher dies, with two lines of last words, on
    // the start position, which is in the first.
    let records = distinct_records(&dir, pantheon::selfplay::label::CHUNK + 10);
    let start = pantheon::notation::to_sfen(&Position::startpos(Variant::Minishogi));
    let poisoned = FAKE_TEACHER.replace(
        "    isready)",
        &format!("    \"position sfen {start}\") echo oops >&2; echo 'second line' >&2; exit 3 ;;\n    isready)"),
    );
    let teacher = write_script(&dir, "poisoned.sh", &poisoned);
    let out = dir.join("labels");
    let args = |go: &str| {
        strings(&["--variant", "minishogi", "--teacher", &teacher, "--teacher-go", go, "--out", out.to_str().unwrap()])
            .into_iter()
            .chain(strings(&["--positions", records.to_str().unwrap()]))
            .collect::<Vec<_>>()
    };
    // The run goes on past the first chunk, but ends in an error: it is
    // not complete.
    let run = label(&args("depth 3"));
    assert!(!run.status.success());
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(stdout.contains("5 teacher restarts, 1 units skipped"), "{stdout}");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("teacher-chunk-0000000 skipped after 5 teacher failures"), "{stderr}");
    assert!(stderr.contains("1 units skipped after 5 teacher failures each; rerun"), "{stderr}");
    assert!(stderr.contains("its last error output: oops | second line"), "{stderr}");
    assert_eq!(shards_in(&out), vec!["teacher-chunk-0000001.shard"]);
    // Another search for the same directory is refused: its units would
    // mix with these.
    let other = label(&args("depth 4"));
    assert!(!other.status.success());
    let stderr = String::from_utf8_lossy(&other.stderr);
    assert!(stderr.contains("holds units of another labelling run"), "{stderr}");
    // So are positions that changed since: the chunks would be others.
    std::fs::remove_file(records.join("random.shard")).unwrap();
    distinct_records(&dir, 100);
    let changed = label(&args("depth 3"));
    assert!(!changed.status.success());
    let stderr = String::from_utf8_lossy(&changed.stderr);
    assert!(stderr.contains("holds units of another labelling run"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn go_limits_that_never_give_a_move_are_refused() {
    for go in ["mate 5", "nodes 0", "depth 0", "movetime 0", "byoyomi 0", "depth 3 nodes 0"] {
        assert!(EngineSpec::check_go(go).is_err(), "{go}");
    }
    for go in ["depth 1", "nodes 1", "movetime 5", "btime 0 wtime 0 byoyomi 100", "btime 6000 wtime 6000 binc 0 winc 0"]
    {
        assert!(EngineSpec::check_go(go).is_ok(), "{go}");
    }
    let err = EngineSpec::check_go("mate 5").unwrap_err().to_string();
    assert!(err.contains("'mate' asks for a mate search"), "{err}");
}

#[cfg(unix)]
#[test]
fn a_crashing_engine_loses_and_its_results_file_still_resumes() {
    let dir = temp_dir("crash-results");
    let crashing =
        FAKE_TEACHER.replace("go*) ", "go*) echo 'thread panicked' >&2; echo 'note: backtrace' >&2; exit 101; ");
    let engine = format!("usi:{}", write_script(&dir, "crashing.sh", &crashing));
    let results = dir.join("games.results");
    let run = || {
        let args = ["match", "--variant", "minishogi", "--a", &engine, "--b", "random", "--games", "2"];
        pantheon(&[&args[..], &["--results", results.to_str().unwrap()]].concat())
    };
    let first = run();
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert!(stdout.contains("thread panicked | note: backtrace"), "{stdout}");
    // A header and one line per game.
    assert_eq!(std::fs::read_to_string(&results).unwrap().lines().count(), 3);
    let again = run();
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    assert!(String::from_utf8_lossy(&again.stderr).contains("2 games played before, 0 to play"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_teacher_gets_a_clear_error() {
    let dir = temp_dir("bad");
    let out = dir.join("labels");
    let run = |teacher: &str, extra: &[&str]| {
        let mut args = strings(&["--variant", "minishogi", "--games", "1", "--teacher", teacher, "--out"]);
        args.push(out.to_str().unwrap().into());
        args.extend(strings(extra));
        let o = label(&args);
        assert!(!o.status.success());
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let missing = run("/nonexistent/teacher", &[]);
    assert!(missing.contains("cannot start engine '/nonexistent/teacher'"), "{missing}");
    // A program that is not a USI engine ends at once.
    let not_usi = run("true", &[]);
    // (Whether it ended before or after reading `usi` is a race.)
    assert!(not_usi.contains("engine 'true' ended while Pantheon waited for"), "{not_usi}");
    let option = run(BIN, &["--teacher-option", "NoSuchOption=1"]);
    assert!(option.contains("has no option 'NoSuchOption'"), "{option}");
    let go = run(BIN, &["--teacher-go", "depth"]);
    assert!(go.contains("not KEY N pairs"), "{go}");
    // A silent engine times out instead of hanging, and so does one that
    // talks without end but never answers.
    #[cfg(unix)]
    {
        let chatty = FAKE_TEACHER.replace("go*) ", "go*) while true; do echo 'info string thinking'; done; ");
        let chatty = write_script(&dir, "chatty.sh", &chatty);
        let hung = run(&chatty, &["--teacher-timeout", "0.2"]);
        assert!(hung.contains("gave no bestmove within 0.2 s"), "{hung}");
        let silent = write_script(&dir, "silent.sh", "#!/bin/sh\nsleep 30\n");
        let hung = run(&silent, &["--teacher-timeout", "0.5"]);
        assert!(hung.contains("gave no usiok within 0.5 s"), "{hung}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_value_curve_and_its_fitted_scale() {
    assert_eq!(teacher_value(Score::Cp(0), 300.0), 0.0);
    // tanh(cp / (2 scale)) = 2 / (1 + exp(-cp / scale)) - 1.
    let p = 1.0 / (1.0 + (-450.0f64 / 300.0).exp());
    assert!((teacher_value(Score::Cp(450), 300.0) as f64 - (2.0 * p - 1.0)).abs() < 1e-6);
    assert_eq!(teacher_value(Score::Cp(-450), 300.0), -teacher_value(Score::Cp(450), 300.0));
    assert_eq!(teacher_value(Score::Mate(3), 300.0), 1.0);
    assert_eq!(teacher_value(Score::Mate(-2), 300.0), -1.0);

    // Results drawn from a logistic curve of scale 250: the fit finds it.
    let mut rng = Rng::new(7);
    let pos = Position::startpos(Variant::Minishogi);
    let samples: Vec<Sample> = (0..20_000)
        .map(|_| {
            let cp = (rng.uniform() * 2000.0 - 1000.0) as i32;
            let win = rng.uniform() < 1.0 / (1.0 + (-(cp as f64) / 250.0).exp());
            Sample {
                position: pos.clone(),
                repetitions: 1,
                value: if win { 1.0 } else { -1.0 },
                full_search: false,
                policy: Vec::new(),
                teacher: Some(TeacherLabel { score: Score::Cp(cp), moves: Vec::new() }),
                search: None,
            }
        })
        .collect();
    let (scale, n) = fit_scale(&samples).unwrap();
    assert_eq!(n, samples.len());
    assert!((scale - 250.0).abs() < 25.0, "{scale}");
    assert!(fit_scale(&[]).is_none());
}

#[test]
fn labelled_duplicates_merge_with_the_mean_result() {
    let v = Variant::Minishogi;
    let label = TeacherLabel { score: Score::Cp(10), moves: Vec::new() };
    let sample = |sfen: &str, value: f32, teacher: Option<TeacherLabel>| Sample {
        position: parse_position(v, sfen).unwrap(),
        repetitions: 1,
        value,
        full_search: false,
        policy: Vec::new(),
        teacher,
        search: None,
    };
    let start = "rbsgk/4p/5/P4/KGSBR b - 1";
    let other = "rbsgk/4p/5/P4/KGSBR w - 1";
    let merged = merge_labelled(vec![
        sample(start, 1.0, Some(label.clone())),
        sample(other, -1.0, Some(label.clone())),
        sample(start, 0.0, Some(label.clone())),
        sample(start, -1.0, None),
        sample(start, 1.0, Some(label.clone())),
    ]);
    let values: Vec<f32> = merged.iter().map(|s| s.value).collect();
    // The three labelled copies of the start become one worth 2/3; the
    // unlabelled sample stays as it is.
    assert_eq!(merged.len(), 3);
    assert!((values[0] - 2.0 / 3.0).abs() < 1e-6 && values[1] == -1.0 && values[2] == -1.0, "{values:?}");
}

#[test]
fn version_1_and_2_shards_are_still_read() {
    let start = Position::startpos(Variant::Minishogi);
    let mv = start.legal_moves()[0];
    let shard = Shard {
        variant: Variant::Minishogi,
        model_id: "old".into(),
        samples: vec![Sample {
            position: start,
            repetitions: 1,
            value: -1.0,
            full_search: true,
            policy: vec![(mv, 7)],
            teacher: None,
            search: None,
        }],
    };
    // Version 1 and 2 shards are version 3 shards without teacher labels
    // and search targets, but for the version field (and so the checksum).
    let mut bytes = shard.to_bytes();
    let with_version = |bytes: &mut Vec<u8>, version: u32| {
        bytes[8..12].copy_from_slice(&version.to_le_bytes());
        let body = bytes.len() - 4;
        let crc = crc32fast::hash(&bytes[..body]);
        bytes[body..].copy_from_slice(&crc.to_le_bytes());
    };
    for version in [1, 2] {
        with_version(&mut bytes, version);
        assert_eq!(Shard::from_bytes(&bytes).unwrap(), shard);
    }
    with_version(&mut bytes, 4);
    assert!(Shard::from_bytes(&bytes).unwrap_err().to_string().contains("versions 1 to 3"));
}

#[test]
fn a_match_against_a_usi_engine_is_arbitrated_by_our_rules() {
    let dir = temp_dir("match");
    let net = tiny_net(&dir);
    // Pantheon with the tiny net, as an external engine, against random.
    let engine = format!("usi:{BIN}");
    let run = pantheon(&[
        "match",
        "--variant",
        "minishogi",
        "--a",
        &engine,
        "--a-option",
        &format!("ModelFile={net}"),
        "--a-option",
        "Threads=1",
        "--a-option",
        "Device=cpu",
        "--a-go",
        "nodes 16",
        "--b",
        "random",
        "--games",
        "2",
        "--max-plies",
        "40",
        "--record-shards",
        dir.join("played").to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(stdout.contains("(2 games"), "{stdout}");
    // The games' positions after the 4 random plies, as value-only samples
    // whose values are the results: what `label --positions` reads.
    let played = shards_in(&dir.join("played"));
    assert_eq!(played.len(), 2);
    for (line, name) in stdout.lines().filter(|l| l.starts_with("game ")).zip(&played) {
        let plies: usize = line.rsplit(", ").next().unwrap().trim_end_matches(" plies").parse().unwrap();
        let shard = Shard::read(&dir.join("played").join(name)).unwrap();
        assert_eq!(shard.samples.len(), plies - 4, "{line}");
        let sum: f32 = shard.samples.iter().map(|s| s.value.abs()).sum();
        let decided = !line.contains("scores 0.5");
        assert_eq!(sum > 0.0, decided, "{line}");
        assert!(shard.samples.iter().all(|s| s.teacher.is_none() && s.policy.is_empty()));
    }

    // The fake teacher's move is illegal: it loses every game, reported.
    #[cfg(unix)]
    {
        let fake = format!("usi:{}", write_script(&dir, "fake.sh", FAKE_TEACHER));
        let run = pantheon(&[
            "match",
            "--variant",
            "minishogi",
            "--a",
            &fake,
            "--b",
            "random",
            "--games",
            "2",
            "--opening-plies",
            "0",
        ]);
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(stdout.contains("proposed an illegal move: illegal move 1e1a"), "{stdout}");
        assert!(stdout.contains("+0 =0 -2"), "{stdout}");
    }
    // An engine that answers after 300 ms of a 100 ms move time loses on
    // time, and the move times are reported.
    #[cfg(unix)]
    {
        let slow = write_script(&dir, "slow.sh", &FAKE_TEACHER.replace("go*) ", "go*) sleep 0.3; "));
        let a = format!("usi:{slow}");
        let slow_match = |margin: &[&str]| {
            let mut args = vec!["match", "--variant", "minishogi", "--a", &a, "--a-go", "movetime 100"];
            args.extend_from_slice(margin);
            args.extend_from_slice(&["--b", "random", "--games", "2", "--opening-plies", "0"]);
            String::from_utf8_lossy(&pantheon(&args).stdout).into_owned()
        };
        let stdout = slow_match(&[]);
        assert!(stdout.contains("lost on time:") && stdout.contains("for a limit of 100 ms"), "{stdout}");
        assert!(
            stdout.contains("2 moves, time per move median") && stdout.contains("2 games lost on time"),
            "{stdout}"
        );
        // With a margin of a second the same answers come in time, and
        // the fake's illegal move loses instead.
        let stdout = slow_match(&["--time-margin", "1000"]);
        assert!(stdout.contains("proposed an illegal move") && !stdout.contains("lost on time:"), "{stdout}");
        assert!(stdout.contains("0 games lost on time"), "{stdout}");
    }
    let spec = |go: &str| EngineSpec {
        command: vec!["x".into()],
        options: vec![],
        go: go.into(),
        timeout: Duration::from_secs(1),
    };
    assert_eq!(spec("movetime 250").time_limit(), Some(Duration::from_millis(250)));
    assert_eq!(spec("btime 0 wtime 0 byoyomi 100").time_limit(), Some(Duration::from_millis(100)));
    assert_eq!(spec("btime 6000 wtime 6000 byoyomi 100").time_limit(), None);
    assert_eq!(spec("nodes 1000").time_limit(), None);
    assert_eq!(pantheon::selfplay::think_summary(&[5, 1, 9, 3, 7]), Some((5, 9, 9)));
    assert_eq!(pantheon::selfplay::think_summary(&[]), None);
    let bad =
        pantheon(&["match", "--variant", "minishogi", "--a", "usi:/nonexistent", "--b", "random", "--games", "2"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("cannot start engine"));
    let _ = std::fs::remove_dir_all(&dir);
}
