//! Character classes and the rules about names, assignments and builtins.

use super::*;

/// Characters that end an unquoted word.
pub(super) fn is_meta(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
    )
}

pub(super) fn is_name_start(c: char) -> bool {
    c == '_' || c.is_ascii_alphabetic()
}

pub(super) fn is_name_char(c: char) -> bool {
    c == '_' || c.is_ascii_alphanumeric()
}

pub(super) fn is_name(s: &str) -> bool {
    s.starts_with(is_name_start) && s.chars().all(is_name_char)
}

pub(super) fn is_forbidden_name(name: &str) -> bool {
    FORBIDDEN_VARIABLES.split_whitespace().any(|v| v == name)
        || name.starts_with("LD_")
        || name.starts_with("BASH_FUNC_")
}

/// `2`, `-` or `2-`: what may follow `>&` or `<&`.
pub(super) fn is_fd_target(raw: &str) -> bool {
    let digits = raw.strip_suffix('-').unwrap_or(raw);
    !raw.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

/// Whether bash will surely evaluate `$((body))` as arithmetic. It decides only when
/// the word expands, by counting the parentheses of the body as plain text, and runs the
/// body as commands when they do not balance; bash 5.2 also does so for bodies holding a
/// `case` or a here-document in a nested substitution. Where that count could disagree
/// with the parse, the line is refused.
pub(super) fn plain_arithmetic(body: &[char]) -> bool {
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
pub(super) fn assignment_name(raw: &str) -> Option<&str> {
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
pub(super) fn heredoc_delimiter(raw: &str) -> Option<(Vec<char>, bool)> {
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
pub(super) fn builtin_refusals(command: &str, args: &[&str]) -> Vec<Check> {
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
