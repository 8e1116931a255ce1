//! Keeping the first and last characters of a stream, and counting them all (step 4), with the character helpers it counts by.

use super::TAIL_SLACK;

/// Number of chars (Unicode scalar values) in `s`. `chars().count()` is the std's
/// word-at-a-time count of non-continuation bytes, fast even in a debug build.
pub(super) fn char_count(s: &str) -> usize {
    s.chars().count()
}

/// Byte index just past the first `k` chars of `s` (or `s.len()` if it has fewer),
/// and how many chars that is.
///
/// Works in counted spans rather than char by char: `need` bytes from a char
/// boundary hold at most `need` chars (and at least a quarter of that), so each round
/// never overshoots and the number of rounds is logarithmic; ASCII takes one.
pub(super) fn split_after_chars(s: &str, k: usize) -> (usize, usize) {
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
pub(super) fn start_of_last_chars(s: &str, k: usize) -> usize {
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

/// Keeps the first `head_cap` and the last `tail_cap` chars of a stream, and counts
/// them all, so memory is O(limit) for any length.
///
/// The tail is a `String` holding a suffix of the stream at a char boundary, with some
/// slack so it is compacted only now and then; a piece with at least `tail_cap` chars
/// replaces it with that piece's own suffix.
pub(super) struct HeadTail {
    pub(super) head_cap: usize,
    pub(super) tail_cap: usize,
    pub(super) head: String,
    pub(super) head_chars: usize,
    pub(super) tail: String,
    pub(super) tail_chars: usize,
    /// Chars pushed in all, including gaps (saturating).
    pub(super) total: u64,
}

impl HeadTail {
    /// `limit` chars in all: the head gets half (rounded down), the tail the rest.
    pub(super) fn new(limit: usize) -> Self {
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

    pub(super) fn limit(&self) -> u64 {
        (self.head_cap + self.tail_cap) as u64
    }

    pub(super) fn clear(&mut self) {
        self.head.clear();
        self.head_chars = 0;
        self.tail.clear();
        self.tail_chars = 0;
        self.total = 0;
    }

    pub(super) fn push_str(&mut self, mut text: &str) {
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
    pub(super) fn push_gap(&mut self, n: u64) {
        debug_assert_eq!(self.head_chars, self.head_cap);
        self.total = self.total.saturating_add(n);
        self.tail.clear();
        self.tail_chars = 0;
    }

    /// Drops chars from the front of the tail so it holds at most `tail_cap`.
    pub(super) fn compact(&mut self) {
        if self.tail_chars > self.tail_cap {
            let (end, _) = split_after_chars(&self.tail, self.tail_chars - self.tail_cap);
            self.tail.drain(..end);
            self.tail_chars = self.tail_cap;
        }
    }

    /// Appends everything this keeper stands for to `out` (same limit) and empties it:
    /// all of it when it was not over its limit, else head, a gap and tail.
    pub(super) fn move_into(&mut self, out: &mut HeadTail) {
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
    pub(super) fn render(mut self) -> (String, u64) {
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
