//! Perft and complete move lists against counts from an independent
//! engine (Fairy-Stockfish, converted to USI/SFEN; see tests/data/README.md).

use pantheon::notation::{format_move, parse_position};
use pantheon::rules::{Game, Variant, perft};

/// Largest perft count run in the default test suite; bigger entries are
/// left to `cargo test --release -- --ignored`.
const NODE_LIMIT: u64 = 2_000_000;

struct Entry {
    line: usize,
    variant: Variant,
    sfen: String,
    fields: Vec<String>,
}

fn entries(data: &str) -> Vec<Entry> {
    data.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| {
            let fields: Vec<String> = l.split('|').map(str::to_string).collect();
            Entry {
                line: i + 1,
                variant: fields[0].parse().expect("variant name"),
                sfen: fields[1].clone(),
                fields: fields[2..].to_vec(),
            }
        })
        .collect()
}

fn check_perft(data: &str, limit: u64) -> usize {
    let mut checked = 0;
    for e in entries(data) {
        let depth: u32 = e.fields[0].parse().unwrap();
        let expected: u64 = e.fields[1].parse().unwrap();
        if expected > limit {
            continue;
        }
        let pos = parse_position(e.variant, &e.sfen).unwrap_or_else(|err| panic!("line {}: {err}", e.line));
        let got = perft::perft(&mut Game::new(pos), depth);
        assert_eq!(got, expected, "line {}: {} {} depth {depth}", e.line, e.variant, e.sfen);
        checked += 1;
    }
    checked
}

#[test]
fn perft_start_positions() {
    let n = check_perft(include_str!("data/perft-start.txt"), NODE_LIMIT);
    assert!(n >= 15, "only {n} entries checked");
}

#[test]
fn perft_positions() {
    let n = check_perft(include_str!("data/perft-positions.txt"), NODE_LIMIT);
    assert!(n >= 400, "only {n} entries checked");
}

#[test]
fn perft_pandemonium_positions() {
    let n = check_perft(include_str!("data/perft-pandemonium.txt"), NODE_LIMIT);
    assert!(n >= 80, "only {n} entries checked");
}

#[test]
#[ignore = "large counts: run with cargo test --release -- --ignored"]
fn perft_large() {
    check_perft(include_str!("data/perft-start.txt"), u64::MAX);
    check_perft(include_str!("data/perft-positions.txt"), u64::MAX);
    check_perft(include_str!("data/perft-pandemonium.txt"), u64::MAX);
}

#[test]
fn complete_move_lists() {
    let mut checked = 0;
    for e in entries(include_str!("data/moves-positions.txt")) {
        let pos = parse_position(e.variant, &e.sfen).unwrap_or_else(|err| panic!("line {}: {err}", e.line));
        let mut got: Vec<String> = pos.legal_moves().into_iter().map(|m| format_move(e.variant, m)).collect();
        got.sort();
        let expected: Vec<&str> = e.fields[0].split_whitespace().collect();
        let missing: Vec<&&str> = expected.iter().filter(|m| !got.iter().any(|g| g == **m)).collect();
        let extra: Vec<&String> = got.iter().filter(|g| !expected.contains(&g.as_str())).collect();
        assert!(
            missing.is_empty() && extra.is_empty() && got.len() == expected.len(),
            "line {} ({} {}): missing {missing:?}, extra {extra:?}",
            e.line,
            e.variant,
            e.sfen
        );
        checked += 1;
    }
    assert!(checked >= 100, "only {checked} positions checked");
}
