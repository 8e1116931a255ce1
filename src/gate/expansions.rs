//! Expansions inside words: `$…`, `$((…))`, `$(…)`, process substitutions,
//! parameters, backticks and arithmetic.

use super::rules::*;
use super::*;

impl Parser {
    /// Everything that starts with `$`. Only `$'…'` keeps a word literal; a `$` that
    /// starts nothing is an ordinary character. `in_dq`: inside double quotes (or text
    /// read like them), where `$'` is not a quote.
    pub(super) fn scan_dollar(&mut self, w: &mut Word, in_dq: bool) -> PResult<()> {
        match self.peek_at(1) {
            Some('(') if self.peek_at(2) == Some('(') => return self.scan_dollar_arith(w, in_dq),
            Some('(') => {
                self.advance(2);
                return self.nested_list(w, in_dq);
            }
            Some('{') => return self.scan_param(w),
            Some('[') => {
                self.advance(2);
                if !self.scan_arith('[', ']', false, w)? {
                    return Err(ParseError::ARITHMETIC);
                }
            }
            Some('\'') if !in_dq => return self.scan_ansi(w),
            // `$"…"` is translated through the catalogs of the domain `TEXTDOMAIN`
            // names, and the translation is expanded; with no domain, nothing is
            // translated. A gated line cannot name one (`TEXTDOMAIN` is forbidden),
            // so the string is read as `"…"`.
            Some('"') if !in_dq => {
                self.advance(1);
                return self.scan_dquote(w);
            }
            Some(c) if is_name_start(c) => {
                self.advance(1);
                while self.peek().is_some_and(is_name_char) {
                    self.advance(1);
                }
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => self.advance(2),
            _ => {
                w.value.push('$');
                self.advance(1);
                return Ok(());
            }
        }
        w.expands();
        Ok(())
    }

    /// `$((…))`, or, when it is not arithmetic after all, `$(` followed by a subshell.
    pub(super) fn scan_dollar_arith(&mut self, w: &mut Word, in_dq: bool) -> PResult<()> {
        let start = self.pos;
        self.advance(3);
        let mut arith = Word::new();
        if self.scan_arith('(', ')', true, &mut arith)? {
            w.inner.append(&mut arith.inner);
            w.expands();
            return Ok(());
        }
        self.spend_retry()?;
        let bash_end = self.paren_extent(start + 2)?;
        self.pos = start + 2;
        self.nested_list(w, in_dq)?;
        if self.pos != bash_end {
            return Err(ParseError::ARITHMETIC);
        }
        Ok(())
    }

    /// Where bash ends a `$((…)` that is not arithmetic: it matches the parentheses as
    /// text, skipping quotes and substitutions but not comments, `case` patterns or
    /// here-documents. When that is not where the command list ends, the two readings
    /// of everything after it differ, so the caller refuses the line.
    pub(super) fn paren_extent(&mut self, from: usize) -> PResult<usize> {
        let saved = self.pos;
        self.pos = from;
        let mut scratch = Word::new();
        let mut depth = 1usize;
        let end = loop {
            let c = self.peek().ok_or(ParseError::SYNTAX)?;
            match c {
                '(' => depth += 1,
                ')' if depth == 1 => break self.pos + 1,
                ')' => depth -= 1,
                _ => {
                    self.scan_embedded(c, &mut scratch)?;
                    continue;
                }
            }
            self.advance(1);
        };
        self.pos = saved;
        Ok(end)
    }

    pub(super) fn scan_procsub(&mut self, w: &mut Word) -> PResult<()> {
        self.advance(2);
        self.nested_list(w, false)
    }

    /// The command list of `$(…)`, `<(…)` or `>(…)` up to its `)`, read recursively as
    /// bash 5 does (so `case` patterns and comments inside work).
    pub(super) fn nested_list(&mut self, w: &mut Word, in_dq: bool) -> PResult<()> {
        let mut inner = Vec::new();
        self.in_substitution += 1;
        self.in_quoted_substitution += usize::from(in_dq);
        self.own_heredocs(|p| p.parse_list(&mut inner))?;
        self.in_substitution -= 1;
        self.in_quoted_substitution -= usize::from(in_dq);
        self.expect(')')?;
        w.inner.append(&mut inner);
        w.expands();
        Ok(())
    }

    /// Arithmetic text after its opening bracket, up to `close` (doubled when `double`).
    /// Names in it are variables, not commands, but its substitutions run. Ok(false):
    /// a lone `)` showed this was not arithmetic (`$((cmd) …)`).
    pub(super) fn scan_arith(
        &mut self,
        open: char,
        close: char,
        double: bool,
        w: &mut Word,
    ) -> PResult<bool> {
        let start = self.pos;
        self.nested(|p| {
            let mut depth = 0usize;
            loop {
                let c = p.peek().ok_or(ParseError::SYNTAX)?;
                if c == open {
                    depth += 1;
                } else if c == close && depth > 0 {
                    depth -= 1;
                } else if c == close {
                    p.forbidden_in_arithmetic(start, w);
                    if !double {
                        p.advance(1);
                        return Ok(true);
                    }
                    if p.peek_at(1) != Some(close) {
                        return Ok(false);
                    }
                    let body = p.chars.get(start..p.pos).unwrap_or_default();
                    if !plain_arithmetic(body) {
                        return Err(ParseError::ARITHMETIC);
                    }
                    p.advance(2);
                    return Ok(true);
                } else {
                    p.scan_embedded(c, w)?;
                    continue;
                }
                p.advance(1);
            }
        })
    }

    /// One element of text where quotes delimit but everything still expands, as in
    /// arithmetic, subscripts and double-quoted `${…}`: even `'$(cmd)'` runs there.
    pub(super) fn scan_embedded(&mut self, c: char, w: &mut Word) -> PResult<()> {
        match c {
            '\\' if self.peek_at(1) == Some('\n') => return Err(ParseError::CONTINUATION),
            '\\' => self.advance(2),
            '\'' => return self.scan_expanding_single(w),
            '"' => return self.scan_dquote(w),
            // bash translates `$"…"` here too, and evaluates the translation with the
            // rest: refused rather than followed.
            '$' if self.peek_at(1) == Some('"') => return Err(ParseError::LOCALE),
            '$' if self.peek_at(1) == Some('\'') => {
                // `$'…'` delimits with its escapes; its text is evaluated like the rest.
                let mut quoted = Word::new();
                self.scan_ansi(&mut quoted)?;
                let checks = self.scan_text(quoted.value.chars().collect())?;
                w.inner.extend(checks);
            }
            '$' => return self.scan_dollar(w, true),
            '`' => return self.scan_backtick(w, true),
            _ => self.advance(1),
        }
        Ok(())
    }

    pub(super) fn scan_expanding_single(&mut self, w: &mut Word) -> PResult<()> {
        let start = self.pos + 1;
        let end = self.find_from(start, '\'').ok_or(ParseError::SYNTAX)?;
        let text = self.chars.get(start..end).unwrap_or_default().to_vec();
        self.pos = end + 1;
        let checks = self.scan_text(text)?;
        w.inner.extend(checks);
        Ok(())
    }

    /// `${…}`. Quotes inside delimit, but do not hide substitutions: bash evaluates
    /// subscripts and offsets arithmetically, so `${a['$(cmd)']}` runs cmd.
    pub(super) fn scan_param(&mut self, w: &mut Word) -> PResult<()> {
        if matches!(self.peek_at(2), Some(' ' | '\t' | '\n' | '|')) {
            return Err(ParseError::BRACE_COMMAND); // bash 5.3 runs `${ cmd; }` and `${| cmd; }`
        }
        self.advance(2);
        w.expands();
        let start = self.pos;
        self.nested(|p| loop {
            match p.peek().ok_or(ParseError::SYNTAX)? {
                '}' => return Ok(()),
                // bash reads a process substitution here by rules of its own
                '<' | '>' if p.peek_at(1) == Some('(') => return Err(ParseError::UNSUPPORTED),
                c => p.scan_embedded(c, w)?,
            }
        })?;
        let body = self.chars.get(start..self.pos).unwrap_or_default();
        if body.windows(2).any(|pair| pair == ['@', 'P']) {
            return Err(ParseError::PROMPT); // prompt expansion runs substitutions in the value
        }
        if indirect_assignment(body) {
            // `${!r:=v}` assigns to the variable whose name r holds.
            w.inner.push(Check::Refuse(Denial::NotLiteralName {
                text: format!("${{{}}}", body.iter().collect::<String>()),
            }));
        }
        // `${NAME:=…}`, and arithmetic in offsets and subscripts.
        self.forbidden_in_arithmetic(start, w);
        self.advance(1);
        Ok(())
    }

    /// `` `…` ``: the body, with its backslash escapes undone, is parsed as a line.
    pub(super) fn scan_backtick(&mut self, w: &mut Word, in_dq: bool) -> PResult<()> {
        self.advance(1);
        let mut body = Vec::new();
        loop {
            match (self.peek().ok_or(ParseError::SYNTAX)?, self.peek_at(1)) {
                ('`', _) => break,
                ('\\', Some(n)) => {
                    let escapes = matches!(n, '$' | '`' | '\\') || (in_dq && n == '"');
                    if !escapes {
                        body.push('\\');
                    }
                    body.push(n);
                    self.advance(2);
                }
                ('\\', None) => return Err(ParseError::SYNTAX),
                (c, _) => {
                    body.push(c);
                    self.advance(1);
                }
            }
        }
        self.advance(1);
        let mut sub = self.sub(body);
        let result = sub.parse_program();
        self.retries = sub.retries;
        w.inner.extend(result?);
        w.expands();
        Ok(())
    }
}

/// `${!NAME=…}` or `${!NAME:=…}`.
fn indirect_assignment(body: &[char]) -> bool {
    let Some(rest) = body.strip_prefix(&['!']) else {
        return false;
    };
    let name_len = rest.iter().take_while(|&&c| is_name_char(c)).count();
    let rest = &rest[name_len..];
    name_len > 0 && (rest.starts_with(&['=']) || rest.starts_with(&[':', '=']))
}
