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
}

impl Trimmer {
    pub(super) fn new(limit: usize) -> Self {
        Trimmer {
            at_start: true,
            held: HeadTail::new(limit),
            out: HeadTail::new(limit),
        }
    }

    pub(super) fn push(&mut self, text: &str) {
        let mut text = text;
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
