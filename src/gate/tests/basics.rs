//! The basic decision, lists and pipelines, quoting, words that are not literals, subshells and groups.

use super::*;

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
    assert_eq!(text("ls", none), Err("Command not allowed: ls".to_string()));
    let owned = vec![String::from("ls")];
    assert_eq!(text("ls", &owned), Ok(()));
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
    not_literal("$'\\xff'", "$'\\xff'");
}

/// bash ends an ANSI-C string's value at a NUL: `$'ls\0rm'` runs `ls`.
#[test]
fn ansi_c_values_end_at_a_nul() {
    ok("$'ls\\0'");
    ok("$'ls\\0rm' -l");
    refused("$'l\\0s'", "l");
    refused("$'r\\x00m'm", "rm");
}

#[test]
fn locale_quoting_reads_as_double_quotes() {
    // bash translates `$"…"` only under a TEXTDOMAIN, which no gated line can set.
    ok("echo $\"hello\"");
    ok("echo >&2 $\"Try \\`ls --help' for more\" \"$x\"");
    ok("echo \"$\"");
    refused("echo $\"a $(rm x) b\"", "rm");
    refused("echo $\"`rm x`\"", "rm");
    refused("$\"ls\"; $\"rm\"", "rm");
    forbidden("TEXTDOMAIN=x echo $\"hi\"", "TEXTDOMAIN");
    forbidden("TEXTDOMAINDIR=/tmp; echo", "TEXTDOMAINDIR");
}

#[test]
fn line_continuation_between_words_is_a_blank() {
    ok("ls \\\n -l");
    ok("ls \\\n-l \\\n\\\n | grep x\\\n");
    ok("echo a\\\n b");
    refused("ls \\\n; rm", "rm");
}

#[test]
fn line_continuation_that_joins_characters_is_read_as_bash_joins_it() {
    // bash removes it first: these are `ls`, `&&`, `2>`.
    ok("l\\\ns");
    refused("ls &\\\n& rm", "rm");
    ok("echo 2\\\n>x");
    // Joined into a substitution, a here-document or an ANSI-C string, which bash
    // reads by rules of their own: refused, as before.
    unparsable("echo $\\\n(rm)");
    unparsable("echo \"$\\\n(rm)\"");
    unparsable("echo ${x:-$\\\n(rm)}");
    unparsable("cat <\\\n<'E'\nx\\\nE\nrm\nE");
    refused("cat <<E\n$\\\n(rm)\nE", "rm"); // a here-document joins its lines
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
    not_literal("$CMD -x", "$CMD");
    not_literal("${CMD} -x", "${CMD}");
    not_literal("\"$CMD\"", "\"$CMD\"");
    not_literal("$1", "$1");
    not_literal("l$@s", "l$@s");
    not_literal("$((1+2))", "$((1+2))");
    not_literal("$[1+2]", "$[1+2]");
}

#[test]
fn substitution_as_command_word_is_refused_as_written() {
    not_literal("$(echo ls) x", "$(echo ls)");
    not_literal("\"$(echo ls)\"", "\"$(echo ls)\"");
    not_literal("`echo ls`", "`echo ls`");
    not_literal("<(ls)", "<(ls)");
}

#[test]
fn globs_braces_and_tilde_make_a_command_word_non_literal() {
    not_literal("l*", "l*");
    not_literal("l?", "l?");
    not_literal("[l]s", "[l]s");
    not_literal("{ls,rm}", "{ls,rm}");
    not_literal("{1..3}", "{1..3}");
    not_literal("~/bin/ls", "~/bin/ls");
    refused("\"*\"", "*");
    ok("l\\s");
}

#[test]
fn braces_without_a_comma_or_a_sequence_stay_as_written() {
    // bash expands braces only around an unquoted comma or `..`: these are literal
    // words, looked up as written (placeholders in documentation look like this).
    refused("{{command}} --help", "{{command}}");
    refused("{}", "{}");
    refused("x{a}y", "x{a}y");
    refused("{a}b,c", "{a}b,c");
    assert_eq!(text("{{command}} | tee f", &["{{command}}", "tee"]), Ok(()));
    // With a comma or a sequence anywhere after an unquoted brace: not literal.
    not_literal("{a}{b,c}", "{a}{b,c}");
    not_literal("{a}b,c}", "{a}b,c}");
    not_literal("x{a..c}", "x{a..c}");
    not_literal("{,}ls", "{,}ls");
    // A quoted or escaped comma is not a separator, so bash does not expand these.
    refused("{a',b'}", "{a,b}");
    refused("{a\\,b}", "{a,b}");
}

#[test]
fn empty_command_word_is_shown_as_written() {
    not_literal("\"\" ls", "\"\"");
}

#[test]
fn test_bracket_is_a_plain_word() {
    ok("[ -f x ] && ls");
    assert!(check_allowed("[ -f x ]", &["ls"]).is_err());
}

#[test]
fn unicode_words_work() {
    ok("echo 'héllo wörld' ünïcode ✓");
    assert_eq!(text("café --x", &["café"]), Ok(()));
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
