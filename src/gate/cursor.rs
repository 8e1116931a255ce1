//! The parser's cursor, blanks, comments, newlines and here-document bodies.

use super::rules::*;
use super::*;

impl Parser {
    // ----- cursor helpers -------------------------------------------------------------

    pub(super) fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    pub(super) fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    /// Moves on, never past the end, so slices taken from `pos` cannot panic.
    pub(super) fn advance(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.chars.len());
    }

    pub(super) fn text_from(&self, start: usize) -> String {
        self.chars
            .get(start..self.pos)
            .map(|s| s.iter().collect())
            .unwrap_or_default()
    }

    pub(super) fn find_from(&self, start: usize, c: char) -> Option<usize> {
        let rest = self.chars.get(start..)?;
        rest.iter().position(|&x| x == c).map(|i| start + i)
    }

    /// Operators and keywords are ASCII, so their length in bytes is in characters.
    pub(super) fn looking_at(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    pub(super) fn eat(&mut self, s: &str) -> bool {
        let found = self.looking_at(s);
        if found {
            self.advance(s.len());
        }
        found
    }

    pub(super) fn expect(&mut self, c: char) -> PResult<()> {
        if self.peek() == Some(c) {
            self.advance(1);
            Ok(())
        } else {
            Err(ParseError::SYNTAX)
        }
    }

    /// A reserved word is one only as a whole, unquoted word.
    pub(super) fn at_keyword(&self, k: &str) -> bool {
        let len = k.len();
        self.looking_at(k) && self.peek_at(len).map_or(true, is_meta)
    }

    pub(super) fn eat_keyword(&mut self, k: &str) -> bool {
        let found = self.at_keyword(k);
        if found {
            self.advance(k.len());
        }
        found
    }

    pub(super) fn expect_keyword(&mut self, k: &str) -> PResult<()> {
        if self.eat_keyword(k) {
            Ok(())
        } else {
            Err(ParseError::SYNTAX)
        }
    }

    /// Whether a word starts here (`<(`/`>(` start one although `<`/`>` are operators).
    pub(super) fn at_word(&self) -> bool {
        match self.peek() {
            None => false,
            Some('<' | '>') => self.peek_at(1) == Some('('),
            Some(c) => !is_meta(c),
        }
    }

    pub(super) fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_DEPTH {
            return Err(ParseError::DEPTH);
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    pub(super) fn spend_retry(&mut self) -> PResult<()> {
        self.retries += 1;
        if self.retries > MAX_RETRIES {
            Err(ParseError::ARITHMETIC)
        } else {
            Ok(())
        }
    }

    /// Runs `f` for the body of a substitution, which must read its own here-documents:
    /// one left pending at its `)` would have its body somewhere bash and we disagree on.
    pub(super) fn own_heredocs<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> PResult<T>,
    ) -> PResult<T> {
        let saved = mem::take(&mut self.pending);
        let saved_flag = self.outer_pending;
        self.outer_pending = saved_flag || !saved.is_empty();
        let result = f(self)?;
        if !self.pending.is_empty() {
            return Err(ParseError::HEREDOC_PLACE);
        }
        self.pending = saved;
        self.outer_pending = saved_flag;
        Ok(result)
    }

    // ----- blanks, comments, newlines ---------------------------------------------------

    /// Blanks between tokens, and backslash-newline continuations that stand for one.
    /// bash removes a continuation before it reads tokens, so one between two
    /// characters joins them (`&\<newline>&` is `&&`); such a one is left for the word
    /// scanner, which refuses it.
    pub(super) fn skip_blanks(&mut self) {
        loop {
            match (self.peek(), self.peek_at(1)) {
                (Some(' ' | '\t'), _) => self.advance(1),
                (Some('\\'), Some('\n')) if self.continuation_separates() => self.advance(2),
                _ => return,
            }
        }
    }

    /// Whether the continuation at the cursor has a blank (or the edge of a line) on
    /// one side, so that removing it joins nothing.
    pub(super) fn continuation_separates(&self) -> bool {
        let before = self.pos.checked_sub(1).and_then(|i| self.chars.get(i));
        let after = self.peek_at(2);
        matches!(before, None | Some(' ' | '\t' | '\n'))
            || matches!(after, None | Some(' ' | '\t' | '\n'))
    }

    /// A continuation inside quotes or text joins its neighbours; after a `$` that
    /// would make an expansion out of what follows (`"$\<newline>(cmd)"` runs cmd).
    pub(super) fn continuation_after_dollar(&self) -> bool {
        self.pos.checked_sub(1).and_then(|i| self.chars.get(i)) == Some(&'$')
    }

    /// A `#` at the start of a token comments out the rest of the line. A backslash at
    /// its end does not continue it (bash runs the next line). Inside `$(…)`, bash before
    /// 5.2 knows a comment only after a blank or a newline, and none at all inside
    /// `"$(…)"`, so `$(a;# )` ends at that `)` for it; such comments are refused.
    pub(super) fn skip_comment(&mut self) -> PResult<()> {
        if self.peek() != Some('#') {
            return Ok(());
        }
        let before = self.pos.checked_sub(1).and_then(|i| self.chars.get(i));
        let after_blank = matches!(before, Some(' ' | '\t' | '\n'));
        let opens = self.pos >= 2 && self.chars.get(self.pos - 1) == Some(&'(') && {
            matches!(self.chars.get(self.pos - 2), Some('$' | '<' | '>'))
        };
        let quoted = self.in_quoted_substitution > 0; // no comments at all in `"$(…)"`
        if quoted || (self.in_substitution > 0 && !after_blank && !opens) {
            return Err(ParseError::OLD_BASH);
        }
        while !matches!(self.peek(), None | Some('\n')) {
            self.advance(1);
        }
        Ok(())
    }

    pub(super) fn skip_linebreaks(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        loop {
            self.skip_blanks();
            self.skip_comment()?;
            if self.peek() != Some('\n') {
                return Ok(());
            }
            self.newline(out)?;
        }
    }

    /// Consumes a newline token; bodies of pending here-documents start right after it.
    pub(super) fn newline(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        if self.outer_pending {
            return Err(ParseError::HEREDOC_PLACE);
        }
        self.advance(1);
        for doc in mem::take(&mut self.pending) {
            self.read_heredoc(&doc, out)?;
        }
        Ok(())
    }

    /// Skips the body lines up to the delimiter line. An unexpanded body is data; an
    /// expanded one runs its substitutions, so those are checked.
    pub(super) fn read_heredoc(&mut self, doc: &Heredoc, out: &mut Vec<Check>) -> PResult<()> {
        let mut body = Vec::new();
        loop {
            let mut line = self.heredoc_line(doc.expand)?;
            if doc.strip_tabs {
                let tabs = line.iter().take_while(|&&c| c == '\t').count();
                line.drain(..tabs);
            }
            if line == doc.delim {
                break;
            }
            if self.in_substitution > 0 && line.starts_with(&doc.delim) {
                // Inside `$(…)` bash 5.2 may end the body at such a line (`EOF )`) and
                // read the rest of it as commands.
                return Err(ParseError::OLD_BASH);
            }
            body.extend(line);
            body.push('\n');
        }
        if doc.expand {
            let checks = self.scan_text(body)?;
            out.extend(checks);
        }
        Ok(())
    }

    /// One line of a here-document body. In an expanded body bash joins a line ending
    /// in an unescaped backslash to the next one before comparing it with the delimiter
    /// (`EO\<newline>F` ends the body), so this does too.
    pub(super) fn heredoc_line(&mut self, expand: bool) -> PResult<Vec<char>> {
        if self.pos >= self.chars.len() {
            return Err(ParseError::SYNTAX); // no delimiter line
        }
        let mut line = Vec::new();
        loop {
            let start = self.pos;
            let end = self.find_from(start, '\n').unwrap_or(self.chars.len());
            self.pos = (end + 1).min(self.chars.len());
            line.extend_from_slice(self.chars.get(start..end).unwrap_or_default());
            let backslashes = line.iter().rev().take_while(|&&c| c == '\\').count();
            if !expand || backslashes % 2 == 0 || end == self.chars.len() {
                return Ok(line);
            }
            line.pop();
        }
    }
}
