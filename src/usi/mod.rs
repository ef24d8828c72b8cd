//! The USI protocol: commands in, answers out, a search on its own thread.
//! Bad input never stops the engine: each problem is answered with an
//! `info string error: ...` line.

pub mod client;
mod command;
mod options;
mod session;

pub use command::{Command, CommandError, Go, parse};
pub use options::{OptionError, Options};
pub use session::{Flow, MOVETIME_MARGIN, Networks, Output, Session, bestmove, info_lines, limits};

use std::io::BufRead;

/// The longest input line read whole, in bytes; the rest of a longer line
/// is skipped (read, not kept) and the line answered with an error.
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// Runs a USI session until `quit` or the end of `input`. Input is read
/// as bytes: a line that is not UTF-8, or longer than [`MAX_LINE_BYTES`],
/// gets an `info string error: ...` answer and the session goes on.
pub fn run(input: impl BufRead, output: Output, networks: Box<dyn Networks>) {
    let mut session = Session::new(output, networks);
    if feed(&mut session, input) == Flow::Continue {
        // End of input: behave as `quit`.
        session.handle("quit");
    }
}

/// Hands every line of `input` to the session, as [`run`] does, until
/// `quit` (then [`Flow::Quit`]) or the end of input.
pub fn feed(session: &mut Session, mut input: impl BufRead) -> Flow {
    let mut line = Vec::new();
    while let Ok(read) = read_line(&mut input, &mut line, MAX_LINE_BYTES) {
        match read {
            Read::End => break,
            Read::TooLong(total) => {
                session.error(&format!("an input line of {total} bytes is longer than {MAX_LINE_BYTES}: ignored"))
            }
            Read::Line => match std::str::from_utf8(&line) {
                Ok(text) => {
                    if session.handle(text) == Flow::Quit {
                        return Flow::Quit;
                    }
                }
                Err(e) => session.error(&format!(
                    "an input line is not valid UTF-8 (bad byte at position {}): ignored",
                    e.valid_up_to()
                )),
            },
        }
    }
    Flow::Continue
}

/// What [`read_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Read {
    /// A line (without its end of line) is in the buffer.
    Line,
    /// A line of this many bytes was longer than the limit and skipped.
    TooLong(usize),
    /// The end of the input.
    End,
}

/// Reads one line of at most `max` bytes into `line` (cleared first; the
/// trailing `\n` or `\r\n` removed), in time linear in its length; a
/// longer line is read to its end but not kept.
pub fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>, max: usize) -> std::io::Result<Read> {
    line.clear();
    let mut total = 0usize;
    let mut any = false;
    loop {
        let buf = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            break;
        }
        any = true;
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        total += chunk.len();
        if line.len() < max {
            let room = max - line.len();
            line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
        let used = chunk.len() + done as usize;
        input.consume(used);
        if done {
            break;
        }
    }
    if !any {
        return Ok(Read::End);
    }
    if total > max {
        line.clear();
        return Ok(Read::TooLong(total));
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Read::Line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_as_bytes_with_a_length_limit() {
        let mut long = vec![b'x'; 3000];
        long.extend_from_slice(b"\nisready\r\n\xff\xfe\nlast");
        let mut input = std::io::BufReader::with_capacity(64, &long[..]);
        let mut line = Vec::new();
        assert_eq!(read_line(&mut input, &mut line, 1000).unwrap(), Read::TooLong(3000));
        assert!(line.is_empty());
        assert_eq!(read_line(&mut input, &mut line, 1000).unwrap(), Read::Line);
        assert_eq!(line, b"isready");
        assert_eq!(read_line(&mut input, &mut line, 1000).unwrap(), Read::Line);
        assert_eq!(line, b"\xff\xfe");
        // The last line needs no end of line.
        assert_eq!(read_line(&mut input, &mut line, 1000).unwrap(), Read::Line);
        assert_eq!(line, b"last");
        assert_eq!(read_line(&mut input, &mut line, 1000).unwrap(), Read::End);
        // A line of exactly the limit is kept.
        let mut input = &b"abcd\n"[..];
        assert_eq!(read_line(&mut input, &mut line, 4).unwrap(), Read::Line);
        assert_eq!(line, b"abcd");
    }
}
