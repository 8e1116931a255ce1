//! Commands that run another command: what they run, when it can be known
//! from the words before the line runs.
//!
//! Each wrapper's options are read as its program reads them; an option
//! this table does not know (it might take an argument, shifting where the
//! command starts) or one that expands makes the wrapped command unknown,
//! which the policy judges as strictly as any value could be judged.

use crate::gate::Spelled;

/// What a command runs besides itself.
#[derive(Debug)]
pub(crate) enum Wrapped<'a> {
    /// Nothing we look through.
    Nothing,
    /// A command made of these words.
    Words(&'a [Spelled]),
    /// `echo`: what `xargs` runs when given no command.
    Echo,
    /// A line of shell (`sh -c '…'`, `eval '…'`), to judge as a line.
    Line(String),
    /// Something that cannot be known before the line runs (`sh -c "$x"`,
    /// `source FILE`, an option we do not know).
    Unknown,
}

/// How a wrapper reads its options before the command.
struct Options {
    /// Options that take no argument.
    flags: &'static [&'static str],
    /// Options whose argument is the next word (or attached: `-uNAME`,
    /// `--user=NAME`).
    with_argument: &'static [&'static str],
    /// `NAME=VALUE` words before the command are assignments (`env`, `sudo`).
    assignments: bool,
    /// Operands before the command (`timeout DURATION`).
    operands: usize,
}

const fn opts(flags: &'static [&'static str], with_argument: &'static [&'static str]) -> Options {
    Options {
        flags,
        with_argument,
        assignments: false,
        operands: 0,
    }
}

fn options_of(word: &str) -> Option<Options> {
    Some(match word {
        "env" => Options {
            assignments: true,
            ..opts(
                &[
                    "-i",
                    "--ignore-environment",
                    "-0",
                    "--null",
                    "-v",
                    "--debug",
                    "-",
                ],
                &["-u", "--unset", "-C", "--chdir"],
            )
        },
        "command" => opts(&["-p", "-v", "-V"], &[]),
        "builtin" | "nohup" => opts(&[], &[]),
        "exec" => opts(&["-c", "-l"], &["-a"]),
        "nice" => opts(&[], &["-n", "--adjustment"]),
        "timeout" => Options {
            operands: 1,
            ..opts(
                &[
                    "--preserve-status",
                    "--foreground",
                    "-v",
                    "--verbose",
                    "-f",
                    "-p",
                ],
                &["-k", "--kill-after", "-s", "--signal"],
            )
        },
        "stdbuf" => opts(&[], &["-i", "-o", "-e", "--input", "--output", "--error"]),
        "time" => opts(
            &[
                "-p",
                "-v",
                "--verbose",
                "-a",
                "--append",
                "--portability",
                "-q",
                "--quiet",
            ],
            &["-o", "--output", "-f", "--format"],
        ),
        "sudo" => Options {
            assignments: true,
            ..opts(
                &[
                    "-A",
                    "-b",
                    "-E",
                    "-H",
                    "-i",
                    "-K",
                    "-k",
                    "-n",
                    "-P",
                    "-S",
                    "-s",
                    "--askpass",
                    "--background",
                    "--preserve-env",
                    "--set-home",
                    "--login",
                    "--non-interactive",
                    "--preserve-groups",
                    "--stdin",
                    "--shell",
                    "--reset-timestamp",
                    "--remove-timestamp",
                ],
                &[
                    "-u",
                    "--user",
                    "-g",
                    "--group",
                    "-C",
                    "--close-from",
                    "-D",
                    "--chdir",
                    "-h",
                    "--host",
                    "-p",
                    "--prompt",
                    "-R",
                    "--chroot",
                    "-r",
                    "--role",
                    "-t",
                    "--type",
                    "-T",
                    "--command-timeout",
                    "-U",
                    "--other-user",
                ],
            )
        },
        "doas" => opts(&["-n", "-s", "-L"], &["-u", "-C"]),
        "xargs" => opts(
            &[
                "-0",
                "--null",
                "-r",
                "--no-run-if-empty",
                "-t",
                "--verbose",
                "-p",
                "--interactive",
                "-x",
                "--exit",
                "-o",
                "--open-tty",
            ],
            &[
                "-a",
                "--arg-file",
                "-d",
                "--delimiter",
                "-E",
                "--eof",
                "-I",
                "--replace",
                "-L",
                "--max-lines",
                "-n",
                "--max-args",
                "-P",
                "--max-procs",
                "-s",
                "--max-chars",
                "--process-slot-var",
            ],
        ),
        _ => return None,
    })
}

/// The last part of a path (after its last `/`), or the whole word: the
/// name a command given as a path runs by.
pub(crate) fn last_part(word: &str) -> &str {
    match word.as_bytes().iter().rposition(|&b| b == b'/') {
        Some(slash) => &word[slash + 1..],
        None => word,
    }
}

/// Whether `name` (as written, or the last part of a path) runs other
/// commands the policy looks through.
pub(crate) fn is_wrapper(name: &str) -> bool {
    let name = last_part(name);
    matches!(
        name,
        "sh" | "bash"
            | "dash"
            | "zsh"
            | "eval"
            | "source"
            | "."
            | "find"
            | "env"
            | "command"
            | "builtin"
            | "nohup"
            | "exec"
            | "nice"
            | "timeout"
            | "stdbuf"
            | "time"
            | "sudo"
            | "doas"
            | "xargs"
    )
}

/// What `words` (a simple command whose command word is `name`) runs
/// besides itself. `find` may run several commands, hence the list.
pub(crate) fn wrapped<'a>(name: &str, words: &'a [Spelled]) -> Vec<Wrapped<'a>> {
    let name = last_part(name);
    let rest = &words[1..];
    match name {
        "sh" | "bash" | "dash" | "zsh" => vec![shell_c(rest)],
        "eval" => vec![eval(rest)],
        "source" | "." => vec![Wrapped::Unknown],
        "find" => find_exec(rest),
        _ => match options_of(name) {
            Some(o) => vec![after_options(name, &o, rest)],
            None => vec![Wrapped::Nothing],
        },
    }
}

/// The command after a wrapper's options and operands.
fn after_options<'a>(name: &str, o: &Options, rest: &'a [Spelled]) -> Wrapped<'a> {
    let mut i = 0;
    let mut operands = o.operands;
    while i < rest.len() {
        let Some(word) = rest[i].literal() else {
            return Wrapped::Unknown;
        };
        if operands == 0 && (!word.starts_with('-') || word == "-" && name != "env") {
            if o.assignments && is_assignment(word) {
                i += 1;
                continue;
            }
            return Wrapped::Words(&rest[i..]);
        }
        if word == "--" {
            i += 1;
            if operands > 0 {
                continue;
            }
            break;
        }
        if !word.starts_with('-') || word == "-" {
            // `env -` is `env -i`; an operand before the command.
            if word != "-" {
                operands = operands.saturating_sub(1);
            }
            i += 1;
            continue;
        }
        match option(o, name, word) {
            Some(0) => i += 1,
            Some(_) => i += 2,
            None => return Wrapped::Unknown,
        }
    }
    match rest.get(i) {
        Some(_) => Wrapped::Words(&rest[i..]),
        // `xargs` without a command runs `echo`; the others run nothing.
        None if name == "xargs" => Wrapped::Echo,
        None => Wrapped::Nothing,
    }
}

/// How many words option `word` takes from after it (0 or 1), or `None`
/// when it is not one we know.
fn option(o: &Options, name: &str, word: &str) -> Option<usize> {
    if o.flags.contains(&word) {
        return Some(0);
    }
    if o.with_argument.contains(&word) {
        return Some(1);
    }
    if let Some((long, _)) = word.split_once('=') {
        if long.starts_with("--") && (o.with_argument.contains(&long) || o.flags.contains(&long)) {
            return Some(0);
        }
        return None;
    }
    if word.starts_with("--") {
        return None;
    }
    // `nice -10`, `nice -n10`.
    if name == "nice" && word[1..].bytes().all(|b| b.is_ascii_digit()) && word.len() > 1 {
        return Some(0);
    }
    // A cluster of short flags (`-pv`), perhaps ending in one that takes
    // an argument, given attached (`-uroot`) or next (`-Eu root`).
    let chars: Vec<char> = word[1..].chars().collect();
    for (k, c) in chars.iter().enumerate() {
        let short = format!("-{c}");
        if o.flags.contains(&short.as_str()) {
            continue;
        }
        if o.with_argument.contains(&short.as_str()) {
            return Some(if k + 1 == chars.len() { 1 } else { 0 });
        }
        // `xargs -i`, `-l`, `-e`: an optional attached argument.
        if name == "xargs" && matches!(c, 'i' | 'l' | 'e') {
            return Some(0);
        }
        return None;
    }
    Some(0)
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// `sh -c 'LINE'`: the line, after the shell's options.
fn shell_c(rest: &[Spelled]) -> Wrapped<'static> {
    let mut i = 0;
    let mut command = false;
    while i < rest.len() {
        let Some(word) = rest[i].literal() else {
            return Wrapped::Unknown;
        };
        if word == "--" || word == "-" {
            i += 1;
            break;
        }
        if !(word.starts_with('-') || word.starts_with('+')) {
            break;
        }
        if word.starts_with("--") {
            match word {
                "--rcfile" | "--init-file" => i += 2,
                _ => i += 1,
            }
            continue;
        }
        // `-c`, `-ec`, `-o pipefail`, `-lc`, `+O extglob`.
        let cluster = &word[1..];
        if cluster.contains('c') && word.starts_with('-') {
            command = true;
        }
        i += 1;
        if cluster.contains(['o', 'O']) {
            i += cluster.matches(['o', 'O']).count();
        }
    }
    if !command {
        // A script file or standard input: judged by the shell's own rule.
        return Wrapped::Nothing;
    }
    match rest.get(i).map(Spelled::literal) {
        Some(Some(line)) => Wrapped::Line(line.to_string()),
        Some(None) => Wrapped::Unknown,
        None => Wrapped::Nothing,
    }
}

/// `eval WORDS`: the words joined by blanks, when all are literal.
fn eval(rest: &[Spelled]) -> Wrapped<'static> {
    if rest.is_empty() {
        return Wrapped::Nothing;
    }
    let mut line = Vec::new();
    for word in rest {
        match word.literal() {
            Some(w) => line.push(w),
            None => return Wrapped::Unknown,
        }
    }
    Wrapped::Line(line.join(" "))
}

/// `find … -exec CMD … ;` (and `-execdir`, `-ok`, `-okdir`, ending in `;`
/// or `+`): each command.
fn find_exec(rest: &[Spelled]) -> Vec<Wrapped<'_>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < rest.len() {
        match rest[i].literal() {
            Some("-exec" | "-execdir" | "-ok" | "-okdir") => {
                let start = i + 1;
                let mut end = start;
                while end < rest.len() && !matches!(rest[end].literal(), Some(";" | "+")) {
                    end += 1;
                }
                if start == end {
                    out.push(Wrapped::Unknown);
                } else {
                    out.push(Wrapped::Words(&rest[start..end]));
                }
                i = end + 1;
            }
            // `find $x` may be `find . -exec rm {} ;`.
            None => {
                out.push(Wrapped::Unknown);
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Spelled> {
        line.split_whitespace()
            .map(|w| {
                if w.starts_with('$') {
                    Spelled::expanding(w)
                } else {
                    Spelled::plain(w)
                }
            })
            .collect()
    }

    fn run(line: &str) -> String {
        let w = words(line);
        let name = w[0].literal().unwrap().to_string();
        wrapped(&name, &w)
            .iter()
            .map(|x| match x {
                Wrapped::Nothing => "-".to_string(),
                Wrapped::Unknown => "?".to_string(),
                Wrapped::Line(l) => format!("line:{l}"),
                Wrapped::Echo => "echo".to_string(),
                Wrapped::Words(w) => w
                    .iter()
                    .map(|s| s.raw.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
            })
            .collect::<Vec<_>>()
            .join(" | ")
    }

    #[test]
    fn wrappers_are_looked_through() {
        let cases = [
            ("env -i A=1 -u B rm -rf /", "rm -rf /"),
            ("env", "-"),
            ("command -p rm x", "rm x"),
            ("command -pv rm", "rm"),
            ("builtin echo x", "echo x"),
            ("exec -a name rm x", "rm x"),
            ("nice -n 5 rm", "rm"),
            ("nice -10 rm", "rm"),
            ("nohup rm x", "rm x"),
            ("timeout -s KILL 10 rm x", "rm x"),
            ("timeout --signal=KILL 10s rm", "rm"),
            ("stdbuf -oL -e 0 rm", "rm"),
            ("time -p rm", "rm"),
            ("sudo -u root -E HOME=/ rm -rf /", "rm -rf /"),
            ("sudo -Eu root rm", "rm"),
            ("doas -u root rm", "rm"),
            ("xargs -0 -n 1 rm -f", "rm -f"),
            ("xargs -I{} rm {}", "rm {}"),
            ("xargs", "echo"),
            (
                "find . -name x -exec rm {} ; -execdir mv {} y +",
                "rm {} | mv {} y",
            ),
            ("bash -c ls", "line:ls"),
            ("sh -ec ls", "line:ls"),
            ("bash -o pipefail -c ls", "line:ls"),
            ("bash script.sh", "-"),
            ("bash -c $x", "?"),
            ("eval rm x", "line:rm x"),
            ("eval $x", "?"),
            ("source f", "?"),
            ("env -S x", "?"),
            ("sudo --frobnicate rm", "?"),
            ("timeout $t rm", "?"),
            ("find $dir -delete", "?"),
        ];
        for (line, want) in cases {
            assert_eq!(run(line), want, "{line}");
        }
    }
}
