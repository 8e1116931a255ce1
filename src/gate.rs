//! The `allowed_commands` gate: before a line is handed to `bash -c`, decide whether
//! every simple command in it starts with a listed word.
//!
//! Checking only the first word of the string would let `ls; rm -rf ~` through, so the
//! line is read with a small recursive-descent parser of bash syntax and every command
//! word found anywhere in it is checked: each part of a list or pipeline, the bodies of
//! subshells, groups and compound commands, and the commands inside `$(…)`, backticks and
//! `<(…)`/`>(…)` wherever they appear (arguments, quotes, assignments, redirections,
//! here-document bodies, `${…}`, arithmetic).
//!
//! The parser does not try to accept everything bash accepts. Where bash could read a
//! line differently from it, the line is refused: refusing too much costs the agent a
//! retry, refusing too little runs a command nobody allowed. Refused as unsupported,
//! with the parse-error text:
//! - function definitions (`f() {…}`, `function f`) and `coproc`;
//! - nesting deeper than 64 levels;
//! - `${…@P}` (prompt expansion runs substitutions stored in a variable), `$"…"`
//!   (translated through a catalog chosen at run time), `!(…)` (an extglob pattern);
//! - `>&word` / `<&word` onto anything but a descriptor (bash expands the word twice);
//! - here-document delimiters other than a plain word, quoted or not as a whole, a
//!   here-document whose body would start inside a nested substitution or array, and,
//!   inside `$(…)`, a body line that starts with the delimiter (bash 5.2 may end the
//!   body at `EOF )` and run the rest of the line);
//! - a backslash-newline that joins two characters (`l\<newline>s`, `$\<newline>(`):
//!   bash removes it before reading tokens; between words it is a blank and fine;
//! - `$((…))` that bash might run as commands rather than evaluate, and a `$((` that is
//!   not arithmetic where bash would end it elsewhere than the parser does;
//! - `name[…]` holding blanks or operators where bash may read it as one subscript,
//!   `a=(…)x`, a comment, `;` or newline inside `[[ … ]]`;
//! - what bash before 5.2 reads differently inside `$(…)`, which it scans as text
//!   rather than parses: `case`, a comment not after a blank (or any comment inside
//!   `"$(…)"`), two here-documents on one line;
//! - bash 5.3's `${ cmd; }` and `${| cmd; }`, which run commands.
//!
//! `[[ … ]]` gets no grammar of its own: `[[` is a command word that must be listed like
//! any other, and substitutions in its operands are checked.
//!
//! Beyond the documented contract, a few builtins are looked into because listing them
//! would otherwise reach what a prefix assignment may not: `export`/`declare`/`read`/…
//! naming a forbidden variable, `set -k`, `set -o posix`, `mapfile -C`, `hash -p`, and
//! subscripts in quoted arguments that name-taking builtins evaluate
//! (`[ -v 'a[$(cmd)]' ]` runs cmd).
//!
//! The reading follows bash 5.2 and was checked against it by running lines the gate
//! accepts under a bash that records every command it starts.
//!
//! Known gaps: bash evaluates array subscripts found in variable values at run time
//! (`x='a[$(cmd)]'; echo $((x))`, `${!x}`, `[[ $x -eq 1 ]]`, `declare -a "x=($y)"`); a
//! listed word may itself run code (`eval`, `env`, `xargs`, `bash`, `trap`,
//! `git -c core.pager=…`), and so may the environment variables its program reads
//! (`GIT_SSH_COMMAND=… git fetch`, `PAGER`, `NODE_OPTIONS`), which only the bash-level
//! ones above are refused for; a listed relative path (`./build.sh`) depends on the
//! directory. The gate decides which command words start; it is not a sandbox.

use std::mem;

/// Nesting depth (lists, substitutions, expansions) beyond which a line is refused. The
/// parser is recursive, so without a cap a line of a few thousand `$(` would overflow the
/// stack instead of being refused.
const MAX_DEPTH: usize = 64;

/// How many times the parser may re-read text that turned out not to be arithmetic
/// (`$((cmd) …)`). Each re-read can nest another, so an unbounded number could take
/// exponential time on a hostile line.
const MAX_RETRIES: usize = 64;

const PARSE_ERROR: &str = "could not parse the command line";

/// Reserved words that end a list (the list of a compound command).
const LIST_ENDS: [&str; 8] = ["then", "elif", "else", "fi", "do", "done", "esac", "}"];

/// Builtins that evaluate array subscripts inside their arguments (`-v name`, names to
/// read into or declare, arithmetic operands).
const EVALUATES_NAMES: &str = "[ test declare typeset local export readonly read mapfile \
    readarray printf unset let getopts wait shift exit return break continue";

/// Variables whose assignment changes which program a command word runs or how bash
/// reads the rest of the line. Beyond the documented list: `BASH_CMDS` (the command
/// hash table), `BASH_ALIASES` and `EXECIGNORE` change what a word runs as `PATH` does;
/// `POSIXLY_CORRECT` and `BASH_COMPAT` change how later lines are parsed; `GCONV_PATH`
/// loads code into programs as `LD_PRELOAD` does.
const FORBIDDEN_VARIABLES: &str = "PATH IFS BASH_ENV ENV SHELLOPTS BASHOPTS PS4 \
    BASH_CMDS BASH_ALIASES EXECIGNORE POSIXLY_CORRECT BASH_COMPAT GCONV_PATH";

/// Checks every simple command of `line` against `allowed`.
/// Ok(()) when all are allowed; Err(text) with the exact refusal text otherwise.
///
/// The whole line is parsed before anything is checked, so a line that cannot be parsed
/// is refused as such even when an earlier command is also not allowed. An empty
/// `allowed` allows no command at all; a line without commands (`X=1`, a comment) passes.
pub fn check_allowed<S: AsRef<str>>(line: &str, allowed: &[S]) -> Result<(), String> {
    let checks = Parser::new(line.chars().collect(), 0, 0, false)
        .parse_program()
        .map_err(|ParseError| refusal(PARSE_ERROR))?;
    for check in checks {
        match check {
            Check::Command {
                value: Some(word), ..
            } if !word.is_empty() => {
                if !allowed.iter().any(|a| a.as_ref() == word) {
                    return Err(refusal(&word));
                }
            }
            // An expansion, a glob or an empty word: show it as written, since there is
            // no value to show before the line runs.
            Check::Command { raw, .. } | Check::Refuse(raw) => return Err(refusal(&raw)),
        }
    }
    Ok(())
}

fn refusal(word: &str) -> String {
    crate::texts::not_allowed(word)
}

/// One decision to make, in reading order (outer before inner).
enum Check {
    /// A command word: `value` is its text after quote removal, `None` when it is not a
    /// plain literal (expansions, globs, brace expansion, leading tilde).
    Command { raw: String, value: Option<String> },
    /// Refused whatever the list holds (a forbidden assignment); holds the text to show.
    Refuse(String),
}

struct ParseError;
type PResult<T> = Result<T, ParseError>;

/// What scanning a word collects: its text as written, its value after quote removal,
/// whether that value is a plain literal, and the checks of the substitutions inside.
struct Word {
    raw: String,
    value: String,
    literal: bool,
    inner: Vec<Check>,
}

impl Word {
    fn new() -> Self {
        Word {
            raw: String::new(),
            value: String::new(),
            literal: true,
            inner: Vec::new(),
        }
    }
}

/// How `[` is read in a word. bash reads `name[…]` as one subscript, blanks and all,
/// where an assignment may stand, and as plain glob characters elsewhere.
#[derive(Clone, Copy)]
enum Subscript {
    /// After the command word: `[` is a glob character.
    Plain,
    /// Where an assignment may stand: `name[` opens a subscript.
    AfterName,
    /// An element of `a=(…)`: a leading `[` opens a subscript.
    Leading,
}

/// A here-document whose body starts after the next newline token.
struct Heredoc {
    delim: Vec<char>,
    strip_tabs: bool,
    /// Unquoted delimiter: the body is expanded, so its substitutions run.
    expand: bool,
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
    retries: usize,
    /// Here-documents of the current line whose bodies have not been read yet.
    pending: Vec<Heredoc>,
    /// An enclosing level has pending here-documents: a newline here would make it
    /// ambiguous where their bodies start, so it is refused.
    outer_pending: bool,
    /// How many `$(…)`, `<(…)` or `>(…)` enclose the cursor, and how many of those are
    /// inside double quotes.
    in_substitution: usize,
    in_quoted_substitution: usize,
}

impl Parser {
    fn new(chars: Vec<char>, depth: usize, retries: usize, outer_pending: bool) -> Self {
        Parser {
            chars,
            pos: 0,
            depth,
            retries,
            pending: Vec::new(),
            outer_pending,
            in_substitution: 0,
            in_quoted_substitution: 0,
        }
    }

    /// A parser for text taken out of this one (backtick bodies, here-document bodies).
    /// It inherits depth and retries so the limits hold across the split.
    fn sub(&self, chars: Vec<char>) -> Parser {
        let outer = self.outer_pending || !self.pending.is_empty();
        Parser::new(chars, self.depth + 1, self.retries, outer)
    }

    fn parse_program(&mut self) -> PResult<Vec<Check>> {
        let mut out = Vec::new();
        self.parse_list(&mut out)?;
        if self.pos < self.chars.len() || !self.pending.is_empty() {
            return Err(ParseError);
        }
        Ok(out)
    }

    // ----- cursor helpers -------------------------------------------------------------

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    /// Moves on, never past the end, so slices taken from `pos` cannot panic.
    fn advance(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.chars.len());
    }

    fn text_from(&self, start: usize) -> String {
        self.chars
            .get(start..self.pos)
            .map(|s| s.iter().collect())
            .unwrap_or_default()
    }

    fn find_from(&self, start: usize, c: char) -> Option<usize> {
        let rest = self.chars.get(start..)?;
        rest.iter().position(|&x| x == c).map(|i| start + i)
    }

    fn looking_at(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    fn eat(&mut self, s: &str) -> bool {
        let found = self.looking_at(s);
        if found {
            self.advance(s.chars().count());
        }
        found
    }

    fn expect(&mut self, c: char) -> PResult<()> {
        if self.peek() == Some(c) {
            self.advance(1);
            Ok(())
        } else {
            Err(ParseError)
        }
    }

    /// A reserved word is one only as a whole, unquoted word.
    fn at_keyword(&self, k: &str) -> bool {
        let len = k.chars().count();
        self.looking_at(k) && self.peek_at(len).map_or(true, is_meta)
    }

    fn eat_keyword(&mut self, k: &str) -> bool {
        let found = self.at_keyword(k);
        if found {
            self.advance(k.chars().count());
        }
        found
    }

    fn expect_keyword(&mut self, k: &str) -> PResult<()> {
        if self.eat_keyword(k) {
            Ok(())
        } else {
            Err(ParseError)
        }
    }

    /// Whether a word starts here (`<(`/`>(` start one although `<`/`>` are operators).
    fn at_word(&self) -> bool {
        match self.peek() {
            None => false,
            Some('<' | '>') => self.peek_at(1) == Some('('),
            Some(c) => !is_meta(c),
        }
    }

    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_DEPTH {
            return Err(ParseError);
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    fn spend_retry(&mut self) -> PResult<()> {
        self.retries += 1;
        if self.retries > MAX_RETRIES {
            Err(ParseError)
        } else {
            Ok(())
        }
    }

    /// Runs `f` for the body of a substitution, which must read its own here-documents:
    /// one left pending at its `)` would have its body somewhere bash and we disagree on.
    fn own_heredocs<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        let saved = mem::take(&mut self.pending);
        let saved_flag = self.outer_pending;
        self.outer_pending = saved_flag || !saved.is_empty();
        let result = f(self)?;
        if !self.pending.is_empty() {
            return Err(ParseError);
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
    fn skip_blanks(&mut self) {
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
    fn continuation_separates(&self) -> bool {
        let before = self.pos.checked_sub(1).and_then(|i| self.chars.get(i));
        let after = self.peek_at(2);
        matches!(before, None | Some(' ' | '\t' | '\n'))
            || matches!(after, None | Some(' ' | '\t' | '\n'))
    }

    /// A continuation inside quotes or text joins its neighbours; after a `$` that
    /// would make an expansion out of what follows (`"$\<newline>(cmd)"` runs cmd).
    fn continuation_after_dollar(&self) -> bool {
        self.pos.checked_sub(1).and_then(|i| self.chars.get(i)) == Some(&'$')
    }

    /// A `#` at the start of a token comments out the rest of the line. A backslash at
    /// its end does not continue it (bash runs the next line). Inside `$(…)`, bash before
    /// 5.2 knows a comment only after a blank or a newline, and none at all inside
    /// `"$(…)"`, so `$(a;# )` ends at that `)` for it; such comments are refused.
    fn skip_comment(&mut self) -> PResult<()> {
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
            return Err(ParseError);
        }
        while !matches!(self.peek(), None | Some('\n')) {
            self.advance(1);
        }
        Ok(())
    }

    fn skip_linebreaks(&mut self, out: &mut Vec<Check>) -> PResult<()> {
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
    fn newline(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        if self.outer_pending {
            return Err(ParseError);
        }
        self.advance(1);
        for doc in mem::take(&mut self.pending) {
            self.read_heredoc(&doc, out)?;
        }
        Ok(())
    }

    /// Skips the body lines up to the delimiter line. An unexpanded body is data; an
    /// expanded one runs its substitutions, so those are checked.
    fn read_heredoc(&mut self, doc: &Heredoc, out: &mut Vec<Check>) -> PResult<()> {
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
                return Err(ParseError);
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
    fn heredoc_line(&mut self, expand: bool) -> PResult<Vec<char>> {
        if self.pos >= self.chars.len() {
            return Err(ParseError); // no delimiter line
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

    // ----- lists, pipelines, commands ---------------------------------------------------

    fn parse_list(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        self.nested(|p| p.list_items(out))
    }

    /// `and_or ((; | & | newline) and_or)*`, up to whatever ends the list; the caller
    /// checks that the right thing ended it.
    fn list_items(&mut self, out: &mut Vec<Check>) -> PResult<()> {
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

    fn at_list_end(&self) -> bool {
        match self.peek() {
            None | Some(')') => true,
            Some(';') => matches!(self.peek_at(1), Some(';' | '&')),
            _ => LIST_ENDS.iter().any(|k| self.at_keyword(k)),
        }
    }

    fn parse_and_or(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        loop {
            self.parse_pipeline(out)?;
            self.skip_blanks();
            if !(self.eat("&&") || self.eat("||")) {
                return Ok(());
            }
            self.skip_linebreaks(out)?;
        }
    }

    fn parse_pipeline(&mut self, out: &mut Vec<Check>) -> PResult<()> {
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
    fn pipeline_prefixes(&mut self) -> PResult<bool> {
        let mut any = false;
        loop {
            self.skip_blanks();
            if self.looking_at("!(") {
                return Err(ParseError); // an extglob pattern once `shopt -s extglob` ran
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

    fn at_pipeline_end(&self) -> bool {
        matches!(self.peek(), None | Some(';' | '&' | '\n' | ')' | '#')) || self.at_list_end()
    }

    fn parse_command(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        self.skip_blanks();
        let misplaced = ["in", "function", "coproc"];
        if LIST_ENDS
            .iter()
            .chain(&misplaced)
            .any(|k| self.at_keyword(k))
        {
            return Err(ParseError);
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
    fn parse_simple(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        let mut outer = Vec::new();
        let mut inner = Vec::new();
        let mut command: Option<Option<String>> = None;
        let mut args = Vec::new();
        let mut empty = true;
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
            let mut word = self.scan_word(mode)?.ok_or(ParseError)?;
            empty = false;
            inner.append(&mut word.inner);
            let forbidden = assignment_name(&word.raw).map(is_forbidden_name);
            if forbidden.is_some() && word.raw.ends_with('=') && self.peek() == Some('(') {
                self.scan_array(&mut inner)?;
                word.raw = self.text_from(start);
            }
            match (&command, forbidden) {
                (None, Some(true)) => outer.push(Check::Refuse(word.raw)),
                (None, Some(false)) => {}
                (None, None) => {
                    let value = word.literal.then_some(word.value);
                    command = Some(value.clone());
                    outer.push(Check::Command {
                        raw: word.raw,
                        value,
                    });
                }
                (Some(_), _) => args.push(word),
            }
        }
        if empty {
            return Err(ParseError);
        }
        if let Some(Some(name)) = &command {
            let raws: Vec<&str> = args.iter().map(|a| a.raw.as_str()).collect();
            outer.extend(builtin_refusals(name, &raws));
            if EVALUATES_NAMES.split_whitespace().any(|b| b == name) {
                for arg in &args {
                    inner.extend(self.subscript_substitutions(arg)?);
                }
            }
        }
        out.append(&mut outer);
        out.append(&mut inner);
        Ok(())
    }

    /// Builtins that take variable names evaluate a subscript in one, even one that was
    /// quoted: `[ -v 'a[$(cmd)]' ]` runs cmd, and so does `declare -a x='($(cmd))'`.
    /// The substitutions in such an argument are checked as if unquoted.
    fn subscript_substitutions(&mut self, arg: &Word) -> PResult<Vec<Check>> {
        let suspicious = arg.value.contains(['[', '(']) && arg.value.contains(['$', '`']);
        if !arg.literal || !suspicious {
            return Ok(Vec::new());
        }
        self.scan_text(arg.value.chars().collect())
    }

    /// `a=(x y …)`: the elements may hold substitutions.
    fn scan_array(&mut self, inner: &mut Vec<Check>) -> PResult<()> {
        self.advance(1);
        loop {
            self.skip_blanks();
            self.skip_comment()?;
            match self.peek() {
                // bash reads `a=(x)y` as one word; refuse rather than follow it there.
                Some(')') if self.peek_at(1).is_some_and(|c| !is_meta(c)) => {
                    return Err(ParseError)
                }
                Some(')') => {
                    self.advance(1);
                    return Ok(());
                }
                Some('\n') if self.pending.is_empty() && !self.outer_pending => self.advance(1),
                _ if self.at_word() => {
                    let word = self.scan_word(Subscript::Leading)?.ok_or(ParseError)?;
                    inner.extend(word.inner);
                }
                _ => return Err(ParseError),
            }
        }
    }

    fn trailing_redirects(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        loop {
            self.skip_blanks();
            if !self.parse_redirect(Subscript::AfterName, out)? {
                return Ok(());
            }
        }
    }

    /// A redirection at the cursor, if any. Its target's substitutions run; a
    /// here-document's delimiter is not expanded, its body is read at the next newline.
    fn parse_redirect(&mut self, mode: Subscript, inner: &mut Vec<Check>) -> PResult<bool> {
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
            inner.push(Check::Refuse(format!("{{{fd_name}}}{op}")));
        }
        self.advance(prefix + op.len());
        self.skip_blanks();
        let target = self.scan_word(mode)?.ok_or(ParseError)?;
        if (op == ">&" || op == "<&") && !is_fd_target(&target.raw) {
            // `>&word` that is not a descriptor names a file, and bash expands that
            // word a second time: `>&'$(cmd)'` runs cmd.
            return Err(ParseError);
        }
        if op == "<<" || op == "<<-" {
            if self.in_substitution > 0 && !self.pending.is_empty() {
                return Err(ParseError); // bash before 5.2 follows one at a time in `$(…)`
            }
            let (delim, expand) = heredoc_delimiter(&target.raw).ok_or(ParseError)?;
            self.pending.push(Heredoc {
                delim,
                strip_tabs: op == "<<-",
                expand,
            });
        } else {
            inner.extend(target.inner);
        }
        Ok(true)
    }

    /// The length of the fd prefix (`2`, `{fd}`) and the operator at the cursor.
    fn redirect_operator(&self) -> Option<(usize, &'static str)> {
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

    // ----- compound commands ------------------------------------------------------------

    fn parse_if(&mut self, out: &mut Vec<Check>) -> PResult<()> {
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

    fn parse_while(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        self.advance(5); // `while` and `until` are both five letters
        self.parse_list(out)?;
        self.do_group(out)
    }

    fn do_group(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        self.skip_linebreaks(out)?;
        self.expect_keyword("do")?;
        self.parse_list(out)?;
        self.expect_keyword("done")
    }

    /// `for name [in words]; do …; done`, `for ((…)); do …; done`, and `select`. The loop
    /// variable is assigned, so it may not be a forbidden variable either.
    fn parse_for(&mut self, out: &mut Vec<Check>) -> PResult<()> {
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
                return Err(ParseError);
            }
            out.append(&mut arith.inner);
            self.skip_blanks();
            self.eat(";");
            return self.do_group(out);
        }
        let name = self.scan_word(Subscript::AfterName)?.ok_or(ParseError)?;
        if !is_name(&name.raw) {
            return Err(ParseError);
        }
        if is_forbidden_name(&name.raw) {
            out.push(Check::Refuse(format!("{keyword} {}", name.raw)));
        }
        self.skip_linebreaks(out)?;
        if self.eat_keyword("in") {
            self.word_list(out)?;
        } else {
            self.skip_blanks();
            self.eat(";");
        }
        self.do_group(out)
    }

    /// The words after `in`, up to and including `;`, or up to a newline.
    fn word_list(&mut self, out: &mut Vec<Check>) -> PResult<()> {
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
                    let word = self.scan_word(Subscript::AfterName)?.ok_or(ParseError)?;
                    out.extend(word.inner);
                }
            }
        }
    }

    /// `case` is refused inside `$(…)`: bash before 5.2 finds the end of a substitution
    /// by scanning its text, and may take the `)` of a pattern for it.
    fn parse_case(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        if self.in_substitution > 0 {
            return Err(ParseError);
        }
        self.advance(4);
        self.skip_blanks();
        let subject = self.scan_word(Subscript::AfterName)?.ok_or(ParseError)?;
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
                return Err(ParseError);
            }
        }
    }

    /// `pat | pat )`: patterns are words whose substitutions run.
    fn case_patterns(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        loop {
            self.skip_blanks();
            let pattern = self.scan_word(Subscript::AfterName)?.ok_or(ParseError)?;
            out.extend(pattern.inner);
            self.skip_blanks();
            if self.eat(")") {
                return Ok(());
            }
            if !self.eat("|") {
                return Err(ParseError);
            }
        }
    }

    fn parse_group(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        self.advance(1);
        self.parse_list(out)?;
        self.expect_keyword("}")
    }

    /// `( list )`, or the arithmetic command `(( … ))`. Like bash, `((cmd) …)` that turns
    /// out not to be arithmetic is re-read as nested subshells.
    fn parse_paren(&mut self, out: &mut Vec<Check>) -> PResult<()> {
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
    /// Operators are skipped; a comment, `;` or newline inside is refused rather than
    /// followed through bash's special rules for this construct.
    fn parse_cond(&mut self, out: &mut Vec<Check>) -> PResult<()> {
        self.advance(2);
        out.push(Check::Command {
            raw: "[[".into(),
            value: Some("[[".into()),
        });
        loop {
            self.skip_blanks();
            match self.peek() {
                None | Some('#' | ';' | '\n') => return Err(ParseError),
                Some(_) if self.at_word() => {
                    let word = self.scan_word(Subscript::AfterName)?.ok_or(ParseError)?;
                    if word.raw == "]]" {
                        return Ok(());
                    }
                    let hidden = self.subscript_substitutions(&word)?;
                    out.extend(word.inner);
                    out.extend(hidden);
                }
                Some(_) => self.advance(1),
            }
        }
    }

    // ----- words ------------------------------------------------------------------------

    /// One word at the cursor, or None when an operator or the end is there.
    fn scan_word(&mut self, mode: Subscript) -> PResult<Option<Word>> {
        let start = self.pos;
        let mut w = Word::new();
        let (mut bracket, mut brace) = (false, false);
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
                        '}' => brace,
                        '~' => at_start,
                        _ => false,
                    };
                    bracket |= c == '[';
                    brace |= c == '{';
                    w.literal &= !expands;
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
    fn scan_subscript(&mut self, w: &mut Word) -> PResult<()> {
        self.advance(1);
        w.literal = false;
        let mut depth = 0usize;
        loop {
            let c = self.peek().ok_or(ParseError)?;
            match c {
                '[' => depth += 1,
                ']' if depth == 0 => {
                    self.advance(1);
                    return Ok(());
                }
                ']' => depth -= 1,
                _ if is_meta(c) => return Err(ParseError),
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
    fn scan_backslash(&mut self, w: &mut Word) -> PResult<()> {
        match self.peek_at(1) {
            Some('\n') if !matches!(self.peek_at(2), None | Some(' ' | '\t' | '\n')) => {
                return Err(ParseError)
            }
            Some('\n') => {}
            Some(c) => w.value.push(c),
            None => w.value.push('\\'),
        }
        self.advance(2);
        Ok(())
    }

    fn scan_single(&mut self, w: &mut Word) -> PResult<()> {
        let end = self.find_from(self.pos + 1, '\'').ok_or(ParseError)?;
        w.value
            .extend(self.chars.get(self.pos + 1..end).unwrap_or_default());
        self.pos = end + 1;
        Ok(())
    }

    fn scan_dquote(&mut self, w: &mut Word) -> PResult<()> {
        self.advance(1);
        loop {
            match self.peek().ok_or(ParseError)? {
                '"' => {
                    self.advance(1);
                    return Ok(());
                }
                '\\' => match self.peek_at(1) {
                    Some('\n') if self.continuation_after_dollar() => return Err(ParseError),
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

    /// Everything that starts with `$`. Only `$'…'` keeps a word literal; a `$` that
    /// starts nothing is an ordinary character. `in_dq`: inside double quotes (or text
    /// read like them), where `$'` is not a quote.
    fn scan_dollar(&mut self, w: &mut Word, in_dq: bool) -> PResult<()> {
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
                    return Err(ParseError);
                }
            }
            Some('\'') if !in_dq => return self.scan_ansi(w),
            // bash translates `$"…"` through a message catalog chosen by variables,
            // and expands the translation: its text is not known before the line runs.
            Some('"') if !in_dq => return Err(ParseError),
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
        w.literal = false;
        Ok(())
    }

    /// `$((…))`, or, when it is not arithmetic after all, `$(` followed by a subshell.
    fn scan_dollar_arith(&mut self, w: &mut Word, in_dq: bool) -> PResult<()> {
        let start = self.pos;
        self.advance(3);
        let mut arith = Word::new();
        if self.scan_arith('(', ')', true, &mut arith)? {
            w.inner.append(&mut arith.inner);
            w.literal = false;
            return Ok(());
        }
        self.spend_retry()?;
        let bash_end = self.paren_extent(start + 2)?;
        self.pos = start + 2;
        self.nested_list(w, in_dq)?;
        if self.pos != bash_end {
            return Err(ParseError);
        }
        Ok(())
    }

    /// Where bash ends a `$((…)` that is not arithmetic: it matches the parentheses as
    /// text, skipping quotes and substitutions but not comments, `case` patterns or
    /// here-documents. When that is not where the command list ends, the two readings
    /// of everything after it differ, so the caller refuses the line.
    fn paren_extent(&mut self, from: usize) -> PResult<usize> {
        let saved = self.pos;
        self.pos = from;
        let mut scratch = Word::new();
        let mut depth = 1usize;
        let end = loop {
            let c = self.peek().ok_or(ParseError)?;
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

    fn scan_procsub(&mut self, w: &mut Word) -> PResult<()> {
        self.advance(2);
        self.nested_list(w, false)
    }

    /// The command list of `$(…)`, `<(…)` or `>(…)` up to its `)`, read recursively as
    /// bash 5 does (so `case` patterns and comments inside work).
    fn nested_list(&mut self, w: &mut Word, in_dq: bool) -> PResult<()> {
        let mut inner = Vec::new();
        self.in_substitution += 1;
        self.in_quoted_substitution += usize::from(in_dq);
        self.own_heredocs(|p| p.parse_list(&mut inner))?;
        self.in_substitution -= 1;
        self.in_quoted_substitution -= usize::from(in_dq);
        self.expect(')')?;
        w.inner.append(&mut inner);
        w.literal = false;
        Ok(())
    }

    /// Arithmetic text after its opening bracket, up to `close` (doubled when `double`).
    /// Names in it are variables, not commands, but its substitutions run. Ok(false):
    /// a lone `)` showed this was not arithmetic (`$((cmd) …)`).
    fn scan_arith(&mut self, open: char, close: char, double: bool, w: &mut Word) -> PResult<bool> {
        let start = self.pos;
        self.nested(|p| {
            let mut depth = 0usize;
            loop {
                let c = p.peek().ok_or(ParseError)?;
                if c == open {
                    depth += 1;
                } else if c == close && depth > 0 {
                    depth -= 1;
                } else if c == close {
                    if !double {
                        p.advance(1);
                        return Ok(true);
                    }
                    if p.peek_at(1) != Some(close) {
                        return Ok(false);
                    }
                    let body = p.chars.get(start..p.pos).unwrap_or_default();
                    if !plain_arithmetic(body) {
                        return Err(ParseError);
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
    fn scan_embedded(&mut self, c: char, w: &mut Word) -> PResult<()> {
        match c {
            '\\' if self.peek_at(1) == Some('\n') => return Err(ParseError),
            '\\' => self.advance(2),
            '\'' => return self.scan_expanding_single(w),
            '"' => return self.scan_dquote(w),
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

    fn scan_expanding_single(&mut self, w: &mut Word) -> PResult<()> {
        let start = self.pos + 1;
        let end = self.find_from(start, '\'').ok_or(ParseError)?;
        let text = self.chars.get(start..end).unwrap_or_default().to_vec();
        self.pos = end + 1;
        let checks = self.scan_text(text)?;
        w.inner.extend(checks);
        Ok(())
    }

    /// `${…}`. Quotes inside delimit, but do not hide substitutions: bash evaluates
    /// subscripts and offsets arithmetically, so `${a['$(cmd)']}` runs cmd.
    fn scan_param(&mut self, w: &mut Word) -> PResult<()> {
        if matches!(self.peek_at(2), Some(' ' | '\t' | '\n' | '|')) {
            return Err(ParseError); // bash 5.3 runs `${ cmd; }` and `${| cmd; }`
        }
        self.advance(2);
        w.literal = false;
        let start = self.pos;
        self.nested(|p| loop {
            match p.peek().ok_or(ParseError)? {
                '}' => return Ok(()),
                // bash reads a process substitution here by rules of its own
                '<' | '>' if p.peek_at(1) == Some('(') => return Err(ParseError),
                c => p.scan_embedded(c, w)?,
            }
        })?;
        let body = self.chars.get(start..self.pos).unwrap_or_default();
        if body.windows(2).any(|pair| pair == ['@', 'P']) {
            return Err(ParseError); // prompt expansion runs substitutions in the value
        }
        self.advance(1);
        Ok(())
    }

    /// `` `…` ``: the body, with its backslash escapes undone, is parsed as a line.
    fn scan_backtick(&mut self, w: &mut Word, in_dq: bool) -> PResult<()> {
        self.advance(1);
        let mut body = Vec::new();
        loop {
            match (self.peek().ok_or(ParseError)?, self.peek_at(1)) {
                ('`', _) => break,
                ('\\', Some(n)) => {
                    let escapes = matches!(n, '$' | '`' | '\\') || (in_dq && n == '"');
                    if !escapes {
                        body.push('\\');
                    }
                    body.push(n);
                    self.advance(2);
                }
                ('\\', None) => return Err(ParseError),
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
        w.literal = false;
        Ok(())
    }

    /// The substitutions of text that expands like a double-quoted string without the
    /// quotes (an expanded here-document body, a quoted span in arithmetic).
    fn scan_text(&mut self, text: Vec<char>) -> PResult<Vec<Check>> {
        let mut sub = self.sub(text);
        let mut w = Word::new();
        let result = sub.nested(|p| {
            while let Some(c) = p.peek() {
                match c {
                    '\\' if p.peek_at(1) == Some('\n') && p.continuation_after_dollar() => {
                        return Err(ParseError)
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
    /// characters (and NUL, where bash cuts the word) make the word non-literal.
    fn scan_ansi(&mut self, w: &mut Word) -> PResult<()> {
        self.advance(2);
        loop {
            match self.peek().ok_or(ParseError)? {
                '\'' => {
                    self.advance(1);
                    return Ok(());
                }
                '\\' => {
                    self.advance(1);
                    self.ansi_escape(w)?;
                }
                c => {
                    w.value.push(c);
                    self.advance(1);
                }
            }
        }
    }

    fn ansi_escape(&mut self, w: &mut Word) -> PResult<()> {
        let c = self.peek().ok_or(ParseError)?;
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
            return Ok(());
        }
        let (code, byte) = match c {
            '0'..='7' => (self.take_digits(8, 2, c.to_digit(8)), true),
            'x' => (self.take_digits(16, 2, None), true),
            'u' => (self.take_digits(16, 4, None), false),
            'U' => (self.take_digits(16, 8, None), false),
            // bash ends the string at a quote even right after `\c`, so that quote (or a
            // backslash) is not taken as the control character.
            'c' => match self.peek().ok_or(ParseError)? {
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
            return Ok(());
        };
        match char::from_u32(code) {
            Some(ch) if ch != '\0' && !(byte && code >= 0x80) => w.value.push(ch),
            _ => w.literal = false,
        }
        Ok(())
    }

    fn take_digits(&mut self, radix: u32, max: usize, first: Option<u32>) -> Option<u32> {
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

// ----- free helpers ---------------------------------------------------------------------

/// Characters that end an unquoted word.
fn is_meta(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
    )
}

fn is_name_start(c: char) -> bool {
    c == '_' || c.is_ascii_alphabetic()
}

fn is_name_char(c: char) -> bool {
    c == '_' || c.is_ascii_alphanumeric()
}

fn is_name(s: &str) -> bool {
    s.starts_with(is_name_start) && s.chars().all(is_name_char)
}

fn is_forbidden_name(name: &str) -> bool {
    FORBIDDEN_VARIABLES.split_whitespace().any(|v| v == name)
        || name.starts_with("LD_")
        || name.starts_with("BASH_FUNC_")
}

/// `2`, `-` or `2-`: what may follow `>&` or `<&`.
fn is_fd_target(raw: &str) -> bool {
    let digits = raw.strip_suffix('-').unwrap_or(raw);
    !raw.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

/// Whether bash will surely evaluate `$((body))` as arithmetic. It decides only when
/// the word expands, by counting the parentheses of the body as plain text, and runs the
/// body as commands when they do not balance; bash 5.2 also does so for bodies holding a
/// `case` or a here-document in a nested substitution. Where that count could disagree
/// with the parse, the line is refused.
fn plain_arithmetic(body: &[char]) -> bool {
    let text: String = body.iter().collect();
    let nested = ["$(", "`", "<(", ">("].iter().any(|s| text.contains(s));
    let comment = |i: usize| i == 0 || body.get(i - 1).is_some_and(|&p| is_meta(p));
    let has_comment = (0..body.len()).any(|i| body[i] == '#' && comment(i));
    // Comments, `case` and here-documents in a nested substitution hide parentheses
    // from the parse but not from the count; `$'…'` ends elsewhere for the count.
    if text.contains("$'")
        || (nested && (has_comment || text.contains("case") || text.contains("<<")))
    {
        return false;
    }
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&c) = body.get(i) {
        match c {
            '\\' => i += 1,
            '\'' | '"' => {
                let Some(len) = body[i + 1..].iter().position(|&q| q == c) else {
                    return false;
                };
                let span: String = body[i + 1..i + 1 + len].iter().collect();
                let nests = ["$(", "${", "`", "\\"].iter().any(|n| span.contains(n));
                if c == '"' && nests {
                    return false; // a quote nested in it could end it elsewhere
                }
                i += len + 1;
            }
            '(' => depth += 1,
            ')' if depth == 0 => return false,
            ')' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    depth == 0
}

/// The variable an assignment word (`NAME=`, `NAME+=`, `NAME[…]=`) sets, from the text
/// as written: a quoted or continued name is not an assignment to bash either.
fn assignment_name(raw: &str) -> Option<&str> {
    let name_len = raw.find(|c| !is_name_char(c)).unwrap_or(raw.len());
    let name = &raw[..name_len];
    if !is_name(name) {
        return None;
    }
    let mut rest = &raw[name_len..];
    if rest.starts_with('[') {
        let mut depth = 0usize;
        let close = rest.char_indices().find_map(|(i, c)| {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(i)
        })?;
        rest = &rest[close + 1..];
    }
    let rest = rest.strip_prefix('+').unwrap_or(rest);
    rest.starts_with('=').then_some(name)
}

/// The delimiter of a here-document and whether its body expands. Only a plain word,
/// optionally quoted as a whole (`'EOF'`, `"EOF"`, `\EOF`), is accepted: a delimiter we
/// unquote differently from bash would end the body on a line bash runs.
fn heredoc_delimiter(raw: &str) -> Option<(Vec<char>, bool)> {
    let special = |c: char| matches!(c, '\'' | '"' | '\\' | '$' | '`');
    let plain = |s: &str| !s.is_empty() && !s.contains(special);
    if plain(raw) {
        return Some((raw.chars().collect(), true));
    }
    let inner = raw
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .or_else(|| raw.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
        .or_else(|| raw.strip_prefix('\\'))?;
    plain(inner).then(|| (inner.chars().collect(), false))
}

/// Builtins whose arguments change what runs or how later lines are read, so that
/// listing an innocent-looking builtin does not reach what a prefix assignment may not:
/// declaration and reading builtins set the variables named in their arguments,
/// `set -k` turns later arguments into environment assignments, `set -o posix` changes
/// the grammar, `mapfile -C` runs a callback and `hash -p` rebinds a command word.
fn builtin_refusals(command: &str, args: &[&str]) -> Vec<Check> {
    let refuse = |arg: &&str| Check::Refuse(format!("{command} {arg}"));
    let flag = |arg: &str, letter: char| {
        arg.starts_with('-') && !arg.starts_with("--") && arg.contains(letter)
    };
    let named: Vec<&str> = match command {
        "export" | "declare" | "typeset" | "local" | "readonly" | "read" | "mapfile"
        | "readarray" | "getopts" => args.to_vec(),
        "printf" => args
            .windows(2)
            .filter(|pair| pair[0] == "-v")
            .map(|pair| pair[1])
            .chain(args.iter().filter_map(|a| a.strip_prefix("-v")))
            .collect(),
        "set" => {
            let risky = |a: &&&str| ["keyword", "posix"].contains(a) || flag(a, 'k');
            return args.iter().filter(risky).map(refuse).collect();
        }
        "hash" => return args.iter().filter(|a| flag(a, 'p')).map(refuse).collect(),
        _ => Vec::new(),
    };
    let callback = matches!(command, "mapfile" | "readarray");
    let mut refusals: Vec<Check> = args
        .iter()
        .filter(|a| callback && flag(a, 'C'))
        .map(refuse)
        .collect();
    refusals.extend(
        named
            .into_iter()
            .filter(|a| a.split(|c| !is_name_char(c)).any(is_forbidden_name))
            .map(|a| Check::Refuse(a.to_string())),
    );
    refusals
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &[&str] = &["ls", "echo", "cat", "git", "grep", "true", "["];
    const PARSE: &str = "could not parse the command line";

    #[track_caller]
    fn ok(line: &str) {
        assert_eq!(check_allowed(line, LIST), Ok(()), "line: {line:?}");
    }

    #[track_caller]
    fn refused(line: &str, word: &str) {
        let expected = Err(format!("Command not allowed: {word}"));
        assert_eq!(check_allowed(line, LIST), expected, "line: {line:?}");
    }

    #[track_caller]
    fn unparsable(line: &str) {
        refused(line, PARSE);
    }

    // ----- the basic decision -----

    #[test]
    fn listed_command_is_allowed() {
        ok("ls -la /tmp");
        ok("git status");
    }

    #[test]
    fn unlisted_command_is_refused_with_its_word() {
        refused("rm -rf /", "rm");
    }

    #[test]
    fn empty_allow_list_allows_nothing() {
        let none: &[&str] = &[];
        assert_eq!(
            check_allowed("ls", none),
            Err("Command not allowed: ls".to_string())
        );
        let owned = vec![String::from("ls")];
        assert_eq!(check_allowed("ls", &owned), Ok(()));
    }

    #[test]
    fn line_without_commands_passes() {
        ok("");
        ok("   \n\t ");
        ok("# just a comment");
        ok("X=1");
        ok("> out.txt");
    }

    #[test]
    fn allowed_words_match_exactly() {
        refused("/bin/ls", "/bin/ls");
        refused("lsx", "lsx");
        refused("LS", "LS");
    }

    // ----- lists and pipelines -----

    #[test]
    fn second_command_of_a_list_is_checked() {
        refused("ls; rm x", "rm");
        refused("ls && rm x", "rm");
        refused("ls || rm x", "rm");
        refused("ls | rm x", "rm");
        refused("ls |& rm x", "rm");
        refused("ls & rm x", "rm");
        refused("ls\nrm x", "rm");
        ok("ls; echo a && cat b || grep c | true |& cat & ls\nls");
    }

    #[test]
    fn first_offending_word_is_reported() {
        refused("ls; rm a; curl b", "rm");
    }

    #[test]
    fn separators_may_be_followed_by_newlines() {
        ok("ls &&\n  echo a ||\n\n cat |\n grep x");
    }

    #[test]
    fn trailing_semicolon_or_ampersand_is_fine() {
        ok("ls;");
        ok("ls &");
        ok("  ls ; \n");
    }

    #[test]
    fn double_semicolon_outside_case_is_a_parse_error() {
        unparsable("ls;;");
        unparsable("ls ;; echo");
    }

    #[test]
    fn empty_commands_between_separators_are_parse_errors() {
        unparsable("; ls");
        unparsable("ls; ; ls");
        unparsable("ls & ;");
        unparsable("ls &&");
        unparsable("ls |");
        unparsable("| ls");
    }

    #[test]
    fn comments_are_skipped() {
        ok("ls # rm -rf /");
        ok("# rm\nls");
        ok("ls;# rm");
        refused("ls # c\nrm", "rm");
    }

    #[test]
    fn hash_inside_a_word_is_not_a_comment() {
        refused("echo a#b; rm", "rm");
        refused("echo $#; rm", "rm");
    }

    #[test]
    fn backslash_newline_does_not_continue_a_comment() {
        refused("ls # c \\\nrm", "rm");
    }

    // ----- quoting -----

    #[test]
    fn quoting_does_not_hide_a_word() {
        refused("\"t\"ouch x", "touch");
        refused("'rm' x", "rm");
        refused("\\rm x", "rm");
        refused("r\"\"m", "rm");
        ok("'ls' -l");
        ok("\"l\"s");
        ok("\\ls");
    }

    #[test]
    fn ansi_c_quoting_is_decoded() {
        refused("$'\\x72m' x", "rm");
        refused("$'\\162m'", "rm");
        ok("$'ls'");
        ok("$'\\x6cs'");
        ok("$'\\u006cs'");
    }

    #[test]
    fn ansi_c_bytes_that_are_not_characters_are_not_literal() {
        refused("$'\\xff'", "$'\\xff'");
        refused("$'ls\\0'", "$'ls\\0'");
    }

    #[test]
    fn locale_quoting_is_refused() {
        // The translation comes from a catalog chosen at run time, and is expanded.
        unparsable("$\"ls\"");
        unparsable("echo $\"hello\"");
        ok("echo \"$\"");
    }

    #[test]
    fn line_continuation_between_words_is_a_blank() {
        ok("ls \\\n -l");
        ok("ls \\\n-l \\\n\\\n | grep x\\\n");
        ok("echo a\\\n b");
        refused("ls \\\n; rm", "rm");
    }

    #[test]
    fn line_continuation_that_joins_characters_is_refused() {
        // bash removes it first: these are `ls`, `$(rm)`, `&&`, `2>`.
        unparsable("l\\\ns");
        unparsable("echo $\\\n(rm)");
        unparsable("echo \"$\\\n(rm)\"");
        unparsable("echo ${x:-$\\\n(rm)}");
        refused("cat <<E\n$\\\n(rm)\nE", "rm"); // a here-document joins its lines
        unparsable("ls &\\\n& rm");
        unparsable("echo 2\\\n>x");
        ok("echo \"a\\\nb\"");
        ok("cat <<E\nline \\\nnext\nE");
    }

    #[test]
    fn quoted_separators_are_not_separators() {
        ok("echo 'a; rm x' \"b && rm y\" c\\;rm");
        ok("echo '\nrm\n'");
    }

    #[test]
    fn unterminated_quotes_are_parse_errors() {
        unparsable("echo 'abc");
        unparsable("echo \"abc");
        unparsable("echo $'abc");
        unparsable("echo `ls");
        unparsable("echo $(ls");
        unparsable("echo ${x");
        unparsable("echo $((1+2)");
    }

    #[test]
    fn trailing_backslash_is_a_literal() {
        ok("echo \\");
    }

    // ----- words that are not literals -----

    #[test]
    fn expansion_as_command_word_is_refused_as_written() {
        refused("$CMD -x", "$CMD");
        refused("${CMD} -x", "${CMD}");
        refused("\"$CMD\"", "\"$CMD\"");
        refused("$1", "$1");
        refused("l$@s", "l$@s");
        refused("$((1+2))", "$((1+2))");
        refused("$[1+2]", "$[1+2]");
    }

    #[test]
    fn substitution_as_command_word_is_refused_as_written() {
        refused("$(echo ls) x", "$(echo ls)");
        refused("\"$(echo ls)\"", "\"$(echo ls)\"");
        refused("`echo ls`", "`echo ls`");
        refused("<(ls)", "<(ls)");
    }

    #[test]
    fn globs_braces_and_tilde_make_a_command_word_non_literal() {
        refused("l*", "l*");
        refused("l?", "l?");
        refused("[l]s", "[l]s");
        refused("{ls,rm}", "{ls,rm}");
        refused("{1..3}", "{1..3}");
        refused("~/bin/ls", "~/bin/ls");
        refused("\"*\"", "*");
        ok("l\\s");
    }

    #[test]
    fn empty_command_word_is_shown_as_written() {
        refused("\"\" ls", "\"\"");
    }

    #[test]
    fn test_bracket_is_a_plain_word() {
        ok("[ -f x ] && ls");
        assert!(check_allowed("[ -f x ]", &["ls"]).is_err());
    }

    #[test]
    fn unicode_words_work() {
        ok("echo 'héllo wörld' ünïcode ✓");
        assert_eq!(check_allowed("café --x", &["café"]), Ok(()));
        refused("café", "café");
        refused("ls; ✗", "✗");
    }

    // ----- subshells and groups -----

    #[test]
    fn subshells_and_groups_are_checked() {
        ok("(ls; echo)");
        ok("{ ls; echo; }");
        refused("(ls; rm x)", "rm");
        refused("{ ls; rm x; }", "rm");
        refused("( ( (rm) ) )", "rm");
        refused("{ { rm; }; }", "rm");
        ok("(ls) > out && { echo; } 2>&1 | cat");
    }

    #[test]
    fn braces_are_words_outside_command_position() {
        ok("echo { }");
        ok("echo {}");
        unparsable("{ ls }");
    }

    #[test]
    fn unbalanced_parentheses_are_parse_errors() {
        unparsable("(ls");
        unparsable("ls)");
        unparsable("{ ls;");
        unparsable("ls; }");
        unparsable("ls (x)");
    }

    #[test]
    fn word_after_a_compound_command_is_a_parse_error() {
        unparsable("(ls) rm");
        unparsable("{ ls; } rm");
    }

    // ----- substitutions -----

    #[test]
    fn substitution_in_an_argument_is_checked() {
        refused("echo $(rm -rf /)", "rm");
        refused("echo `rm -rf /`", "rm");
        refused("echo a$(rm)b", "rm");
        ok("echo $(ls) `cat x`");
    }

    #[test]
    fn substitution_inside_double_quotes_is_checked() {
        refused("echo \"$(rm x)\"", "rm");
        refused("echo \"a `rm x` b\"", "rm");
        refused("echo \"$(echo \")\"; rm)\"", "rm");
    }

    #[test]
    fn substitution_inside_single_quotes_is_data() {
        ok("echo '$(rm x)' '`rm`'");
    }

    #[test]
    fn nested_substitutions_are_checked() {
        refused("echo $(echo $(echo $(rm)))", "rm");
        refused("echo `echo \\`rm\\``", "rm");
        refused("echo \"$(echo \"$(rm)\")\"", "rm");
    }

    #[test]
    fn outer_command_is_checked_before_inner() {
        refused("curl $(rm x)", "curl");
        refused("ls $(rm x)", "rm");
        refused("X=$(rm) curl", "curl");
        refused("echo $(rm) > $(curl)", "rm");
    }

    #[test]
    fn escaped_backtick_inside_substitution_is_literal() {
        ok("echo $(echo \\`rm\\`)");
    }

    #[test]
    fn case_inside_a_substitution_is_refused() {
        // bash before 5.2 may end the substitution at the pattern's `)`.
        unparsable("echo $(case x in x) ls;; esac)");
        unparsable("cat <(case x in (x) ls;; esac)");
        ok("echo `case x in x) ls;; esac`");
    }

    #[test]
    fn bash_5_3_command_expansion_is_refused() {
        unparsable("echo ${ rm; }");
        unparsable("echo ${| rm; }");
        unparsable("echo \"${\nrm; }\"");
    }

    #[test]
    fn comment_inside_substitution_runs_to_end_of_line() {
        ok("echo $(ls # )\n)");
        ok("echo $(# )\nls)");
        unparsable("echo $(ls # )");
    }

    #[test]
    fn comment_older_bash_would_not_see_in_a_substitution_is_refused() {
        // bash 5.1 ends `$(true;# )` at its `)` and runs `rm`.
        unparsable("echo $(true;# ) ; rm\n)");
        ok("echo $(true ; # )\n)");
        ok("ls;# rm");
        unparsable("echo \"$(true # )\" ; rm ; echo \"\n)\"");
    }

    #[test]
    fn two_heredocs_on_a_line_inside_a_substitution_are_refused() {
        unparsable("echo $(cat <<A <<B\na\nA\nb\nB\n)");
        ok("echo $(cat <<A\na\nA\n)");
    }

    #[test]
    fn process_substitution_is_checked() {
        ok("cat <(ls) >(grep x)");
        refused("cat <(rm x)", "rm");
        refused("ls > >(rm x)", "rm");
        refused("cat 2<(rm)", "rm");
    }

    #[test]
    fn arithmetic_is_not_a_command() {
        ok("echo $((a + b * 2)) $[1+1]");
        ok("(( i++ ))");
        ok("((x = y ? 1 : 2))");
        ok("for ((i = 0; i < 3; i++)); do echo $i; done");
    }

    #[test]
    fn substitution_inside_arithmetic_is_checked() {
        refused("echo $(( $(rm) + 1 ))", "rm");
        refused("(( $(rm) ))", "rm");
        refused("echo $[ `rm` ]", "rm");
        refused("echo $(( ' $(rm) ' ))", "rm");
    }

    #[test]
    fn arithmetic_that_is_not_arithmetic_is_reread_as_a_substitution() {
        refused("echo $((rm) )", "rm");
        refused("((rm) )", "rm");
        ok("echo $((ls) | (cat))");
    }

    #[test]
    fn shifts_are_arithmetic_not_heredocs() {
        ok("echo $(( 1 << 4 )) $(( x >> 1 ))");
        ok("(( y = 1 << 2 ))");
    }

    #[test]
    fn arithmetic_bash_would_run_as_commands_is_refused() {
        // bash decides `$((` only at expansion, by counting parentheses as text; these
        // bodies it runs as commands, so the output of `echo` would become a command.
        unparsable("echo $(( $(case a in a) echo rm;; esac) ))");
        unparsable("echo $(( $(cat <<E\n)\nE\n) ))");
        unparsable("echo $(( `case a in (a) echo rm;; esac` ))");
        // Not balanced as text, though bash happens to read this one as arithmetic.
        unparsable("echo $(( $(echo 2 # )\n) ))");
        ok("echo $(( $(echo 1) + `echo 2` + \"3\" ))");
    }

    #[test]
    fn fallback_substitution_must_end_where_bash_ends_it() {
        // bash ends `$((…` at the `)` in the comment, and runs `ls` as a line of its own.
        unparsable("echo $((echo x) # )\nls\n)");
        ok("echo $((echo x) | (cat))");
        refused("echo $((rm) | (cat))", "rm");
    }

    #[test]
    fn old_arithmetic_hides_no_comment() {
        refused("echo $[ # ]; rm", "rm");
    }

    #[test]
    fn many_failed_arithmetic_guesses_are_refused_quickly() {
        let line = "echo ".to_string() + &"$((ls) ".repeat(40) + &")".repeat(40);
        let started = std::time::Instant::now();
        let _ = check_allowed(&line, LIST);
        let nested = "$((".repeat(30) + "x" + &") )".repeat(30);
        let _ = check_allowed(&nested, LIST);
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn parameter_expansion_in_arguments_is_fine() {
        ok("echo ${x} ${x:-default} ${#x} ${x%%.*} ${x/a/b} \"${x}\"");
    }

    #[test]
    fn substitution_inside_parameter_expansion_is_checked() {
        refused("echo ${x:-$(rm y)}", "rm");
        refused("echo \"${x:-`rm y`}\"", "rm");
        refused("echo ${x:-${y:-$(rm)}}", "rm");
    }

    #[test]
    fn single_quotes_in_parameter_expansion_do_not_hide_substitutions() {
        refused("echo \"${x:-'$(rm)'}\"", "rm");
        refused("echo ${a['$(rm)']}", "rm");
        refused("echo ${x:'$(rm)':1}", "rm");
        refused("echo ${a[$'$(rm)']}", "rm");
        refused("echo ${x:-'$(rm)'}", "rm"); // bash would not run this one
        ok("echo \"${x:-'}'}\" ${x:-'}'}");
    }

    #[test]
    fn prompt_expansion_operator_is_refused() {
        unparsable("echo ${x@P}");
        unparsable("echo \"${x@P}\"");
        ok("echo ${x@Q}");
    }

    // ----- redirections -----

    #[test]
    fn redirections_are_not_commands() {
        ok("ls > out");
        ok("ls >> out 2>&1");
        ok("cat < in");
        ok("ls &>/dev/null");
        ok("ls &>> log");
        ok("echo x >&2");
        ok("cat <<< word");
        ok("ls 2>/dev/null 3<>file 4>|f 0<&- 1>&-");
        ok("ls {fd}>file");
    }

    #[test]
    fn redirection_may_come_before_the_command_word() {
        ok("> out ls");
        ok("2>/dev/null ls -l");
        refused("> out rm x", "rm");
        ok("{fd}>/dev/null echo ok");
        refused("{PATH}>/dev/null ls", "{PATH}>");
    }

    #[test]
    fn redirection_target_substitution_is_checked() {
        refused("ls > $(rm x)", "rm");
        refused("cat <<< \"$(rm)\"", "rm");
        refused("ls 2> `rm`", "rm");
    }

    #[test]
    fn duplication_onto_a_file_name_is_refused() {
        // bash expands the word after `>&` twice: `>&'$(rm)'` runs rm.
        unparsable("echo >&'$(rm)'");
        unparsable("echo >&${v:-'$(rm)'}");
        unparsable("echo <&$fd");
        ok("echo >&2 2>&1 <&0 >&- 3>&1-");
    }

    #[test]
    fn redirection_without_target_is_a_parse_error() {
        unparsable("ls >");
        unparsable("ls > ;");
    }

    #[test]
    fn heredoc_body_is_skipped() {
        ok("cat <<EOF\nrm -rf /\ncurl x\nEOF\nls");
        ok("cat <<EOF | grep x\nrm\nEOF");
        ok("cat <<EOF\nrm\nEOF");
    }

    #[test]
    fn commands_after_a_heredoc_are_checked() {
        refused("cat <<EOF\nbody\nEOF\nrm x", "rm");
        refused("cat <<EOF; rm x\nbody\nEOF", "rm");
        refused("cat <<EOF &&\nbody\nEOF\nrm", "rm");
    }

    #[test]
    fn expanded_heredoc_body_substitution_is_checked() {
        refused("cat <<EOF\nhello $(rm x)\nEOF", "rm");
        refused("cat <<EOF\n`rm`\nEOF", "rm");
        ok("cat <<EOF\n\\$(rm x)\nEOF");
    }

    #[test]
    fn quoted_heredoc_body_is_data() {
        ok("cat <<'EOF'\n$(rm x)\nEOF");
        ok("cat <<\"EOF\"\n`rm`\nEOF");
        ok("cat <<\\EOF\n$(rm)\nEOF");
    }

    #[test]
    fn heredoc_dash_strips_leading_tabs() {
        ok("cat <<-EOF\n\trm\n\tEOF\nls");
        unparsable("cat <<EOF\n\trm\n\tEOF\nls");
    }

    #[test]
    fn several_heredocs_on_one_line_are_read_in_order() {
        ok("cat <<A <<B\nrm\nA\ncurl\nB\nls");
        refused("cat <<A <<B\nx\nA\ny\nB\nrm", "rm");
    }

    #[test]
    fn heredoc_inside_substitution_is_read_there() {
        ok("echo $(cat <<EOF\nrm\nEOF\n)");
        unparsable("echo $(cat <<EOF\nrm\nEOF)");
    }

    #[test]
    fn continued_line_of_an_expanded_heredoc_can_end_it() {
        // bash joins `EO\` and `F` into the delimiter line, then runs `rm`.
        refused("cat <<EOF\nEO\\\nF\nrm -rf /\nEOF", "rm");
        ok("cat <<EOF\nfoo\\\\\nEOF");
        ok("cat <<'EOF'\nEO\\\nF\nrm\nEOF");
        ok("cat <<EOF\na \\\n b\nEOF");
    }

    #[test]
    fn ansi_c_control_escape_does_not_swallow_the_quote() {
        // `$'\c'` ends at that quote for bash, so `rm` is a command.
        refused("echo $'\\c'; rm; echo ''", "rm");
    }

    #[test]
    fn heredoc_line_bash_may_take_for_its_end_in_a_substitution_is_refused() {
        unparsable("echo $(cat <<EOF\nEOF )\nrm\nEOF\n)");
        unparsable("echo $(cat <<'EOF'\nEOFx\nEOF\n)");
        ok("cat <<EOF\nEOF )\nrm\nEOF");
        ok("echo `cat <<EOF\nEOF )\nrm\nEOF\n`");
    }

    #[test]
    fn unterminated_heredoc_is_a_parse_error() {
        unparsable("cat <<EOF\nbody");
        unparsable("cat <<EOF");
    }

    #[test]
    fn heredoc_body_bash_would_start_elsewhere_is_refused() {
        unparsable("cat <<EOF; echo $(\nls)\nbody\nEOF");
        unparsable("cat <<EOF; a=(1\n2)\nb\nEOF");
    }

    #[test]
    fn unusual_heredoc_delimiters_are_refused() {
        unparsable("cat <<E\"O\"F\nx\nEOF");
        unparsable("cat <<$x\nbody\n$x");
    }

    // ----- assignments -----

    #[test]
    fn assignments_before_the_command_word_are_fine() {
        ok("RUST_LOG=debug cargo_like=1 ls");
        ok("A=1 B=2 echo");
        ok("A+=x ls");
        ok("a[1]=x ls");
        ok("X=1");
        refused("A=1 rm", "rm");
    }

    #[test]
    fn forbidden_assignments_are_refused_as_written() {
        refused("PATH=/tmp ls", "PATH=/tmp");
        refused("IFS=, ls", "IFS=,");
        refused("BASH_ENV=x ls", "BASH_ENV=x");
        refused("ENV=x ls", "ENV=x");
        refused("SHELLOPTS=x ls", "SHELLOPTS=x");
        refused("BASHOPTS=x ls", "BASHOPTS=x");
        refused("PS4='$(rm)' ls", "PS4='$(rm)'");
        refused("LD_PRELOAD=/x.so ls", "LD_PRELOAD=/x.so");
        refused("LD_LIBRARY_PATH=/x ls", "LD_LIBRARY_PATH=/x");
        refused("BASH_FUNC_ls=x ls", "BASH_FUNC_ls=x");
        refused("PATH+=:/tmp ls", "PATH+=:/tmp");
        refused("BASH_CMDS[ls]=/bin/rm", "BASH_CMDS[ls]=/bin/rm");
        refused("POSIXLY_CORRECT=1", "POSIXLY_CORRECT=1");
        refused("GCONV_PATH=/tmp ls", "GCONV_PATH=/tmp");
        refused("PATH=/tmp", "PATH=/tmp");
        refused("A=1 PATH=/tmp ls", "PATH=/tmp");
        ok("MYPATH=/tmp ls");
        ok("echo PATH=/tmp");
    }

    #[test]
    fn assignment_value_substitution_is_checked() {
        refused("X=$(rm x)", "rm");
        refused("X=\"`rm`\" ls", "rm");
        refused("a[$(rm)]=1", "rm");
        refused("a['$(rm)']=1", "rm");
    }

    #[test]
    fn array_assignments_are_checked() {
        ok("a=(1 2 \"three\")");
        ok("a=(\n 1 # c\n 2\n)");
        refused("a=(1 $(rm) 2)", "rm");
        refused("PATH=(/tmp)", "PATH=(/tmp)");
        unparsable("b=(1 2)rm x");
        refused("a=([ $(rm) ]=1)", PARSE);
        ok("a=([k]=v [j]=w)");
    }

    #[test]
    fn subscript_hides_no_comment() {
        unparsable("a[ # ]=1; rm x");
        unparsable("> f a[ #\n rm ]=1");
        ok("echo a[ # ]");
    }

    // ----- compound commands and keywords -----

    #[test]
    fn if_branches_are_checked() {
        ok("if ls; then echo; elif cat; then grep; else true; fi");
        refused("if rm; then ls; fi", "rm");
        refused("if ls; then rm; fi", "rm");
        refused("if ls; then ls; elif rm; then ls; fi", "rm");
        refused("if ls; then ls; else rm; fi", "rm");
        ok("if ls\nthen\n  echo\nfi");
    }

    #[test]
    fn loops_are_checked() {
        ok("while ls; do echo; done");
        ok("until ls; do echo; done");
        refused("while rm; do ls; done", "rm");
        refused("until ls; do rm; done", "rm");
        ok("for x in a b c; do echo $x; done");
        ok("for x do echo; done");
        ok("for x; do echo; done");
        ok("for x\nin a\ndo\n echo\ndone");
        refused("for x in $(rm); do ls; done", "rm");
        refused("for x in a; do rm; done", "rm");
        ok("select x in a b; do echo; done");
        refused("for ((i=$(rm); i<1; i++)); do ls; done", "rm");
    }

    #[test]
    fn loop_variable_may_not_be_forbidden() {
        refused("for PATH in /tmp; do ls; done", "for PATH");
        refused("select IFS in a; do ls; done", "select IFS");
    }

    #[test]
    fn case_items_are_checked() {
        ok("case $x in a) ls;; b|c) echo;; *) cat;; esac");
        ok("case x in (a) ls;& b) echo;;& esac");
        ok("case x in\n a)\n  ls\n  ;;\n b) echo\nesac");
        ok("case x in esac");
        refused("case x in a) rm;; esac", "rm");
        refused("case $(rm) in a) ls;; esac", "rm");
        refused("case x in $(rm)) ls;; esac", "rm");
        refused("case x in a) ls;; esac; rm", "rm");
        unparsable("case x in a) ls;; fi");
    }

    #[test]
    fn keywords_are_not_command_words() {
        ok("if true; then ls; fi");
        ok("echo if then fi do done esac in");
        unparsable("fi");
        unparsable("then ls");
        unparsable("in");
        unparsable("if ls; done");
    }

    #[test]
    fn keyword_after_an_assignment_is_a_command_word() {
        refused("X=1 if", "if");
    }

    #[test]
    fn quoted_keyword_is_a_command_word() {
        refused("'if' x", "if");
    }

    #[test]
    fn cond_command_must_be_listed() {
        refused("[[ -f x ]]", "[[");
        let list = ["[[", "ls"];
        assert_eq!(check_allowed("[[ -f x && $y == z ]] && ls", &list), Ok(()));
        assert_eq!(check_allowed("[[ $x =~ ^(a|b)$ ]]", &list), Ok(()));
        assert_eq!(
            check_allowed("[[ $(rm) ]]", &list),
            Err("Command not allowed: rm".into())
        );
        assert_eq!(
            check_allowed("[[ x =~ # ]]; rm", &list),
            Err(format!("Command not allowed: {PARSE}"))
        );
    }

    #[test]
    fn quoted_subscripts_evaluated_by_builtins_are_checked() {
        refused("[ -v 'a[$(rm x)]' ]", "rm");
        let list = ["test", "[[", "printf", "read", "declare"];
        for line in [
            "test -v 'a[$(rm)]'",
            "[[ -v 'a[`rm`]' ]]",
            "[[ 'a[$(rm)]' -eq 1 ]]",
            "printf -v 'a[$(rm)]' x",
            "read 'a[$(rm)]'",
            "declare \"a[$(rm)]=1\"",
        ] {
            assert_eq!(
                check_allowed(line, &list),
                Err("Command not allowed: rm".into()),
                "{line}"
            );
        }
        ok("[ 'a[1]' = x ] && echo 'a[$(rm)]'");
    }

    #[test]
    fn negation_and_time_are_keywords() {
        ok("! ls");
        ok("! ! ls");
        ok("time ls");
        ok("time -p ls | grep x");
        ok("time");
        ok("!");
        refused("! rm", "rm");
        refused("time rm", "rm");
        refused("ls | time rm", "time");
    }

    #[test]
    fn extglob_negation_is_refused() {
        unparsable("!(ls)");
    }

    #[test]
    fn function_definitions_are_refused() {
        unparsable("f() { ls; }");
        unparsable("f () { ls; }; f");
        unparsable("function f { ls; }");
        unparsable("ls() { rm -rf /; }; ls");
    }

    #[test]
    fn coproc_is_refused() {
        unparsable("coproc ls");
    }

    #[test]
    fn wrapper_words_are_ordinary_words() {
        for word in [
            "eval", "exec", "source", ".", "command", "builtin", "env", "xargs", "sudo",
        ] {
            refused(&format!("{word} ls"), word);
            assert_eq!(check_allowed(&format!("{word} rm -rf /"), &[word]), Ok(()));
        }
    }

    #[test]
    fn declaration_builtins_cannot_set_forbidden_variables() {
        let list = ["export", "declare", "read", "printf", "set", "ls"];
        let check = |line: &str| check_allowed(line, &list);
        assert_eq!(check("export RUST_LOG=debug; ls"), Ok(()));
        assert_eq!(
            check("export PATH=/tmp"),
            Err("Command not allowed: PATH=/tmp".into())
        );
        assert_eq!(
            check("declare -n r=PATH"),
            Err("Command not allowed: r=PATH".into())
        );
        assert_eq!(check("read IFS"), Err("Command not allowed: IFS".into()));
        assert_eq!(
            check("printf -v PATH x"),
            Err("Command not allowed: PATH".into())
        );
        assert_eq!(check("printf 'PATH'"), Ok(()));
        assert_eq!(check("set -k"), Err("Command not allowed: set -k".into()));
        assert_eq!(
            check("set -o posix"),
            Err("Command not allowed: set posix".into())
        );
        assert_eq!(check("set -e"), Ok(()));
    }

    #[test]
    fn builtins_that_rebind_or_run_code_are_refused() {
        let list = ["hash", "mapfile", "declare"];
        assert_eq!(
            check_allowed("hash -p /bin/rm ls", &list),
            Err("Command not allowed: hash -p".into())
        );
        assert_eq!(
            check_allowed("mapfile -C 'rm x' -c 1 a", &list),
            Err("Command not allowed: mapfile -C".into())
        );
        assert_eq!(
            check_allowed("declare -a x='($(rm))'", &list),
            Err("Command not allowed: rm".into())
        );
        assert_eq!(check_allowed("hash -r; mapfile -t a", &list), Ok(()));
    }

    // ----- robustness -----

    #[test]
    fn moderate_nesting_is_fine() {
        let line = "echo ".to_string() + &"$(echo ".repeat(20) + &")".repeat(20);
        ok(&line);
        let parens = "( ".repeat(20) + "ls" + &" )".repeat(20);
        ok(&parens);
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        for depth in [100, 10_000] {
            unparsable(&("$(".repeat(depth) + &")".repeat(depth)));
            unparsable(&("( ".repeat(depth) + "ls" + &" )".repeat(depth)));
            unparsable(&("${x:-".repeat(depth) + &"}".repeat(depth)));
            unparsable(&("\"$(".repeat(depth) + &")\"".repeat(depth)));
            unparsable(&("$((".repeat(depth) + &"))".repeat(depth)));
            unparsable(&("{ ".repeat(depth) + "ls" + &"; }".repeat(depth)));
            unparsable(&("if ".repeat(depth) + "ls"));
        }
        let ticks = (0..12).fold(String::from("ls"), |acc, _| {
            format!("`{}`", acc.replace('\\', "\\\\").replace('`', "\\`"))
        });
        assert!(check_allowed(&ticks, LIST).is_err());
    }

    #[test]
    fn long_flat_lines_are_fine() {
        let line = "ls; ".repeat(20_000);
        ok(&line);
        let pipes = "ls | ".repeat(20_000) + "ls";
        ok(&pipes);
    }

    /// A tiny deterministic generator, so the test needs no dependency and is repeatable.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[(self.next() % items.len() as u64) as usize]
        }
    }

    #[test]
    fn garbage_never_panics() {
        let pieces = [
            "$", "(", ")", "{", "}", "[", "]", "'", "\"", "`", "\\", ";", "&", "|", "<", ">", "#",
            "\n", " ", "\t", "a", "ls", "=", "!", "*", "?", "~", "0", "2", "-", "@P", "$(", "$((",
            "))", "${", "$[", "$'", "<(", "<<", "<<-", "EOF", "\nEOF\n", "if ", "then ", "fi",
            "for ", "in ", "do ", "done", "case ", "esac", ";;", "[[ ", " ]]", "time ", "x=", "a[",
            "é", "\\\n", "((", "{fd}>", "&>",
        ];
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        for _ in 0..5_000 {
            let len = (rng.next() % 40) as usize;
            let line: String = (0..len).map(|_| rng.pick(&pieces)).collect();
            let _ = check_allowed(&line, LIST);
        }
    }
}
