//! Compound commands and keywords.

use super::*;

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
fn a_word_that_cannot_start_a_name_names_no_variable() {
    // `=x`, `/x`: bash answers "not a valid identifier" and sets nothing.
    let list = ["export", "declare", "readonly", "local"];
    for line in [
        "readonly b Name = true",
        "declare =x",
        "export =$x=1",
        "local +=y",
    ] {
        assert_eq!(text(line, &list), Ok(()), "line: {line:?}");
    }
    // What follows is still read: a substitution in it is a command word.
    assert_eq!(
        text("export =$(rm -rf x)", &list),
        Err("Command not allowed: rm".into())
    );
    assert_eq!(text("readonly s Udi = /sys/x:00;", &list), Ok(()));
    unknown_name("export $n=1", &list);
    // Braces and globs can make a name of what does not start with one.
    unknown_name("declare {PATH=1,x}", &list);
    unknown_name("declare [P]ATH=/tmp", &list);
    unknown_name("declare ~x", &list);
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

#[test]
fn an_operand_that_expands_where_an_option_may_stand_is_refused() {
    // `jobs -x CMD` runs CMD, `wait -p NAME` and `printf -v NAME` set NAME: a word that
    // expands may become any of them, by its value, by splitting or by globbing.
    let list = ["jobs", "wait", "printf", "true"];
    let refusal = |line: &str, word: &str| {
        assert_eq!(
            text(line, &list),
            Err(format!(
                "Command not allowed: {word} (an option that expands is not known before \
                 the line runs: write it literally, or put -- before it)"
            )),
            "line: {line:?}"
        );
    };
    refusal("x='-x touch f'; jobs $x", "jobs $x");
    refusal("true & wait $pid", "wait $pid");
    refusal("true & wait $!x", "wait $!x");
    refusal("true & wait \"$pid\"", "wait \"$pid\"");
    refusal("printf $fmt", "printf $fmt");
    refusal("printf \"$a\"$b", "printf \"$a\"$b");
    refusal("printf -- x; printf *", "printf *");
    refusal("printf \"$fmt\" x", "printf \"$fmt\"");
    // "$@" and "${a[@]}" are a word each.
    refusal("printf \"$@\"", "printf \"$@\"");
    refusal("printf \"${a[@]}\"", "printf \"${a[@]}\"");
    // After `--`, operands; and `printf "$fmt"` alone is at most `printf -vNAME`
    // without a format, which sets nothing.
    for line in [
        "jobs -- $x",
        "true & wait -- $pid",
        "printf \"$fmt\"",
        "printf -- $fmt x",
        // A number or nothing.
        "true & wait $!",
        "true & wait \"$!\" $$",
        "wait ${!}",
    ] {
        assert_eq!(text(line, &list), Ok(()), "line: {line:?}");
    }
}

#[test]
fn a_word_that_expands_cannot_become_an_option_or_a_trap_action() {
    let list = [
        "hash", "enable", "bind", "complete", "compgen", "trap", "echo", "ls",
    ];
    let option = |line: &str, word: &str| {
        assert_eq!(
            text(line, &list),
            Err(format!(
                "Command not allowed: {word} (an option that expands is not known before \
                 the line runs: write it literally, or put -- before it)"
            )),
            "line: {line:?}"
        );
    };
    // `hash -p FILE ls`, `enable -n NAME`, `bind -x`, `compgen -C CMD`, `complete -F F`.
    option("x='-p /bin/touch ls'; hash $x; ls", "hash $x");
    option("enable $x", "enable $x");
    option("bind \"$x\"", "bind \"$x\"");
    option("compgen $x w", "compgen $x");
    option("complete -o default $x", "complete $x");
    // `trap $x` splits into an action and a signal when x is `cmd EXIT`.
    for line in ["x='touch EXIT'; trap $x", "trap -- $x", "trap \"$x\""] {
        assert!(
            matches!(check_allowed(line, &list), Err(Denial::Option { .. })),
            "line: {line:?}"
        );
    }
    for line in [
        "hash -r; hash ls",
        "hash -- $x",
        "trap 'echo bye' $signals",
        "trap - INT",
    ] {
        assert_eq!(text(line, &list), Ok(()), "line: {line:?}");
    }
}

#[test]
fn history_cannot_run_a_changed_command() {
    let list = ["set", "echo", "fc", "shopt", "getopts"];
    // `fc -l -s old=new` re-runs the last command changed; history expansion rewrites
    // later lines before the gate's reading applies.
    for line in [
        "set -o history\necho hi\nfc -l -s echo=touch",
        "fc -ls",
        "fc -l -e vi",
        "fc -l $x",
        "set -H",
        "set -eH",
        "set -o histexpand",
        "shopt -so history",
        "shopt -s -- expand_aliases",
        "shopt -s e$y",
        "set -o p$y",
    ] {
        assert!(
            matches!(check_allowed(line, &list), Err(Denial::Option { .. })),
            "line: {line:?}"
        );
    }
    assert_eq!(
        text("fc -l -10; fc -lnr 1 5; set +o history", &list),
        Ok(())
    );
    // `getopts $x` splits into an option string and a name.
    assert_eq!(
        text("x='ab PATH'; getopts $x", &list),
        Err(
            "Command not allowed: getopts $x (a word that expands before the variable name \
             may split into several: quote it)"
                .into()
        )
    );
    assert_eq!(text("getopts \"$opts\" o", &list), Ok(()));
}

#[test]
fn an_option_argument_that_splits_is_refused() {
    // `read -p $x NAME` is `read -p foo -a PATH NAME` when x is `foo -a PATH`;
    // `mapfile -n $x` may be `mapfile -n 1 -C cmd`, `compgen -o $x` `compgen -o d -C cmd`.
    let list = ["read", "mapfile", "compgen"];
    for (line, word) in [
        ("read -p $x name", "$x"),
        ("mapfile -n $x a", "$x"),
        ("read -t ${t}s x", "${t}s"),
    ] {
        assert_eq!(
            text(line, &list),
            Err(format!(
                "Command not allowed: {} {word} (an option's argument that expands may split \
                 into more options: quote it)",
                line.split(' ').next().unwrap()
            )),
            "line: {line:?}"
        );
    }
    assert!(check_allowed("compgen -o $x", &list).is_err());
    assert!(check_allowed("read -p \"${a[@]}\" x", &list).is_err());
    for line in ["read -p \"$q\" -t \"$t\" x", "mapfile -n $# -u \"$fd\" a"] {
        assert_eq!(text(line, &list), Ok(()), "line: {line:?}");
    }
}
