//! Compound commands: `if`, `while`/`until`, `for`, `case`, groups,
//! subshells and `[[ … ]]`.

use super::rules::*;
use super::*;

impl Parser {
    // ----- compound commands ------------------------------------------------------------

    pub(super) fn parse_if(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        self.advance(2);
        self.parse_list(out)?;
        self.expect_keyword("then")?;
        self.parse_list(out)?;
        while self.eat_keyword("elif") {
            self.parse_list(out)?;
            self.expect_keyword("then")?;
            self.parse_list(out)?;
        }
        if self.eat_keyword("else") {
            self.parse_list(out)?;
        }
        self.expect_keyword("fi")
    }

    pub(super) fn parse_while(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        self.advance(5); // `while` and `until` are both five letters
        self.parse_list(out)?;
        self.do_group(out)
    }

    pub(super) fn do_group(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        self.skip_linebreaks(out)?;
        self.expect_keyword("do")?;
        self.parse_list(out)?;
        self.expect_keyword("done")
    }

    /// `for name [in words]; do …; done`, `for ((…)); do …; done`, and `select`. The loop
    /// variable is assigned, so it may not be a forbidden variable either.
    pub(super) fn parse_for(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        let keyword = if self.eat_keyword("for") {
            "for"
        } else {
            self.advance(6);
            "select"
        };
        self.skip_blanks();
        if self.eat("((") {
            let mut arith = Word::new();
            if !self.scan_arith('(', ')', true, &mut arith)? {
                return Err(ParseError::SYNTAX);
            }
            out.append(&mut arith.inner);
            self.skip_blanks();
            self.eat(";");
            return self.for_body(out);
        }
        let name = self
            .scan_word(Subscript::AfterName)?
            .ok_or(ParseError::SYNTAX)?;
        if !is_name(&name.raw) {
            return Err(ParseError::SYNTAX);
        }
        let text = format!("{keyword} {}", name.raw);
        if is_forbidden_name(&name.raw) {
            out.push(Check::Refuse(Denial::ForbiddenVariable {
                name: name.raw.clone(),
                text: text.clone(),
                change: Change::Assign,
            }));
        }
        out.push(Check::LoopVariable {
            name: name.raw,
            text,
        });
        self.skip_linebreaks(out)?;
        if self.eat_keyword("in") {
            self.word_list(out)?;
        } else {
            self.skip_blanks();
            self.eat(";");
        }
        self.for_body(out)
    }

    /// The body of `for` and `select`: `do …; done`, or a `{ …; }` group, which
    /// bash's grammar takes there too (`for i in 1 2; { echo $i; }`).
    fn for_body(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        self.skip_linebreaks(out)?;
        if self.at_keyword("{") {
            return self.parse_group(out);
        }
        self.do_group(out)
    }

    /// The words after `in`, up to and including `;`, or up to a newline.
    pub(super) fn word_list(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        loop {
            self.skip_blanks();
            self.skip_comment()?;
            match self.peek() {
                None | Some('\n') => return Ok(()),
                Some(';') => {
                    self.advance(1);
                    return Ok(());
                }
                _ => {
                    let word = self
                        .scan_word(Subscript::AfterName)?
                        .ok_or(ParseError::SYNTAX)?;
                    out.extend(word.inner);
                }
            }
        }
    }

    /// `case` is refused inside `$(…)`: bash before 5.2 finds the end of a substitution
    /// by scanning its text, and may take the `)` of a pattern for it.
    pub(super) fn parse_case(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        if self.in_substitution > 0 {
            return Err(ParseError::OLD_BASH);
        }
        self.advance(4);
        self.skip_blanks();
        let subject = self
            .scan_word(Subscript::AfterName)?
            .ok_or(ParseError::SYNTAX)?;
        out.extend(subject.inner);
        self.skip_linebreaks(out)?;
        self.expect_keyword("in")?;
        loop {
            self.skip_linebreaks(out)?;
            if self.eat_keyword("esac") {
                return Ok(());
            }
            self.eat("(");
            self.case_patterns(out)?;
            self.parse_list(out)?;
            let ended = self.eat(";;&") || self.eat(";;") || self.eat(";&");
            if !ended && !self.at_keyword("esac") {
                return Err(ParseError::SYNTAX);
            }
        }
    }

    /// `pat | pat )`: patterns are words whose substitutions run.
    pub(super) fn case_patterns(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        loop {
            self.skip_blanks();
            let pattern = self
                .scan_word(Subscript::AfterName)?
                .ok_or(ParseError::SYNTAX)?;
            out.extend(pattern.inner);
            self.skip_blanks();
            if self.eat(")") {
                return Ok(());
            }
            if !self.eat("|") {
                return Err(ParseError::SYNTAX);
            }
        }
    }

    pub(super) fn parse_group(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        self.advance(1);
        self.parse_list(out)?;
        self.expect_keyword("}")
    }

    /// `( list )`, or the arithmetic command `(( … ))`. Like bash, `((cmd) …)` that turns
    /// out not to be arithmetic is re-read as nested subshells.
    pub(super) fn parse_paren(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        if self.peek_at(1) == Some('(') {
            let start = self.pos;
            self.advance(2);
            let mut arith = Word::new();
            if self.scan_arith('(', ')', true, &mut arith)? {
                out.append(&mut arith.inner);
                return Ok(());
            }
            self.spend_retry()?;
            self.pos = start;
        }
        self.advance(1);
        self.parse_list(out)?;
        self.expect(')')
    }

    /// `[[ … ]]` as the command word `[[` plus operands whose substitutions are checked.
    /// Operators are skipped; a newline is a blank there, as bash reads it; a comment or
    /// `;` inside is refused rather than followed through bash's special rules for this
    /// construct, and so is a newline while a here-document's body is due.
    pub(super) fn parse_cond(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        self.advance(2);
        out.push(Check::Command(vec![Spelled::plain("[[")]));
        loop {
            self.skip_blanks();
            match self.peek() {
                Some('\n') if self.pending.is_empty() && !self.outer_pending => self.advance(1),
                None | Some('#' | ';' | '\n') => return Err(ParseError::COND),
                Some(_) if self.at_word() => {
                    let word = self
                        .scan_word(Subscript::AfterName)?
                        .ok_or(ParseError::SYNTAX)?;
                    if word.raw == "]]" {
                        return Ok(());
                    }
                    let hidden = self.subscript_substitutions(&word)?; // arithmetic operands
                    out.extend(word.inner);
                    out.extend(hidden);
                }
                Some(_) => self.advance(1),
            }
        }
    }
}
