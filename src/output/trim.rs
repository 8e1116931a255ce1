//! Dropping leading blank lines and trailing whitespace from a stream of text (step 3).

use super::head_tail::HeadTail;

/// Removes leading blank lines and trailing whitespace from a stream of text.
///
/// A whitespace run cannot be judged until what follows it is known: it is held in
/// `held` (itself a [`HeadTail`], as a run may be huge) and committed to `out` when a
/// non-whitespace char follows, or dropped at the end. While at the start, the run is
/// also dropped at each `\n`, which removes blank lines but keeps the indentation of
/// the first non-blank one.
pub(super) struct Trimmer {
    pub(super) at_start: bool,
    pub(super) held: HeadTail,
    pub(super) out: HeadTail,
    /// Lines still to drop whole before anything is kept (`tail`).
    pub(super) skip: u64,
    /// The lines seen, when only counting them (the first pass of `tail`).
    pub(super) lines: Option<LineCount>,
}

/// Where the non-blank lines of a text are: what trimming keeps is the
/// lines from the first non-blank one to the last (1-based; 0: none yet).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct LineCount {
    line: u64,
    nonblank_here: bool,
    pub(super) first: u64,
    pub(super) last: u64,
}

impl LineCount {
    fn push(&mut self, text: &str) {
        if self.line == 0 {
            self.line = 1;
        }
        for piece in text.split_inclusive('\n') {
            let (body, ends) = match piece.strip_suffix('\n') {
                Some(body) => (body, true),
                None => (piece, false),
            };
            if !body.trim().is_empty() {
                self.nonblank_here = true;
            }
            if ends {
                self.end_line();
                self.line += 1;
            }
        }
    }

    fn end_line(&mut self) {
        if self.nonblank_here {
            if self.first == 0 {
                self.first = self.line;
            }
            self.last = self.line;
        }
        self.nonblank_here = false;
    }

    /// The counts once the text has ended (its last line unterminated).
    pub(super) fn finish(mut self) -> LineCount {
        self.end_line();
        self
    }

    /// Lines trimming keeps.
    pub(super) fn shown(&self) -> u64 {
        if self.first == 0 {
            0
        } else {
            self.last - self.first + 1
        }
    }
}

impl Trimmer {
    pub(super) fn new(limit: usize) -> Self {
        Trimmer {
            at_start: true,
            held: HeadTail::new(limit),
            out: HeadTail::new(limit),
            skip: 0,
            lines: None,
        }
    }

    pub(super) fn push(&mut self, text: &str) {
        let mut text = text;
        if let Some(count) = self.lines.as_mut() {
            count.push(text);
            return;
        }
        while self.skip > 0 {
            match text.find('\n') {
                Some(i) => {
                    text = &text[i + 1..];
                    self.skip -= 1;
                }
                None => return,
            }
        }
        if self.at_start {
            let rest = text.trim_start();
            let ws = &text[..text.len() - rest.len()];
            match ws.rfind('\n') {
                Some(i) => {
                    self.held.clear();
                    self.held.push_str(&ws[i + 1..]);
                }
                None => self.held.push_str(ws),
            }
            if rest.is_empty() {
                return;
            }
            self.at_start = false;
            text = rest;
        }
        // Only the piece's own trailing whitespace can turn out to be the text's end;
        // everything before its last non-whitespace char is committed in bulk.
        let body = text.trim_end();
        if body.is_empty() {
            self.held.push_str(text);
            return;
        }
        self.held.move_into(&mut self.out);
        self.out.push_str(body);
        self.held.push_str(&text[body.len()..]);
    }

    /// The trimmed and truncated text, and the number of chars left out.
    pub(super) fn finish(self) -> (String, u64) {
        // Whatever is still held is trailing whitespace.
        self.out.render()
    }
}
