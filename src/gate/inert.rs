//! Whether a command line can change the working directory or any variable
//! of the shell that runs it.
//!
//! The sticky working directory and the kept environment are read from the
//! shell at its end, by an `EXIT` trap that prints `pwd -P` and
//! `export -p` into a record (`os/bash/lastdir.rs`). That trap costs every
//! command some 0.1-0.2 ms of bash's own time, and its record a memory file
//! — about a tenth of a `bash -c 'echo hi'`. Most lines an agent runs
//! (`cargo test`, `git status`, `ls -la src`) cannot change either: they
//! only start programs, and no program can change its parent's directory
//! or variables. Such a line is run without the trap, and the directory
//! and variables simply stay what they were.
//!
//! The judgement is deliberately narrow: a line is inert only when it is
//! plainly so, read as bash reads it, and anything unusual makes it not
//! inert (it then gets the trap, as every line did before). Inert lines:
//! - hold no newline or carriage return (no here-document body), no `$` or
//!   backquote outside single quotes, no parenthesis outside quotes (so no
//!   expansion, substitution, arithmetic, subshell or function), and no
//!   unterminated quote or trailing backslash;
//! - are simple commands joined by `;`, `&`, `|`, `&&`, `||`, `|&`, each
//!   starting with a command word (not a redirection, not an assignment);
//! - have command words that are plain literals after quote removal (no
//!   glob, brace or empty word) and are neither a reserved word nor a bash
//!   builtin, but for the few builtins that change nothing a later command
//!   sees (`echo`, `true`, `false`, `:`, `test`, `[`, `pwd`, `type`, `kill`,
//!   `exit`) — and `test`/`[` only without a `[` in their arguments, since
//!   `-v` evaluates an array subscript as arithmetic, which may assign.
//!
//! A word is an assignment only before the command word (after it, `a=b`
//! is an argument), so with every command word checked, no variable can be
//! set — but for a redirection that names a variable (`{NAME}>FILE` assigns
//! the descriptor's number to NAME wherever it stands), which makes a line
//! not inert. What a line does not show — a function or alias its `BASH_ENV`
//! defines, a function imported from a `BASH_FUNC_…` variable — is the
//! caller's to rule out (`api/start.rs` records every command whose
//! environment carries either).

/// Bash's reserved words (`compgen -k`).
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "time", "{", "}", "!", "[[", "]]", "coproc",
];

/// Bash's builtins (`compgen -b`, bash 5.2).
const BUILTINS: &[&str] = &[
    ".",
    ":",
    "[",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
];

/// The builtins that change nothing a later command sees: no directory,
/// no variable, no option, no trap.
const HARMLESS_BUILTINS: &[&str] = &[
    "echo", "true", "false", ":", "test", "[", "pwd", "type", "kill", "exit",
];

/// Whether running `line` in bash leaves the shell's working directory and
/// variables as they were (see the module's docs). `false` means "maybe
/// not", never "surely not".
pub(crate) fn is_inert(line: &str) -> bool {
    if line.contains(['\n', '\r']) {
        return false;
    }
    let mut rest = line;
    // At the start of a simple command: the next word is its command word.
    let mut at_start = true;
    // The command word is `test` or `[`, whose `-v` evaluates an array
    // subscript as arithmetic (`[ -v 'a[X=1]' ]` assigns X).
    let mut testing = false;
    loop {
        rest = rest.trim_start_matches([' ', '\t']);
        let Some(c) = rest.chars().next() else {
            // An empty line, or one that ends after an operator.
            return true;
        };
        match c {
            // `&>FILE`: a redirection, not a separator.
            '&' if rest.starts_with("&>") => {
                if at_start {
                    return false;
                }
                rest = rest.trim_start_matches(['<', '>', '&', '|']);
            }
            ';' | '&' | '|' => {
                rest = &rest[1..];
                at_start = true;
            }
            '<' | '>' => {
                if at_start {
                    return false;
                }
                // The operator; its target is read next as a plain word.
                rest = rest.trim_start_matches(['<', '>', '&', '|']);
            }
            _ => {
                let Some((word, after)) = read_word(rest) else {
                    return false;
                };
                // `2>&1`: a number right before `<`/`>` names a descriptor.
                let descriptor = after.starts_with(['<', '>']);
                if at_start {
                    if descriptor || !harmless_command(&word) {
                        return false;
                    }
                    testing = matches!(word.value.as_str(), "test" | "[");
                    at_start = false;
                } else if testing && word.value.contains('[') {
                    return false;
                } else if descriptor && word.expands && word.value.starts_with('{') {
                    // `{NAME}>FILE`: bash opens a descriptor and assigns
                    // its number to NAME, after the command word too.
                    return false;
                }
                rest = after;
            }
        }
    }
}

/// One word as bash reads it, and what follows it; `None` for an
/// unterminated quote or a trailing backslash.
struct Word {
    /// After quote removal.
    value: String,
    /// Holds an unquoted glob or brace character, or starts with an
    /// unquoted `~`.
    expands: bool,
    /// Starts, unquoted, with `NAME=` or `NAME+=`.
    assignment: bool,
}

fn read_word(text: &str) -> Option<(Word, &str)> {
    let mut value = String::new();
    let mut expands = false;
    let mut chars = text.char_indices().peekable();
    let mut end = text.len();
    // Whether every character so far was unquoted and could be a name's.
    let mut name_so_far = true;
    let mut assignment = false;
    while let Some((i, c)) = chars.next() {
        match c {
            ' ' | '\t' | ';' | '&' | '|' | '<' | '>' => {
                end = i;
                break;
            }
            '\'' => {
                name_so_far = false;
                loop {
                    match chars.next()? {
                        (_, '\'') => break,
                        (_, q) => value.push(q),
                    }
                }
            }
            '"' => {
                name_so_far = false;
                loop {
                    match chars.next()? {
                        (_, '"') => break,
                        // Expansions and substitutions stay live here.
                        (_, '$' | '`') => return None,
                        (_, '\\') => {
                            // Inside double quotes a backslash quotes only
                            // these; `$`, backquote and newline are not in
                            // an inert line at all.
                            let (_, n) = chars.next()?;
                            if !matches!(n, '"' | '\\') {
                                value.push('\\');
                            }
                            value.push(n);
                        }
                        (_, q) => value.push(q),
                    }
                }
            }
            '\\' => {
                name_so_far = false;
                value.push(chars.next()?.1);
            }
            // Expansions, substitutions, subshells, arithmetic, functions.
            '$' | '`' | '(' | ')' => return None,
            '=' | '+' if name_so_far && !value.is_empty() => {
                let plus_equals = c == '+' && matches!(chars.peek(), Some((_, '=')));
                if c == '=' || plus_equals {
                    assignment = !value.starts_with(|d: char| d.is_ascii_digit());
                }
                name_so_far = false;
                value.push(c);
            }
            _ => {
                if matches!(c, '*' | '?' | '[' | ']' | '{' | '}') || (c == '~' && value.is_empty())
                {
                    expands = true;
                }
                if !(c.is_ascii_alphanumeric() || c == '_') {
                    name_so_far = false;
                }
                value.push(c);
            }
        }
    }
    let word = Word {
        value,
        expands,
        assignment,
    };
    Some((word, &text[end..]))
}

/// Whether `word`, as a command word, starts something that cannot change
/// the shell's directory or variables: a program, or a harmless builtin.
fn harmless_command(word: &Word) -> bool {
    if word.assignment || word.value.is_empty() {
        return false;
    }
    // `[` alone is the test builtin, not a pattern.
    if word.expands && word.value != "[" {
        return false;
    }
    let v = word.value.as_str();
    if KEYWORDS.contains(&v) {
        return false;
    }
    !BUILTINS.contains(&v) || HARMLESS_BUILTINS.contains(&v)
}

#[cfg(test)]
mod tests;
