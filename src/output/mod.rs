//! Rendering a shell command's output file into the text of a tool result.
//!
//! A command's stdout and stderr go into one file that can grow to gigabytes, and a
//! tool result may show at most `limit` characters of it. This module reads a byte
//! range of that file in fixed-size chunks and pushes it through a small pipeline,
//! so memory stays O(limit) (plus one chunk, plus one capped line when filtering)
//! however big the file is:
//!
//! 1. [`Utf8Stream`](utf8::Utf8Stream) decodes lossily, exactly as `String::from_utf8_lossy` on the
//!    whole range would, whatever the chunk boundaries are.
//! 2. [`LineFilter`](filter::LineFilter) (optional) keeps only the lines a regex matches.
//! 3. [`Trimmer`](trim::Trimmer) drops leading blank lines and trailing whitespace, holding back a
//!    whitespace run until it knows whether it is trailing.
//! 4. [`HeadTail`](head_tail::HeadTail) keeps the first and last characters and counts what is in between.
//! 5. The tags of a notification (`<task-notification>`, `</event>`, …) are
//!    neutralised (`&lt;`) in what is kept, so no output forges one.
//!
//! The common case (valid UTF-8 and no filter) works on whole chunks: characters are
//! counted, not visited one by one, and only the suffix a tail needs is copied.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use regex::Regex;

mod filter;
mod head_tail;
pub(crate) mod render;
mod trim;
mod utf8;

use filter::LineFilter;
use trim::Trimmer;
use utf8::Utf8Stream;

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

/// Reads `path` from byte `start` to its current end and renders it (the
/// bytes as written; [`render_file_as`] shows what a terminal would).
///
/// The end is the file's size when the call begins: a command that keeps writing
/// fast cannot make the call run forever, and what it writes meanwhile is left for
/// the next read. With `finished` false the bytes of an incomplete UTF-8 sequence at
/// the end (and, with a filter, an unterminated last line) are not consumed.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn render_file(
    path: &Path,
    start: u64,
    limit: usize,
    filter: Option<&Regex>,
    finished: bool,
) -> io::Result<Rendered> {
    render_file_chunked(path, start, limit, filter, finished, CHUNK, false)
}

/// [`render_file`], as a terminal would show it when `terminal` (escape
/// sequences removed, `\r` and backspace applied: `render.rs`).
pub(crate) fn render_file_as(
    path: &Path,
    start: u64,
    limit: usize,
    filter: Option<&Regex>,
    finished: bool,
    terminal: bool,
) -> io::Result<Rendered> {
    render_file_chunked(path, start, limit, filter, finished, CHUNK, terminal)
}

/// [`render_file`] keeping only the last `tail` lines of what it would
/// show (after the filter, before the cut to `limit`), and how many lines
/// were left out before them. Two passes over the same range (the file's
/// size when the call begins): one counts the lines, the other renders
/// from the first one kept, so memory stays bounded as for `render_file`.
pub(crate) fn render_file_tail(
    path: &Path,
    start: u64,
    limit: usize,
    filter: Option<&Regex>,
    finished: bool,
    tail: u64,
    terminal: bool,
) -> io::Result<(Rendered, u64)> {
    let end = File::open(path)?.metadata()?.len();
    let mut counting = Renderer::new(0, filter, LINE_CAP);
    counting.terminal = terminal.then(render::Render::default);
    counting.trim.lines = Some(trim::LineCount::default());
    read_range(path, start, end, CHUNK, |bytes| counting.feed(bytes))?;
    let lines = counting.count(finished);
    let left_out = lines.shown().saturating_sub(tail);
    let mut renderer = Renderer::new(limit, filter, LINE_CAP);
    renderer.terminal = terminal.then(render::Render::default);
    // Leading blank lines go anyway; then the lines before the tail.
    renderer.trim.skip = lines.first.saturating_sub(1) + left_out;
    read_range(path, start, end, CHUNK, |bytes| renderer.feed(bytes))?;
    Ok((renderer.finish(finished), left_out))
}

/// Feeds the bytes of `path` from `start` to `end` to `feed`, a chunk at a
/// time (less if the file shrank meanwhile).
fn read_range(
    path: &Path,
    start: u64,
    end: u64,
    chunk: usize,
    mut feed: impl FnMut(&[u8]),
) -> io::Result<()> {
    let file = File::open(path)?;
    let mut buf = vec![0u8; chunk.max(1)];
    let mut pos = start;
    while pos < end {
        let want = usize::try_from(end - pos).map_or(buf.len(), |left| left.min(buf.len()));
        match file.read_at(&mut buf[..want], pos) {
            Ok(0) => break,
            Ok(n) => {
                feed(&buf[..n]);
                pos += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
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
    terminal: bool,
) -> io::Result<Rendered> {
    let file = File::open(path)?;
    // Stat once: this is the end of the range whatever the command writes meanwhile.
    let end = file.metadata()?.len();
    let mut renderer = Renderer::new(limit, filter, LINE_CAP);
    renderer.terminal = terminal.then(render::Render::default);
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

/// Steps 2 and 3: the line filter, if any, then the trimmer.
fn downstream(lines: &mut Option<LineFilter<'_>>, trim: &mut Trimmer, text: &str, src_len: usize) {
    match lines {
        Some(filter) => filter.push(text, src_len, trim),
        None => trim.push(text),
    }
}

/// The whole pipeline: bytes in, [`Rendered`] out.
struct Renderer<'r> {
    utf8: Utf8Stream,
    /// What a terminal would show, when rendering is on.
    terminal: Option<render::Render>,
    lines: Option<LineFilter<'r>>,
    trim: Trimmer,
    /// Bytes fed so far.
    fed: u64,
}

impl<'r> Renderer<'r> {
    fn new(limit: usize, filter: Option<&'r Regex>, line_cap: usize) -> Self {
        Renderer {
            utf8: Utf8Stream::default(),
            terminal: None,
            lines: filter.map(|re| LineFilter::new(re, line_cap)),
            trim: Trimmer::new(limit),
            fed: 0,
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.fed += bytes.len() as u64;
        let (terminal, lines, trim) = (&mut self.terminal, &mut self.lines, &mut self.trim);
        let mut down = |text: &str, src_len: usize| downstream(lines, trim, text, src_len);
        self.utf8.feed(bytes, |text, src_len| match terminal {
            Some(t) => t.push(text, src_len, &mut down),
            None => down(text, src_len),
        });
    }

    /// The end of the decoded text: a `\r` or sequence it cut is kept for
    /// the next read unless `finished`. Returns the source bytes left.
    fn end_terminal(&mut self, finished: bool) -> u64 {
        let (lines, trim) = (&mut self.lines, &mut self.trim);
        let mut down = |text: &str, src_len: usize| downstream(lines, trim, text, src_len);
        match self.terminal.as_mut() {
            Some(t) => t.finish(finished, &mut down),
            None => 0,
        }
    }

    /// The line counts of a counting renderer (see [`render_file_tail`]).
    fn count(mut self, finished: bool) -> trim::LineCount {
        if finished {
            self.finish_utf8();
        }
        self.end_terminal(finished);
        if let Some(filter) = self.lines.as_mut() {
            if finished || filter.over_cap() {
                filter.flush(&mut self.trim);
            }
        }
        self.trim.lines.unwrap_or_default().finish()
    }

    /// The rest of a cut character, at the end of everything.
    fn finish_utf8(&mut self) {
        let (terminal, lines, trim) = (&mut self.terminal, &mut self.lines, &mut self.trim);
        let mut down = |text: &str, src_len: usize| downstream(lines, trim, text, src_len);
        self.utf8.finish(|text, src_len| match terminal {
            Some(t) => t.push(text, src_len, &mut down),
            None => down(text, src_len),
        });
    }

    fn finish(mut self, finished: bool) -> Rendered {
        let mut consumed = self.fed;
        if finished {
            self.finish_utf8();
        } else {
            // The command may still write the rest of that character.
            consumed -= self.utf8.pending_len() as u64;
        }
        // Likewise a `\r` or an escape sequence the end cut.
        consumed -= self.end_terminal(finished);
        if let Some(filter) = self.lines.as_mut() {
            if finished || filter.over_cap() {
                filter.flush(&mut self.trim);
            } else {
                // The last line may still grow: leave it, unseen, for the next read.
                consumed = filter.line_start();
            }
        }
        let (text, truncated) = self.trim.finish();
        // Last, on the text as shown (after `\r` redraws are applied): what
        // a command prints can never read as a `<task-notification>` of ours.
        let text = match crate::texts::neutralise_tags(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(neutral) => neutral,
        };
        Rendered {
            text,
            consumed,
            truncated,
        }
    }
}

#[cfg(test)]
mod tests;
