//! USI commands from the GUI, parsed from one input line.

use std::time::Duration;

/// Parameters of `go`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Go {
    pub btime: Option<Duration>,
    pub wtime: Option<Duration>,
    pub binc: Option<Duration>,
    pub winc: Option<Duration>,
    pub byoyomi: Option<Duration>,
    pub movestogo: Option<u32>,
    pub movetime: Option<Duration>,
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
    /// `go mate <ms>|infinite`: a mate search (the time limit is kept in
    /// `movetime`, `infinite` in `infinite`).
    pub mate: bool,
    pub infinite: bool,
    pub ponder: bool,
}

/// One line of input.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Usi,
    IsReady,
    SetOption {
        name: String,
        value: Option<String>,
    },
    UsiNewGame,
    /// `position startpos|sfen <sfen> [moves m1 m2 ...]`; `sfen` is `None`
    /// for `startpos`.
    Position {
        sfen: Option<String>,
        moves: Vec<String>,
    },
    Go(Go),
    Stop,
    PonderHit,
    GameOver(String),
    Quit,
    /// An empty line.
    Nothing,
}

/// Why a line is not a command we understand.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("unknown command '{0}'")]
    Unknown(String),
    #[error("setoption: expected 'setoption name <name> [value <value>]'")]
    SetOption,
    #[error("position: expected 'position startpos|sfen <sfen> [moves ...]'")]
    Position,
    #[error("go: '{0}' needs a number")]
    GoNumber(String),
    #[error("go: bad number '{value}' for '{key}'")]
    GoBadNumber { key: String, value: String },
    #[error("go: '{key}' must be {min} to {max}, not {value}")]
    GoRange { key: String, value: String, min: u64, max: u64 },
    #[error("go: unknown parameter '{0}'")]
    GoUnknown(String),
}

/// The longest time `go` accepts, in milliseconds (about 24.8 days).
pub const MAX_GO_MS: u64 = i32::MAX as u64;
/// The most playouts `go nodes` accepts.
pub const MAX_GO_NODES: u64 = 1_000_000_000_000;
/// The deepest `go depth` accepts.
pub const MAX_GO_DEPTH: u64 = 10_000;

/// Parses one line of USI input.
pub fn parse(line: &str) -> Result<Command, CommandError> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let Some((&head, rest)) = tokens.split_first() else {
        return Ok(Command::Nothing);
    };
    Ok(match head {
        "usi" => Command::Usi,
        "isready" => Command::IsReady,
        "usinewgame" => Command::UsiNewGame,
        "stop" => Command::Stop,
        "ponderhit" => Command::PonderHit,
        "quit" => Command::Quit,
        "gameover" => Command::GameOver(rest.join(" ")),
        "setoption" => parse_setoption(rest)?,
        "position" => parse_position(rest)?,
        "go" => Command::Go(parse_go(rest)?),
        other => return Err(CommandError::Unknown(other.to_string())),
    })
}

fn parse_setoption(rest: &[&str]) -> Result<Command, CommandError> {
    if rest.first() != Some(&"name") {
        return Err(CommandError::SetOption);
    }
    let value_at = rest.iter().position(|&t| t == "value");
    let name_end = value_at.unwrap_or(rest.len());
    let name = rest[1..name_end].join(" ");
    if name.is_empty() {
        return Err(CommandError::SetOption);
    }
    let value = value_at.map(|i| rest[i + 1..].join(" "));
    Ok(Command::SetOption { name, value })
}

fn parse_position(rest: &[&str]) -> Result<Command, CommandError> {
    let moves_at = rest.iter().position(|&t| t == "moves");
    let (setup, moves) = match moves_at {
        Some(i) => (&rest[..i], rest[i + 1..].iter().map(|s| s.to_string()).collect()),
        None => (rest, Vec::new()),
    };
    let sfen = match setup {
        ["startpos"] => None,
        ["sfen", fields @ ..] if !fields.is_empty() => Some(fields.join(" ")),
        _ => return Err(CommandError::Position),
    };
    Ok(Command::Position { sfen, moves })
}

fn parse_go(rest: &[&str]) -> Result<Go, CommandError> {
    let mut go = Go::default();
    let mut it = rest.iter().copied().peekable();
    while let Some(key) = it.next() {
        let mate_infinite = key == "mate" && matches!(it.peek(), Some(&"infinite") | None);
        if mate_infinite {
            it.next();
        }
        // Each field has a range; the clocks alone may be negative (some
        // GUIs send a clock that ran out as a negative time): read as 0.
        let mut number = |key: &str, min: u64, max: u64| -> Result<u64, CommandError> {
            let v = it.next().ok_or_else(|| CommandError::GoNumber(key.to_string()))?;
            let n = v
                .parse::<i128>()
                .map_err(|_| CommandError::GoBadNumber { key: key.to_string(), value: v.to_string() })?;
            let clock = matches!(key, "btime" | "wtime");
            let n = if clock && n < 0 { 0 } else { n };
            if n < min as i128 || n > max as i128 {
                return Err(CommandError::GoRange { key: key.to_string(), value: v.to_string(), min, max });
            }
            Ok(n as u64)
        };
        let ms = Duration::from_millis;
        match key {
            "btime" => go.btime = Some(ms(number(key, 0, MAX_GO_MS)?)),
            "wtime" => go.wtime = Some(ms(number(key, 0, MAX_GO_MS)?)),
            "binc" => go.binc = Some(ms(number(key, 0, MAX_GO_MS)?)),
            "winc" => go.winc = Some(ms(number(key, 0, MAX_GO_MS)?)),
            "byoyomi" => go.byoyomi = Some(ms(number(key, 0, MAX_GO_MS)?)),
            "movetime" => go.movetime = Some(ms(number(key, 1, MAX_GO_MS)?)),
            "movestogo" => go.movestogo = Some(number(key, 1, 10_000)? as u32),
            "nodes" => go.nodes = Some(number(key, 1, MAX_GO_NODES)?),
            "depth" => go.depth = Some(number(key, 1, MAX_GO_DEPTH)? as u32),
            "infinite" => go.infinite = true,
            "ponder" => go.ponder = true,
            "mate" => {
                // `go mate <ms>` or `go mate infinite` (or nothing: infinite).
                go.mate = true;
                if mate_infinite {
                    go.infinite = true;
                } else {
                    go.movetime = Some(ms(number(key, 1, MAX_GO_MS)?));
                }
            }
            "searchmoves" => return Err(CommandError::GoUnknown(key.to_string())),
            other => return Err(CommandError::GoUnknown(other.to_string())),
        }
    }
    Ok(go)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_protocol() {
        assert_eq!(parse("usi"), Ok(Command::Usi));
        assert_eq!(parse("  "), Ok(Command::Nothing));
        assert_eq!(
            parse("setoption name USI_Variant value mansindam"),
            Ok(Command::SetOption { name: "USI_Variant".into(), value: Some("mansindam".into()) })
        );
        assert_eq!(
            parse("setoption name Clear Hash"),
            Ok(Command::SetOption { name: "Clear Hash".into(), value: None })
        );
        assert_eq!(
            parse("position sfen 4k/5/5/5/K4 b P 1 moves P*3c"),
            Ok(Command::Position { sfen: Some("4k/5/5/5/K4 b P 1".into()), moves: vec!["P*3c".into()] })
        );
        assert_eq!(parse("position startpos"), Ok(Command::Position { sfen: None, moves: vec![] }));
        let Ok(Command::Go(go)) = parse("go btime 1000 wtime -5 byoyomi 100 ponder") else { panic!() };
        assert_eq!(go.btime, Some(Duration::from_millis(1000)));
        assert_eq!(go.wtime, Some(Duration::ZERO));
        assert!(go.ponder);
        assert!(
            matches!(parse("go mate 1000"), Ok(Command::Go(Go { mate: true, movetime: Some(t), .. })) if t.as_millis() == 1000)
        );
        assert!(matches!(parse("go mate infinite"), Ok(Command::Go(Go { mate: true, infinite: true, .. }))));
        assert!(parse("go mate soon").is_err());
    }

    #[test]
    fn rejects_malformed_lines() {
        assert_eq!(parse("hello"), Err(CommandError::Unknown("hello".into())));
        assert_eq!(parse("position"), Err(CommandError::Position));
        assert_eq!(parse("position sfen"), Err(CommandError::Position));
        assert_eq!(parse("setoption value 3"), Err(CommandError::SetOption));
        assert!(matches!(parse("go btime"), Err(CommandError::GoNumber(_))));
        assert!(matches!(parse("go nodes x"), Err(CommandError::GoBadNumber { .. })));
        assert!(matches!(parse("go sideways"), Err(CommandError::GoUnknown(_))));
        // Out of range: negative or absurd numbers get a named error.
        for line in [
            "go depth -9223372036854775808",
            "go depth 0",
            "go nodes -1",
            "go nodes 99999999999999999999999",
            "go movetime -5",
            "go byoyomi 3000000000",
            "go binc -1",
            "go movestogo 0",
            "go mate -3",
        ] {
            let e = parse(line).unwrap_err();
            assert!(matches!(e, CommandError::GoRange { .. }), "{line}: {e:?}");
            assert!(e.to_string().contains(" must be "), "{e}");
        }
        assert!(matches!(
            parse("go nodes 123456789012345678901234567890123456789012"),
            Err(CommandError::GoBadNumber { .. })
        ));
    }
}
