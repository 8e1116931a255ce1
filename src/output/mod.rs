//! Rendering a shell command's output file into the text of a tool result.
//!
//! A command's stdout and stderr go into one file that can grow to gigabytes, and a
//! tool result may show at most `limit` characters of it. This module reads a byte
//! range of that file in fixed-size chunks and pushes it through a small pipeline,
//! so memory stays O(limit) (plus one chunk, plus one capped line when filtering)
//! however big the file is:
//!
//! 1. [`Utf8Stream`] decodes lossily, exactly as `String::from_utf8_lossy` on the
//!    whole range would, whatever the chunk boundaries are.
//! 2. [`LineFilter`] (optional) keeps only the lines a regex matches.
//! 3. [`Trimmer`] drops leading blank lines and trailing whitespace, holding back a
//!    whitespace run until it knows whether it is trailing.
//! 4. [`HeadTail`] keeps the first and last characters and counts what is in between.
//!
//! The common case (valid UTF-8 and no filter) works on whole chunks: characters are
//! counted, not visited one by one, and only the suffix a tail needs is copied.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use regex::Regex;

/// Bytes read from the file at a time: big enough that syscalls are cheap, small
/// enough that a chunk is a negligible part of the memory bound.
const CHUNK: usize = 64 * 1024;

/// A line longer than this many bytes (of decoded text) is matched and kept on its
/// first `LINE_CAP` bytes only: a command printing one endless line (a progress bar
/// without `\n`, binary noise) must not make the filter buffer it all.
const LINE_CAP: usize = 1024 * 1024;

/// Extra characters the tail buffer may hold beyond what it needs before it is
/// compacted, so that many small pushes do not each move the whole buffer.
const TAIL_SLACK: usize = 8 * 1024;

/// What a read of a shell's output file produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rendered {
    /// The text to show: decoded, filtered, trimmed and truncated.
    pub text: String,
    /// Bytes of the file consumed, counted from `start`; the next read starts at start + consumed.
    pub consumed: u64,
    /// Characters left out in the middle (0 when nothing was truncated).
    pub truncated: u64,
}

/// Reads `path` from byte `start` to its current end and renders it.
///
/// The end is the file's size when the call begins: a command that keeps writing
/// fast cannot make the call run forever, and what it writes meanwhile is left for
/// the next read. With `finished` false the bytes of an incomplete UTF-8 sequence at
/// the end (and, with a filter, an unterminated last line) are not consumed.
pub(crate) fn render_file(
    path: &Path,
    start: u64,
    limit: usize,
    filter: Option<&Regex>,
    finished: bool,
) -> io::Result<Rendered> {
    render_file_chunked(path, start, limit, filter, finished, CHUNK)
}

/// The same on bytes already in memory (for tests and small inputs).
// Part of the module's API; the crate's tools read files, so outside tests it may
// have no caller yet.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn render_bytes(
    bytes: &[u8],
    limit: usize,
    filter: Option<&Regex>,
    finished: bool,
) -> Rendered {
    render_bytes_chunked(bytes, limit, filter, finished, CHUNK, LINE_CAP)
}

/// [`render_file`] with the chunk size as a parameter, so tests can use tiny chunks.
fn render_file_chunked(
    path: &Path,
    start: u64,
    limit: usize,
    filter: Option<&Regex>,
    finished: bool,
    chunk: usize,
) -> io::Result<Rendered> {
    let file = File::open(path)?;
    // Stat once: this is the end of the range whatever the command writes meanwhile.
    let end = file.metadata()?.len();
    let mut renderer = Renderer::new(limit, filter, LINE_CAP);
    let mut buf = vec![0u8; chunk.max(1)];
    let mut pos = start;
    while pos < end {
        let want = usize::try_from(end - pos).map_or(buf.len(), |left| left.min(buf.len()));
        match file.read_at(&mut buf[..want], pos) {
            // The file shrank (truncated by someone): render what there was.
            Ok(0) => break,
            Ok(n) => {
                renderer.feed(&buf[..n]);
                pos += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(renderer.finish(finished))
}

/// [`render_bytes`] with the chunk size and line cap as parameters, for tests.
fn render_bytes_chunked(
    bytes: &[u8],
    limit: usize,
    filter: Option<&Regex>,
    finished: bool,
    chunk: usize,
    line_cap: usize,
) -> Rendered {
    let mut renderer = Renderer::new(limit, filter, line_cap);
    for piece in bytes.chunks(chunk.max(1)) {
        renderer.feed(piece);
    }
    renderer.finish(finished)
}

/// The whole pipeline: bytes in, [`Rendered`] out.
struct Renderer<'r> {
    utf8: Utf8Stream,
    lines: Option<LineFilter<'r>>,
    trim: Trimmer,
    /// Bytes fed so far.
    fed: u64,
}

impl<'r> Renderer<'r> {
    fn new(limit: usize, filter: Option<&'r Regex>, line_cap: usize) -> Self {
        Renderer {
            utf8: Utf8Stream::default(),
            lines: filter.map(|re| LineFilter::new(re, line_cap)),
            trim: Trimmer::new(limit),
            fed: 0,
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.fed += bytes.len() as u64;
        let (lines, trim) = (&mut self.lines, &mut self.trim);
        self.utf8.feed(bytes, |text, src_len| match lines {
            Some(filter) => filter.push(text, src_len, trim),
            None => trim.push(text),
        });
    }

    fn finish(mut self, finished: bool) -> Rendered {
        let mut consumed = self.fed;
        if finished {
            let (lines, trim) = (&mut self.lines, &mut self.trim);
            self.utf8.finish(|text, src_len| match lines {
                Some(filter) => filter.push(text, src_len, trim),
                None => trim.push(text),
            });
        } else {
            // The command may still write the rest of that character.
            consumed -= self.utf8.pending_len() as u64;
        }
        if let Some(filter) = self.lines.as_mut() {
            if finished || filter.over_cap() {
                filter.flush(&mut self.trim);
            } else {
                // The last line may still grow: leave it, unseen, for the next read.
                consumed = filter.line_start();
            }
        }
        let (text, truncated) = self.trim.finish();
        Rendered {
            text,
            consumed,
            truncated,
        }
    }
}

/// Number of chars (Unicode scalar values) in `s`. `chars().count()` is the std's
/// word-at-a-time count of non-continuation bytes, fast even in a debug build.
fn char_count(s: &str) -> usize {
    s.chars().count()
}

/// Byte index just past the first `k` chars of `s` (or `s.len()` if it has fewer),
/// and how many chars that is.
///
/// Works in counted spans rather than char by char: `need` bytes from a char
/// boundary hold at most `need` chars (and at least a quarter of that), so each round
/// never overshoots and the number of rounds is logarithmic; ASCII takes one.
fn split_after_chars(s: &str, k: usize) -> (usize, usize) {
    let (mut pos, mut taken) = (0, 0);
    while taken < k && pos < s.len() {
        let mut end = pos.saturating_add(k - taken).min(s.len());
        // Moving forward over continuation bytes adds no char starts.
        while !s.is_char_boundary(end) {
            end += 1;
        }
        taken += char_count(&s[pos..end]);
        pos = end;
    }
    (pos, taken)
}

/// Byte index where the last `k` chars of `s` start (0 if it has fewer).
///
/// Same counted spans as [`split_after_chars`], from the end: stepping back `need`
/// bytes and then to the start of the char there adds at most `need` chars.
fn start_of_last_chars(s: &str, k: usize) -> usize {
    let (mut pos, mut taken) = (s.len(), 0);
    while taken < k && pos > 0 {
        let mut start = pos.saturating_sub(k - taken);
        while !s.is_char_boundary(start) {
            start -= 1;
        }
        taken += char_count(&s[start..pos]);
        pos = start;
    }
    pos
}

/// Incremental lossy UTF-8 decoder.
///
/// Emits `(text, source_bytes)` pieces: valid runs as they are (`source_bytes` =
/// their length) and one U+FFFD per maximal invalid subsequence (`source_bytes` = its
/// length), which is exactly what `String::from_utf8_lossy` produces on the whole
/// input. The only state kept across chunks is an incomplete sequence at the end of
/// a chunk (at most 3 bytes), completed or rejected by the next chunk.
#[derive(Default)]
struct Utf8Stream {
    pending: [u8; 4],
    pending_len: usize,
}

impl Utf8Stream {
    /// Bytes held back as the start of a character that has not ended yet.
    fn pending_len(&self) -> usize {
        self.pending_len
    }

    fn feed(&mut self, mut bytes: &[u8], mut emit: impl FnMut(&str, usize)) {
        // First complete a sequence left incomplete by the previous chunk, one byte at a
        // time: it is at most 3 bytes plus 1, so this costs nothing.
        while self.pending_len > 0 {
            let Some((&byte, rest)) = bytes.split_first() else {
                return;
            };
            if self.pending_len >= self.pending.len() {
                // Cannot happen (an incomplete prefix is at most 3 bytes); reject
                // rather than index out of bounds.
                emit("\u{FFFD}", self.pending_len);
                self.pending_len = 0;
                break;
            }
            self.pending[self.pending_len] = byte;
            self.pending_len += 1;
            match std::str::from_utf8(&self.pending[..self.pending_len]) {
                Ok(text) => {
                    emit(text, self.pending_len);
                    self.pending_len = 0;
                    bytes = rest;
                }
                Err(e) => match e.error_len() {
                    // Still a valid prefix: keep the byte and wait for more.
                    None => bytes = rest,
                    // The new byte broke the sequence. The held bytes were a valid
                    // prefix, so the maximal invalid subsequence is exactly them and
                    // the new byte starts afresh: leave it in `bytes`.
                    Some(_) => {
                        emit("\u{FFFD}", self.pending_len - 1);
                        self.pending_len = 0;
                    }
                },
            }
        }
        loop {
            match std::str::from_utf8(bytes) {
                Ok(text) => {
                    if !text.is_empty() {
                        emit(text, text.len());
                    }
                    return;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    // `valid_up_to` guarantees this prefix is valid; the re-check
                    // only happens next to invalid bytes and avoids `unsafe`.
                    if let Ok(text) = std::str::from_utf8(&bytes[..valid]) {
                        if !text.is_empty() {
                            emit(text, valid);
                        }
                    }
                    match e.error_len() {
                        Some(len) => {
                            emit("\u{FFFD}", len);
                            bytes = &bytes[valid + len..];
                        }
                        None => {
                            // An incomplete sequence ends the chunk: hold it back.
                            let tail = &bytes[valid..];
                            let n = tail.len().min(self.pending.len() - 1);
                            self.pending[..n].copy_from_slice(&tail[..n]);
                            self.pending_len = n;
                            return;
                        }
                    }
                }
            }
        }
    }

    /// End of input: an incomplete sequence becomes one U+FFFD, as in `from_utf8_lossy`.
    fn finish(&mut self, mut emit: impl FnMut(&str, usize)) {
        if self.pending_len > 0 {
            emit("\u{FFFD}", self.pending_len);
            self.pending_len = 0;
        }
    }
}

/// Keeps the lines (split at `\n`) that a regex matches.
///
/// Buffers only the current line, capped at `cap` bytes, and tracks source byte
/// offsets so the caller knows where the last complete line ended.
struct LineFilter<'r> {
    re: &'r Regex,
    cap: usize,
    /// The current line's first `cap` bytes (cut at a char boundary).
    line: String,
    /// The current line's full length in bytes of decoded text (saturating).
    line_len: u64,
    /// Source bytes seen so far.
    src_pos: u64,
    /// Source offset where the current (unterminated) line starts.
    line_start: u64,
}

impl<'r> LineFilter<'r> {
    fn new(re: &'r Regex, cap: usize) -> Self {
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
    fn push(&mut self, text: &str, src_len: usize, out: &mut Trimmer) {
        let base = self.src_pos;
        self.src_pos += src_len as u64;
        let mut rest = text;
        let mut offset = 0;
        while let Some(i) = rest.find('\n') {
            self.append(&rest[..i]);
            self.end_line(out, true);
            offset += i + 1;
            self.line_start = base + offset as u64;
            rest = &rest[i + 1..];
        }
        self.append(rest);
    }

    fn append(&mut self, text: &str) {
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

    fn end_line(&mut self, out: &mut Trimmer, newline: bool) {
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
    fn over_cap(&self) -> bool {
        self.line_len > self.cap as u64
    }

    fn line_start(&self) -> u64 {
        self.line_start
    }

    /// Takes the unterminated last line (kept without a `\n`).
    fn flush(&mut self, out: &mut Trimmer) {
        if self.line_len > 0 {
            self.end_line(out, false);
        }
        self.line_start = self.src_pos;
    }
}

/// Removes leading blank lines and trailing whitespace from a stream of text.
///
/// A whitespace run cannot be judged until what follows it is known: it is held in
/// `held` (itself a [`HeadTail`], as a run may be huge) and committed to `out` when a
/// non-whitespace char follows, or dropped at the end. While at the start, the run is
/// also dropped at each `\n`, which removes blank lines but keeps the indentation of
/// the first non-blank one.
struct Trimmer {
    at_start: bool,
    held: HeadTail,
    out: HeadTail,
}

impl Trimmer {
    fn new(limit: usize) -> Self {
        Trimmer {
            at_start: true,
            held: HeadTail::new(limit),
            out: HeadTail::new(limit),
        }
    }

    fn push(&mut self, text: &str) {
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
    fn finish(self) -> (String, u64) {
        // Whatever is still held is trailing whitespace.
        self.out.render()
    }
}

/// Keeps the first `head_cap` and the last `tail_cap` chars of a stream, and counts
/// them all, so memory is O(limit) for any length.
///
/// The tail is a `String` holding a suffix of the stream at a char boundary, with some
/// slack so it is compacted only now and then; a piece with at least `tail_cap` chars
/// replaces it with that piece's own suffix.
struct HeadTail {
    head_cap: usize,
    tail_cap: usize,
    head: String,
    head_chars: usize,
    tail: String,
    tail_chars: usize,
    /// Chars pushed in all, including gaps (saturating).
    total: u64,
}

impl HeadTail {
    /// `limit` chars in all: the head gets half (rounded down), the tail the rest.
    fn new(limit: usize) -> Self {
        let head_cap = limit / 2;
        HeadTail {
            head_cap,
            tail_cap: limit - head_cap,
            head: String::new(),
            head_chars: 0,
            tail: String::new(),
            tail_chars: 0,
            total: 0,
        }
    }

    fn limit(&self) -> u64 {
        (self.head_cap + self.tail_cap) as u64
    }

    fn clear(&mut self) {
        self.head.clear();
        self.head_chars = 0;
        self.tail.clear();
        self.tail_chars = 0;
        self.total = 0;
    }

    fn push_str(&mut self, mut text: &str) {
        if text.is_empty() {
            return;
        }
        if self.head_chars < self.head_cap {
            let (end, taken) = split_after_chars(text, self.head_cap - self.head_chars);
            self.head.push_str(&text[..end]);
            self.head_chars += taken;
            self.total = self.total.saturating_add(taken as u64);
            text = &text[end..];
            if text.is_empty() {
                return;
            }
        }
        let chars = char_count(text);
        self.total = self.total.saturating_add(chars as u64);
        if self.tail_cap == 0 {
            return;
        }
        if chars >= self.tail_cap {
            // The piece alone fills the tail: only its suffix matters.
            let start = if chars == text.len() {
                text.len() - self.tail_cap // ASCII: one byte per char
            } else {
                start_of_last_chars(text, self.tail_cap)
            };
            self.tail.clear();
            self.tail.push_str(&text[start..]);
            self.tail_chars = self.tail_cap;
        } else {
            self.tail.push_str(text);
            self.tail_chars += chars;
            if self.tail_chars.saturating_sub(self.tail_cap) > self.tail_cap.max(TAIL_SLACK) {
                self.compact();
            }
        }
    }

    /// `n` chars whose content is unknown but known to fall strictly between head and
    /// tail. Precondition (what [`HeadTail::move_into`] guarantees): the head is full
    /// and at least `tail_cap` known chars follow, so the tail is simply refilled.
    fn push_gap(&mut self, n: u64) {
        debug_assert_eq!(self.head_chars, self.head_cap);
        self.total = self.total.saturating_add(n);
        self.tail.clear();
        self.tail_chars = 0;
    }

    /// Drops chars from the front of the tail so it holds at most `tail_cap`.
    fn compact(&mut self) {
        if self.tail_chars > self.tail_cap {
            let (end, _) = split_after_chars(&self.tail, self.tail_chars - self.tail_cap);
            self.tail.drain(..end);
            self.tail_chars = self.tail_cap;
        }
    }

    /// Appends everything this keeper stands for to `out` (same limit) and empties it:
    /// all of it when it was not over its limit, else head, a gap and tail.
    fn move_into(&mut self, out: &mut HeadTail) {
        if self.total == 0 {
            return;
        }
        out.push_str(&self.head);
        if self.total > self.limit() {
            self.compact();
            // Our head had `head_cap` chars, so `out`'s head is full now, and our
            // `tail_cap` tail chars follow the gap: push_gap's precondition holds.
            out.push_gap(self.total - self.limit());
        }
        out.push_str(&self.tail);
        self.clear();
    }

    /// The kept text, with the truncation marker when chars were left out, and how
    /// many were.
    fn render(mut self) -> (String, u64) {
        if self.total <= self.limit() {
            self.head.push_str(&self.tail);
            return (self.head, 0);
        }
        let dropped = self.total - self.limit();
        self.compact();
        let mut text = self.head;
        text.push_str(&crate::texts::truncated(dropped));
        text.push_str(&self.tail);
        (text, dropped)
    }
}

#[cfg(test)]
mod tests;
