//! Builtins looked into: those that set the variables they name, and those with an
//! option that runs its argument as a command or changes what later words run.
//!
//! Every name is judged by its value after quote removal (`export BASH''_ENV=p` names
//! `BASH_ENV`), and a name that is not known before the line runs is refused.

use super::names::*;
use super::option_words::*;
use super::rules::*;
use super::*;

/// How a name-taking builtin reads its arguments.
struct Spec {
    /// getopt letters; `x:` takes an argument.
    options: &'static str,
    /// Option letters whose argument is a variable name (`read -a`, `printf -v`).
    named: &'static str,
    /// Option letters that run code or rebind words, refused with the reason.
    refused: &'static [(char, &'static str)],
    operands: Operands,
}

/// What the operands (the arguments after the options) of a builtin are.
#[derive(Clone, Copy, PartialEq)]
enum Operands {
    /// `NAME[=VALUE]` each (`declare`, `export`, …).
    Declarations,
    /// A variable name each (`read`, `unset`).
    Names,
    /// Only the operand at this index is a variable name (`mapfile`, `getopts`).
    NameAt(usize),
    /// Arithmetic expressions, which may assign (`let`).
    Expressions,
    /// Not names (`printf`'s format and arguments).
    Other,
}

const RUNS_CALLBACK: &str = "mapfile -C runs a callback: loop over the array instead";
const RUNS_JOB: &str = "jobs -x runs its argument as a command: run the command directly";

fn spec(command: &str) -> Option<Spec> {
    let spec = |options, named, refused, operands| Spec {
        options,
        named,
        refused,
        operands,
    };
    Some(match command {
        "declare" | "typeset" | "local" => spec("aAfFgiIlnrtuxp", "", &[], Operands::Declarations),
        "export" => spec("fnp", "", &[], Operands::Declarations),
        "readonly" => spec("aAfp", "", &[], Operands::Declarations),
        "read" => spec("ersa:d:i:n:N:p:t:u:", "a", &[], Operands::Names),
        "mapfile" | "readarray" => spec(
            "td:n:O:s:u:C:c:",
            "",
            &[('C', RUNS_CALLBACK)],
            Operands::NameAt(0),
        ),
        "printf" => spec("v:", "v", &[], Operands::Other),
        "unset" => spec("fvn", "", &[], Operands::Names),
        "wait" => spec("fnp:", "p", &[], Operands::Other),
        "jobs" => spec("lpnrsx", "", &[('x', RUNS_JOB)], Operands::Other),
        // No options: `getopts -x` or `let -1` are operands to them.
        "getopts" => spec("", "", &[], Operands::NameAt(1)),
        "let" => spec("", "", &[], Operands::Expressions),
        _ => return None,
    })
}

/// Builtins with an option that runs code or changes what later words run, read more
/// loosely: any option word holding the letter counts.
const FLAG_REFUSALS: &[(&str, char, &str)] = &[
    (
        "hash",
        'p',
        "hash -p rebinds a command name: call the program by its path",
    ),
    (
        "enable",
        'f',
        "enable -f loads code from a file: use the builtins as they are",
    ),
    (
        "enable",
        'n',
        "enable -n turns a builtin off, so that its name runs a program: leave the builtins on",
    ),
    (
        "bind",
        'x',
        "bind -x runs its argument as a command: run the command directly",
    ),
    (
        "complete",
        'C',
        "complete -C runs a command: use -W with a word list",
    ),
    (
        "complete",
        'F',
        "complete -F runs a function: use -W with a word list",
    ),
    (
        "compgen",
        'C',
        "compgen -C runs a command: use -W with a word list",
    ),
    (
        "compgen",
        'F',
        "compgen -F runs a function: use -W with a word list",
    ),
    (
        "set",
        'k',
        "set -k turns later arguments into assignments: put them before the command",
    ),
    (
        "set",
        'H',
        "set -H turns on history expansion, which rewrites later lines: leave it off",
    ),
];

/// `set -o NAME` / `shopt -s NAME` options that change how later lines are read or what
/// a word runs.
const READING_OPTIONS: &[&str] = &[
    "posix",
    "keyword",
    "expand_aliases",
    "history",
    "histexpand",
];
const CHANGES_READING: &str = "it changes how bash reads later lines: leave it as it is";
const EXPANDING_OPTION: &str =
    "an option that expands is not known before the line runs: write it literally, or put -- before it";
const SPLITS_INTO_OPTIONS: &str =
    "an option's argument that expands may split into more options: quote it";
const SPLITS_BEFORE_NAME: &str =
    "a word that expands before the variable name may split into several: quote it";
const EXPANDING_ACTION: &str =
    "a trap action or word list must be plain text so that its commands can be checked";

fn option_refusal(command: &str, arg: &Word, reason: &'static str) -> Check {
    Check::Refuse(Denial::Option {
        text: format!("{command} {}", arg.raw),
        reason,
    })
}

impl Parser {
    /// The checks that `command args` needs beyond its command word.
    pub(super) fn builtin_checks(
        &mut self,
        command: &str,
        args: &[Word],
        out: &mut Vec<Check>,
    ) -> PResult<()> {
        if FLAG_REFUSALS.iter().any(|&(b, ..)| b == command) && command != "set" {
            // Read loosely, any word before `--` may be an option: one that expands may
            // become `hash -p FILE NAME`, `enable -n NAME`, `compgen -C CMD`.
            // A word that splits may too (`compgen -o $x` is `compgen -o default -C
            // cmd` when x is `default -C cmd`).
            let before_end = args.iter().take_while(|a| !(a.literal && a.value == "--"));
            if let Some(arg) = before_end
                .into_iter()
                .find(|a| may_be_option(a) || may_split(a))
            {
                out.push(option_refusal(command, arg, EXPANDING_OPTION));
            }
        }
        for &(builtin, letter, reason) in FLAG_REFUSALS {
            if builtin == command {
                // `--help` is the one long option of a builtin, never a cluster.
                let hits = args.iter().filter(|a| {
                    is_flag(a, true) && !a.value.starts_with("--") && a.value.contains(letter)
                });
                out.extend(hits.map(|a| option_refusal(command, a, reason)));
            }
        }
        match command {
            "set" | "shopt" => self.reading_options(command, args, out),
            "trap" => return self.trap_action(args, out),
            "compgen" | "complete" => return self.word_lists(command, args, out),
            "fc" if !fc_only_lists(args) => {
                out.push(Check::Refuse(Denial::Option {
                    text: "fc".into(),
                    reason: "fc runs an editor and re-runs history: run the command directly",
                }));
            }
            _ => {}
        }
        if let Some(spec) = spec(command) {
            named_arguments(command, &spec, args, out);
        }
        Ok(())
    }

    /// `set -o posix`, `shopt -s expand_aliases`, `shopt -s compat…`, and options that
    /// expand (`set -o "$x"`).
    fn reading_options(&mut self, command: &str, args: &[Word], out: &mut Vec<Check>) {
        let (mut after_o, mut turns_off) = (false, false);
        for arg in args {
            if arg.literal && (arg.value == "--" || arg.value == "-") {
                if command == "set" {
                    return; // positional parameters follow
                }
                continue; // `shopt -s -- NAME` still sets NAME
            }
            if may_be_option(arg) {
                out.push(option_refusal(command, arg, EXPANDING_OPTION));
                continue;
            }
            let flag = is_flag(arg, true);
            if command == "set" && !flag && !after_o {
                return; // the first operand: positional parameters follow
            }
            if !arg.literal {
                // An option name that expands (`shopt -s e$y`) may be any option.
                out.push(option_refusal(command, arg, EXPANDING_OPTION));
                continue;
            }
            let name = arg.value.as_str();
            // `set +o NAME` turns it off: what bash does when nothing is said.
            let off = command == "set" && after_o && turns_off;
            if !off && (READING_OPTIONS.contains(&name) || name.starts_with("compat")) {
                out.push(Check::Refuse(Denial::Option {
                    text: format!("{command} {}{name}", if after_o { "-o " } else { "" }),
                    reason: CHANGES_READING,
                }));
            }
            after_o = flag && arg.value.ends_with('o');
            turns_off = flag && arg.value.starts_with('+');
        }
    }

    /// `trap ACTION SIGNAL…`: the action is a command line run later in this shell, so
    /// it is checked as one. A single operand is a signal to reset.
    fn trap_action(&mut self, args: &[Word], out: &mut Vec<Check>) -> PResult<()> {
        let lists = |a: &&Word| is_flag(a, false) && a.value.contains(['p', 'l']);
        if args.iter().any(|a| lists(&a)) {
            return Ok(());
        }
        let mut operands = args
            .iter()
            .skip_while(|a| is_flag(a, false))
            .skip_while(|a| a.literal && a.value == "--");
        let Some(action) = operands.next() else {
            return Ok(());
        };
        // Even alone: `trap $x` splits into an action and signals when x is `cmd EXIT`.
        if !action.literal {
            out.push(option_refusal("trap", action, EXPANDING_ACTION));
            return Ok(());
        }
        if operands.next().is_none() || action.value == "-" {
            return Ok(());
        }
        let mut sub = self.sub(action.value.chars().collect());
        let result = sub.parse_program();
        self.retries = sub.retries;
        out.extend(result?);
        Ok(())
    }

    /// `compgen -W LIST`: bash expands the list itself, so `-W '$(cmd)'` runs cmd.
    fn word_lists(&mut self, command: &str, args: &[Word], out: &mut Vec<Check>) -> PResult<()> {
        let mut iter = args.iter();
        while let Some(arg) = iter.next() {
            if !is_flag(arg, true) {
                continue;
            }
            let Some(at) = arg.value.find('W') else {
                continue;
            };
            let rest = &arg.value[at + 1..];
            let list = if rest.is_empty() {
                match iter.next() {
                    Some(next) if next.literal => next.value.clone(),
                    Some(next) => {
                        out.push(option_refusal(command, next, EXPANDING_ACTION));
                        continue;
                    }
                    None => continue,
                }
            } else {
                rest.to_string()
            };
            let checks = self.scan_text(list.chars().collect())?;
            out.extend(checks);
        }
        Ok(())
    }
}

/// The names a builtin of `spec` takes, each judged after quote removal.
fn named_arguments(command: &str, spec: &Spec, args: &[Word], out: &mut Vec<Check>) {
    let plus = spec.operands == Operands::Declarations;
    let mut nameref = false;
    let mut i = 0;
    // Options, up to `--` or the first operand.
    while let Some(arg) = args.get(i) {
        if spec.options.is_empty() {
            break;
        }
        if arg.literal && arg.value == "--" {
            i += 1;
            break;
        }
        if may_be_option(arg) {
            // It may expand to any options: `jobs $x` to `jobs -x cmd`, `wait $x` to
            // `wait -p PATH`, an unquoted word by splitting or globbing to several
            // words. The one harmless case: `printf "$x"`, one word and the last, is
            // at most `printf -vNAME` without a format, which sets nothing.
            let one_field = is_one_quoted_field(&arg.raw);
            if !(command == "printf" && i + 1 == args.len() && one_field) {
                out.push(option_refusal(command, arg, EXPANDING_OPTION));
            }
            return;
        }
        if !is_flag(arg, plus) {
            break;
        }
        i += 1;
        let letters: Vec<char> = arg.value.chars().skip(1).collect();
        for (k, &letter) in letters.iter().enumerate() {
            if let Some(&(_, reason)) = spec.refused.iter().find(|(l, _)| *l == letter) {
                out.push(option_refusal(command, arg, reason));
            }
            nameref |= letter == 'n' && arg.value.starts_with('-') && command != "export";
            let takes = spec
                .options
                .find(letter)
                .is_some_and(|at| spec.options[at + 1..].starts_with(':'));
            if !takes {
                continue;
            }
            // The argument is the rest of the cluster, or the next word.
            let rest: String = letters[k + 1..].iter().collect();
            let value = if rest.is_empty() {
                let next = args.get(i);
                i += 1;
                // `read -p $x NAME` is `read -p foo -a PATH NAME` when x is `foo -a
                // PATH`: an argument that splits brings options of its own.
                if let Some(word) = next.filter(|w| may_split(w)) {
                    out.push(option_refusal(command, word, SPLITS_INTO_OPTIONS));
                    return;
                }
                next.map(|w| (w.literal, w.value.clone(), w.raw.clone()))
            } else {
                Some((true, rest, arg.raw.clone()))
            };
            if let (true, Some((literal, value, raw))) = (spec.named.contains(letter), value) {
                let text = format!("{command} -{letter} {raw}");
                name_operand(literal.then_some(value.as_str()), &text, out);
            }
            break;
        }
    }
    for (index, arg) in args[i.min(args.len())..].iter().enumerate() {
        if command == "local" && arg.literal && arg.value == "-" {
            continue; // `local -` saves the shell options
        }
        let text = format!("{command} {}", arg.raw);
        match spec.operands {
            Operands::Declarations => declaration(arg, &text, nameref, out),
            Operands::Names => name_operand(element_name(arg).as_deref(), &text, out),
            Operands::NameAt(at) if at == index => {
                name_operand(element_name(arg).as_deref(), &text, out)
            }
            // `getopts $x` splits into `getopts ab PATH` when x is `ab PATH`.
            Operands::NameAt(at) if index < at && may_split(arg) => {
                out.push(option_refusal(command, arg, SPLITS_BEFORE_NAME));
            }
            Operands::Expressions => {
                if let Some(name) = assigned_in_arithmetic(arg.known_value()) {
                    out.push(forbidden(name, elide_value(&text), Change::Assign));
                }
            }
            Operands::NameAt(_) | Operands::Other => {}
        }
    }
}
