//! The gate's unit tests: one per hazard, with the exact refusal texts.

use super::*;

const LIST: &[&str] = &["ls", "echo", "cat", "git", "grep", "true", "["];
#[track_caller]
fn ok(line: &str) {
    assert_eq!(check_allowed(line, LIST), Ok(()), "line: {line:?}");
}

/// Refused as a word outside the list, with exactly the bare text.
#[track_caller]
fn refused(line: &str, word: &str) {
    let refusal = check_allowed(line, LIST).expect_err(line);
    assert_eq!(
        refusal.to_string(),
        format!("Command not allowed: {word}"),
        "line: {line:?}"
    );
    assert_eq!(
        refusal,
        Denial::NotAllowed { word: word.into() },
        "line: {line:?}"
    );
}

/// Refused as a command word that is not a plain literal, shown as written.
#[track_caller]
fn not_literal(line: &str, word: &str) {
    let refusal = check_allowed(line, LIST).expect_err(line);
    assert_eq!(
        refusal,
        Denial::NotLiteral { word: word.into() },
        "line: {line:?}"
    );
}

/// Refused for setting, unsetting or rebinding `name`, whatever the list holds.
#[track_caller]
fn forbidden(line: &str, name: &str) {
    forbidden_with(line, LIST, name);
}

#[track_caller]
fn forbidden_with(line: &str, list: &[&str], name: &str) {
    match check_allowed(line, list) {
        Err(Denial::ForbiddenVariable { name: n, .. }) if n == name => {}
        other => panic!("line {line:?}: expected a refusal for {name}, got {other:?}"),
    }
}

/// Refused for naming a variable that is not known before the line runs.
#[track_caller]
fn unknown_name(line: &str, list: &[&str]) {
    match check_allowed(line, list) {
        Err(Denial::NotLiteralName { .. } | Denial::Option { .. }) => {}
        other => panic!("line {line:?}: expected an unknown-name refusal, got {other:?}"),
    }
}

/// Refused for an option that runs code or changes reading.
#[track_caller]
fn option(line: &str, list: &[&str], text: &str) {
    match check_allowed(line, list) {
        Err(Denial::Option { text: t, .. }) if t == text => {}
        other => panic!("line {line:?}: expected an option refusal {text:?}, got {other:?}"),
    }
}

#[track_caller]
fn unparsable(line: &str) {
    match check_allowed(line, LIST) {
        Err(Denial::Unparseable { .. }) => {}
        other => panic!("line {line:?}: expected unparseable, got {other:?}"),
    }
}

/// The text a model would see.
fn text<S: AsRef<str>>(line: &str, list: &[S]) -> Result<(), String> {
    check_allowed(line, list).map_err(|r| r.to_string())
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
    not_literal("$'ls\\0'", "$'ls\\0'");
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
    forbidden("{PATH}>/dev/null ls", "PATH");
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
    forbidden("PATH=/tmp ls", "PATH");
    forbidden("IFS=, ls", "IFS");
    forbidden("BASH_ENV=x ls", "BASH_ENV");
    forbidden("ENV=x ls", "ENV");
    forbidden("SHELLOPTS=x ls", "SHELLOPTS");
    forbidden("BASHOPTS=x ls", "BASHOPTS");
    forbidden("PS4='$(rm)' ls", "PS4");
    forbidden("LD_PRELOAD=/x.so ls", "LD_PRELOAD");
    forbidden("LD_LIBRARY_PATH=/x ls", "LD_LIBRARY_PATH");
    forbidden("BASH_FUNC_ls=x ls", "BASH_FUNC_ls");
    forbidden("PATH+=:/tmp ls", "PATH");
    forbidden("BASH_CMDS[ls]=/bin/rm", "BASH_CMDS");
    forbidden("POSIXLY_CORRECT=1", "POSIXLY_CORRECT");
    forbidden("GCONV_PATH=/tmp ls", "GCONV_PATH");
    forbidden("PATH=/tmp", "PATH");
    forbidden("A=1 PATH=/tmp ls", "PATH");
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
    forbidden("PATH=(/tmp)", "PATH");
    unparsable("b=(1 2)rm x");
    unparsable("a=([ $(rm) ]=1)");
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
    forbidden("for PATH in /tmp; do ls; done", "PATH");
    forbidden("select IFS in a; do ls; done", "IFS");
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
    assert_eq!(text("[[ -f x && $y == z ]] && ls", &list), Ok(()));
    assert_eq!(text("[[ $x =~ ^(a|b)$ ]]", &list), Ok(()));
    assert_eq!(
        text("[[ $(rm) ]]", &list),
        Err("Command not allowed: rm".into())
    );
    assert!(matches!(
        check_allowed("[[ x =~ # ]]; rm", &list),
        Err(Denial::Unparseable { .. })
    ));
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
    ] {
        assert_eq!(
            text(line, &list),
            Err("Command not allowed: rm".into()),
            "{line}"
        );
    }
    ok("[ 'a[1]' = x ] && echo 'a[$(rm)]'");
    // A subscript that expands leaves the name unknown (and runs rm).
    unknown_name("declare \"a[$(rm)]=1\"", &list);
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
        assert_eq!(text(&format!("{word} rm -rf /"), &[word]), Ok(()));
    }
}

#[test]
fn declaration_builtins_cannot_set_forbidden_variables() {
    let list = ["export", "declare", "read", "printf", "set", "ls"];
    let check = |line: &str| text(line, &list);
    assert_eq!(check("export RUST_LOG=debug; ls"), Ok(()));
    assert_eq!(
        check("export PATH=/tmp"),
        Err("Command not allowed: export PATH=… (assignments to PATH are not allowed)".into())
    );
    assert_eq!(
        check("declare -n r=PATH"),
        Err("Command not allowed: declare r=PATH (namerefs to PATH are not allowed)".into())
    );
    assert_eq!(
        check("read IFS"),
        Err("Command not allowed: read IFS (assignments to IFS are not allowed)".into())
    );
    assert_eq!(
        check("printf -v PATH x"),
        Err("Command not allowed: printf -v PATH (assignments to PATH are not allowed)".into())
    );
    assert_eq!(check("printf 'PATH'"), Ok(()));
    assert_eq!(check("export FOO=$PATH:/x; read -p 'PATH? ' x"), Ok(()));
    assert_eq!(
        check("set -k"),
        Err(
            "Command not allowed: set -k (set -k turns later arguments into assignments: \
             put them before the command)"
                .into()
        )
    );
    assert_eq!(
        check("set -o posix"),
        Err(
            "Command not allowed: set -o posix (it changes how bash reads later lines: \
             leave it as it is)"
                .into()
        )
    );
    assert_eq!(check("set -e"), Ok(()));
}

#[test]
fn builtins_that_rebind_or_run_code_are_refused() {
    let list = ["hash", "mapfile", "declare"];
    assert_eq!(
        text("hash -p /bin/rm ls", &list),
        Err(
            "Command not allowed: hash -p (hash -p rebinds a command name: \
             call the program by its path)"
                .into()
        )
    );
    assert_eq!(
        text("mapfile -C 'rm x' -c 1 a", &list),
        Err(
            "Command not allowed: mapfile -C (mapfile -C runs a callback: \
             loop over the array instead)"
                .into()
        )
    );
    assert_eq!(
        text("declare -a x='($(rm))'", &list),
        Err("Command not allowed: rm".into())
    );
    assert_eq!(text("hash -r; mapfile -t a", &list), Ok(()));
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
        "))", "${", "$[", "$'", "<(", "<<", "<<-", "EOF", "\nEOF\n", "if ", "then ", "fi", "for ",
        "in ", "do ", "done", "case ", "esac", ";;", "[[ ", " ]]", "time ", "x=", "a[", "é",
        "\\\n", "((", "{fd}>", "&>",
    ];
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    for _ in 0..5_000 {
        let len = (rng.next() % 40) as usize;
        let line: String = (0..len).map(|_| rng.pick(&pieces)).collect();
        let _ = check_allowed(&line, LIST);
    }
}

// ----- names after quote removal (each form confirmed in bash to run an unlisted program) -----

const BUILTINS: &[&str] = &[
    "echo",
    "ls",
    "export",
    "declare",
    "typeset",
    "local",
    "readonly",
    "read",
    "printf",
    "mapfile",
    "readarray",
    "unset",
    "let",
    "getopts",
    "wait",
    "jobs",
    "trap",
    "compgen",
    "set",
    "shopt",
    "./build.sh",
];

#[test]
fn quoted_forbidden_names_are_refused_by_their_value() {
    for name in [
        "BASH''_ENV",
        "PA''TH",
        "PA\"\"TH",
        "P\\ATH",
        "SHELL''OPTS",
        "'IFS'",
        "$'PATH'",
    ] {
        for line in [
            format!("export {name}=p; ./build.sh"),
            format!("declare -x {name}=p"),
            format!("readonly {name}=p"),
            format!("typeset {name}=p"),
            format!("local {name}=p"),
            format!("printf -v {name} x"),
            format!("printf -v{name} x"),
            format!("read {name}"),
            format!("read -r -a {name}"),
            format!("mapfile {name}"),
            format!("readarray -t {name}"),
            format!("getopts ab {name}"),
            format!("wait -p {name}"),
            format!("let {name}=1"),
        ] {
            let value = name.replace(['\'', '"', '\\', '$'], "");
            forbidden_with(&line, BUILTINS, &value);
        }
    }
    forbidden_with("export 'BASH_ENV=p'", BUILTINS, "BASH_ENV");
    assert_eq!(
        text("export BUILD=1 \"X=$HOME\"; read -r line", BUILTINS),
        Ok(())
    );
}

#[test]
fn name_arguments_that_expand_are_refused() {
    for line in [
        "export $n=1",
        "export \"$n\"=1",
        "declare \"${n}\"",
        "read \"$n\"",
        "read -a \"$n\"",
        "printf -v \"$n\" x",
        "mapfile $n",
        "unset $n",
        "getopts ab $n",
        "export PA*H=x",
        "export {PATH,X}=y",
    ] {
        unknown_name(line, BUILTINS);
    }
    // An expanding word where an option may stand could be `-v NAME`.
    option("printf \"$f\" x", BUILTINS, "printf \"$f\"");
    assert_eq!(
        text("printf \"$f\"; wait $pid; read -p \"$q\" x", BUILTINS),
        Ok(())
    );
}

#[test]
fn namerefs_to_forbidden_or_unknown_targets_are_refused() {
    forbidden_with("declare -n r=PATH; r=/tmp/evil; ls", BUILTINS, "PATH");
    forbidden_with("local -n r='BASH_ENV'", BUILTINS, "BASH_ENV");
    forbidden_with("typeset -rn r=PA''TH", BUILTINS, "PATH");
    unknown_name("declare -n r; r=PATH; r=/tmp/evil; ls", BUILTINS);
    unknown_name("declare -n r=$t", BUILTINS);
    unknown_name("declare -n r=", BUILTINS);
    // A loop over a nameref retargets it at each word, wherever the loop stands.
    unknown_name("declare -n r=x; for r in PATH; do r=/tmp; done", BUILTINS);
    unknown_name("for r in PATH; do declare -n r=x; done", BUILTINS);
    assert_eq!(
        text("declare -n r=x; r=1; for i in 1; do echo; done", BUILTINS),
        Ok(())
    );
}

#[test]
fn unsetting_a_forbidden_variable_is_refused() {
    let refusal = check_allowed("unset PATH; ./ls", BUILTINS).unwrap_err();
    assert_eq!(
        refusal.to_string(),
        "Command not allowed: unset PATH (unsetting PATH is not allowed)"
    );
    forbidden_with("unset -v 'IFS'", BUILTINS, "IFS");
    forbidden_with("unset x BA\"SH_ENV\"", BUILTINS, "BASH_ENV");
    assert_eq!(text("unset x y", BUILTINS), Ok(()));
}

#[test]
fn arithmetic_that_assigns_a_forbidden_variable_is_refused() {
    for line in [
        "echo $((PATH=0))",
        "(( IFS = 1 ))",
        "echo $[ ++PATH ]",
        "a[PATH=0]=x",
        "echo ${x:PATH+=1}",
        "echo ${BASH_ENV:=p}",
        "echo ${BASH_ENV=p}",
        "let 'PATH = 0'",
        "unset 'a[PATH=0]'",
        "x=PATH=0; ((x))",
        "declare -i n; n=IFS=5",
    ] {
        forbidden_with(
            line,
            BUILTINS,
            if line.contains("IFS") {
                "IFS"
            } else if line.contains("BASH_ENV") {
                "BASH_ENV"
            } else {
                "PATH"
            },
        );
    }
    unknown_name("echo ${!r:=p}", BUILTINS);
    assert_eq!(
        text(
            "echo $(( ${#PATH} > 0 )) $((PATH == 1)) ${PATH:-x}",
            BUILTINS
        ),
        Ok(())
    );
}

#[test]
fn options_that_run_their_argument_are_refused() {
    option("jobs -x ls", BUILTINS, "jobs -x");
    option("jobs -lx ls", BUILTINS, "jobs -lx");
    option("readarray -C cb a", BUILTINS, "readarray -C");
    option("compgen -C 'rm' x", &["compgen"], "compgen -C");
    option("shopt -s expand_aliases", BUILTINS, "shopt expand_aliases");
    option("trap \"$a\" EXIT", BUILTINS, "trap \"$a\"");
    assert_eq!(
        text("jobs -l; trap - EXIT; trap 'echo bye' EXIT", BUILTINS),
        Ok(())
    );
}

#[test]
fn trap_actions_and_word_lists_are_checked_as_lines() {
    assert_eq!(
        text("trap 'rm -rf x' EXIT", BUILTINS),
        Err("Command not allowed: rm".into())
    );
    assert_eq!(
        text("compgen -W '$(rm)' x", &["compgen"]),
        Err("Command not allowed: rm".into())
    );
}

#[test]
fn locale_quoting_is_refused_wherever_bash_translates_it() {
    unparsable("a[$\"x y\"]=b");
    unparsable("echo ${x:-$\"hi\"}");
    unparsable("echo $(( $\"1\" ))");
    unparsable("echo \"${x:-$\"hi\"}\"");
    ok("cat <<E\n$\"x\"\nE");
}

#[test]
fn csh_style_redirections_onto_plain_files_are_accepted() {
    ok("ls >& /dev/null");
    ok("ls >&out.txt");
    ok("ls >& 'my-file'x");
    ok("cat <&0 <& -");
    unparsable("ls >& $f");
    unparsable("ls >&'$(rm)'");
    unparsable("ls >& '*'");
    unparsable("ls >& ~/x");
}

#[test]
fn construct_refusals_say_what_to_write_instead() {
    assert_eq!(
        text("BASH_ENV=x ls", LIST),
        Err("Command not allowed: BASH_ENV=… (assignments to BASH_ENV are not allowed)".into())
    );
    assert_eq!(
        text("$CMD x", LIST),
        Err(
            "Command not allowed: $CMD (a command word must be a plain name: \
             write the command itself)"
                .into()
        )
    );
    assert_eq!(
        text("f() { ls; }", LIST),
        Err(
            "Command not allowed: could not parse the command line (incomplete, or bash \
             syntax the gate does not read such as a function definition: write it more \
             plainly)"
                .into()
        )
    );
    assert_eq!(
        text("echo $\"x\"", LIST),
        Err(
            "Command not allowed: could not parse the command line ($\"…\" is translated \
             at run time: write \"…\" instead)"
                .into()
        )
    );
    let refusal = check_allowed("rm", LIST).unwrap_err();
    assert!(refusal.is_unlisted_word() && refusal.subject() == "rm");
    let _: &dyn std::error::Error = &refusal;
}

#[test]
fn a_megabyte_line_of_substitutions_is_read_in_linear_time() {
    // 100 000 sequential substitutions in 1 MB, each checked; then the same with an
    // unlisted word at the very end, which must still be found.
    let mut line = "echo".to_string() + &" $(ls) ".repeat(100_000);
    line.push_str(&"a".repeat(1_000_000 - line.len()));
    let started = std::time::Instant::now();
    ok(&line);
    refused(&(line.clone() + "; rm"), "rm");
    let nested = "$(".repeat(100_000) + &")".repeat(100_000);
    unparsable(&nested);
    let params = "${x:-".repeat(100_000) + &"}".repeat(100_000);
    unparsable(&params);
    // Generous: debug build on a loaded machine; a quadratic reading takes minutes.
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

#[test]
fn sixty_four_levels_are_read_and_sixty_five_refused() {
    let at = |n: usize| "echo ".to_string() + &"$(echo ".repeat(n) + &")".repeat(n);
    ok(&at(60));
    unparsable(&at(65));
}

#[test]
fn option_spellings_do_not_hide_a_forbidden_name() {
    let list = [BUILTINS, &["shopt", "echo", ":"]].concat();
    for (line, name) in [
        ("export -- PA''TH=.", "PATH"),
        ("declare -xg PATH=.", "PATH"),
        ("readonly -a PATH=(.)", "PATH"),
        ("declare \"PATH=.\"", "PATH"),
        ("read -d '' -a x PATH", "PATH"),
        ("read -rd '' IFS", "IFS"),
        ("mapfile -t -- PATH", "PATH"),
        ("unset -v -- PATH", "PATH"),
        ("declare -A BASH_ALIASES=([ls]=rm)", "BASH_ALIASES"),
        ("echo $(( x = PATH = 0 ))", "PATH"),
        ("for ((PATH=0; 0; )); do :; done", "PATH"),
        (": ${PATH:=.}", "PATH"),
    ] {
        forbidden_with(line, &list, name);
    }
    option("shopt -s -o posix", &list, "shopt -o posix");
    assert_eq!(
        text("declare -A m=([k]=v); export -p; read -r -d '' x", &list),
        Ok(())
    );
}
