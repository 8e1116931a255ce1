//! Redirections and assignments.

use super::*;

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
