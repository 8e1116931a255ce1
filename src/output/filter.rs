//! Keeping the lines a regex matches (step 2), a capped line at a time.

use regex::Regex;

use super::trim::Trimmer;

/// Keeps the lines (split at `\n`) that a regex matches.
///
/// Buffers only the current line, capped at `cap` bytes, and tracks source byte
/// offsets so the caller knows where the last complete line ended.
pub(super) struct LineFilter<'r> {
    pub(super) re: &'r Regex,
    pub(super) cap: usize,
    /// The current line's first `cap` bytes (cut at a char boundary).
    pub(super) line: String,
    /// The current line's full length in bytes of decoded text (saturating).
    pub(super) line_len: u64,
    /// Source bytes seen so far.
    pub(super) src_pos: u64,
    /// Source offset where the current (unterminated) line starts.
    pub(super) line_start: u64,
}

impl<'r> LineFilter<'r> {
    pub(super) fn new(re: &'r Regex, cap: usize) -> Self {
        LineFilter {
            re,
            cap,
            line: String::new(),
            line_len: 0,
            src_pos: 0,
            line_start: 0,
        }
    }

    /// `src_len` is how many source bytes `text` decodes; a `\n` is only ever in a
    /// valid piece, where text and source bytes coincide.
    pub(super) fn push(&mut self, text: &str, src_len: usize, out: &mut Trimmer) {
        let base = self.src_pos;
        self.src_pos += src_len as u64;
        // A rendered piece (`render.rs`) whose text is not its source is
        // one line: its `\n`, its last char, ends at `src_len`.
        let rendered = text.len() != src_len;
        let mut rest = text;
        let mut offset = 0;
        while let Some(i) = rest.find('\n') {
            self.append(&rest[..i]);
            self.end_line(out, true);
            offset += i + 1;
            self.line_start = base + if rendered { src_len } else { offset } as u64;
            rest = &rest[i + 1..];
        }
        self.append(rest);
    }

    pub(super) fn append(&mut self, text: &str) {
        // Append only while nothing has been cut yet, so the buffer stays a prefix of
        // the line even if a later, shorter piece would fit in the room left.
        if self.line_len == self.line.len() as u64 && self.line.len() < self.cap {
            let mut end = (self.cap - self.line.len()).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            self.line.push_str(&text[..end]);
        }
        self.line_len = self.line_len.saturating_add(text.len() as u64);
    }

    pub(super) fn end_line(&mut self, out: &mut Trimmer, newline: bool) {
        if self.re.is_match(&self.line) {
            out.push(&self.line);
            if newline {
                out.push("\n");
            }
        }
        self.line.clear();
        self.line_len = 0;
    }

    /// The current line is longer than the cap: it is taken now even without its
    /// `\n`, since waiting could mean buffering forever. The next read then starts
    /// inside that line, and its rest is filtered as a line of its own.
    pub(super) fn over_cap(&self) -> bool {
        self.line_len > self.cap as u64
    }

    pub(super) fn line_start(&self) -> u64 {
        self.line_start
    }

    /// Takes the unterminated last line (kept without a `\n`).
    pub(super) fn flush(&mut self, out: &mut Trimmer) {
        if self.line_len > 0 {
            self.end_line(out, false);
        }
        self.line_start = self.src_pos;
    }
}
