//! The USI protocol: commands in, answers out, a search on its own thread.
//! Bad input never stops the engine: each problem is answered with an
//! `info string error: ...` line.

mod command;
mod options;
mod session;

pub use command::{Command, CommandError, Go, parse};
pub use options::{OptionError, Options};
pub use session::{Flow, Networks, Output, Session, bestmove, build_game, info_lines, limits};

use std::io::BufRead;

/// Runs a USI session until `quit` or the end of `input`.
pub fn run(input: impl BufRead, output: Output, networks: Box<dyn Networks>) {
    let mut session = Session::new(output, networks);
    for line in input.lines() {
        let Ok(line) = line else { break };
        if session.handle(&line) == Flow::Quit {
            return;
        }
    }
    // End of input: behave as `quit`.
    session.handle("quit");
}
