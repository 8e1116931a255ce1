//! Judging lines: rules, defaults, expanding words, wrappers.

use super::*;

fn policy(rules: &[(&str, Decision)]) -> Policy {
    rules.iter().fold(Policy::new(), |p, (words, d)| {
        p.rule(Rule::parse(*d, words).unwrap())
    })
}

fn verdict(p: &Policy, line: &str) -> String {
    match p.judge(line) {
        Judgement::Allow => "allow".into(),
        Judgement::Ask(parts) => format!(
            "ask {}",
            parts
                .iter()
                .map(|p| p.words.join(" "))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Judgement::Deny(d) => format!("deny {d}"),
    }
}

use Decision::{Allow, Ask, Deny};

#[test]
fn the_strictest_rule_decides_each_command() {
    let p = policy(&[
        ("git", Allow),
        ("git push", Ask),
        ("git push --force", Deny),
        ("ls", Allow),
    ]);
    assert_eq!(verdict(&p, "git status"), "allow");
    assert_eq!(verdict(&p, "git push origin"), "ask git push");
    assert_eq!(
        verdict(&p, "git push --force"),
        "deny Command not allowed: git push --force"
    );
    assert_eq!(
        verdict(&p, "ls; git push; rm x"),
        "deny Command not allowed: rm"
    );
    assert_eq!(verdict(&p, "ls && git push && git pull"), "ask git push");
    assert_eq!(
        verdict(&p, "echo $(git push)"),
        "deny Command not allowed: echo"
    );
}

#[test]
fn the_default_follows_the_rules() {
    let deny_only = policy(&[("rm", Deny)]);
    assert_eq!(deny_only.default_decision(), Allow);
    assert_eq!(verdict(&deny_only, "ls -l"), "allow");
    assert_eq!(
        verdict(&deny_only, "cd x && rm y"),
        "deny Command not allowed: rm"
    );
    let with_allow = policy(&[("ls", Allow)]);
    assert_eq!(with_allow.default_decision(), Deny);
    let asking = policy(&[("ls", Allow)]).unlisted(Ask);
    assert_eq!(verdict(&asking, "ls; make"), "ask make");
    assert_eq!(verdict(&asking, "$x y"), "ask $x");
}

#[test]
fn expanding_words_never_allow_and_always_count_against() {
    let p = policy(&[("git status", Allow), ("git push", Deny), ("rm", Deny)]);
    assert_eq!(verdict(&p, "git $x"), "deny Command not allowed: git $x");
    let q = policy(&[("git", Allow), ("git push", Deny)]);
    assert_eq!(verdict(&q, "git $x"), "deny Command not allowed: git $x");
    assert_eq!(
        verdict(&q, "git p$x origin"),
        "deny Command not allowed: git p$x"
    );
    assert_eq!(verdict(&q, "git s$x"), "allow");
    assert_eq!(
        verdict(&q, "git \"$x\" --force"),
        "deny Command not allowed: git \"$x\""
    );
    let r = policy(&[("rm", Deny)]);
    assert_eq!(verdict(&r, "$cmd -rf /"), "deny Command not allowed: $cmd");
    assert_eq!(
        verdict(&r, "/bin/rm -rf /"),
        "deny Command not allowed: /bin/rm"
    );
    assert_eq!(verdict(&r, "r$x -rf /"), "deny Command not allowed: r$x");
    assert_eq!(verdict(&r, "l$x"), "allow");
    // A path is not the allowed word.
    let s = policy(&[("ls", Allow)]);
    assert_eq!(verdict(&s, "./ls"), "deny Command not allowed: ./ls");
}

#[test]
fn wrappers_are_judged_with_what_they_run() {
    let p = policy(&[("rm", Deny)]);
    for line in [
        "sudo rm -rf /",
        "env -i X=1 rm x",
        "command rm x",
        "builtin eval 'rm x'",
        "exec rm x",
        "nice -n 5 rm x",
        "nohup rm x &",
        "timeout 5 rm x",
        "stdbuf -oL rm x",
        "time rm x",
        "\\time -p rm x",
        "doas rm x",
        "find . -exec rm {} \\;",
        "xargs rm < list",
        "bash -c 'ls; rm x'",
        "sh -c \"sh -c 'rm x'\"",
        "eval rm x",
        "eval \"$x\"",
        "sh -c \"$x\"",
        "source ./script",
        ". ./script",
        "sudo --weird-option rm x",
    ] {
        assert!(
            verdict(&p, line).starts_with("deny"),
            "{line}: {}",
            verdict(&p, line)
        );
    }
    for line in [
        "sudo ls",
        "find . -name '*.rs'",
        "bash script.sh",
        "xargs echo",
        "env",
    ] {
        assert_eq!(verdict(&p, line), "allow", "{line}");
    }
    // An allow on the wrapper allows nothing it runs.
    let q = policy(&[("sudo", Allow), ("ls", Allow)]);
    assert_eq!(verdict(&q, "sudo ls"), "allow");
    assert_eq!(verdict(&q, "sudo make"), "deny Command not allowed: make");
    let r = policy(&[("bash", Allow), ("ls", Allow)]);
    assert_eq!(verdict(&r, "bash -c 'ls'"), "allow");
    assert_eq!(
        verdict(&r, "bash -c \"$x\""),
        "deny Command not allowed: bash"
    );
    assert_eq!(
        verdict(&r, "bash -c 'f() { :; }'").split(" (").next(),
        Some("deny Command not allowed: could not parse the command line")
    );
}

#[test]
fn gate_refusals_stay_refusals() {
    let p = policy(&[("rm", Deny)]);
    assert!(verdict(&p, "PATH=/tmp ls").starts_with("deny Command not allowed: PATH=…"));
    assert!(
        verdict(&p, "f() { rm x; }; f").starts_with("deny Command not allowed: could not parse")
    );
}

#[test]
fn always_turns_an_ask_into_an_allow_never_a_deny() {
    let p = policy(&[("git push", Ask), ("git push --force", Deny)]);
    let always = [Rule::allow("git push origin").unwrap()];
    assert_eq!(
        p.judge_with("git push origin main", &always),
        Judgement::Allow
    );
    assert!(matches!(
        p.judge_with("git push upstream", &always),
        Judgement::Ask(_)
    ));
    // Prefixes are positional: `--force` after `origin` is not `git push --force`.
    assert_eq!(
        p.judge_with("git push origin --force", &always),
        Judgement::Allow
    );
    assert!(matches!(
        p.judge_with("git push --force", &always),
        Judgement::Deny(_)
    ));
}

#[test]
fn the_suggested_prefix_is_plain_words_shown() {
    let p = policy(&[("npm", Ask)]);
    let Judgement::Ask(parts) = p.judge("npm run test:unit -- --watch") else {
        panic!()
    };
    assert_eq!(parts[0].suggested_prefix, ["npm", "run", "test:unit"]);
    let Judgement::Ask(parts) = p.judge("npm --global install x") else {
        panic!()
    };
    assert_eq!(parts[0].suggested_prefix, ["npm"]);
    let Judgement::Ask(parts) = p.judge("npm Install \"$x\"") else {
        panic!()
    };
    assert_eq!(parts[0].suggested_prefix, ["npm"]);
}

#[test]
fn exact_rules_match_only_their_words() {
    let p = Policy::new()
        .rule(Rule::allow("git status").unwrap().exact())
        .rule(Rule::deny("rm -rf /").unwrap().exact());
    assert_eq!(verdict(&p, "git status"), "allow");
    assert_eq!(
        verdict(&p, "git status -s"),
        "deny Command not allowed: git"
    );
    assert_eq!(
        verdict(&p, "rm -rf / $x"),
        "deny Command not allowed: rm -rf /"
    );
}

use crate::test_rng::Rng;

/// The rule that decides `words` by trying every rule: what the index must
/// find without trying them.
fn deciding_by_search(p: &Policy, words: &[Spelled]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (at, rule) in p.rule_list().iter().enumerate() {
        let better = best.map_or(true, |b| rule.decision > p.rule_list()[b].decision);
        if better && matches(rule, words) {
            best = Some(at);
        }
    }
    best
}

#[test]
fn the_index_finds_the_rule_a_search_of_every_rule_finds() {
    // Few words, so that rules and commands meet often: command words
    // that share first and last bytes and lengths (the index's sketch of a
    // second word), paths, and words that expand with a known beginning.
    const WORDS: &[&str] = &[
        "git", "gut", "push", "pash", "-f", "-rf", "-fr", "status", "x", "rm", "env", "a/git",
    ];
    const KNOWN: &[&str] = &["", "g", "gi", "pu", "-", "/usr/bin/g", "st"];
    let mut rng = Rng(0x5eed_1dea);
    let decisions = [Decision::Allow, Decision::Ask, Decision::Deny];
    for round in 0..400 {
        let mut p = Policy::new();
        for _ in 0..rng.below(30) {
            let decision = decisions[rng.below(3)];
            let rule = match rng.below(12) {
                0 => Rule::every(decision),
                _ => {
                    let positions = (0..1 + rng.below(3))
                        .map(|_| {
                            let mut alternatives: Vec<String> = (0..1 + rng.below(3))
                                .map(|_| rng.pick(WORDS).to_string())
                                .collect();
                            alternatives.dedup();
                            alternatives
                        })
                        .collect();
                    Rule::new(decision, positions).unwrap()
                }
            };
            p = p.rule(if rng.below(5) == 0 {
                rule.exact()
            } else {
                rule
            });
        }
        for _ in 0..50 {
            let words: Vec<Spelled> = (0..1 + rng.below(4))
                .map(|_| match rng.below(6) {
                    0 => {
                        let known = rng.pick(KNOWN);
                        Spelled::partly(&format!("{known}$x"), known)
                    }
                    1 => Spelled::plain(&format!("/usr/bin/{}", rng.pick(WORDS))),
                    _ => Spelled::plain(rng.pick(WORDS)),
                })
                .collect();
            assert_eq!(
                p.deciding(&words).0,
                deciding_by_search(&p, &words),
                "round {round}: {words:?} under {:#?}",
                p.rule_list()
            );
        }
    }
}

#[test]
fn a_policy_judges_the_same_before_and_after_more_rules() {
    // The index is built on the first judging, and again after a rule is
    // added: what it says follows the rules.
    let p = policy(&[("git", Allow)]);
    assert_eq!(verdict(&p, "git push"), "allow");
    let p = p.rule(Rule::deny("git push").unwrap());
    assert_eq!(
        verdict(&p, "git push"),
        "deny Command not allowed: git push"
    );
    let copy = p.clone();
    assert_eq!(copy, policy(&[("git", Allow), ("git push", Deny)]));
    assert_eq!(verdict(&copy, "git status"), "allow");
}
