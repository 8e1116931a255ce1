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
        // First settle a sequence left incomplete by the previous chunk, one byte at a
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
mod tests {
    use super::*;
    use std::io::Write;
    use std::time::Instant;

    /// Small deterministic PRNG (xorshift64*), so the random tests need no crate.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Random bytes biased toward what breaks UTF-8 decoders: lead bytes of every
    /// length, stray continuation bytes, overlongs, surrogates and plain ASCII.
    fn random_bytes(rng: &mut Rng, len: usize) -> Vec<u8> {
        const INTERESTING: &[u8] = &[
            b'a', b'\n', b' ', 0x80, 0x8F, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xE1, 0xED,
            0xEF, 0xF0, 0xF4, 0xF5, 0xFF,
        ];
        (0..len)
            .map(|_| match rng.below(3) {
                0 => INTERESTING[rng.below(INTERESTING.len())],
                1 => 0x80 + rng.below(0x40) as u8,
                _ => rng.next() as u8,
            })
            .collect()
    }

    /// Random output made of words, whitespace (ASCII and not), multi-byte chars and
    /// broken sequences, so the trimming, filtering and truncation edges all occur.
    fn random_text(rng: &mut Rng, tokens: usize) -> Vec<u8> {
        const TOKENS: &[&[u8]] = &[
            b"a",
            b"foo",
            b"ERROR",
            b" ",
            b"          ",
            b"\t",
            b"\n",
            b"\n\n\n",
            b"\r\n",
            "é".as_bytes(),
            "日本".as_bytes(),
            "🎉".as_bytes(),
            "\u{2003}".as_bytes(),
            &[0xFF],
            &[0xE2, 0x82],
            &[0xF0, 0x9F],
            &[0x80],
        ];
        let mut out = Vec::new();
        for _ in 0..tokens {
            out.extend_from_slice(TOKENS[rng.below(TOKENS.len())]);
        }
        out
    }

    fn decode_chunked(bytes: &[u8], chunk: usize, finish: bool) -> (String, usize) {
        let mut stream = Utf8Stream::default();
        let mut out = String::new();
        let mut src = 0;
        for piece in bytes.chunks(chunk) {
            stream.feed(piece, |text, len| {
                out.push_str(text);
                src += len;
            });
        }
        if finish {
            stream.finish(|text, len| {
                out.push_str(text);
                src += len;
            });
        }
        (out, src)
    }

    /// Length of an incomplete (but so far valid) sequence ending `bytes`.
    fn incomplete_suffix_len(bytes: &[u8]) -> usize {
        let mut rest = bytes;
        loop {
            match std::str::from_utf8(rest) {
                Ok(_) => return 0,
                Err(e) => match e.error_len() {
                    None => return rest.len() - e.valid_up_to(),
                    Some(n) => rest = &rest[e.valid_up_to() + n..],
                },
            }
        }
    }

    fn cap_prefix(line: &str, cap: usize) -> &str {
        let mut end = cap.min(line.len());
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        &line[..end]
    }

    /// The rules applied naively to the whole input in memory.
    fn reference(
        bytes: &[u8],
        limit: usize,
        filter: Option<&Regex>,
        finished: bool,
        cap: usize,
    ) -> Rendered {
        let incomplete = if finished {
            0
        } else {
            incomplete_suffix_len(bytes)
        };
        let decodable = &bytes[..bytes.len() - incomplete];
        let text = String::from_utf8_lossy(decodable).into_owned();
        let mut consumed = decodable.len() as u64;
        let filtered = match filter {
            None => text,
            Some(re) => {
                let mut out = String::new();
                let segments: Vec<&str> = text.split('\n').collect();
                let (last, complete) = segments.split_last().expect("split yields one");
                for line in complete {
                    let kept = cap_prefix(line, cap);
                    if re.is_match(kept) {
                        out.push_str(kept);
                        out.push('\n');
                    }
                }
                if finished || last.len() > cap {
                    let kept = cap_prefix(last, cap);
                    if !last.is_empty() && re.is_match(kept) {
                        out.push_str(kept);
                    }
                } else {
                    consumed = bytes
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map_or(0, |i| i as u64 + 1);
                }
                out
            }
        };
        let mut rest = filtered.as_str();
        while let Some(i) = rest.find('\n') {
            if !rest[..i].chars().all(char::is_whitespace) {
                break;
            }
            rest = &rest[i + 1..];
        }
        let trimmed = rest.trim_end();
        let n = trimmed.chars().count();
        if n <= limit {
            return Rendered {
                text: trimmed.to_string(),
                consumed,
                truncated: 0,
            };
        }
        let head: String = trimmed.chars().take(limit / 2).collect();
        let tail: String = trimmed.chars().skip(n - (limit - limit / 2)).collect();
        let m = n - limit;
        Rendered {
            text: format!("{head}\n\n... [{m} characters truncated] ...\n\n{tail}"),
            consumed,
            truncated: m as u64,
        }
    }

    fn marker(m: usize) -> String {
        format!("\n\n... [{m} characters truncated] ...\n\n")
    }

    fn text_of(input: &str, limit: usize) -> String {
        render_bytes(input.as_bytes(), limit, None, true).text
    }

    fn temp_path(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("bashtools-output-{}-{name}", std::process::id()))
    }

    /// Removes the file even when the test fails.
    struct TempFile(std::path::PathBuf);

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    // ---- helpers ----

    #[test]
    fn char_spans() {
        let s = "aé日🎉b";
        for k in 0..8 {
            let (end, taken) = split_after_chars(s, k);
            let expected: String = s.chars().take(k).collect();
            assert_eq!(&s[..end], expected);
            assert_eq!(taken, expected.chars().count());
            let start = start_of_last_chars(s, k);
            let n = s.chars().count();
            let expected: String = s.chars().skip(n.saturating_sub(k)).collect();
            assert_eq!(&s[start..], expected);
        }
        assert_eq!(split_after_chars("", 3), (0, 0));
        assert_eq!(start_of_last_chars("", 3), 0);
    }

    // ---- Utf8Stream ----

    #[test]
    fn utf8_matches_from_utf8_lossy_on_random_bytes() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for round in 0..3000 {
            let bytes = random_bytes(&mut rng, round % 40);
            let expected = String::from_utf8_lossy(&bytes);
            for chunk in 1..=7 {
                let (decoded, src) = decode_chunked(&bytes, chunk, true);
                assert_eq!(decoded, expected, "bytes {bytes:x?} chunk {chunk}");
                assert_eq!(src, bytes.len());
            }
        }
    }

    #[test]
    fn utf8_split_multibyte_chars() {
        let text = "é日本🎉x";
        for chunk in 1..=7 {
            assert_eq!(decode_chunked(text.as_bytes(), chunk, true).0, text);
        }
    }

    #[test]
    fn utf8_holds_back_incomplete_end_only() {
        let mut stream = Utf8Stream::default();
        let mut out = String::new();
        stream.feed(&[b'a', 0xF0, 0x9F], |t, _| out.push_str(t));
        assert_eq!(out, "a");
        assert_eq!(stream.pending_len(), 2);
        stream.feed(&[0x8E], |t, _| out.push_str(t));
        assert_eq!(stream.pending_len(), 3);
        stream.feed(&[0x89, b'b'], |t, _| out.push_str(t));
        assert_eq!(out, "a🎉b");
        assert_eq!(stream.pending_len(), 0);
        // A truly invalid byte at the end is not held back.
        stream.feed(&[b'c', 0xFF], |t, _| out.push_str(t));
        assert_eq!(stream.pending_len(), 0);
        assert_eq!(out, "a🎉bc\u{FFFD}");
        // A held prefix broken by the next byte is one U+FFFD; the byte is kept.
        stream.feed(&[0xE2, 0x82], |t, _| out.push_str(t));
        stream.feed(b"z", |t, _| out.push_str(t));
        assert_eq!(out, "a🎉bc\u{FFFD}\u{FFFD}z");
    }

    // ---- HeadTail ----

    fn head_tail(pieces: &[&str], limit: usize) -> (String, u64) {
        let mut keeper = HeadTail::new(limit);
        for piece in pieces {
            keeper.push_str(piece);
        }
        keeper.render()
    }

    #[test]
    fn head_tail_around_the_limit() {
        for limit in [0usize, 1, 2, 5, 6] {
            for n in limit.saturating_sub(1)..=limit + 1 {
                let text: String = "é日🎉a".chars().cycle().take(n).collect();
                let (out, dropped) = head_tail(&[&text], limit);
                if n <= limit {
                    assert_eq!(out, text);
                    assert_eq!(dropped, 0);
                } else {
                    let head: String = text.chars().take(limit / 2).collect();
                    let tail: String = text.chars().skip(n - (limit - limit / 2)).collect();
                    assert_eq!(out, format!("{head}{}{tail}", marker(n - limit)));
                    assert_eq!(dropped, (n - limit) as u64);
                }
            }
        }
    }

    #[test]
    fn head_tail_limit_zero_keeps_nothing() {
        assert_eq!(head_tail(&["abc", "日本"], 0), (marker(5), 5));
        assert_eq!(head_tail(&[], 0), (String::new(), 0));
        assert_eq!(head_tail(&["ab", "c"], 1), (format!("{}c", marker(2)), 2));
    }

    #[test]
    fn head_tail_small_pieces_equal_one_big_piece() {
        let mut rng = Rng(7);
        let text: String = (0..20_000)
            .map(|i| ['a', 'é', '日', '🎉', '\n'][(i * 7 + i / 3) % 5])
            .collect();
        for limit in [0, 1, 7, 100, 10_001, 30_000] {
            let whole = head_tail(&[&text], limit);
            let mut keeper = HeadTail::new(limit);
            let mut rest = text.as_str();
            while !rest.is_empty() {
                let (end, _) = split_after_chars(rest, 1 + rng.below(50));
                keeper.push_str(&rest[..end]);
                rest = &rest[end..];
            }
            assert_eq!(keeper.render(), whole, "limit {limit}");
        }
    }

    #[test]
    fn head_tail_gap_counts_exactly() {
        // A run kept as head + gap + tail moves into another keeper losslessly.
        let run: String = " \t\u{2003}".chars().cycle().take(1000).collect();
        for limit in [0, 1, 4, 9] {
            let mut held = HeadTail::new(limit);
            held.push_str(&run);
            let mut out = HeadTail::new(limit);
            out.push_str("ab");
            held.move_into(&mut out);
            out.push_str("xyz");
            let expected = head_tail(&["ab", &run, "xyz"], limit);
            assert_eq!(out.render(), expected, "limit {limit}");
        }
    }

    // ---- Trimmer ----

    fn trimmed(pieces: &[&str], limit: usize) -> String {
        let mut trim = Trimmer::new(limit);
        for piece in pieces {
            trim.push(piece);
        }
        trim.finish().0
    }

    #[test]
    fn trimmer_examples() {
        assert_eq!(trimmed(&["\n\n  foo"], 100), "  foo");
        assert_eq!(trimmed(&["  \n\t\nx"], 100), "x");
        assert_eq!(trimmed(&["a  \n b \n\n  "], 100), "a  \n b");
        assert_eq!(trimmed(&[" \n \r\n\u{2003}\n"], 100), "");
        assert_eq!(trimmed(&[], 100), "");
        // The same split into one-char pieces.
        let chars: Vec<String> = "\n \n  foo \n bar\n\n ".chars().map(String::from).collect();
        let pieces: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(trimmed(&pieces, 100), "  foo \n bar");
    }

    #[test]
    fn trimmer_huge_whitespace_runs() {
        let spaces = " ".repeat(10_000);
        // Inner run much longer than the limit: counted, held as head + tail only.
        let out = trimmed(&["a", &spaces, &spaces, "b", &spaces], 10);
        assert_eq!(out, format!("a    {}    b", marker(20_002 - 10)));
        // Leading indentation longer than the limit.
        let out = trimmed(&["\n", &spaces, "b"], 4);
        assert_eq!(out, format!("  {} b", marker(10_001 - 4)));
        // Whitespace only, without a newline.
        assert_eq!(trimmed(&[&spaces, &spaces], 4), "");
    }

    // ---- LineFilter ----

    #[test]
    fn filter_keeps_matching_lines() {
        let re = Regex::new("(?i)error").expect("regex");
        let input = "ok\nError: one\nfine\nERROR two\nlast error";
        let r = render_bytes(input.as_bytes(), 1000, Some(&re), true);
        assert_eq!(r.text, "Error: one\nERROR two\nlast error");
        assert_eq!(r.consumed, input.len() as u64);
        // Not finished: the unterminated last line is left for the next read.
        let r = render_bytes(input.as_bytes(), 1000, Some(&re), false);
        assert_eq!(r.text, "Error: one\nERROR two");
        assert_eq!(r.consumed, input.rfind('\n').map_or(0, |i| i as u64 + 1));
    }

    #[test]
    fn filter_caps_long_lines() {
        let re = Regex::new("x").expect("regex");
        let r = render_bytes_chunked(b"aaaaax\nbx\naaaaaaaaaa", 100, Some(&re), false, 3, 5);
        // "aaaaax" is matched on "aaaaa" only; the unfinished long last line is
        // consumed because it is over the cap.
        assert_eq!(r.text, "bx");
        assert_eq!(r.consumed, 20);
        let re = Regex::new("a").expect("regex");
        let r = render_bytes_chunked("aé日\nb".as_bytes(), 100, Some(&re), true, 1, 4);
        assert_eq!(r.text, "aé");
        // Empty-matching regexes keep blank lines in the middle.
        let re = Regex::new("").expect("regex");
        let r = render_bytes(b"a\n\nb\n", 100, Some(&re), true);
        assert_eq!(r.text, "a\n\nb");
    }

    #[test]
    fn filter_default_cap_is_one_mebibyte() {
        let re = Regex::new("x").expect("regex");
        let mut input = "x".repeat(LINE_CAP + LINE_CAP / 2).into_bytes();
        input.extend_from_slice(b"\nno\nyes x");
        let r = render_bytes(&input, 10, Some(&re), true);
        // The long line is kept on its first LINE_CAP bytes, then "\n", then "yes x".
        let n = LINE_CAP + 1 + 5;
        assert_eq!(r.truncated, (n - 10) as u64);
        assert_eq!(r.text, format!("xxxxx{}yes x", marker(n - 10)));
        // Unfinished and over the cap: the long partial line is taken and consumed.
        let long = "x".repeat(LINE_CAP + 1);
        let r = render_bytes(long.as_bytes(), 10, Some(&re), false);
        assert_eq!(r.consumed, long.len() as u64);
        assert_eq!(r.truncated, (LINE_CAP - 10) as u64);
    }

    // ---- the whole pipeline ----

    #[test]
    fn render_matches_reference_on_random_inputs() {
        let mut rng = Rng(0xDEAD_BEEF);
        let filters = [
            Regex::new("(?i)error").expect("regex"),
            Regex::new("é|a").expect("regex"),
            Regex::new("^$").expect("regex"),
        ];
        for round in 0..4000 {
            let bytes = random_text(&mut rng, round % 60);
            let limit = rng.below(40);
            let chunk = 1 + rng.below(if round % 2 == 0 { 7 } else { 300 });
            let cap = if rng.below(2) == 0 {
                1 + rng.below(12)
            } else {
                LINE_CAP
            };
            let finished = rng.below(2) == 0;
            let filter = match rng.below(4) {
                0 => None,
                i => Some(&filters[i - 1]),
            };
            let got = render_bytes_chunked(&bytes, limit, filter, finished, chunk, cap);
            let expected = reference(&bytes, limit, filter, finished, cap);
            assert_eq!(
                got, expected,
                "input {:?} limit {limit} chunk {chunk} cap {cap} finished {finished} filter {filter:?}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }

    #[test]
    fn truncation_at_the_limit() {
        for limit in [9usize, 10] {
            let h = limit / 2;
            let t = limit - h;
            for n in [limit - 1, limit, limit + 1] {
                let text: String = "é日本🎉x".chars().cycle().take(n).collect();
                let r = render_bytes(text.as_bytes(), limit, None, true);
                if n <= limit {
                    assert_eq!(r.text, text);
                    assert_eq!(r.truncated, 0);
                } else {
                    let head: String = text.chars().take(h).collect();
                    let tail: String = text.chars().skip(n - t).collect();
                    assert_eq!(r.text, format!("{head}{}{tail}", marker(1)));
                    assert_eq!(r.truncated, 1);
                }
            }
        }
    }

    #[test]
    fn tiny_limits() {
        assert_eq!(text_of("abc", 0), marker(3));
        assert_eq!(text_of("", 0), "");
        assert_eq!(text_of("  \n  ", 0), "");
        assert_eq!(text_of("a", 1), "a");
        assert_eq!(text_of("日本", 1), format!("{}本", marker(1)));
        let r = render_bytes("é".repeat(100).as_bytes(), 0, None, true);
        assert_eq!((r.text, r.truncated), (marker(100), 100));
    }

    #[test]
    fn consumption() {
        // Not finished: an incomplete sequence at the end stays for the next read.
        let r = render_bytes(&[b'a', b'b', 0xE6, 0x97], 100, None, false);
        assert_eq!((r.text.as_str(), r.consumed), ("ab", 2));
        // Finished: it is consumed as U+FFFD.
        let r = render_bytes(&[b'a', b'b', 0xE6, 0x97], 100, None, true);
        assert_eq!((r.text.as_str(), r.consumed), ("ab\u{FFFD}", 4));
        // A truly invalid byte at the end is consumed even when not finished.
        let r = render_bytes(&[b'a', 0xFF], 100, None, false);
        assert_eq!((r.text.as_str(), r.consumed), ("a\u{FFFD}", 2));
        let r = render_bytes(b"", 100, None, false);
        assert_eq!((r.text.as_str(), r.consumed, r.truncated), ("", 0, 0));
    }

    #[test]
    fn file_ranges_and_errors() {
        let path = temp_path("ranges");
        let _guard = TempFile(path.clone());
        std::fs::write(&path, "first\nsecond é\nthird").expect("write");
        let re = Regex::new("i").expect("regex");
        for chunk in [1, 2, 3, 64 * 1024] {
            let r = render_file_chunked(&path, 0, 100, None, true, chunk).expect("read");
            assert_eq!(r.text, "first\nsecond é\nthird");
            assert_eq!(r.consumed, 21);
            let r = render_file_chunked(&path, 6, 100, None, false, chunk).expect("read");
            assert_eq!((r.text.as_str(), r.consumed), ("second é\nthird", 15));
            let r = render_file_chunked(&path, 0, 100, Some(&re), false, chunk).expect("read");
            assert_eq!((r.text.as_str(), r.consumed), ("first", 16));
        }
        // Starting at or past the end reads nothing.
        let r = render_file(&path, 21, 100, None, true).expect("read");
        assert_eq!((r.text.as_str(), r.consumed), ("", 0));
        let r = render_file(&path, 1000, 100, None, true).expect("read");
        assert_eq!((r.text.as_str(), r.consumed), ("", 0));
        assert!(render_file(&temp_path("missing"), 0, 100, None, true).is_err());
    }

    /// Writes `buf` `times` times to a new file.
    fn write_repeated(path: &Path, buf: &[u8], times: usize) {
        let mut file = std::io::BufWriter::new(File::create(path).expect("create"));
        for _ in 0..times {
            file.write_all(buf).expect("write");
        }
        file.flush().expect("flush");
    }

    /// 1 MiB of numbered lines with multi-byte chars, and its char count.
    fn megabyte_of_lines() -> (Vec<u8>, usize) {
        let mut buf = String::new();
        let mut i = 0;
        while buf.len() < 1024 * 1024 - 64 {
            buf.push_str(&format!("line {i:06} é 日本 🎉 some output text\n"));
            i += 1;
        }
        let chars = buf.chars().count();
        (buf.into_bytes(), chars)
    }

    #[test]
    fn big_file_is_bounded_and_exact() {
        let path = temp_path("200mb");
        let _guard = TempFile(path.clone());
        let (buf, chars) = megabyte_of_lines();
        let times = 200 * 1024 * 1024 / buf.len() + 1;
        write_repeated(&path, &buf, times);
        let limit = 30_001;
        let r = render_file(&path, 0, limit, None, true).expect("read");
        // The final "\n" is trailing whitespace.
        let n = chars * times - 1;
        let m = n - limit;
        assert_eq!(r.truncated, m as u64);
        assert_eq!(r.consumed, (buf.len() * times) as u64);
        let text = std::str::from_utf8(&buf).expect("utf8");
        let head: String = text.chars().take(limit / 2).collect();
        let tail_len = limit - limit / 2;
        let trimmed = text.trim_end();
        let tail: String = trimmed
            .chars()
            .skip(trimmed.chars().count() - tail_len)
            .collect();
        assert_eq!(r.text, format!("{head}{}{tail}", marker(m)));
        assert_eq!(r.text.chars().count(), limit + marker(m).chars().count());
    }

    /// Run by hand: `cargo test --release -- --ignored --nocapture throughput`.
    #[test]
    #[ignore]
    fn throughput_1gib() {
        let path = temp_path("1gib");
        let _guard = TempFile(path.clone());
        let mut ascii = Vec::new();
        let mut i = 0;
        while ascii.len() < 1024 * 1024 {
            ascii.extend_from_slice(format!("line {i:06} of some plain ascii output\n").as_bytes());
            i += 1;
        }
        ascii.truncate(1024 * 1024);
        let (utf8, _) = megabyte_of_lines();
        let re = Regex::new("(?i)line 0000[0-9]{2} ").expect("regex");
        for (name, buf) in [("ascii", &ascii), ("utf-8", &utf8)] {
            write_repeated(&path, buf, 1024);
            let bytes = (buf.len() * 1024) as f64;
            // Once to warm the page cache, then timed.
            render_file(&path, 0, 30_000, None, true).expect("read");
            for limit in [30_000, 1_000_000] {
                let started = Instant::now();
                let r = render_file(&path, 0, limit, None, true).expect("read");
                let secs = started.elapsed().as_secs_f64();
                assert!(r.truncated > 0);
                println!(
                    "{name}, limit {limit}: {:.0} MB/s ({secs:.3} s for {:.0} MB)",
                    bytes / secs / 1e6,
                    bytes / 1e6
                );
            }
            let started = Instant::now();
            render_file(&path, 0, 30_000, Some(&re), true).expect("read");
            let secs = started.elapsed().as_secs_f64();
            println!("{name}, filtered: {:.0} MB/s", bytes / secs / 1e6);
        }
    }
}
