//! The `allowed_commands` gate: before a line is handed to `bash -c`, decide whether
//! every simple command in it starts with a listed word.
//!
//! Checking only the first word of the string would let `ls; rm -rf ~` through, so the
//! line is read with a small recursive-descent parser of bash syntax and every command
//! word found anywhere in it is checked: each part of a list or pipeline, the bodies of
//! subshells, groups and compound commands, and the commands inside `$(…)`, backticks and
//! `<(…)`/`>(…)` wherever they appear (arguments, quotes, assignments, redirections,
//! here-document bodies, `${…}`, arithmetic). A refusal is a [`Denial`], whose `Display`
//! is the text for the model.
//!
//! # What is refused, and why
//!
//! Whatever the list holds, a line is refused when:
//! - **a command word is not listed** ([`Denial::NotAllowed`]): judged after quote
//!   removal, so `"t"ouch` is `touch`; the text is exactly `Command not allowed: WORD`;
//! - **a command word is not a plain literal** ([`Denial::NotLiteral`]): an expansion,
//!   a substitution, a glob, a brace expansion, a leading `~` or an empty word, whose
//!   value is not known before the line runs;
//! - **it sets, unsets or rebinds a forbidden variable** ([`Denial::ForbiddenVariable`]):
//!   `PATH`, `IFS`, `BASH_ENV`, `ENV`, `SHELLOPTS`, `BASHOPTS`, `PS4`, `BASH_CMDS`,
//!   `BASH_ALIASES`, `EXECIGNORE`, `POSIXLY_CORRECT`, `BASH_COMPAT`, `GCONV_PATH`,
//!   `BASH_LOADABLES_PATH`, `TEXTDOMAIN`, `TEXTDOMAINDIR`, `LD_*` and `BASH_FUNC_*` (one
//!   list, `FORBIDDEN_VARIABLES`), which change which program a word runs or how bash
//!   reads the line (a `$"…"` string is translated, and the translation expanded, only
//!   under a `TEXTDOMAIN`: without one it reads as `"…"`). Every way is
//!   looked at, each name judged by its value after quote removal (`export BASH''_ENV=p`
//!   names `BASH_ENV`): a prefix assignment, a name given to `export`, `declare`,
//!   `typeset`, `local`, `readonly`, `read` (and `read -a`), `printf -v`, `mapfile`,
//!   `readarray`, `getopts`, `wait -p`, `unset` (bash's default `PATH` ends in `.`), a
//!   `for`/`select` variable, `{NAME}>file`, an assignment in arithmetic (`$((PATH=0))`,
//!   `(( … ))`, `let`, subscripts, `${x:offset}`, the value of an integer variable),
//!   `${NAME=…}`/`${NAME:=…}`, and a nameref to one (`declare -n r=PATH`). One
//!   assignment is accepted: `IFS=…` before `read` (`while IFS= read -r line`), which
//!   holds only while that `read` runs and changes only how it splits its input (bash
//!   never splits a literal word on `IFS`, and the gate reads every unquoted expansion
//!   as splitting anywhere already);
//! - **a name it sets is not known before the line runs** ([`Denial::NotLiteralName`]):
//!   a name argument of those builtins that is not a plain literal after quote removal
//!   (`export "$n"=1`, `read $n`, `export PA*H=x`), a nameref without a literal target
//!   (`declare -n r`, after which `r=PATH` sets the target), a `for` loop over a nameref
//!   (it retargets the nameref at each word), `${!r:=…}`;
//! - **a builtin option runs its argument or changes what later words run**
//!   ([`Denial::Option`]), as listed below, and an option word that expands where a
//!   builtin with name options reads options (`printf "$f" x` may be `printf -v PATH x`,
//!   `wait $pid` may be `wait -p PATH`, `jobs $x` may be `jobs -x cmd`), even as the last
//!   word; `--` before it makes it an operand (`wait -- $pid`); and an option's
//!   argument that may split into more words (`read -p $x NAME` is `read -p foo -a PATH
//!   NAME` when x is `foo -a PATH`): quoted, it is one word;
//! - **the line cannot be read the way bash will** ([`Denial::Unparseable`]): refusing
//!   too much costs the agent a retry, refusing too little runs a command nobody allowed:
//!   - function definitions (`f() {…}`, `function f`) and `coproc`;
//!   - nesting deeper than 64 levels;
//!   - `${…@P}` (prompt expansion runs substitutions stored in a variable), `$"…"`
//!     inside `${…}`, `$((…))` and subscripts (where its text is evaluated with the
//!     rest; outside quotes it reads as `"…"`, see `TEXTDOMAIN` above), and `!(…)` (an
//!     extglob pattern);
//!   - `>&WORD` / `<&WORD` when WORD expands or holds quotes, globs or `~` (bash expands
//!     it a second time: `>&'$(cmd)'` runs cmd); a plain literal file name, digit or `-`
//!     is accepted (`cmd >& /dev/null`);
//!   - here-document delimiters other than a plain word, quoted or not as a whole, a
//!     here-document whose body would start inside a nested substitution or array, and,
//!     inside `$(…)`, a body line that starts with the delimiter (bash 5.2 may end the
//!     body at `EOF )` and run the rest of the line);
//!   - a backslash-newline that joins two characters on a line holding a
//!     here-document, a comment, a substitution, `${…}` or an ANSI-C string
//!     (`$\<newline>(`); elsewhere it is removed first, as bash removes it before
//!     reading tokens (`l\<newline>s` is `ls`);
//!   - `$((…))` that bash might run as commands rather than evaluate, and a `$((` that
//!     is not arithmetic where bash would end it elsewhere than the parser does;
//!   - `name[…]` holding blanks or operators where bash may read it as one subscript,
//!     `a=(…)x`, a comment or `;` inside `[[ … ]]` (a newline there is a blank);
//!   - what bash before 5.2 reads differently inside `$(…)`, which it scans as text
//!     rather than parses: `case`, a comment not after a blank (or any comment inside
//!     `"$(…)"`), two here-documents on one line;
//!   - bash 5.3's `${ cmd; }` and `${| cmd; }`, which run commands.
//!
//! Two more rules close what bash does with text later:
//! - quoted or escaped text holding a command substitution inside a subscript
//!   (`x='a[$(cmd)]'`) is inert as written, but runs `cmd` once bash evaluates the
//!   variable as arithmetic (`declare -i`, `(( x ))`, `let`, `[[ -v $x ]]`, `for ((…))`);
//!   wherever such text becomes a variable's value — an assignment (a subscripted one,
//!   `a[0]=…`, too), an array's element (`[0]=…` too), a here-string read by `read` or
//!   `mapfile`, a name argument of a builtin (`declare a[0]=…` too) — its
//!   substitutions are checked as if they were live (data a command reads at run time
//!   into an integer variable stays out of reach, with the gaps listed below);
//! - a quoted or escaped `time` (`\time`, `'time'`) is not the keyword but the
//!   program, which runs its first operand: that operand is a command word like any
//!   other.
//!
//! `[[ … ]]` gets no grammar of its own: `[[` is a command word that must be listed like
//! any other, and substitutions in its operands are checked.
//!
//! # Builtin options that run their argument as a command
//!
//! | builtin, option | what the gate does |
//! |---|---|
//! | `jobs -x CMD ARGS` | refused: runs CMD |
//! | `mapfile -C CB` / `readarray -C CB` | refused: runs the callback |
//! | `trap ACTION SIG…` | ACTION is checked as a command line; refused when it expands |
//! | `complete -C CMD`, `compgen -C CMD` | refused: runs CMD |
//! | `complete -F F`, `compgen -F F` | refused: runs a function |
//! | `complete -W LIST`, `compgen -W LIST` | LIST is expanded by bash, so its substitutions are checked; refused when it expands |
//! | `bind -x SEQ:CMD` | refused: runs CMD |
//! | `fc`, unless it only lists (`-l` without `-s` or `-e`) | refused: runs an editor and re-runs history, changed (`fc -l -s old=new`) |
//! | `enable -f FILE` | refused: loads code |
//! | `enable -n NAME` | refused: with the builtin off, its name runs a program found on `PATH` (and our exit trap calls `builtin`) |
//! | `hash -p FILE NAME` | refused: rebinds a command word |
//! | `set -k` | refused: turns later arguments into assignments |
//! | `set -o posix`, `set -o keyword`, `set -o history`, `set -H` (`histexpand`), `shopt -s expand_aliases`, `shopt -s compat…` | refused: change how later lines are read (history expansion rewrites them), let aliases change what a word runs, or give `fc` a command to re-run |
//! | `getopts $x NAME…` | refused when a word before the name may split (`getopts $x` is `getopts ab PATH` when x is `ab PATH`); `"$x"` is one word |
//! | `eval`, `source`/`.`, `exec`, `command`, `builtin` | ordinary command words here: listing one allows what it runs. The policy (`Policy`, which `allowed_commands` builds) looks through them and judges what they run |
//!
//! Subscripts in quoted arguments that name-taking builtins evaluate are checked too
//! (`[ -v 'a[$(cmd)]' ]` runs cmd).
//!
//! The reading follows bash 5.2 and is checked against it on every test run
//! (`tests/it/gate_differential.rs`): generated lines the gate accepts are run under a bash
//! that records every program it starts and the environment it passes.
//!
//! # Known gaps
//!
//! bash evaluates array subscripts and arithmetic found in variable values at run time
//! (`x='a[$(cmd)]'; echo $((x))`, `x=$(cat f); ((x))`, `${!x}`, `[[ $x -eq 1 ]]`,
//! `declare -a "x=($y)"`); a listed word may itself run code (`eval`, `env`, `xargs`,
//! `bash`, `git -c core.pager=…`), and so may the environment variables its program
//! reads (`GIT_SSH_COMMAND=… git fetch`, `PAGER`, `NODE_OPTIONS`), which only the
//! bash-level ones above are refused for; a listed relative path (`./build.sh`) depends
//! on the directory. A `TEXTDOMAIN` in the host's own environment (no line can set one)
//! makes `$"…"` strings translated from its catalogs, and the translations expanded. The
//! gate decides which command words start; it is not a sandbox.

// The parser, one part per file; each adds methods to `Parser`.
mod builtins;
mod commands;
mod compound;
mod cursor;
mod denial;
mod expansions;
pub(crate) mod inert;
mod names;
mod option_words;
mod rules;
mod words;

#[cfg(test)]
mod tests;

pub use denial::{Change, Denial};

use std::mem;

/// Nesting depth (lists, substitutions, expansions) beyond which a line is refused. The
/// parser is recursive, so without a cap a line of a few thousand `$(` would overflow the
/// stack instead of being refused.
const MAX_DEPTH: usize = 64;

/// How many times the parser may re-read text that turned out not to be arithmetic
/// (`$((cmd) …)`). Each re-read can nest another, so an unbounded number could take
/// exponential time on a hostile line.
const MAX_RETRIES: usize = 64;

/// Reserved words that end a list (the list of a compound command).
const LIST_ENDS: [&str; 8] = ["then", "elif", "else", "fi", "do", "done", "esac", "}"];

/// Builtins that evaluate array subscripts inside their arguments (`-v name`, names to
/// read into or declare, arithmetic operands).
const EVALUATES_NAMES: &str = "[ test declare typeset local export readonly read mapfile \
    readarray printf unset let getopts wait shift exit return break continue";

/// Variables whose assignment changes which program a command word runs or how bash
/// reads the rest of the line, with `LD_*` and `BASH_FUNC_*` (see `is_forbidden_name`):
/// the one list every check uses. Beyond the documented list: `BASH_CMDS` (the command
/// hash table), `BASH_ALIASES` and `EXECIGNORE` change what a word runs as `PATH` does;
/// `POSIXLY_CORRECT` and `BASH_COMPAT` change how later lines are parsed; `GCONV_PATH`
/// loads code into programs as `LD_PRELOAD` does; `BASH_LOADABLES_PATH` is where
/// `enable -f` finds code to load.
const FORBIDDEN_VARIABLES: &str = "PATH IFS BASH_ENV ENV SHELLOPTS BASHOPTS PS4 \
    BASH_CMDS BASH_ALIASES EXECIGNORE POSIXLY_CORRECT BASH_COMPAT GCONV_PATH \
    BASH_LOADABLES_PATH TEXTDOMAIN TEXTDOMAINDIR";

/// Whether assigning `name` changes which program a command word runs or
/// how bash reads the rest of the line (`PATH`, `IFS`, `BASH_ENV`, `LD_*`,
/// `BASH_FUNC_*`, …): the gate refuses such an assignment under an
/// allow-list, and the persisted environment never carries one there.
///
/// ```
/// assert!(bashtools::gate::changes_what_runs("LD_PRELOAD"));
/// assert!(!bashtools::gate::changes_what_runs("RUST_LOG"));
/// ```
pub fn changes_what_runs(name: &str) -> bool {
    rules::is_forbidden_name(name)
}

/// Checks every simple command of `line` against `allowed`.
/// `Ok(())` when all are allowed; otherwise the first refusal, whose `Display` is the
/// exact text for the model.
///
/// The whole line is parsed before anything is checked, so a line that cannot be parsed
/// is refused as such even when an earlier command is also not allowed. An empty
/// `allowed` allows no command at all; a line without commands (`X=1`, a comment) passes.
pub fn check_allowed<S: AsRef<str>>(line: &str, allowed: &[S]) -> Result<(), Denial> {
    walk(line, |words| match words[0].literal() {
        Some(word) if allowed.iter().any(|a| a.as_ref() == word) => Ok(()),
        Some(word) => Err(Denial::NotAllowed {
            word: word.to_string(),
        }),
        // An expansion, a glob or an empty word: show it as written, since there is
        // no value to show before the line runs.
        None => Err(Denial::NotLiteral {
            word: words[0].raw.clone(),
        }),
    })
}

/// Reads `line` as [`check_allowed`] does and calls `judge` with the words
/// of each simple command, in reading order (outer before inner), after
/// the gate's own refusals of that point in the line: the first refusal,
/// the gate's or `judge`'s, ends the walk and is returned. The policy
/// (`crate::policy`) judges lines through it.
pub(crate) fn walk(
    line: &str,
    mut judge: impl FnMut(&[Spelled]) -> Result<(), Denial>,
) -> Result<(), Denial> {
    let joined = join_continuations(line);
    let line = joined.as_deref().unwrap_or(line);
    let checks = Parser::new(line.chars().collect(), 0, 0, false)
        .parse_program()
        .map_err(|ParseError(reason)| Denial::Unparseable { reason })?;
    let namerefs: Vec<&str> = checks
        .iter()
        .filter_map(|check| match check {
            Check::Nameref(name) => Some(name.as_str()),
            _ => None,
        })
        .collect();
    for check in &checks {
        match check {
            Check::Command(words) => judge(words)?,
            Check::Refuse(refusal) => return Err(refusal.clone()),
            Check::Nameref(_) => {}
            // A loop over a nameref makes it refer to each word in turn, so
            // `for r in PATH` retargets `r` at PATH.
            Check::LoopVariable { name, text } if namerefs.contains(&name.as_str()) => {
                return Err(Denial::NotLiteralName { text: text.clone() })
            }
            Check::LoopVariable { .. } => {}
        }
    }
    Ok(())
}

/// `line` with every backslash-newline removed, as bash removes them before it reads
/// tokens (`l\<newline>s` is `ls`, `wh\<newline>ile` is `while`): outside quotes and
/// inside double quotes, not inside single quotes. Only for lines where that is all
/// there is to it: none holding a here-document, a comment, a substitution, an
/// expansion in braces or an ANSI-C string, whose texts bash reads by rules of their
/// own (there the parser refuses a backslash-newline inside a word, as before).
/// `None` when there is nothing to join or the line is not such a line.
fn join_continuations(line: &str) -> Option<String> {
    if !line.contains("\\\n") {
        return None;
    }
    if ["<<", "#", "$(", "`", "${", "$'"]
        .iter()
        .any(|s| line.contains(s))
    {
        return None;
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    let (mut single, mut double) = (false, false);
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '\\' if !single => match chars.next() {
                Some('\n') => continue,
                Some(next) => {
                    out.push(c);
                    out.push(next);
                    continue;
                }
                None => {}
            },
            _ => {}
        }
        out.push(c);
    }
    // What joining made (`<\<newline><` is `<<`) counts as much as what was there.
    let own_rules = ["<<", "#", "$(", "`", "${", "$'"];
    (!own_rules.iter().any(|s| out.contains(s))).then_some(out)
}

/// One word of a simple command, as the gate read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Spelled {
    /// As written.
    pub raw: String,
    /// After quote removal, when it is a plain literal (no expansion, glob,
    /// brace expansion, leading `~`, and not empty).
    value: Option<String>,
    /// The part of its value known before the line runs: all of it for a
    /// literal, the text before the first expansion otherwise.
    pub known: String,
}

impl Spelled {
    fn of(word: &Word) -> Spelled {
        let value = (word.literal && !word.value.is_empty()).then(|| word.value.clone());
        Spelled {
            raw: word.raw.clone(),
            value,
            known: word.known_value().to_string(),
        }
    }

    /// A literal word written plainly.
    pub(crate) fn plain(word: &str) -> Spelled {
        Spelled {
            raw: word.into(),
            value: Some(word.into()),
            known: word.into(),
        }
    }

    /// A word that expands, nothing of it known (for tests).
    #[cfg(test)]
    pub(crate) fn expanding(raw: &str) -> Spelled {
        Spelled {
            raw: raw.into(),
            value: None,
            known: String::new(),
        }
    }

    /// A word that expands, `known` of it known before (for tests).
    #[cfg(test)]
    pub(crate) fn partly(raw: &str, known: &str) -> Spelled {
        Spelled {
            raw: raw.into(),
            value: None,
            known: known.into(),
        }
    }

    /// Its value, when it is known before the line runs.
    pub(crate) fn literal(&self) -> Option<&str> {
        self.value.as_deref()
    }
}

/// One decision to make, in reading order (outer before inner).
enum Check {
    /// A simple command: its command word, then the words after it (redirections and
    /// assignments left out).
    Command(Vec<Spelled>),
    /// Refused whatever the list holds.
    Refuse(Denial),
    /// `declare -n NAME=…` somewhere in the line: NAME is a nameref.
    Nameref(String),
    /// The variable of a `for` or `select` loop, refused when it is a nameref anywhere
    /// in the line (a loop earlier in the text may run after the declaration).
    LoopVariable { name: String, text: String },
}

/// Why the line cannot be read: the clause shown after "could not parse the command
/// line", saying what is unsupported and what to write instead.
struct ParseError(&'static str);
type PResult<T> = Result<T, ParseError>;

impl ParseError {
    const SYNTAX: ParseError = ParseError(
        "incomplete, or bash syntax the gate does not read such as a function definition: \
         write it more plainly",
    );
    const UNSUPPORTED: ParseError = ParseError(
        "functions, coproc and this construct are not supported: run the commands directly",
    );
    const DEPTH: ParseError =
        ParseError("nested more than 64 levels: split it into several commands");
    const LOCALE: ParseError =
        ParseError("$\"…\" here is translated and evaluated at run time: write \"…\" instead");
    const PROMPT: ParseError = ParseError("${…@P} runs the text of a variable: leave out @P");
    const EXTGLOB: ParseError = ParseError("!( is an extglob pattern here: write ! ( with a blank");
    const DUPLICATION: ParseError =
        ParseError(">&WORD and <&WORD expand WORD twice: write a plain file name, a digit or -");
    const DELIMITER: ParseError =
        ParseError("a here-document delimiter must be a plain word: write <<EOF or <<'EOF'");
    const CONTINUATION: ParseError =
        ParseError("a backslash-newline inside a word joins it: write the word on one line");
    const BRACE_COMMAND: ParseError =
        ParseError("${ …; } runs commands in bash 5.3: write $(…) instead");
    const OLD_BASH: ParseError = ParseError(
        "bash before 5.2 reads this differently inside $(…): use backticks or a separate command",
    );
    const ARITHMETIC: ParseError =
        ParseError("bash may run this $((…)) as commands: write $( (…) ) or plain arithmetic");
    const SUBSCRIPT: ParseError =
        ParseError("a subscript holding blanks, operators or a comment: write it without them");
    const HEREDOC_PLACE: ParseError = ParseError(
        "bash may read this here-document's body elsewhere: end the line after the command",
    );
    const COND: ParseError =
        ParseError("a comment, ; or newline inside [[ … ]]: keep [[ … ]] on one line");
}

/// What scanning a word collects: its text as written, its value after quote removal,
/// whether that value is a plain literal, and the checks of the substitutions inside.
struct Word {
    raw: String,
    value: String,
    literal: bool,
    /// How much of `value` (in bytes) is known before the line runs: all of it for a
    /// literal, the part before the first expansion otherwise.
    known: usize,
    inner: Vec<Check>,
}

impl Word {
    fn new() -> Self {
        Word {
            raw: String::new(),
            value: String::new(),
            literal: true,
            known: 0,
            inner: Vec::new(),
        }
    }

    /// Marks the word as expanding from here on; what came before stays known.
    fn expands(&mut self) {
        if self.literal {
            self.known = self.value.len();
            self.literal = false;
        }
    }

    /// The part of the value known before the line runs.
    fn known_value(&self) -> &str {
        if self.literal {
            &self.value
        } else {
            &self.value[..self.known]
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
            return Err(ParseError::SYNTAX);
        }
        Ok(out)
    }
}
