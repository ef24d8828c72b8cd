//! Looking at positions: `analyse` (a refreshing table of the best moves),
//! `perft` and `show`.

use super::*;

pub(super) fn analyse(args: &GameArgs, time: Option<f64>, nodes: Option<u64>, engine: &EngineArgs) -> Result<()> {
    use crate::mcts::{Limits, Searcher};
    use std::io::IsTerminal;
    use std::sync::atomic::AtomicBool;
    let game = args.game()?;
    out!("{}", show(&game));
    if let Some(outcome) = game.outcome() {
        outln!("the game is over: {outcome}");
        return Ok(());
    }
    if let Some(t) = time {
        anyhow::ensure!(t.is_finite() && t > 0.0 && t < 1e6, "--time must be a positive number of seconds");
    }
    let movetime = match (time, nodes) {
        (Some(t), _) => Some(std::time::Duration::from_secs_f64(t)),
        (None, None) => Some(std::time::Duration::from_secs(10)),
        _ => None,
    };
    let evaluator = crate::nn::NetEvaluator::load(args.variant, &engine.model, engine.device, engine.batch as usize)?;
    let mut searcher = Searcher::new(std::sync::Arc::new(evaluator), search_params(engine, args.variant));
    searcher.set_position(&game);
    let limits = Limits { nodes, movetime, ..Limits::default() };
    let variant = args.variant;
    let tty = std::io::stdout().is_terminal();
    let mut shown = 0;
    let result = searcher.search(&limits, &AtomicBool::new(false), &mut |info| {
        let text = table(variant, info);
        if tty && shown > 0 {
            // Move the cursor up over the previous table and redraw it.
            out!("\x1b[{shown}A\x1b[J");
        }
        out!("{text}");
        shown = text.lines().count();
    });
    if tty && shown > 0 {
        out!("\x1b[{shown}A\x1b[J");
    }
    out!("{}", table(variant, &result.info));
    match result.best {
        Some(best) => {
            let line: Vec<String> = result.info.lines[0].pv.iter().map(|&m| format_move(variant, m)).collect();
            outln!("best line: {}", line.join(" "));
            outln!("bestmove {}", format_move(variant, best));
        }
        None => outln!("no move"),
    }
    Ok(())
}

fn search_params(engine: &EngineArgs, variant: Variant) -> crate::mcts::SearchParams {
    crate::mcts::SearchParams {
        threads: engine.threads as usize,
        batch_size: engine.batch as usize,
        hash_mib: engine.hash as usize,
        multipv: engine.multipv as usize,
        mate_plies: engine.mate_plies,
        root_mate_plies: engine.root_mate_plies,
        policy_temperature: engine.policy_temperature,
        cpuct_init: engine.cpuct.unwrap_or_else(|| crate::mcts::engine_cpuct(variant)),
        ..crate::mcts::SearchParams::default()
    }
}

/// The analysis table: one row per line (move, visits, value, score,
/// principal variation), then the search's totals.
fn table(variant: Variant, info: &crate::mcts::SearchInfo) -> String {
    use crate::mcts::Score;
    let mut out = String::new();
    writeln!(out, "{:>4} {:<8} {:>9} {:>8} {:>8}  pv", "#", "move", "visits", "value", "score").ok();
    for (i, l) in info.lines.iter().enumerate() {
        let score = match l.score {
            Score::Cp(cp) => format!("{cp:+}"),
            Score::Mate(n) => format!("mate {n}"),
        };
        let pv: Vec<String> = l.pv.iter().map(|&m| format_move(variant, m)).collect();
        writeln!(
            out,
            "{:>4} {:<8} {:>9} {:>+8.3} {:>8}  {}",
            i + 1,
            format_move(variant, l.mv),
            l.visits,
            l.q,
            score,
            pv.join(" ")
        )
        .ok();
    }
    writeln!(
        out,
        "playouts {} ({} /s), depth {}/{}, {:.1} s",
        info.playouts,
        info.nps(),
        info.depth,
        info.seldepth,
        info.elapsed.as_secs_f64()
    )
    .ok();
    out
}

pub(super) fn run_perft(args: &GameArgs, depth: u32, divide: bool) -> Result<()> {
    let mut game = args.game()?;
    let started = Instant::now();
    let total = if divide {
        let mut total = 0;
        for (mv, n) in perft::divide(&mut game, depth) {
            outln!("{} {n}", format_move(args.variant, mv));
            total += n;
        }
        total
    } else {
        perft::perft(&mut game, depth)
    };
    let secs = started.elapsed().as_secs_f64();
    eprintln!("time {:.3} s, {:.0} leaves/s", secs, total as f64 / secs.max(1e-9));
    outln!("{total}");
    Ok(())
}

/// The text `pantheon show` prints for a game's current position.
pub fn show(game: &Game) -> String {
    let pos = game.position();
    let variant = pos.variant();
    let g = variant.geometry();
    let mut out = String::new();
    let hand_line = |color: Color| {
        let spec = variant.spec();
        let items: Vec<String> = (0..spec.hand_kinds)
            .filter(|&k| pos.hand(color).count(k) > 0)
            .map(|k| {
                let n = pos.hand(color).count(k);
                let name = spec.pieces[k as usize].name;
                if n > 1 { format!("{n} {name}") } else { name.to_string() }
            })
            .collect();
        if items.is_empty() { "-".to_string() } else { items.join(", ") }
    };
    writeln!(out, "gote hand:  {}", hand_line(Color::Gote)).ok();
    for file in (1..=g.files).rev() {
        write!(out, "{file:>3}").ok();
    }
    out.push('\n');
    for rank in 0..g.ranks {
        let cells: String = (1..=g.files)
            .rev()
            .map(|file| {
                let sq = crate::rules::Square::new(file, rank).expect("on board");
                let cell = pos.piece_at(sq).map(|p| piece_str(variant, p)).unwrap_or_else(|| ".".into());
                format!("{cell:>3}")
            })
            .collect();
        writeln!(out, "{cells}   {}", (b'a' + rank) as char).ok();
    }
    writeln!(out, "sente hand: {}", hand_line(Color::Sente)).ok();
    writeln!(out, "(upper case: sente, lower case: gote, +: promoted)").ok();
    writeln!(out, "variant: {variant}").ok();
    writeln!(out, "sfen: {}", to_sfen(pos)).ok();
    writeln!(out, "side to move: {}", pos.side_to_move()).ok();
    writeln!(out, "in check: {}", if pos.in_check() { "yes" } else { "no" }).ok();
    match game.outcome() {
        Some(outcome) => writeln!(out, "result: {outcome}").ok(),
        None => writeln!(out, "result: ongoing").ok(),
    };
    out
}
