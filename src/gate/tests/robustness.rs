//! Robustness, and names after quote removal (each form confirmed in bash to run an unlisted program).

use super::*;

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
    // `wait $x` may be `wait -p PATH`, even as the last word.
    option("wait $pid", BUILTINS, "wait $pid");
    assert_eq!(
        text("printf \"$f\"; wait -- $pid; read -p \"$q\" x", BUILTINS),
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
fn locale_quoting_is_refused_where_its_text_is_evaluated() {
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
        text("echo ${x:-$\"y\"}", LIST),
        Err(
            "Command not allowed: could not parse the command line ($\"…\" here is \
             translated and evaluated at run time: write \"…\" instead)"
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

/// Issue 33, item 5: refusals no line needed. `IFS=` before `read` holds only
/// while `read` runs; an ANSI-C string with a NUL is one literal word (bash
/// ends its value at the NUL); an array element with a plain subscript is
/// one name unless a glob of it could name a variable the gate guards.
#[test]
fn read_with_ifs_nul_delimiters_and_plain_elements_pass() {
    let list = &["read", "unset", "echo", "printf", "ls"];
    for line in [
        "while IFS= read -r line; do echo \"$line\"; done < f",
        "IFS=, read -ra parts <<< \"$s\"",
        "IFS=$'\\n' read -r -d '' -a lines < f",
        "read -r -d $'\\0' x < f",
        "printf '%s' $'a\\0b'",
        "unset array[2]",
        "unset -v arr[10] arr[x]",
    ] {
        assert_eq!(check_allowed(line, list), Ok(()), "{line}");
    }
    for (line, name) in [
        ("IFS= ls", "IFS"),
        ("IFS=x; read a", "IFS"),
        ("IFS=a IFS=b read x", "IFS"),
        ("IFS=x read a; IFS=y echo", "IFS"),
    ] {
        forbidden_with(line, list, name);
    }
    // A glob of the element could name a guarded variable (any case, under
    // nocaseglob): its name is not known.
    for line in [
        "unset PAT[H]",
        "unset pat[h]",
        "unset LD_[P]",
        "unset a[$i]",
        "unset a[1-2]",
    ] {
        assert!(
            matches!(
                check_allowed(line, list),
                Err(Denial::NotLiteralName { .. })
            ),
            "{line}: {:?}",
            check_allowed(line, list)
        );
    }
    // The NUL's cut is where bash makes it: `$'r\0m'` runs `r`.
    assert_eq!(
        check_allowed("$'r\\0m' x", list),
        Err(Denial::NotAllowed { word: "r".into() })
    );
}

/// Issue 33, item 5: lines bash reads plainly that the gate refused.
#[test]
fn continuations_conditions_on_lines_loop_groups_and_help() {
    let list = &["ls", "echo", "hash", "[[", "true"];
    for line in [
        "l\\\ns -l",
        "echo a\\\nb \"c\\\nd\" 'e\\\nf'",
        "wh\\\nile true; do ls; done",
        "ls \\\n  -l \\\n  -a",
        "[[\na == b\n||\nc == d ]] && echo yes",
        "[[ a &&\n(\nb) ]]",
        "for i in 1 2 3; { echo $i; }",
        "for ((i=0; i<2; i++)) { echo $i; }",
        "for i; { ls; }",
        "hash --help",
    ] {
        assert_eq!(check_allowed(line, list), Ok(()), "{line:?}");
    }
    assert_eq!(
        check_allowed("r\\\nm -rf x", list),
        Err(Denial::NotAllowed { word: "rm".into() })
    );
    // Inside single quotes the pair stays: this `echo` prints it.
    assert_eq!(check_allowed("echo 'r\\\nm'; ls", list), Ok(()));
    // Where bash reads by rules of its own, a joined word is still refused.
    for line in [
        "l\\\ns # c",
        "echo $(l\\\ns)",
        "cat <<E\nl\\\ns\nE",
        "[[ a # c\n]]",
        "hash -p /x ls",
    ] {
        assert!(check_allowed(line, list).is_err(), "{line:?}");
    }
}
