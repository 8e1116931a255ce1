//! Reading stdin one message per line, with a cap on line length.
//!
//! The cap keeps a client that sends a huge (or endless) line from costing
//! unbounded memory: past the limit (default [`MAX_LINE_BYTES`]) the rest
//! of the line is read and dropped, and the line is answered as too large,
//! with the request's id when it can be read from the line's start (a
//! client waiting for id 7 must not hang).

use std::io::{self, BufRead};

use serde_json::Value;

/// How much of an over-long line is kept to find its id in.
const HEAD_BYTES: usize = 4096;

/// The longest line read as a message: 8 MiB. A tool call is a few
/// kilobytes; `bash -c` cannot take a command longer than 128 KiB anyway
/// (Linux `MAX_ARG_STRLEN`).
pub const MAX_LINE_BYTES: usize = 8 << 20;

/// What one line held.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A line within the cap, without its `\n` (or `\r\n`).
    Text(Vec<u8>),
    /// A line past the cap, of `len` bytes; only its first bytes were kept.
    TooLong { len: usize, head: Vec<u8> },
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
                // Over the cap: keep only the head (for the id), keep counting.
                let room = HEAD_BYTES.saturating_sub(line.len());
                line.extend_from_slice(&chunk[..room.min(chunk.len())]);
                line.truncate(HEAD_BYTES);
                line.shrink_to(HEAD_BYTES);
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
        line.truncate(HEAD_BYTES);
        return Line::TooLong { len, head: line };
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Line::Text(line)
}

/// The top-level `id` of a JSON object whose start is `head` (a string or
/// a number), when it comes before the line was cut; else `null`.
pub(crate) fn id_at_start(head: &[u8]) -> Value {
    let mut s = Scan { b: head, i: 0 };
    s.id().unwrap_or(Value::Null)
}

/// A forward reader of the start of a JSON object: skips values it does
/// not need, stops (with `None`) at anything unexpected or at the cut.
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scan<'_> {
    fn ws(&mut self) {
        while self.b.get(self.i).is_some_and(u8::is_ascii_whitespace) {
            self.i += 1;
        }
    }

    fn byte(&mut self, want: u8) -> Option<()> {
        self.ws();
        (self.b.get(self.i) == Some(&want)).then(|| self.i += 1)
    }

    /// A string token, quotes included.
    fn string(&mut self) -> Option<&[u8]> {
        let start = self.i;
        self.byte(b'"')?;
        loop {
            match self.b.get(self.i)? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return self.b.get(start..self.i);
                }
                _ => self.i += 1,
            }
        }
    }

    /// Any value, skipped; its bytes.
    fn value(&mut self) -> Option<&[u8]> {
        self.ws();
        let start = self.i;
        match self.b.get(self.i)? {
            b'"' => {
                self.string()?;
            }
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.b.get(self.i)? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
            }
            _ => {
                while self
                    .b
                    .get(self.i)
                    .is_some_and(|c| !b",}] \t\r\n".contains(c))
                {
                    self.i += 1;
                }
                // A number or literal cut by the limit is not whole.
                self.b.get(self.i)?;
            }
        }
        self.b.get(start..self.i)
    }

    fn id(&mut self) -> Option<Value> {
        self.byte(b'{')?;
        loop {
            self.ws();
            let key = self.string()?.to_vec();
            self.byte(b':')?;
            let value = self.value()?;
            if key == b"\"id\"" {
                let id: Value = serde_json::from_slice(value).ok()?;
                return (id.is_string() || id.is_number()).then_some(id);
            }
            self.byte(b',')?;
        }
    }
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
                Line::TooLong {
                    len: 6,
                    head: b"cdefgh".to_vec()
                },
                Line::Text(Vec::new()),
                Line::Text(b"xy".to_vec()),
            ]
        );
        assert_eq!(all(b"", 4), Vec::<Line>::new());
    }

    #[test]
    fn the_id_is_read_from_the_start_of_a_cut_line() {
        use serde_json::json;
        let cases: [(&[u8], Value); 7] = [
            (
                br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"#,
                json!(7),
            ),
            (
                br#"{"method":"m","params":{"id":1,"a":[1,{"b":"}"}]},"id":"a\"b","#,
                json!("a\"b"),
            ),
            (br#" { "id" : -3.5 , "#, json!(-3.5)),
            (
                br#"{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"id":9,"#,
                Value::Null,
            ),
            (br#"{"id":12"#, Value::Null),
            (br#"{"id":null,"#, Value::Null),
            (b"[1,2", Value::Null),
        ];
        for (head, want) in cases {
            assert_eq!(id_at_start(head), want, "{}", String::from_utf8_lossy(head));
        }
    }
}
