//! Lists, pipelines, simple commands, redirections and compound commands.

use super::rules::*;
use super::*;

impl Parser {
    // ----- lists, pipelines, commands ---------------------------------------------------

    pub(super) fn parse_list(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        self.nested(|p| p.list_items(out))
    }

    /// `and_or ((; | & | newline) and_or)*`, up to whatever ends the list; the caller
    /// checks that the right thing ended it.
    pub(super) fn list_items(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        loop {
            self.skip_linebreaks(out)?;
            if self.at_list_end() {
                return Ok(());
            }
            self.parse_and_or(out)?;
            self.skip_blanks();
            self.skip_comment()?;
            match self.peek() {
                Some(';') if matches!(self.peek_at(1), Some(';' | '&')) => return Ok(()),
                Some(';' | '&') => self.advance(1),
                Some('\n') => self.newline(out)?,
                _ => return Ok(()),
            }
        }
    }

    pub(super) fn at_list_end(&self) -> bool {
        match self.peek() {
            None | Some(')') => true,
            Some(';') => matches!(self.peek_at(1), Some(';' | '&')),
            _ => LIST_ENDS.iter().any(|k| self.at_keyword(k)),
        }
    }

    pub(super) fn parse_and_or(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        loop {
            self.parse_pipeline(out)?;
            self.skip_blanks();
            if !(self.eat("&&") || self.eat("||")) {
                return Ok(());
            }
            self.skip_linebreaks(out)?;
        }
    }

    pub(super) fn parse_pipeline(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        if self.pipeline_prefixes()? && self.at_pipeline_end() {
            return Ok(()); // a bare `time` or `!` is valid bash
        }
        loop {
            self.parse_command(out)?;
            self.skip_blanks();
            if self.peek() != Some('|') || self.peek_at(1) == Some('|') {
                return Ok(());
            }
            self.advance(1);
            self.eat("&");
            self.skip_linebreaks(out)?;
        }
    }

    /// `!` and `time [-p]` are keywords, not command words: the command after them is
    /// the one checked.
    pub(super) fn pipeline_prefixes(&mut self) -> PResult<bool> {
        let mut any = false;
        loop {
            self.skip_blanks();
            if self.looking_at("!(") {
                return Err(ParseError::EXTGLOB); // an extglob pattern once `shopt -s extglob` ran
            }
            if self.eat_keyword("!") {
                any = true;
                continue;
            }
            if !self.eat_keyword("time") {
                return Ok(any);
            }
            any = true;
            self.skip_blanks();
            self.eat_keyword("-p");
        }
    }

    pub(super) fn at_pipeline_end(&self) -> bool {
        matches!(self.peek(), None | Some(';' | '&' | '\n' | ')' | '#')) || self.at_list_end()
    }

    pub(super) fn parse_command(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        self.skip_blanks();
        if ["function", "coproc"].iter().any(|k| self.at_keyword(k)) {
            return Err(ParseError::UNSUPPORTED);
        }
        if LIST_ENDS.iter().any(|k| self.at_keyword(k)) || self.at_keyword("in") {
            return Err(ParseError::SYNTAX);
        }
        type Compound = fn(&mut Parser, &mut Vec<Check>) -> PResult<()>;
        let compound: Option<Compound> = if self.at_keyword("if") {
            Some(Self::parse_if)
        } else if self.at_keyword("while") || self.at_keyword("until") {
            Some(Self::parse_while)
        } else if self.at_keyword("for") || self.at_keyword("select") {
            Some(Self::parse_for)
        } else if self.at_keyword("case") {
            Some(Self::parse_case)
        } else if self.at_keyword("{") {
            Some(Self::parse_group)
        } else if self.at_keyword("[[") {
            Some(Self::parse_cond)
        } else if self.peek() == Some('(') {
            Some(Self::parse_paren)
        } else {
            None
        };
        match compound {
            Some(parse) => {
                parse(self, out)?;
                self.trailing_redirects(out)
            }
            None => self.parse_simple(out),
        }
    }

    /// Assignments and redirections, the command word, its arguments. The command word
    /// and forbidden assignments are checked before the substitutions inside the words
    /// ("outer before inner").
    pub(super) fn parse_simple(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        let mut outer = Vec::new();
        let mut inner = Vec::new();
        let mut command: Option<Option<String>> = None;
        let mut args = Vec::new();
        let mut empty = true;
        // Where the command's check is in `outer`: its words follow at the end.
        let mut at = None;
        // An `IFS=…` before the command word, and where its refusal goes: none
        // when the command is `read` (see below).
        let mut ifs_prefix = None;
        loop {
            self.skip_blanks();
            let mode = match command {
                None => Subscript::AfterName,
                Some(_) => Subscript::Plain,
            };
            if self.parse_redirect(mode, &mut inner)? {
                empty = false;
                continue;
            }
            if self.peek() == Some('#') || !self.at_word() {
                break;
            }
            let start = self.pos;
            let mut word = self.scan_word(mode)?.ok_or(ParseError::SYNTAX)?;
            empty = false;
            if command.is_none() {
                // An assignment: the variable may be an integer one.
                inner.extend(self.latent_substitutions(&word)?);
            }
            inner.append(&mut word.inner);
            let forbidden = assignment_name(&word.raw).map(is_forbidden_name);
            if forbidden.is_some() && word.raw.ends_with('=') && self.peek() == Some('(') {
                self.scan_array(&mut inner)?;
                word.raw = self.text_from(start);
            }
            match (&command, forbidden) {
                (None, Some(true)) => {
                    let name = assignment_name(&word.raw).unwrap_or_default().to_string();
                    let refusal = Check::Refuse(Denial::ForbiddenVariable {
                        text: elide_value(&word.raw),
                        change: Change::Assign,
                        name,
                    });
                    if assignment_name(&word.raw) == Some("IFS") && ifs_prefix.is_none() {
                        ifs_prefix = Some((outer.len(), refusal));
                    } else {
                        outer.push(refusal);
                    }
                }
                (None, Some(false)) => {
                    // A variable with the integer attribute evaluates what it is given.
                    let value = word.value.split_once('=').map_or("", |(_, v)| v);
                    if let Some(name) = assigned_in_arithmetic(value) {
                        outer.push(Check::Refuse(Denial::ForbiddenVariable {
                            name,
                            text: elide_value(&word.raw),
                            change: Change::Assign,
                        }));
                    }
                }
                (None, None) => {
                    command = Some(word.literal.then(|| word.value.clone()));
                    at = Some(outer.len());
                    outer.push(Check::Command(vec![Spelled::of(&word)]));
                }
                (Some(_), _) => args.push(word),
            }
        }
        if empty {
            return Err(ParseError::SYNTAX);
        }
        // `IFS= read -r line`: a prefix assignment before `read`, a builtin that is
        // not special, holds only while `read` runs and changes only how `read`
        // splits its input into the variables the gate already judged. bash never
        // splits a literal word on IFS, so the rest of the line reads the same;
        // anywhere else (a standalone `IFS=x`, before another command) it is refused.
        if let Some((index, refusal)) = ifs_prefix {
            if !matches!(&command, Some(Some(name)) if name == "read") {
                outer.insert(index, refusal);
                at = at.map(|a| if a >= index { a + 1 } else { a });
            }
        }
        if let Some(Some(name)) = &command {
            if name == "time" {
                // Not the keyword (that one was taken before the command
                // word): a quoted or escaped `time` is the program, which
                // runs its first operand as a command.
                if let Some(word) = time_operand(&args) {
                    outer.push(Check::Command(vec![Spelled::of(word)]));
                }
            }
            self.builtin_checks(name, &args, &mut outer)?;
            if EVALUATES_NAMES.split_whitespace().any(|b| b == name) {
                for arg in &args {
                    inner.extend(self.subscript_substitutions(arg)?);
                }
            }
        }
        if let Some(Check::Command(words)) = at.and_then(|i| outer.get_mut(i)) {
            words.extend(args.iter().map(Spelled::of));
        }
        out.append(&mut outer);
        out.append(&mut inner);
        Ok(())
    }

    /// Builtins that take variable names evaluate a subscript in one, even one that was
    /// quoted: `[ -v 'a[$(cmd)]' ]` runs cmd, and so does `declare -a x='($(cmd))'`.
    /// The substitutions in such an argument are checked as if unquoted.
    /// So is arithmetic there that assigns a forbidden variable (`unset 'a[PATH=0]'`).
    pub(super) fn subscript_substitutions(&mut self, arg: &Word) -> PResult<Vec<Check>> {
        let mut checks = Vec::new();
        if !arg.literal {
            // `declare a[0]='b[$(cmd)]'`: what it assigns is still text.
            return self.latent_substitutions(arg);
        }
        if let Some(name) = assigned_in_arithmetic(&arg.value) {
            checks.push(Check::Refuse(Denial::ForbiddenVariable {
                name,
                text: elide_value(&arg.raw),
                change: Change::Assign,
            }));
        }
        if arg.value.contains(['[', '(']) && arg.value.contains(['$', '`']) {
            checks.extend(self.scan_text(arg.value.chars().collect())?);
        }
        Ok(checks)
    }

    /// Quoted or escaped text that holds a command substitution inside a
    /// subscript (`x='a[$(cmd)]'`) is inert as written, but bash runs the
    /// command if the text is ever evaluated as arithmetic — assigned to
    /// or read into an integer variable, used in `(( ))`, `let`, `[[ -v ]]`,
    /// an element of an integer array. Which variable will be is not known
    /// before the line runs, so such text is checked as if it were live
    /// wherever it becomes a variable's value: an assignment, an array's
    /// element, a here-string (`read`, `mapfile`), and the arguments of the
    /// builtins that take names (`subscript_substitutions`).
    ///
    /// A subscripted name (`a[0]=…`, `[0]=…` in an array, `declare a[0]=…`)
    /// makes the word expand from its `[` on, yet what it assigns is text
    /// like any other: its value, from the `=` on, is looked at too (`declare
    /// -ai a; a[0]='b[$(cmd)]'` ran cmd).
    pub(super) fn latent_substitutions(&mut self, word: &Word) -> PResult<Vec<Check>> {
        let text = inert_text(word);
        let text = if latent(text) {
            text
        } else {
            match assigned_value(word) {
                Some(value) if latent(value) => value,
                _ => return Ok(Vec::new()),
            }
        };
        let chars = text.chars().collect();
        self.scan_text(chars)
    }

    /// `a=(x y …)`: the elements may hold substitutions.
    pub(super) fn scan_array(&mut self, inner: &mut Vec<Check>) -> PResult<()> {
        self.advance(1);
        loop {
            self.skip_blanks();
            self.skip_comment()?;
            match self.peek() {
                // bash reads `a=(x)y` as one word; refuse rather than follow it there.
                Some(')') if self.peek_at(1).is_some_and(|c| !is_meta(c)) => {
                    return Err(ParseError::SUBSCRIPT)
                }
                Some(')') => {
                    self.advance(1);
                    return Ok(());
                }
                Some('\n') if self.pending.is_empty() && !self.outer_pending => self.advance(1),
                _ if self.at_word() => {
                    let word = self
                        .scan_word(Subscript::Leading)?
                        .ok_or(ParseError::SYNTAX)?;
                    // An element of an integer array is arithmetic.
                    inner.extend(self.latent_substitutions(&word)?);
                    inner.extend(word.inner);
                }
                _ => return Err(ParseError::SYNTAX),
            }
        }
    }

    pub(super) fn trailing_redirects(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        loop {
            self.skip_blanks();
            if !self.parse_redirect(Subscript::AfterName, out)? {
                return Ok(());
            }
        }
    }

    /// A redirection at the cursor, if any. Its target's substitutions run; a
    /// here-document's delimiter is not expanded, its body is read at the next newline.
    pub(super) fn parse_redirect(
        &mut self,
        mode: Subscript,
        inner: &mut Vec<Check>,
    ) -> PResult<bool> {
        let Some((prefix, op)) = self.redirect_operator() else {
            return Ok(false);
        };
        let fd_name: String = self
            .chars
            .iter()
            .skip(self.pos + 1)
            .take(prefix.saturating_sub(2))
            .collect();
        if self.peek() == Some('{') && is_forbidden_name(&fd_name) {
            // `{NAME}>file` stores the descriptor's number in NAME.
            inner.push(Check::Refuse(Denial::ForbiddenVariable {
                text: format!("{{{fd_name}}}{op}"),
                name: fd_name,
                change: Change::Assign,
            }));
        }
        self.advance(prefix + op.len());
        self.skip_blanks();
        let target = self.scan_word(mode)?.ok_or(ParseError::SYNTAX)?;
        let plain = target.literal && is_plain_target(&target.value);
        if (op == ">&" || op == "<&") && !is_fd_target(&target.raw) && !plain {
            // `>&word` that is not a descriptor names a file, and bash expands that
            // word a second time: `>&'$(cmd)'` runs cmd. A plain literal expands to
            // itself again, so `>& /dev/null` is fine.
            return Err(ParseError::DUPLICATION);
        }
        if op == "<<" || op == "<<-" {
            if self.in_substitution > 0 && !self.pending.is_empty() {
                return Err(ParseError::OLD_BASH); // bash before 5.2 follows one at a time in `$(…)`
            }
            let (delim, expand) = heredoc_delimiter(&target.raw).ok_or(ParseError::DELIMITER)?;
            self.pending.push(Heredoc {
                delim,
                strip_tabs: op == "<<-",
                expand,
            });
        } else {
            if op == "<<<" {
                // Read into an integer variable, the text is arithmetic.
                inner.extend(self.latent_substitutions(&target)?);
            }
            inner.extend(target.inner);
        }
        Ok(true)
    }

    /// The length of the fd prefix (`2`, `{fd}`) and the operator at the cursor.
    pub(super) fn redirect_operator(&self) -> Option<(usize, &'static str)> {
        const OPS: [&str; 12] = [
            "&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", "<", ">>", ">|", ">&", ">",
        ];
        let mut prefix = 0;
        while self.peek_at(prefix).is_some_and(|c| c.is_ascii_digit()) {
            prefix += 1;
        }
        if prefix == 0 && self.peek() == Some('{') && self.peek_at(1).is_some_and(is_name_start) {
            let mut close = 2;
            while self.peek_at(close).is_some_and(is_name_char) {
                close += 1;
            }
            if self.peek_at(close) == Some('}')
                && matches!(self.peek_at(close + 1), Some('<' | '>'))
            {
                prefix = close + 1;
            }
        }
        let at = |s: &str| {
            s.chars()
                .enumerate()
                .all(|(i, c)| self.peek_at(prefix + i) == Some(c))
        };
        if at("<(") || at(">(") {
            return None; // process substitution: a word
        }
        let op = OPS
            .into_iter()
            .find(|op| at(op) && !(prefix > 0 && op.starts_with('&')))?;
        Some((prefix, op))
    }
}

/// What a word that is not literal assigns, after its first `=`: the
/// value of a subscripted assignment (`a[0]=VALUE`, `[0]=VALUE`).
fn assigned_value(word: &Word) -> Option<&str> {
    if word.literal {
        return None;
    }
    word.value.split_once('=').map(|(_, value)| value)
}

/// The inert text of a word: all of a literal one, the part before the
/// first expansion of another (a live substitution is checked as such).
fn inert_text(word: &Word) -> &str {
    if word.literal {
        &word.value
    } else {
        &word.value[..word.known]
    }
}

/// Whether `text` holds `$(` or a backtick after a `[`: a command
/// substitution bash runs if it ever evaluates the text as arithmetic (a
/// subscript is expanded then).
fn latent(text: &str) -> bool {
    text.find('[')
        .is_some_and(|at| text[at..].contains("$(") || text[at..].contains('`'))
}

/// The command the `time` program runs: its first operand, past its
/// options (`-f FORMAT`, `-o FILE` take the next word).
fn time_operand(args: &[Word]) -> Option<&Word> {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if !arg.literal || !arg.value.starts_with('-') || arg.value == "-" {
            return Some(arg);
        }
        match arg.value.as_str() {
            "--" => return iter.next(),
            "-f" | "-o" | "--format" | "--output" => {
                iter.next();
            }
            _ => {}
        }
    }
    None
}
