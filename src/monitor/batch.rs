//! The monitor's pure core: lines cut at a limit ([`Lines`]) and grouped
//! into notifications ([`Batcher`]), with time passed in.

use std::time::Instant;

use crate::config::MonitorOptions;
use crate::texts;

/// Splits bytes into lines, cutting each at `limit` characters. Memory is
/// bounded by the limit whatever the input: the rest of a long line is
/// skipped up to its newline.
pub(crate) struct Lines {
    limit: usize,
    pub(super) buf: Vec<u8>,
    chars: usize,
    cut: bool,
}

impl Lines {
    pub(crate) fn new(limit: usize) -> Lines {
        Lines {
            limit,
            buf: Vec::new(),
            chars: 0,
            cut: false,
        }
    }

    /// Feeds bytes; each complete line goes to `out`.
    pub(crate) fn feed(&mut self, bytes: &[u8], out: &mut impl FnMut(String)) {
        for &b in bytes {
            if b == b'\n' {
                out(self.take());
                continue;
            }
            if self.cut {
                continue;
            }
            // A byte that starts a character (not a UTF-8 continuation byte).
            let starts_char = b & 0xC0 != 0x80;
            if starts_char && self.chars == self.limit {
                self.cut = true;
                continue;
            }
            self.buf.push(b);
            if starts_char {
                self.chars += 1;
            }
        }
    }

    /// The last line, if the stream ended without a newline.
    pub(crate) fn finish(&mut self) -> Option<String> {
        (!self.buf.is_empty() || self.cut).then(|| self.take())
    }

    pub(super) fn take(&mut self) -> String {
        let mut line = String::from_utf8_lossy(&self.buf).into_owned();
        if line.ends_with('\r') {
            line.pop();
        }
        if self.cut {
            line.push_str(texts::LINE_TRUNCATED);
        }
        self.buf.clear();
        self.chars = 0;
        self.cut = false;
        line
    }
}

/// Groups lines into notifications (contract §7).
pub(crate) struct Batcher {
    opts: MonitorOptions,
    pub(super) lines: Vec<String>,
    /// When the open window closes; `None` while no window is open.
    window_end: Option<Instant>,
    window_start: Option<Instant>,
    /// Lines past `burst_limit` in the open window.
    pub(super) suppressed: u64,
    /// Suppressed in the last window: the next notification says so first.
    carry: u64,
    /// Since when every window has suppressed lines.
    flood_since: Option<Instant>,
}

impl Batcher {
    pub(crate) fn new(opts: MonitorOptions) -> Batcher {
        Batcher {
            opts,
            lines: Vec::new(),
            window_end: None,
            window_start: None,
            suppressed: 0,
            carry: 0,
            flood_since: None,
        }
    }

    /// A line arrived at `now`.
    pub(crate) fn push(&mut self, line: String, now: Instant) {
        self.open(now);
        if self.lines.len() < self.opts.burst_limit.max(1) {
            self.lines.push(line);
        } else {
            self.suppressed += 1;
        }
    }

    pub(super) fn open(&mut self, now: Instant) {
        if self.window_end.is_none() {
            self.window_start = Some(now);
            self.window_end = Some(crate::deadline::saturating_add(now, self.opts.batch_window));
        }
    }

    /// When the open window closes.
    pub(crate) fn window_end(&self) -> Option<Instant> {
        self.window_end
    }

    /// The lines of the window that closed, to send; `None` when there is
    /// nothing to say. Call when `now` has passed [`window_end`](Self::window_end).
    pub(crate) fn flush(&mut self, now: Instant) -> Option<Vec<String>> {
        let start = self.window_start.take();
        self.window_end = None;
        if self.suppressed > 0 {
            self.flood_since = self.flood_since.or(start).or(Some(now));
        } else {
            self.flood_since = None;
        }
        let mut out = Vec::with_capacity(self.lines.len() + 1);
        if self.carry > 0 {
            out.push(texts::suppressed(self.carry));
        }
        out.append(&mut self.lines);
        self.carry = std::mem::take(&mut self.suppressed);
        if self.carry > 0 {
            // Say so within one more window, even if no line comes.
            self.open(now);
        }
        (!out.is_empty()).then_some(out)
    }

    /// Everything still held, at the end of the stream (one or two notifications).
    pub(crate) fn finish(&mut self, now: Instant) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        out.extend(self.flush(now));
        if self.carry > 0 {
            out.push(vec![texts::suppressed(std::mem::take(&mut self.carry))]);
        }
        self.window_end = None;
        out
    }

    /// Whether every window has suppressed lines for `flood_timeout`.
    pub(crate) fn flooding(&self, now: Instant) -> bool {
        self.flood_since
            .is_some_and(|since| now.duration_since(since) >= self.opts.flood_timeout)
    }
}
