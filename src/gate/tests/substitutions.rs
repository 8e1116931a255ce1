//! Command and process substitutions, and arithmetic.

use super::*;

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

// ----- text that is arithmetic later (hardening item 15) -----

#[test]
fn quoted_text_with_a_substitution_in_a_subscript_is_checked_as_live() {
    let list = ["declare", "read", "let", "echo", "ls", "["];
    for line in [
        "declare -i x; x='a[$(rm x)]'",
        "read x <<< 'a[$(rm x)]'",
        "x='a[`rm x`]'; let x",
        "x=a\\[\\$\\(rm\\)\\]; let x",
        "declare -ai a=('b[$(rm x)]')",
        "x=\"a[\\$(rm x)]\"; echo $((x))",
        "[ -v 'a[$(rm x)]' ]",
        // A subscripted name makes the word expand; what it assigns is
        // still text (`declare -ai a; a[0]='b[$(rm x)]'` ran rm).
        "declare -ai a; a[0]='b[$(rm x)]'",
        "declare -Ai m; m[k]='b[$(rm x)]'",
        "a[0]+='b[$(rm x)]'",
        "a[$i]='b[`rm x`]'",
        "declare -ai a=([0]='b[$(rm x)]')",
        "declare -ai a; a+=('b[$(rm x)]')",
    ] {
        let denial = check_allowed(line, &list).expect_err(line);
        assert_eq!(denial.to_string(), "Command not allowed: rm", "{line}");
    }
    // What it would run is listed: allowed, as a live one would be.
    assert_eq!(check_allowed("declare -i x; x='a[$(ls)]'", &list), Ok(()));
    // A live substitution is checked as one; text without a subscript, or
    // a subscript without a substitution, is data.
    refused("x=a[$(rm x)]", "rm");
    ok("echo '$(rm x)' 'a[1]' '[0-9]$'");
    ok("grep -E '^[a-z]+$' f");
}

#[test]
fn a_quoted_time_is_the_program_and_its_operand_a_command_word() {
    let list = ["time", "ls"];
    for line in [
        "\\time rm x",
        "'time' rm x",
        "\"time\" -p rm x",
        "\\time -f %e -o f -- rm x",
    ] {
        let denial = check_allowed(line, &list).expect_err(line);
        assert_eq!(denial.to_string(), "Command not allowed: rm", "{line}");
    }
    assert_eq!(check_allowed("\\time ls", &list), Ok(()));
    assert_eq!(
        check_allowed("time -p rm x", &list)
            .unwrap_err()
            .to_string(),
        "Command not allowed: rm"
    );
}
