//! What a terminal would show (step 1b, `render_output`): escape sequences
//! removed, `\r` back to column 0 (what follows overwrites the line, so a
//! progress bar collapses to its last state), backspace one column left,
//! `\r\n` a newline.
//!
//! An escape sequence is `ESC [ params… final` (CSI), `ESC ] … BEL` or
//! `ESC ] … ESC \` (OSC), or `ESC`, any intermediate bytes (0x20–0x2F) and
//! one final byte: each goes whole, also when a chunk boundary cuts it.
//!
//! Streamed: only the current line is held (at most [`LINE_CAP`] chars; a
//! longer one is passed on as it is, and a `\r` after that overwrites only
//! what is still held). Lines go downstream with the number of source
//! bytes they came from, so the line filter still knows where in the file
//! each line ends: a rendered line (text shorter than its source) alone,
//! ending in its `\n`; plain lines, as written, several at once.

/// The longest line held for overwriting, in chars.
pub(super) const LINE_CAP: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seq {
    /// Not in a sequence.
    None,
    /// After `ESC`.
    Start,
    /// In a CSI (`ESC [`), until its final byte.
    Csi,
    /// In an OSC (`ESC ]`), until BEL or `ESC \`.
    Osc,
    /// After `ESC` inside an OSC.
    OscStop,
    /// After `ESC` and intermediate bytes, until the final byte.
    Intermediate,
}

/// The renderer's state between pieces of text.
pub(super) struct Render {
    line: Vec<char>,
    col: usize,
    esc: Seq,
    /// A `\r` seen, not yet known to be part of `\r\n`.
    cr: bool,
    /// Source bytes of the held line (and of a held `\r` or sequence).
    src: u64,
    /// Source bytes of the sequence (or `\r`) in progress, for a read that
    /// must leave them for the next one.
    pending: u64,
}

impl Default for Render {
    fn default() -> Self {
        Render {
            line: Vec::new(),
            col: 0,
            esc: Seq::None,
            cr: false,
            src: 0,
            pending: 0,
        }
    }
}

impl Render {
    /// Renders `text` (decoded from `src_len` source bytes), passing each
    /// finished line to `emit` with its source bytes.
    pub(super) fn push(&mut self, text: &str, src_len: usize, emit: &mut impl FnMut(&str, usize)) {
        // Each char counts its own bytes, so a line emitted mid-piece takes
        // only its own. A lossy piece (replacement chars, which need not be
        // as long as the bytes they stand for) has no `\n` or escape in it:
        // its difference is settled at its end, within one line.
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            if self.esc == Seq::None && !self.cr && self.col == self.line.len() {
                // The common case, in bulk: plain text appended at the end
                // of the line, up to the next char that needs the state
                // machine.
                // Bytes, not chars: the three are ASCII, so where one is a
                // char starts, and a byte scan is the fast one.
                let end = find_special(rest.as_bytes()).unwrap_or(rest.len());
                if end > 0 {
                    self.plain(&rest[..end], emit);
                    rest = &rest[end..];
                    continue;
                }
            }
            if self.esc == Seq::None && !self.cr && self.col < self.line.len() {
                // Overwriting the held line (a redraw after `\r`), in bulk:
                // plain chars up to the next one that needs the state
                // machine or ends the line.
                let stop = find_special(rest.as_bytes()).unwrap_or(rest.len());
                let end = rest[..stop].find('\n').unwrap_or(stop);
                if end > 0 && self.line.len() + end < LINE_CAP {
                    for c in rest[..end].chars() {
                        if self.col < self.line.len() {
                            self.line[self.col] = c;
                        } else {
                            self.line.push(c);
                        }
                        self.col += 1;
                    }
                    self.src += end as u64;
                    rest = &rest[end..];
                    continue;
                }
            }
            self.src += c.len_utf8() as u64;
            self.char(c, emit);
            rest = &rest[c.len_utf8()..];
        }
        let (src, text) = (src_len as u64, text.len() as u64);
        if src >= text {
            self.src += src - text;
        } else {
            self.src = self.src.saturating_sub(text - src);
        }
    }

    /// Plain text (no escape, `\r` or backspace) at the end of the line:
    /// the lines it ends go at once, as written (the first one after what
    /// was held); what follows its last `\n` is held.
    fn plain(&mut self, text: &str, emit: &mut impl FnMut(&str, usize)) {
        let mut rest = text;
        if let Some(i) = rest.find('\n') {
            // The first line ends what is held (chars, or the bytes of
            // escapes already removed): one line, its own source bytes.
            if !self.line.is_empty() || self.src > 0 {
                let piece = &rest[..=i];
                let mut line: String = self.line.drain(..).collect();
                line.push_str(piece);
                emit(&line, (self.src + piece.len() as u64) as usize);
                self.src = 0;
                self.col = 0;
                rest = &rest[i + 1..];
            }
            // Every other whole line at once, as written.
            if let Some(j) = rest.rfind('\n') {
                let bulk = &rest[..=j];
                emit(bulk, bulk.len());
                rest = &rest[j + 1..];
            }
        }
        if self.line.len() + rest.len() >= LINE_CAP {
            // Too long to hold (bytes bound chars): passed on as it is.
            let mut line: String = self.line.drain(..).collect();
            line.push_str(rest);
            emit(&line, (self.src + rest.len() as u64) as usize);
            self.src = 0;
            self.col = 0;
            return;
        }
        for c in rest.chars() {
            self.src += c.len_utf8() as u64;
            self.char(c, emit);
        }
    }

    fn char(&mut self, c: char, emit: &mut impl FnMut(&str, usize)) {
        if self.esc != Seq::None {
            self.escape(c);
            return;
        }
        if self.cr {
            self.cr = false;
            self.pending = 0;
            if c == '\n' {
                self.end_line(emit);
                return;
            }
            self.col = 0;
        }
        match c {
            '\u{1b}' => {
                self.esc = Seq::Start;
                self.pending = 1;
            }
            '\r' => {
                self.cr = true;
                self.pending = 1;
            }
            '\n' => self.end_line(emit),
            '\u{8}' => self.col = self.col.saturating_sub(1),
            c => {
                if self.col < self.line.len() {
                    self.line[self.col] = c;
                } else {
                    self.line.push(c);
                }
                self.col += 1;
                if self.line.len() >= LINE_CAP && self.col == self.line.len() {
                    // Too long to hold: passed on as it is.
                    let text: String = self.line.drain(..).collect();
                    let src = self.src - self.pending;
                    emit(&text, src as usize);
                    self.src = self.pending;
                    self.col = 0;
                }
            }
        }
    }

    /// One char inside an escape sequence: it belongs to the sequence
    /// (counted in `pending`, shown nowhere), and says where the sequence
    /// goes next; once it ends, nothing of it is pending.
    fn escape(&mut self, c: char) {
        self.pending += c.len_utf8() as u64;
        self.esc = match self.esc {
            Seq::None => Seq::None,
            Seq::Start => match c {
                '[' => Seq::Csi,
                ']' => Seq::Osc,
                '\u{20}'..='\u{2f}' => Seq::Intermediate,
                _ => Seq::None,
            },
            // A final byte ends a control sequence.
            Seq::Csi if ('\u{40}'..='\u{7e}').contains(&c) => Seq::None,
            Seq::Csi => Seq::Csi,
            Seq::Intermediate if ('\u{20}'..='\u{2f}').contains(&c) => Seq::Intermediate,
            Seq::Intermediate => Seq::None,
            Seq::Osc => match c {
                '\u{7}' => Seq::None,
                '\u{1b}' => Seq::OscStop,
                _ => Seq::Osc,
            },
            // `ESC \` ends the string; after a lone ESC the string goes on,
            // and this char is read as part of it.
            Seq::OscStop => match c {
                '\\' | '\u{7}' => Seq::None,
                '\u{1b}' => Seq::OscStop,
                _ => Seq::Osc,
            },
        };
        if self.esc == Seq::None {
            self.pending = 0;
        }
    }

    fn end_line(&mut self, emit: &mut impl FnMut(&str, usize)) {
        let mut text: String = self.line.drain(..).collect();
        text.push('\n');
        emit(&text, self.src as usize);
        self.src = 0;
        self.col = 0;
    }

    /// The end of a read. `finished`: the command has ended, everything is
    /// rendered (a `\r` or sequence cut by the end goes); else they are
    /// left, with their source bytes, for the next read (returned). The
    /// line held so far is passed on either way.
    pub(super) fn finish(&mut self, finished: bool, emit: &mut impl FnMut(&str, usize)) -> u64 {
        let left = if finished { 0 } else { self.pending };
        let text: String = self.line.drain(..).collect();
        let src = self.src - left;
        if !text.is_empty() || src > 0 {
            emit(&text, src as usize);
        }
        *self = Render::default();
        left
    }
}

/// Renders a whole text at once (a monitor's event line).
pub(crate) fn render_text(text: &str) -> String {
    let mut out = String::new();
    let mut r = Render::default();
    let mut emit = |s: &str, _: usize| out.push_str(s);
    r.push(text, text.len(), &mut emit);
    r.finish(true, &mut emit);
    out
}

/// The first `ESC`, `\r` or backspace in `b`: the bytes that need the
/// state machine. Eight bytes at a time (a word compared with each of the
/// three at once, the "has a zero byte" test), since this scan is most of
/// what rendering costs on plain output.
fn find_special(b: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_in = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let mut i = 0;
    while i + 8 <= b.len() {
        let w = u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"));
        let hit = zero_in(w ^ (0x1b * ONES))
            | zero_in(w ^ (b'\r' as u64 * ONES))
            | zero_in(w ^ (0x08 * ONES));
        if hit != 0 {
            // The lowest flagged byte is a true match (a borrow only ever
            // flags bytes above a real zero byte).
            return Some(i + (hit.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b[i..]
        .iter()
        .position(|&c| matches!(c, 0x1b | b'\r' | 0x08))
        .map(|p| i + p)
}

#[cfg(test)]
mod tests;
