//! Unit tests of `inert`.

use super::*;

#[test]
fn plain_programs_are_inert() {
    for line in [
        "ls -la src",
        "cargo test --release 2>&1 | tail -20",
        "git status && git diff --stat",
        "echo hi",
        "echo 'a; cd /' \"b && export X\"",
        "find . -name '*.rs' -exec wc -l {} \\;",
        "grep -rn foo . > /tmp/out.txt; cat /tmp/out.txt",
        "make -j4 CFLAGS=-O2",
        "git config user.name=x",
        "[ -f Cargo.toml ] && echo yes",
        "[ -v HOME ] && test -n x",
        "test -d src || true",
        "sleep 1 & wait_for_it",
        "python3 -c 'import os; os.chdir(\"/\")'",
        "awk '{print $1}' f | sort",
        "echo \"(a) b\"",
        "",
        "   ",
        "true;",
        "./build.sh --opt=value",
        "/usr/bin/env FOO=1 printenv FOO",
        "ls &>/dev/null && echo ok",
        "cmd 2>/dev/null >out",
    ] {
        assert!(is_inert(line), "{line:?}");
    }
}

#[test]
fn anything_that_may_change_the_shell_is_not() {
    for line in [
        "cd src",
        "true {HOME}>/dev/null",
        "echo hi {fd}>/dev/null",
        "ls {X}</dev/null",
        "cd src && ls",
        "ls; cd /",
        "ls | cd /",
        "ls && 'c'd /",
        "ls && \"cd\" /",
        "ls && c\\d /",
        "pushd /tmp",
        "popd",
        "export X=1",
        "X=1",
        "X=1 Y=2",
        "X+=1",
        "a[1]=2",
        "FOO=1 ls",
        "declare -x X=1",
        "typeset X=1",
        "readonly X=1",
        "local X=1",
        "unset PATH",
        "read X < f",
        "mapfile A < f",
        "readarray A < f",
        "printf -v X hi",
        "set -a",
        "shopt -s expand_aliases",
        "source env.sh",
        ". env.sh",
        "eval cd /",
        "exec bash",
        "builtin cd /",
        "command cd /",
        "enable -n cd",
        "trap 'cd /' EXIT",
        "alias ls=cd",
        "let x=1",
        "getopts a X",
        "wait -p X",
        "hash -p /bin/cd ls",
        "for d in a b; do ls; done",
        "while true; do cd /; done",
        "if true; then cd /; fi",
        "case x in x) cd /;; esac",
        "{ cd /; }",
        "! cd /",
        "time cd /",
        "[[ -d / ]]",
        "echo $HOME",
        "echo `pwd`",
        "echo $(pwd)",
        "echo \"$HOME\"",
        "echo \"`pwd`\"",
        "(cd /)",
        "f() { cd /; }",
        "x=$(cd /)",
        "echo hi\ncd /",
        "echo 'unterminated",
        "echo \"unterminated",
        "echo trailing\\",
        "> out ls",
        "2>err ls",
        "*",
        "c?",
        "{cd,ls} /",
        "''",
        "[ -v 'a[X=1]' ]",
        "test -v a[X=1]",
        "~/bin/tool x",
        "&>out ls",
    ] {
        assert!(!is_inert(line), "{line:?}");
    }
}

/// Against bash itself: random lines made of ordinary and tricky
/// pieces, and every one judged inert is run by bash (`eval` in a
/// subshell, which reads the line as `bash -c` does), which must end in
/// the directory it started in with the same exported variables.
#[test]
fn every_line_judged_inert_leaves_bash_as_it_was() {
    const WORDS: &[&str] = &[
        "echo",
        "true",
        "false",
        "ls",
        "cd",
        "'c'd",
        "\"cd\"",
        "c\\d",
        "pushd",
        "popd",
        "export",
        "declare",
        "typeset",
        "unset",
        "read",
        "printf",
        "set",
        "source",
        ".",
        "eval",
        "command",
        "builtin",
        "X=1",
        "PATH=/nowhere",
        "X+=2",
        "test",
        "[",
        "]",
        ":",
        "pwd",
        "type",
        "/",
        "/tmp",
        "..",
        "-v",
        "-x",
        "-a",
        "X",
        "HOME",
        "'a b'",
        "\"q\"",
        "$HOME",
        "`pwd`",
        "$(cd /)",
        "{a,b}",
        "*",
        "~",
        "'$X'",
        "\"$X\"",
        "a=b",
        "--x=y",
        "'a[HOME=1]'",
        "a[HOME=2]",
        "{",
        "}",
        "!",
        "time",
        "for",
        "in",
        "do",
        "done",
        "if",
        "then",
        "fi",
        "case",
        "esac",
        "x)",
        "(cd /)",
        "let",
        "getopts",
        "mapfile",
        "alias",
        "shopt",
        "\\",
        "'",
        "\"",
        "#",
        "env",
        "2>/dev/null",
        ">/dev/null",
        "{X}>/dev/null",
        "{HOME}</dev/null",
        "2>&1",
        "&>/dev/null",
    ];
    const JOINS: &[&str] = &[" ", " ", " ", " ", "; ", " && ", " || ", " | ", " & "];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let mut lines = Vec::new();
    let mut judged_inert = 0;
    // The builtins judged harmless, with each piece as an operand.
    let operands = WORDS.iter().flat_map(|w| {
        [
            format!("test -v {w}"),
            format!("[ -v {w} ]"),
            format!("[ -n {w} ]"),
            format!("kill -l {w}"),
            format!("type {w}"),
        ]
    });
    let random = (0..6000).map(|_| {
        let mut line = String::new();
        for i in 0..1 + next(6) {
            if i > 0 {
                line.push_str(JOINS[next(JOINS.len())]);
            }
            line.push_str(WORDS[next(WORDS.len())]);
        }
        line
    });
    for line in operands.collect::<Vec<_>>().into_iter().chain(random) {
        if is_inert(&line) {
            judged_inert += 1;
            lines.push(line);
        }
    }
    assert!(judged_inert > 300, "only {judged_inert} lines judged inert");
    let dir = std::env::temp_dir().join(format!("bashtools-inert-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let list = dir.join("lines");
    let mut bytes = Vec::new();
    for l in &lines {
        bytes.extend_from_slice(l.as_bytes());
        bytes.push(0);
    }
    std::fs::write(&list, bytes).unwrap();
    // Each line in a subshell started in `dir`; what it ends with is
    // compared with what it started with, the line printed on a change.
    let script = r#"
        cd "$1" || exit 9
        before=$(export -p)
        while IFS= read -r -d '' L; do
            now=$( (eval "$L" >/dev/null 2>&1 </dev/null; builtin pwd -P; builtin export -p) )
            if [ "$now" != "$(builtin pwd -P)"$'\n'"$before" ]; then
                printf 'CHANGED: %s\n' "$L"
            fi
        done < "$2"
    "#;
    let out = std::process::Command::new("bash")
        .args(["-c", script, "bash"])
        .arg(&dir)
        .arg(&list)
        .env_remove("BASH_ENV")
        .output()
        .expect("bash runs");
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("CHANGED"), "{text}");
}

/// Our lists hold every builtin and reserved word of the bash on this
/// machine: one that is missing would be taken for a program.
#[test]
fn the_lists_hold_what_bash_has() {
    let out = std::process::Command::new("bash")
        .args(["-c", "compgen -b; compgen -k"])
        .output()
        .expect("bash runs");
    for name in String::from_utf8_lossy(&out.stdout).lines() {
        assert!(
            BUILTINS.contains(&name) || KEYWORDS.contains(&name),
            "bash has {name:?}, not in our lists"
        );
    }
}
