//! The policy on real processes: rules deny, ask and allow per simple
//! command, wrappers are looked through, and *ask* reaches the approver,
//! blocking and in the `Pending` form.

use std::sync::{Arc, Mutex};

use bashtools::{Approval, Approved, Caller, Command, Decision, Outcome, Rule};
use serde_json::json;

use crate::common::{self, Scratch};

fn run(tools: &bashtools::BashTools, line: &str, caller: &Caller) -> String {
    tools.bash(&json!({"command": line}), caller).text
}

/// A deny rule holds whatever wraps the command: each line would delete
/// the file; none may, and each is refused with the rule's words.
#[test]
fn a_deny_rule_holds_through_lists_wrappers_and_shells() {
    let dir = Scratch::new("deny");
    let tools = common::builder()
        .working_directory(dir.path(""))
        .rule(Rule::deny("rm").unwrap().justification("use trash"))
        .build()
        .unwrap();
    let victim = dir.path("victim");
    for line in [
        "rm victim",
        "true && rm victim",
        "echo $(rm victim)",
        "sudo -n rm victim",
        "env X=1 rm victim",
        "command rm victim",
        "nice -n 1 rm victim",
        "timeout 5 rm victim",
        "bash -c 'rm victim'",
        "sh -c \"sh -c 'rm victim'\"",
        "find . -name victim -exec rm {} \\;",
        "echo victim | xargs rm",
        "eval 'rm victim'",
        "x=rm; $x victim",
        "x='rm victim'; eval \"$x\"",
        "x='rm victim'; bash -c \"$x\"",
        "/bin/rm victim",
        "\\rm victim",
        "'r'm victim",
    ] {
        std::fs::write(&victim, "x\n").unwrap();
        let text = run(&tools, line, &common::me());
        assert!(text.starts_with("Command not allowed: "), "{line}: {text}");
        assert!(victim.exists(), "{line} deleted the file: {text}");
    }
    assert_eq!(
        run(&tools, "true && rm victim", &common::me()),
        "Command not allowed: rm: use trash"
    );
    // Everything else runs (no allow rule: the default is allow).
    assert_eq!(run(&tools, "cat victim && echo ok", &common::me()), "x\nok");
}

#[test]
fn allow_rules_on_word_prefixes() {
    let dir = Scratch::new("prefix");
    let tools = common::builder()
        .working_directory(dir.path(""))
        .allowed_commands(["echo", "git status", "printf [%s x]"])
        .build()
        .unwrap();
    assert_eq!(run(&tools, "echo a; echo b", &common::me()), "a\nb");
    assert_eq!(run(&tools, "printf %s ok", &common::me()), "ok");
    assert_eq!(
        run(&tools, "printf %d 1", &common::me()),
        "Command not allowed: printf"
    );
    assert_eq!(
        run(&tools, "echo a; git push", &common::me()),
        "Command not allowed: git"
    );
    // An allow-list entry that is no rule fails the build.
    let bad = common::builder().allowed_commands(["git [push"]).build();
    assert_eq!(bad.unwrap_err().kind(), bashtools::ErrorKind::RuleInvalid);
}

#[test]
fn without_an_approver_a_line_that_needs_one_is_refused() {
    let dir = Scratch::new("noapprover");
    let tools = common::builder()
        .working_directory(dir.path(""))
        .rule(Rule::ask("touch").unwrap())
        .build()
        .unwrap();
    assert_eq!(
        run(&tools, "touch made && echo x", &common::me()),
        "Command needs approval: touch (no one can be asked here; allow it with a rule)"
    );
    assert!(!dir.path("made").exists());
}

/// The approver is asked once per line, naming every part that needs it;
/// `Once` runs, `Deny` refuses with its reason, a panic refuses, and
/// `Always` allows the suggested prefix for that caller's session only,
/// never over a deny rule.
#[test]
fn the_approver_decides_and_always_is_per_caller() {
    let dir = Scratch::new("approver");
    let asked: Arc<Mutex<Vec<Approval>>> = Arc::default();
    let answers: Arc<Mutex<Vec<Approved>>> = Arc::default();
    let (seen, next) = (asked.clone(), answers.clone());
    let tools = common::builder()
        .working_directory(dir.path(""))
        .rule(Rule::ask("touch").unwrap().justification("it writes"))
        .rule(Rule::ask("mkdir").unwrap())
        .rule(Rule::deny("touch forbidden").unwrap())
        .approver(move |a| {
            seen.lock().unwrap().push(a.clone());
            let answer = next.lock().unwrap().pop();
            answer.unwrap_or_else(|| panic!("no answer prepared"))
        })
        .build()
        .unwrap();
    let alice = Caller::default().recipient("alice");
    let bob = Caller::default().recipient("bob");

    answers.lock().unwrap().push(Approved::Once);
    assert_eq!(
        run(&tools, "touch one && mkdir d && echo ran", &alice),
        "ran"
    );
    {
        let asked = asked.lock().unwrap();
        assert_eq!(asked.len(), 1, "one question per line");
        assert_eq!(asked[0].parts, vec![vec!["touch"], vec!["mkdir"]]);
        assert_eq!(asked[0].justification.as_deref(), Some("it writes"));
        assert_eq!(asked[0].suggested_prefix, ["touch", "one"]);
        assert_eq!(asked[0].caller.get_recipient(), "alice");
    }
    assert!(dir.path("one").exists());

    answers
        .lock()
        .unwrap()
        .push(Approved::Deny(Some("not now".into())));
    assert_eq!(
        run(&tools, "touch two", &alice),
        "Command denied: touch two (not now)"
    );
    assert!(!dir.path("two").exists());

    // No answer prepared: the approver panics, and the line is refused.
    assert_eq!(
        run(&tools, "touch three", &alice),
        "Command denied: touch three (the approver panicked)"
    );
    assert!(!dir.path("three").exists());

    answers.lock().unwrap().push(Approved::Always);
    assert_eq!(run(&tools, "touch four; echo ok", &alice), "ok");
    let count = asked.lock().unwrap().len();
    // `touch four` is allowed for alice now, without a question…
    assert_eq!(run(&tools, "touch four; echo again", &alice), "again");
    assert_eq!(asked.lock().unwrap().len(), count);
    // …but not `touch five`, and not for bob.
    answers.lock().unwrap().push(Approved::Once);
    assert_eq!(run(&tools, "touch four; echo bob", &bob), "bob");
    assert_eq!(asked.lock().unwrap().len(), count + 1);

    // Always on the bare command word never reaches past a deny rule.
    answers.lock().unwrap().push(Approved::Always);
    assert_eq!(
        run(&tools, "touch; echo $?", &alice).lines().last(),
        Some("1")
    );
    assert_eq!(
        run(&tools, "touch forbidden", &alice),
        "Command not allowed: touch forbidden"
    );
    assert!(!dir.path("forbidden").exists());
}

/// `run_f` does not block its caller while the person is asked: the
/// `Pending` is not ready until the approver answers.
#[test]
fn the_pending_form_waits_for_the_approver_without_blocking() {
    let dir = Scratch::new("approver-f");
    let (ask_tx, ask_rx) = crossbeam_channel::bounded::<String>(1);
    let (answer_tx, answer_rx) = crossbeam_channel::bounded::<Approved>(1);
    let tools = common::builder()
        .working_directory(dir.path(""))
        .rule(Rule::ask("echo").unwrap())
        .approver(move |a| {
            ask_tx.send(a.line.clone()).unwrap();
            answer_rx.recv().unwrap()
        })
        .build()
        .unwrap();
    let mut pending = tools.run_f(&Command::new("echo asked"), &common::me());
    // The approver has the question; the caller's thread is free.
    assert_eq!(ask_rx.recv_timeout(common::DEADLINE).unwrap(), "echo asked");
    assert!(!pending.is_ready());
    answer_tx.send(Approved::Once).unwrap();
    let outcome = pending
        .wait_timeout(common::DEADLINE)
        .expect("answered")
        .unwrap();
    let Outcome::Exited(e) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(e.output(), "asked");
    // Denied in the Pending form too.
    let pending = tools.run_f(&Command::new("echo no"), &common::me());
    assert_eq!(ask_rx.recv_timeout(common::DEADLINE).unwrap(), "echo no");
    answer_tx.send(Approved::Deny(None)).unwrap();
    match pending.wait().unwrap() {
        Outcome::Refused(r) => assert_eq!(r.to_string(), "Command denied: echo no"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn monitors_are_judged_too() {
    let dir = Scratch::new("monitor-policy");
    let tools = common::builder()
        .working_directory(dir.path(""))
        .tasks(bashtools::Tasks::new())
        .rule(Rule::deny("rm").unwrap())
        .unlisted(Decision::Allow)
        .build()
        .unwrap();
    let r = tools.monitor(
        &json!({"command": "tail -f /dev/null | xargs rm", "description": "d"}),
        &common::me(),
    );
    assert!(r.is_error, "{r:?}");
    assert_eq!(r.text, "Command not allowed: rm");
}
