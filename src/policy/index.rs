//! The rules by their first two words, so that a simple command is matched
//! against the few rules that can match it: those of its command word and,
//! of those, the ones whose second word it has. A host's rules file holds
//! many rules on the same few command words (`git`, `npm`, `cargo`), which
//! differ from the second word on.
//!
//! The index is judged against once per simple command, between the
//! gate's reading of words, which fills the caches with its own
//! allocations. So it is laid out flat, in a few arrays of small items
//! (one text for every word, one list of candidates, entries that point
//! into both by offsets), and built once from the whole rule list, on the
//! first judging after a change.

use std::ops::Range;
use std::sync::OnceLock;

use super::rule::{Decision, Rule};
use super::wrappers::{is_wrapper, last_part};
use crate::gate::Spelled;

/// Where to look for the rules that may match a command.
#[derive(Debug, Clone, Default)]
pub(super) struct Index {
    /// Open addressing by [`hash`]: an entry's number plus one, 0 where
    /// there is none. Its length is a power of two, at least twice the
    /// entries, so a probe ends at a free slot soon.
    slots: Vec<u32>,
    /// One per command word.
    entries: Vec<Entry>,
    /// Every command word and second word, one after another (bytes: a
    /// word is compared, never cut).
    text: Vec<u8>,
    /// Every entry's rules, each list a range of it.
    candidates: Vec<Candidate>,
    /// Rules on every command (no words): a range of `candidates`.
    every: Span,
    /// Too many rules or words for the offsets (4 GiB of them): every
    /// rule is a candidate for every command, as when the command word
    /// expands. Slow, and right.
    all: bool,
}

/// A range of `Index::text` or `Index::candidates`.
#[derive(Debug, Clone, Copy, Default)]
struct Span {
    start: u32,
    end: u32,
}

impl Span {
    fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// The rules of one command word, as ranges of `Index::candidates`.
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    /// The word, in `Index::text`, and its [`hash`], compared first.
    word: Span,
    hash: u32,
    /// Whether the word runs other commands ([`super::wrappers`]).
    wrapper: bool,
    /// A bit for each second word of the `long` rules (its [`sketch`]):
    /// most commands have none of them, and skip the list.
    seconds: u64,
    /// Of the rules of the command word alone, which match whatever
    /// follows: the one that decides (the strictest, of equals the first),
    /// and the one that decides among those that ask or deny. The others
    /// can never decide.
    short: Option<Candidate>,
    short_strict: Option<Candidate>,
    /// Rules of the command word alone that want exactly that word.
    short_exact: Span,
    /// Rules of two words or more, once for each alternative of their
    /// second word (each candidate's `second`).
    long: Span,
    /// Rules of two words or more that ask or deny: a second word that
    /// expands may become any of theirs (an allow rule never matches it).
    strict_long: Span,
}

/// A rule that may match, with what is needed to judge it without
/// reading the rule itself: most are settled by the index alone.
#[derive(Debug, Clone, Copy)]
pub(super) struct Candidate {
    /// The rule's place in the policy.
    pub(super) at: u32,
    pub(super) decision: Decision,
    exact: bool,
    /// How many positions it has.
    len: u16,
    /// In an entry's `long` list: the alternative of the second word this
    /// copy of the rule is listed under, in `Index::text`.
    second: Span,
}

impl Candidate {
    fn of(at: usize, rule: &Rule) -> Candidate {
        Candidate {
            at: at as u32,
            decision: rule.decision,
            exact: rule.exact,
            len: rule.words.len().min(usize::from(u16::MAX)) as u16,
            second: Span::default(),
        }
    }

    /// Whether it matches for sure once its first `from` positions do.
    pub(super) fn settled(&self, from: usize) -> bool {
        usize::from(self.len) <= from && !self.exact
    }
}

impl Index {
    /// The index of `rules`.
    pub(super) fn of(rules: &[Rule]) -> Index {
        // Rule numbers by command word, in the order the words first come.
        let mut words: Vec<&str> = Vec::new();
        let mut rules_of: Vec<Vec<usize>> = Vec::new();
        let mut index = Index::default();
        let mut every = Vec::new();
        for (at, rule) in rules.iter().enumerate() {
            let Some(first) = rule.words.first() else {
                every.push(Candidate::of(at, rule));
                continue;
            };
            for word in first {
                let number = match index.find(&words, word) {
                    Some(number) => number,
                    None => {
                        words.push(word);
                        rules_of.push(Vec::new());
                        index.grow(&words);
                        words.len() - 1
                    }
                };
                if rules_of[number].last() != Some(&at) {
                    rules_of[number].push(at);
                }
            }
        }
        index.every = index.push_candidates(every);
        for (&word, numbers) in words.iter().zip(&rules_of) {
            let (word_hash, wrapper) = (hash(word), is_wrapper(word));
            let word = index.push_text(word);
            let of = |keep: &dyn Fn(&Rule) -> bool| {
                let kept = numbers.iter().filter(|&&at| keep(&rules[at]));
                kept.map(|&at| Candidate::of(at, &rules[at]))
                    .collect::<Vec<_>>()
            };
            let deciding = |candidates: Vec<Candidate>| {
                // `of` lists them in the order they were added.
                candidates.into_iter().rev().max_by_key(|c| c.decision)
            };
            let short = deciding(of(&|r| r.words.len() == 1 && !r.exact));
            let short_strict = deciding(of(&|r| {
                r.words.len() == 1 && !r.exact && r.decision != Decision::Allow
            }));
            let short_exact = of(&|r| r.words.len() == 1 && r.exact);
            let strict_long = of(&|r| r.words.len() > 1 && r.decision != Decision::Allow);
            let mut long = Vec::new();
            let mut seconds = 0;
            for candidate in of(&|r| r.words.len() > 1) {
                for second in &rules[candidate.at as usize].words[1] {
                    seconds |= sketch(second);
                    let second = index.push_text(second);
                    long.push(Candidate {
                        second,
                        ..candidate
                    });
                }
            }
            let entry = Entry {
                word,
                hash: word_hash,
                wrapper,
                seconds,
                short,
                short_strict,
                short_exact: index.push_candidates(short_exact),
                long: index.push_candidates(long),
                strict_long: index.push_candidates(strict_long),
            };
            index.entries.push(entry);
        }
        let limit = u32::MAX as usize;
        if rules.len() > limit || index.text.len() > limit || index.candidates.len() > limit {
            return Index {
                all: true,
                ..Index::default()
            };
        }
        index
    }

    /// The entry number of `word` while building, the entries' words
    /// being `words`.
    fn find(&self, words: &[&str], word: &str) -> Option<usize> {
        self.probe(hash(word), |number| words[number] == word)
    }

    /// Walks the slots from `word`'s hash until a free one (`None`) or
    /// one whose entry `is_it`.
    fn probe(&self, hash: u32, is_it: impl Fn(usize) -> bool) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut slot = hash as usize & mask;
        loop {
            match self.slots[slot] {
                0 => return None,
                number if is_it(number as usize - 1) => return Some(number as usize - 1),
                _ => slot = (slot + 1) & mask,
            }
        }
    }

    /// Makes room for the last of `words`, and places it.
    fn grow(&mut self, words: &[&str]) {
        if self.slots.len() < 2 * words.len() {
            let size = (4 * words.len()).next_power_of_two();
            self.slots = vec![0; size];
            for (number, word) in words.iter().enumerate() {
                self.place(word, number);
            }
        } else {
            self.place(words[words.len() - 1], words.len() - 1);
        }
    }

    fn place(&mut self, word: &str, number: usize) {
        let mask = self.slots.len() - 1;
        let mut slot = hash(word) as usize & mask;
        while self.slots[slot] != 0 {
            slot = (slot + 1) & mask;
        }
        self.slots[slot] = number as u32 + 1;
    }

    fn push_text(&mut self, word: &str) -> Span {
        let start = self.text.len() as u32;
        self.text.extend_from_slice(word.as_bytes());
        Span {
            start,
            end: self.text.len() as u32,
        }
    }

    fn push_candidates(&mut self, candidates: Vec<Candidate>) -> Span {
        let start = self.candidates.len() as u32;
        self.candidates.extend(candidates);
        Span {
            start,
            end: self.candidates.len() as u32,
        }
    }

    fn text(&self, span: Span) -> &[u8] {
        &self.text[span.range()]
    }

    fn entry(&self, word: &str, hash: u32) -> Option<&Entry> {
        let is_it = |number: usize| {
            let entry = &self.entries[number];
            entry.hash == hash && self.text(entry.word) == word.as_bytes()
        };
        let number = self.probe(hash, is_it)?;
        Some(&self.entries[number])
    }

    /// Calls `consider(candidate, from)` for each rule that may match
    /// `words`, `from` being the count of its leading positions known to
    /// match already; `rules` are the indexed rules. Returns whether the
    /// command word runs other commands, when its entry tells.
    pub(super) fn candidates(
        &self,
        rules: &[Rule],
        words: &[Spelled],
        mut consider: impl FnMut(Candidate, usize),
    ) -> Option<bool> {
        let Some(value) = words[0].literal().filter(|_| !self.all) else {
            // It may expand to any rule's word.
            let all = rules.iter().enumerate();
            all.for_each(|(at, rule)| consider(Candidate::of(at, rule), 0));
            return None;
        };
        let every = &self.candidates[self.every.range()];
        every.iter().for_each(|&c| consider(c, 0));
        let (value_hash, slash) = hash_and_slash(value);
        let entry = self.entry(value, value_hash);
        if let Some(entry) = entry {
            self.candidates_of(entry, words, false, &mut consider);
        }
        // A path: its last part, for ask and deny.
        if slash {
            let base = last_part(value);
            if let Some(entry) = self.entry(base, hash(base)) {
                self.candidates_of(entry, words, true, &mut consider);
            }
        }
        entry.map(|e| e.wrapper)
    }

    /// [`Index::candidates`] within `entry`, only those that ask or deny
    /// if `strict`.
    fn candidates_of(
        &self,
        entry: &Entry,
        words: &[Spelled],
        strict: bool,
        consider: &mut impl FnMut(Candidate, usize),
    ) {
        let kept = |c: &&Candidate| !strict || c.decision != Decision::Allow;
        let list = |span: Span| self.candidates[span.range()].iter().filter(kept);
        if let Some(c) = if strict {
            entry.short_strict
        } else {
            entry.short
        } {
            consider(c, 1);
        }
        list(entry.short_exact).for_each(|&c| consider(c, 1));
        match words.get(1).map(Spelled::literal) {
            None => {}
            Some(Some(second)) if entry.seconds & sketch(second) != 0 => list(entry.long)
                .filter(|c| self.text(c.second) == second.as_bytes())
                .for_each(|&c| consider(c, 2)),
            Some(Some(_)) => {}
            Some(None) => list(entry.strict_long).for_each(|&c| consider(c, 1)),
        }
    }
}

/// One bit of 64 for a word, from its length and its first and last
/// bytes: cheap, and enough to tell most second words from the few that
/// rules name.
fn sketch(word: &str) -> u64 {
    let bytes = word.as_bytes();
    let (first, last) = (bytes.first(), bytes.last());
    let mix =
        bytes.len() * 7 + usize::from(*first.unwrap_or(&0)) * 3 + usize::from(*last.unwrap_or(&0));
    1 << (mix % 64)
}

/// A hash of a word eight bytes at a time (a multiply and a rotate each,
/// as rustc's FxHash): words are short. The slots hold the host's rules,
/// so a line can only miss, never crowd them.
fn hash(word: &str) -> u32 {
    hash_and_slash(word).0
}

/// [`hash`], and whether the word holds a `/`, in one pass of few
/// branches: this runs for every simple command.
fn hash_and_slash(word: &str) -> (u32, bool) {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const SLASHES: u64 = u64::from_ne_bytes([b'/'; 8]);
    let mut h = word.len() as u64;
    let mut slash = false;
    let mut add = |chunk: u64| {
        h = (h.rotate_left(5) ^ chunk).wrapping_mul(0x517c_c1b7_2722_0a95);
        // A zero byte in `chunk ^ SLASHES` is a `/` in `chunk`.
        let x = chunk ^ SLASHES;
        slash |= x.wrapping_sub(ONES) & !x & HIGHS != 0;
    };
    let bytes = word.as_bytes();
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        add(u64::from_le_bytes(chunk.try_into().unwrap_or_default()));
    }
    // The last bytes, padded with NULs (never a `/`): by two loads of
    // four that may overlap, or bytes one by one under four.
    let rest = chunks.remainder();
    let n = rest.len();
    let four = |at: usize| {
        u64::from(u32::from_le_bytes(
            rest[at..at + 4].try_into().unwrap_or_default(),
        ))
    };
    let tail = if n >= 4 {
        four(0) | four(n - 4) << 32
    } else {
        rest.iter().fold(0, |sum, &b| sum << 8 | u64::from(b))
    };
    if n > 0 {
        add(tail);
    }
    // The high bits are the well mixed ones.
    ((h >> 32) as u32, slash)
}

/// The index of a policy's rules, built on the first judging after a
/// change (rules are added one by one; building on each would cost the
/// square of their count). It is derived from the rules, so two policies
/// with the same rules are equal whether or not theirs is built yet.
#[derive(Clone, Default)]
pub(super) struct Lazy(OnceLock<Index>);

impl Lazy {
    /// The index of `rules`, which must be the rules it was last
    /// [`reset`](Self::reset) for.
    pub(super) fn get(&self, rules: &[Rule]) -> &Index {
        self.0.get_or_init(|| Index::of(rules))
    }

    /// Forgets the index: the rules changed.
    pub(super) fn reset(&mut self) {
        self.0 = OnceLock::new();
    }
}

impl PartialEq for Lazy {
    fn eq(&self, _: &Lazy) -> bool {
        true
    }
}

impl Eq for Lazy {}

impl std::fmt::Debug for Lazy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "built"
        } else {
            "not built"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slash_is_seen_at_every_place_in_words_of_every_length() {
        for len in 0..=26 {
            let plain = "é".repeat(len / 2) + &"x".repeat(len % 2);
            assert!(!hash_and_slash(&plain).1, "{plain:?}");
            for at in 0..len {
                let mut bytes = vec![b'a'; len];
                bytes[at] = b'/';
                let word = String::from_utf8(bytes).unwrap();
                assert!(hash_and_slash(&word).1, "{word:?}");
            }
        }
    }

    #[test]
    fn every_command_word_of_many_is_found_and_no_other() {
        let rules: Vec<Rule> = (0..3000)
            .map(|n| Rule::allow(&format!("cmd{n} sub{}", n % 7)).unwrap())
            .collect();
        let index = Index::of(&rules);
        assert!(index.slots.len() >= 2 * index.entries.len());
        for n in 0..3000 {
            let word = format!("cmd{n}");
            let entry = index.entry(&word, hash(&word)).expect("indexed");
            assert_eq!(index.text(entry.word), word.as_bytes());
        }
        for word in ["cmd3000", "cmd", "", "cmd1/", "sub1"] {
            assert!(index.entry(word, hash(word)).is_none(), "{word}");
        }
    }
}
