//! Reading stdin one message per line, with a cap on line length.
//!
//! The cap keeps a client that sends a huge (or endless) line from costing
//! unbounded memory: past [`MAX_LINE_BYTES`] the rest of the line is read
//! and dropped, and the line is answered as too large.

use std::io::{self, BufRead};

/// The longest line read as a message: 8 MiB. A tool call is a few
/// kilobytes; `bash -c` cannot take a command longer than 128 KiB anyway
/// (Linux `MAX_ARG_STRLEN`).
pub const MAX_LINE_BYTES: usize = 8 << 20;

/// What one line held.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A line within the cap, without its `\n` (or `\r\n`).
    Text(Vec<u8>),
    /// A line past the cap, of this many bytes; its content was dropped.
    TooLong(usize),
}

/// Splits a byte stream into lines of at most `max` bytes.
pub(crate) struct Lines<R> {
    inner: R,
    max: usize,
}

impl<R: BufRead> Lines<R> {
    pub(crate) fn new(inner: R, max: usize) -> Lines<R> {
        Lines { inner, max }
    }

    /// The next line; `None` at end of input. A last line without a
    /// newline counts as a line.
    pub(crate) fn next_line(&mut self) -> io::Result<Option<Line>> {
        let mut line = Vec::new();
        let mut len = 0usize;
        loop {
            let buf = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return Ok((len > 0).then(|| finish(line, len, self.max)));
            }
            let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], true),
                None => (buf, false),
            };
            if len + chunk.len() <= self.max {
                line.extend_from_slice(chunk);
            } else {
                // Over the cap: stop keeping bytes, keep counting them.
                line = Vec::new();
            }
            len += chunk.len();
            let used = chunk.len() + usize::from(done);
            self.inner.consume(used);
            if done {
                return Ok(Some(finish(line, len, self.max)));
            }
        }
    }
}

fn finish(mut line: Vec<u8>, len: usize, max: usize) -> Line {
    if len > max {
        return Line::TooLong(len);
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Line::Text(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8], max: usize) -> Vec<Line> {
        // A tiny buffer, so lines cross buffer boundaries.
        let mut lines = Lines::new(io::BufReader::with_capacity(3, input), max);
        let mut out = Vec::new();
        while let Some(l) = lines.next_line().unwrap() {
            out.push(l);
        }
        out
    }

    #[test]
    fn lines_are_split_and_capped() {
        assert_eq!(
            all(b"ab\r\ncdefgh\n\nxy", 4),
            vec![
                Line::Text(b"ab".to_vec()),
                Line::TooLong(6),
                Line::Text(Vec::new()),
                Line::Text(b"xy".to_vec()),
            ]
        );
        assert_eq!(all(b"", 4), Vec::<Line>::new());
    }
}
