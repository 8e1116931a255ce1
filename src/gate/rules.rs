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

/// A plain literal that bash may expand a second time unchanged: what `>&WORD` and
/// `<&WORD` accept (a file name, a digit, `-`).
pub(super) fn is_plain_target(value: &str) -> bool {
    !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_alphanumeric() || "/._-+,:=@%^".contains(c))
}

/// `NAME=…` for an assignment word as written: the value is left out of the refusal.
pub(super) fn elide_value(raw: &str) -> String {
    match raw.find('=') {
        Some(i) if i + 1 < raw.len() => format!("{}…", &raw[..=i]),
        _ => raw.to_string(),
    }
}

/// A forbidden variable that arithmetic text assigns (`PATH=1`, `IFS+=x`, `++PATH`,
/// `PATH[0]=1`) or that `${NAME=…}` / `${NAME:=…}` assigns when unset. Reading one
/// (`$PATH`, `PATH == 1`) is fine. The text may hold more than arithmetic (a whole
/// `${…}` body); a match anywhere is enough, so this errs towards refusing.
pub(super) fn assigned_in_arithmetic(text: &str) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let before = i.checked_sub(1).map(|j| chars[j]);
        if !is_name_start(c) || before.is_some_and(|b| is_name_char(b) || b == '$') {
            i += 1;
            continue;
        }
        let start = i;
        while chars.get(i).copied().is_some_and(is_name_char) {
            i += 1;
        }
        let name: String = chars[start..i].iter().collect();
        if !is_forbidden_name(&name) {
            continue;
        }
        let prefix = start >= 2 && matches!(&chars[start - 2..start], ['+', '+'] | ['-', '-']);
        let mut j = i;
        if chars.get(j) == Some(&'[') {
            let mut depth = 0usize;
            while let Some(&b) = chars.get(j) {
                j += 1;
                match b {
                    '[' => depth += 1,
                    ']' if depth <= 1 => break,
                    ']' => depth -= 1,
                    _ => {}
                }
            }
        }
        while matches!(chars.get(j), Some(' ' | '\t' | '\n')) {
            j += 1;
        }
        let at = |k: usize| chars.get(j + k).copied();
        let assigns = match (at(0), at(1), at(2)) {
            (Some('='), next, _) => next != Some('='),
            (Some('+' | '-'), Some(n), _) if n == at(0).unwrap_or(' ') || n == '=' => true,
            (Some('*' | '/' | '%' | '&' | '^' | '|' | ':'), Some('='), _) => true,
            (Some('<'), Some('<'), Some('=')) | (Some('>'), Some('>'), Some('=')) => true,
            _ => false,
        };
        if assigns || prefix {
            return Some(name);
        }
    }
    None
}
