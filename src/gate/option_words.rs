//! What a word may become where a builtin reads its options. A word that expands may
//! become any option (`wait $x` may be `wait -p PATH`), and one that splits or globs may
//! become several words, options among them (`read -p $x NAME` may be `read -p foo -a
//! PATH NAME`); these answer, from the word as written, whether it can.

use super::*;

/// Whether `arg` is a literal cluster of option letters (`-rp`, `+x`).
pub(super) fn is_flag(arg: &Word, plus: bool) -> bool {
    let v = &arg.value;
    arg.literal && v.len() > 1 && v != "--" && (v.starts_with('-') || (plus && v.starts_with('+')))
}

/// `fc -l` only lists, unless `-s` or `-e` rides along (`fc -l -s old=new` re-runs the
/// last command, changed) or a word that expands may become one.
pub(super) fn fc_only_lists(args: &[Word]) -> bool {
    let options: Vec<&Word> = args
        .iter()
        .take_while(|a| !(a.literal && a.value == "--"))
        .collect();
    let flags = || options.iter().filter(|a| is_flag(a, false));
    !options.iter().any(|a| may_be_option(a))
        && flags().any(|a| a.value.contains('l'))
        && !flags().any(|a| a.value.contains(['s', 'e']))
}

/// Whether `raw` is one double-quoted string and nothing else (`"$fmt"`), so that it
/// expands to exactly one word: no splitting, no globbing. A quote inside (even in a
/// substitution) makes the answer no, and so does an `@` (`"$@"`, `"${a[@]}"` and
/// `"${!p@}"` are a word each), which only errs toward refusing.
pub(super) fn is_one_quoted_field(raw: &str) -> bool {
    let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
        return false;
    };
    if inner.contains('@') {
        return false;
    }
    let mut escaped = false;
    for c in inner.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return false,
            _ => {}
        }
    }
    !escaped
}

/// Whether an argument where an option may stand expands to something that could be
/// an option (its known part is empty or starts with `-`/`+`).
pub(super) fn may_be_option(arg: &Word) -> bool {
    !arg.literal
        && matches!(arg.known_value().chars().next(), None | Some('-' | '+'))
        && !is_number_parameter(&arg.raw)
}

/// Whether `arg` may become several words (by splitting or globbing): it expands, and
/// is neither one double-quoted string nor a parameter that is a number.
pub(super) fn may_split(arg: &Word) -> bool {
    !arg.literal && !is_one_quoted_field(&arg.raw) && !is_number_parameter(&arg.raw)
}

/// `$!`, `$$`, `$?`, `$#` (quoted or braced): a number or nothing, never an option
/// (`wait $!`).
pub(super) fn is_number_parameter(raw: &str) -> bool {
    let bare = raw
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .unwrap_or(raw);
    ["$!", "$$", "$?", "$#", "${!}", "${$}", "${?}", "${#}"].contains(&bare)
}
