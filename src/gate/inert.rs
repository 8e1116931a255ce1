//! Whether a command line can change the working directory or any variable
//! of the shell that runs it.
//!
//! The sticky working directory and the kept environment are read from the
//! shell at its end, by an `EXIT` trap that prints `pwd -P` and
//! `export -p` into a record (`os/lastdir.rs`). That trap costs every
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
//! set. What a line does not show — a function or alias its `BASH_ENV`
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
mod tests {
    use super::*;

    #[test]
    fn plain_programs_are_inert() {
        for line in [
            "ls -la src",
            "cargo test --release 2>&1 | tail -20",
            "git status && git diff --stat",
            "echo hi",
            "echo 'a; cd /' \"b && export X\"",
            "find . -name '*.rs' -exec wc -l {} \\;",
            "grep -rn foo . > /tmp/out.txt; cat /tmp/out.txt",
            "make -j4 CFLAGS=-O2",
            "git config user.name=x",
            "[ -f Cargo.toml ] && echo yes",
            "[ -v HOME ] && test -n x",
            "test -d src || true",
            "sleep 1 & wait_for_it",
            "python3 -c 'import os; os.chdir(\"/\")'",
            "awk '{print $1}' f | sort",
            "echo \"(a) b\"",
            "",
            "   ",
            "true;",
            "./build.sh --opt=value",
            "/usr/bin/env FOO=1 printenv FOO",
            "ls &>/dev/null && echo ok",
            "cmd 2>/dev/null >out",
        ] {
            assert!(is_inert(line), "{line:?}");
        }
    }

    #[test]
    fn anything_that_may_change_the_shell_is_not() {
        for line in [
            "cd src",
            "cd src && ls",
            "ls; cd /",
            "ls | cd /",
            "ls && 'c'd /",
            "ls && \"cd\" /",
            "ls && c\\d /",
            "pushd /tmp",
            "popd",
            "export X=1",
            "X=1",
            "X=1 Y=2",
            "X+=1",
            "a[1]=2",
            "FOO=1 ls",
            "declare -x X=1",
            "typeset X=1",
            "readonly X=1",
            "local X=1",
            "unset PATH",
            "read X < f",
            "mapfile A < f",
            "readarray A < f",
            "printf -v X hi",
            "set -a",
            "shopt -s expand_aliases",
            "source env.sh",
            ". env.sh",
            "eval cd /",
            "exec bash",
            "builtin cd /",
            "command cd /",
            "enable -n cd",
            "trap 'cd /' EXIT",
            "alias ls=cd",
            "let x=1",
            "getopts a X",
            "wait -p X",
            "hash -p /bin/cd ls",
            "for d in a b; do ls; done",
            "while true; do cd /; done",
            "if true; then cd /; fi",
            "case x in x) cd /;; esac",
            "{ cd /; }",
            "! cd /",
            "time cd /",
            "[[ -d / ]]",
            "echo $HOME",
            "echo `pwd`",
            "echo $(pwd)",
            "echo \"$HOME\"",
            "echo \"`pwd`\"",
            "(cd /)",
            "f() { cd /; }",
            "x=$(cd /)",
            "echo hi\ncd /",
            "echo 'unterminated",
            "echo \"unterminated",
            "echo trailing\\",
            "> out ls",
            "2>err ls",
            "*",
            "c?",
            "{cd,ls} /",
            "''",
            "[ -v 'a[X=1]' ]",
            "test -v a[X=1]",
            "~/bin/tool x",
            "&>out ls",
        ] {
            assert!(!is_inert(line), "{line:?}");
        }
    }

    /// Against bash itself: random lines made of ordinary and tricky
    /// pieces, and every one judged inert is run by bash (`eval` in a
    /// subshell, which reads the line as `bash -c` does), which must end in
    /// the directory it started in with the same exported variables.
    #[test]
    fn every_line_judged_inert_leaves_bash_as_it_was() {
        const WORDS: &[&str] = &[
            "echo",
            "true",
            "false",
            "ls",
            "cd",
            "'c'd",
            "\"cd\"",
            "c\\d",
            "pushd",
            "popd",
            "export",
            "declare",
            "typeset",
            "unset",
            "read",
            "printf",
            "set",
            "source",
            ".",
            "eval",
            "command",
            "builtin",
            "X=1",
            "PATH=/nowhere",
            "X+=2",
            "test",
            "[",
            "]",
            ":",
            "pwd",
            "type",
            "/",
            "/tmp",
            "..",
            "-v",
            "-x",
            "-a",
            "X",
            "HOME",
            "'a b'",
            "\"q\"",
            "$HOME",
            "`pwd`",
            "$(cd /)",
            "{a,b}",
            "*",
            "~",
            "'$X'",
            "\"$X\"",
            "a=b",
            "--x=y",
            "'a[HOME=1]'",
            "a[HOME=2]",
            "{",
            "}",
            "!",
            "time",
            "for",
            "in",
            "do",
            "done",
            "if",
            "then",
            "fi",
            "case",
            "esac",
            "x)",
            "(cd /)",
            "let",
            "getopts",
            "mapfile",
            "alias",
            "shopt",
            "\\",
            "'",
            "\"",
            "#",
            "env",
            "2>/dev/null",
            ">/dev/null",
            "2>&1",
            "&>/dev/null",
        ];
        const JOINS: &[&str] = &[" ", " ", " ", " ", "; ", " && ", " || ", " | ", " & "];
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut lines = Vec::new();
        let mut judged_inert = 0;
        // The builtins judged harmless, with each piece as an operand.
        let operands = WORDS.iter().flat_map(|w| {
            [
                format!("test -v {w}"),
                format!("[ -v {w} ]"),
                format!("[ -n {w} ]"),
                format!("kill -l {w}"),
                format!("type {w}"),
            ]
        });
        let random = (0..6000).map(|_| {
            let mut line = String::new();
            for i in 0..1 + next(6) {
                if i > 0 {
                    line.push_str(JOINS[next(JOINS.len())]);
                }
                line.push_str(WORDS[next(WORDS.len())]);
            }
            line
        });
        for line in operands.collect::<Vec<_>>().into_iter().chain(random) {
            if is_inert(&line) {
                judged_inert += 1;
                lines.push(line);
            }
        }
        assert!(judged_inert > 300, "only {judged_inert} lines judged inert");
        let dir = std::env::temp_dir().join(format!("bashtools-inert-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let list = dir.join("lines");
        let mut bytes = Vec::new();
        for l in &lines {
            bytes.extend_from_slice(l.as_bytes());
            bytes.push(0);
        }
        std::fs::write(&list, bytes).unwrap();
        // Each line in a subshell started in `dir`; what it ends with is
        // compared with what it started with, the line printed on a change.
        let script = r#"
            cd "$1" || exit 9
            before=$(export -p)
            while IFS= read -r -d '' L; do
                now=$( (eval "$L" >/dev/null 2>&1 </dev/null; builtin pwd -P; builtin export -p) )
                if [ "$now" != "$(builtin pwd -P)"$'\n'"$before" ]; then
                    printf 'CHANGED: %s\n' "$L"
                fi
            done < "$2"
        "#;
        let out = std::process::Command::new("bash")
            .args(["-c", script, "bash"])
            .arg(&dir)
            .arg(&list)
            .env_remove("BASH_ENV")
            .output()
            .expect("bash runs");
        let _ = std::fs::remove_dir_all(&dir);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        assert!(!text.contains("CHANGED"), "{text}");
    }

    /// Our lists hold every builtin and reserved word of the bash on this
    /// machine: one that is missing would be taken for a program.
    #[test]
    fn the_lists_hold_what_bash_has() {
        let out = std::process::Command::new("bash")
            .args(["-c", "compgen -b; compgen -k"])
            .output()
            .expect("bash runs");
        for name in String::from_utf8_lossy(&out.stdout).lines() {
            assert!(
                BUILTINS.contains(&name) || KEYWORDS.contains(&name),
                "bash has {name:?}, not in our lists"
            );
        }
    }
}
