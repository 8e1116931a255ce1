//! Words: quoting, expansions, substitutions, arithmetic and ANSI-C quotes.

use super::rules::*;
use super::*;

impl Parser {
    // ----- words ------------------------------------------------------------------------

    /// One word at the cursor, or None when an operator or the end is there.
    pub(super) fn scan_word(&mut self, mode: Subscript) -> PResult<Option<Word>> {
        let start = self.pos;
        let mut w = Word::new();
        // `brace`: an unquoted `{` seen; `list`: and after it an unquoted `,` or `..`,
        // without which bash leaves braces as they are (`{}`, `{{x}}`, `{a}` are literal).
        let (mut bracket, mut brace, mut list) = (false, false, false);
        let mut name_so_far = true;
        while let Some(c) = self.peek() {
            let at_start = self.pos == start;
            let subscript = match mode {
                Subscript::Plain => false,
                Subscript::AfterName => name_so_far && !at_start,
                Subscript::Leading => at_start,
            };
            if is_meta(c) && !self.at_word() {
                break;
            }
            name_so_far &= if at_start {
                is_name_start(c)
            } else {
                is_name_char(c)
            };
            match c {
                '[' if subscript => self.scan_subscript(&mut w)?,
                '\\' => self.scan_backslash(&mut w)?,
                '\'' => self.scan_single(&mut w)?,
                '"' => self.scan_dquote(&mut w)?,
                '$' => self.scan_dollar(&mut w, false)?,
                '`' => self.scan_backtick(&mut w, false)?,
                '<' | '>' => self.scan_procsub(&mut w)?,
                _ => {
                    // Unquoted characters that make the word expand to something else.
                    let expands = match c {
                        '*' | '?' => true,
                        ']' => bracket,
                        '}' => brace && list,
                        '~' => at_start,
                        _ => false,
                    };
                    bracket |= c == '[';
                    list |= brace && (c == ',' || (c == '.' && self.peek_at(1) == Some('.')));
                    brace |= c == '{';
                    if expands {
                        w.expands();
                    }
                    w.value.push(c);
                    self.advance(1);
                }
            }
        }
        if self.pos == start {
            return Ok(None);
        }
        w.raw = self.text_from(start);
        Ok(Some(w))
    }

    /// `name[…]` where bash may read the brackets as one subscript or as glob characters.
    /// The two readings split the line the same way unless the brackets hold an unquoted
    /// blank or operator, so such a subscript is refused rather than guessed. Quoted
    /// parts of a subscript still expand (bash evaluates it arithmetically).
    pub(super) fn scan_subscript(&mut self, w: &mut Word) -> PResult<()> {
        self.advance(1);
        let start = self.pos;
        w.expands();
        let mut depth = 0usize;
        loop {
            let c = self.peek().ok_or(ParseError::SYNTAX)?;
            match c {
                '[' => depth += 1,
                ']' if depth == 0 => {
                    self.forbidden_in_arithmetic(start, w);
                    self.advance(1);
                    return Ok(());
                }
                ']' => depth -= 1,
                _ if is_meta(c) => return Err(ParseError::SUBSCRIPT),
                _ => {
                    self.scan_embedded(c, w)?;
                    continue;
                }
            }
            self.advance(1);
        }
    }

    /// `\x` is `x`. A continuation is accepted only where it ends the word: inside one,
    /// bash joins the pieces before reading them (`$\<newline>(cmd)` is a substitution).
    pub(super) fn scan_backslash(&mut self, w: &mut Word) -> PResult<()> {
        match self.peek_at(1) {
            Some('\n') if !matches!(self.peek_at(2), None | Some(' ' | '\t' | '\n')) => {
                return Err(ParseError::CONTINUATION)
            }
            Some('\n') => {}
            Some(c) => w.value.push(c),
            None => w.value.push('\\'),
        }
        self.advance(2);
        Ok(())
    }

    pub(super) fn scan_single(&mut self, w: &mut Word) -> PResult<()> {
        let end = self
            .find_from(self.pos + 1, '\'')
            .ok_or(ParseError::SYNTAX)?;
        w.value
            .extend(self.chars.get(self.pos + 1..end).unwrap_or_default());
        self.pos = end + 1;
        Ok(())
    }

    pub(super) fn scan_dquote(&mut self, w: &mut Word) -> PResult<()> {
        self.advance(1);
        loop {
            match self.peek().ok_or(ParseError::SYNTAX)? {
                '"' => {
                    self.advance(1);
                    return Ok(());
                }
                '\\' => match self.peek_at(1) {
                    Some('\n') if self.continuation_after_dollar() => {
                        return Err(ParseError::CONTINUATION)
                    }
                    Some('\n') => self.advance(2),
                    Some(c @ ('$' | '`' | '"' | '\\')) => {
                        w.value.push(c);
                        self.advance(2);
                    }
                    _ => {
                        w.value.push('\\');
                        self.advance(1);
                    }
                },
                '$' => self.scan_dollar(w, true)?,
                '`' => self.scan_backtick(w, true)?,
                c => {
                    w.value.push(c);
                    self.advance(1);
                }
            }
        }
    }

    /// The substitutions of text that expands like a double-quoted string without the
    /// quotes (an expanded here-document body, a quoted span in arithmetic).
    pub(super) fn scan_text(&mut self, text: Vec<char>) -> PResult<Vec<Check>> {
        let mut sub = self.sub(text);
        let mut w = Word::new();
        let result = sub.nested(|p| {
            while let Some(c) = p.peek() {
                match c {
                    '\\' if p.peek_at(1) == Some('\n') && p.continuation_after_dollar() => {
                        return Err(ParseError::CONTINUATION)
                    }
                    '\\' => p.advance(2),
                    '$' => p.scan_dollar(&mut w, true)?,
                    '`' => p.scan_backtick(&mut w, true)?,
                    _ => p.advance(1),
                }
            }
            Ok(())
        });
        self.retries = sub.retries;
        result.map(|()| w.inner)
    }

    /// `$'…'`, decoded so that `$'\x72m'` is seen as `rm`. Decoded bytes that are not
    /// characters make the word non-literal. A NUL ends the string's value where it
    /// stands, as in bash (`$'a\0b'c` is `ac`): still one literal word, which no
    /// splitting touches (`read -d $'\0'`).
    pub(super) fn scan_ansi(&mut self, w: &mut Word) -> PResult<()> {
        self.advance(2);
        let mut cut = None;
        loop {
            match self.peek().ok_or(ParseError::SYNTAX)? {
                '\'' => {
                    self.advance(1);
                    if let Some(at) = cut {
                        w.value.truncate(at);
                    }
                    return Ok(());
                }
                '\\' => {
                    self.advance(1);
                    let at = w.value.len();
                    if self.ansi_escape(w)? && cut.is_none() {
                        cut = Some(at);
                    }
                }
                c => {
                    w.value.push(c);
                    self.advance(1);
                }
            }
        }
    }

    /// Decodes one escape of `$'…'` into `w`; `true` when it was a NUL (nothing is
    /// added for it).
    pub(super) fn ansi_escape(&mut self, w: &mut Word) -> PResult<bool> {
        let c = self.peek().ok_or(ParseError::SYNTAX)?;
        self.advance(1);
        let simple = match c {
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '?' => Some(c),
            _ => None,
        };
        if let Some(decoded) = simple {
            w.value.push(decoded);
            return Ok(false);
        }
        let (code, byte) = match c {
            '0'..='7' => (self.take_digits(8, 2, c.to_digit(8)), true),
            'x' => (self.take_digits(16, 2, None), true),
            'u' => (self.take_digits(16, 4, None), false),
            'U' => (self.take_digits(16, 8, None), false),
            // bash ends the string at a quote even right after `\c`, so that quote (or a
            // backslash) is not taken as the control character.
            'c' => match self.peek().ok_or(ParseError::SYNTAX)? {
                '\'' | '\\' => (Some(0), false),
                x => {
                    self.advance(1);
                    (Some(u32::from(x) & 0x1f), false)
                }
            },
            _ => (None, false),
        };
        let Some(code) = code else {
            w.value.push('\\'); // an unknown escape stays as written
            w.value.push(c);
            return Ok(false);
        };
        match char::from_u32(code) {
            Some('\0') => return Ok(true),
            Some(ch) if !(byte && code >= 0x80) => w.value.push(ch),
            _ => w.expands(),
        }
        Ok(false)
    }

    pub(super) fn take_digits(
        &mut self,
        radix: u32,
        max: usize,
        first: Option<u32>,
    ) -> Option<u32> {
        let mut value = first;
        for _ in 0..max {
            let Some(d) = self.peek().and_then(|c| c.to_digit(radix)) else {
                break;
            };
            value = Some(value.unwrap_or(0).wrapping_mul(radix).wrapping_add(d));
            self.advance(1);
        }
        value
    }
}

impl Parser {
    /// Refuses arithmetic text from `start` to the cursor that assigns a forbidden
    /// variable (`$((PATH=0))`, `a[IFS=1]`, `${BASH_ENV:=p}`).
    pub(super) fn forbidden_in_arithmetic(&self, start: usize, w: &mut Word) {
        let body: String = self
            .chars
            .get(start..self.pos)
            .unwrap_or_default()
            .iter()
            .collect();
        if let Some(name) = assigned_in_arithmetic(&body) {
            w.inner.push(Check::Refuse(Denial::ForbiddenVariable {
                text: format!("{name}=…"),
                name,
                change: Change::Assign,
            }));
        }
    }
}
