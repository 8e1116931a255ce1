//! The `bash_output` tool: every text and behaviour of SPEC section 4 for
//! `bash_output`, blocking and as a `Pending`.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::json;

fn background(t: &bashtools::BashTools, command: &str) -> String {
    let r = bash(t, json!({"command": command, "run_in_background": true}));
    assert!(!r.is_error, "{}", r.text);
    id_of(&r)
}

fn block(t: &bashtools::BashTools, id: &str) -> String {
    t.bash_output(&json!({"bash_id": id, "block": true, "timeout": 60}))
        .text
}

#[test]
fn a_running_shell_shows_new_output_only() {
    let t = tools();
    let marker = std::env::temp_dir().join(format!("bashtools-go-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    let id = background(
        &t,
        &format!(
            "echo first; while [ ! -e {m} ]; do sleep 0.05; done; echo second; sleep 30",
            m = marker.display()
        ),
    );
    let mut seen = String::new();
    wait_until("first appears", || {
        seen = t.bash_output(&json!({"bash_id": id})).text;
        seen.contains("first")
    });
    assert_eq!(seen, "<status>running</status>\n<stdout>\nfirst\n</stdout>");
    // Nothing new: no stdout tag at all.
    assert_eq!(
        t.bash_output(&json!({"bash_id": id})).text,
        "<status>running</status>"
    );
    std::fs::write(&marker, "").unwrap();
    wait_until("second appears", || {
        seen = t.bash_output(&json!({"bash_id": id})).text;
        seen.contains("second")
    });
    assert_eq!(
        seen,
        "<status>running</status>\n<stdout>\nsecond\n</stdout>"
    );
    std::fs::remove_file(&marker).unwrap();
}

#[test]
fn completed_failed_and_killed_states() {
    let t = tools();
    let ok = background(&t, "echo fine");
    let bad = background(&t, "echo broken; exit 3");
    let long = background(&t, "sleep 1000");
    assert_eq!(
        block(&t, &ok),
        "<status>completed</status>\n<exit_code>0</exit_code>\n<stdout>\nfine\n</stdout>"
    );
    assert_eq!(
        block(&t, &bad),
        "<status>failed</status>\n<exit_code>3</exit_code>\n<stdout>\nbroken\n</stdout>"
    );
    t.kill_shell(&json!({"shell_id": long}));
    assert_eq!(
        t.bash_output(&json!({"bash_id": long})).text,
        "<status>killed</status>\n<exit_code>143</exit_code>"
    );
    // Once read, the output is not shown again.
    assert_eq!(
        t.bash_output(&json!({"bash_id": ok})).text,
        "<status>completed</status>\n<exit_code>0</exit_code>"
    );
}

#[test]
fn filter_keeps_matching_lines_case_insensitively_and_consumes_the_rest() {
    let t = tools();
    let id = background(&t, "printf 'ok 1\\nFAIL: a\\nok 2\\nfail: b\\n'");
    let r = t.bash_output(&json!({"bash_id": id, "block": true, "filter": "fail"}));
    assert_eq!(
        r.text,
        "<status>completed</status>\n<exit_code>0</exit_code>\n<stdout>\nFAIL: a\nfail: b\n</stdout>"
    );
    // The lines that did not match were consumed too.
    assert_eq!(
        t.bash_output(&json!({"bash_id": id})).text,
        "<status>completed</status>\n<exit_code>0</exit_code>"
    );
}

#[test]
fn an_invalid_filter_is_an_error_naming_the_regex() {
    let t = tools();
    let id = background(&t, "true");
    let r = t.bash_output(&json!({"bash_id": id, "filter": "(unclosed"}));
    assert!(r.is_error);
    assert!(
        r.text.starts_with("Invalid filter regex \"(unclosed\": "),
        "{}",
        r.text
    );
    assert!(r.text.contains("unclosed group"), "{}", r.text);
}

#[test]
fn unknown_id_is_an_error() {
    let t = tools();
    let r = t.bash_output(&json!({"bash_id": "bash_42"}));
    assert_eq!(
        (r.text.as_str(), r.is_error),
        ("No task found with ID: bash_42", true)
    );
}

#[test]
fn block_wakes_on_the_exit_itself() {
    let t = tools();
    let id = background(&t, "sleep 0.3; echo woke");
    let start = Instant::now();
    let r = t.bash_output(&json!({"bash_id": id, "block": true, "timeout": 60}));
    assert!(r.text.contains("<status>completed</status>"), "{}", r.text);
    // Woken by the exit, long before the 60 s timeout.
    assert!(start.elapsed() < Duration::from_secs(30));
}

#[test]
fn block_gives_up_at_its_timeout_and_reports_running() {
    let t = tools();
    let id = background(&t, "sleep 1000");
    let r = t.bash_output(&json!({"bash_id": id, "block": true, "timeout": 0.2}));
    assert_eq!(r.text, "<status>running</status>");
}

#[test]
fn block_timeout_option_is_the_default_wait() {
    let t = builder()
        .block_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let id = background(&t, "sleep 1000");
    let r = t.bash_output(&json!({"bash_id": id, "block": true}));
    assert_eq!(r.text, "<status>running</status>");
}

#[test]
fn new_output_over_the_limit_is_truncated() {
    let t = builder().output_limit(10).build().unwrap();
    let id = background(&t, "printf 'abcdefghijklmnop'");
    let r = t.bash_output(&json!({"bash_id": id, "block": true}));
    assert_eq!(
        r.text,
        "<status>completed</status>\n<exit_code>0</exit_code>\n<stdout>\nabcde\n\n... [6 characters truncated] ...\n\nlmnop\n</stdout>"
    );
}

#[test]
fn pending_waits_blocking() {
    let t = tools();
    let id = background(&t, "sleep 0.2; echo later");
    let p = t.bash_output_f(&json!({"bash_id": id, "block": true, "timeout": 60}));
    let r = p.wait();
    assert!(r.text.contains("later"), "{}", r.text);
}

#[test]
fn pending_try_take_and_wait_timeout() {
    let t = tools();
    let id = background(&t, "sleep 1000");
    let mut p = t.bash_output_f(&json!({"bash_id": id, "block": true, "timeout": 600}));
    assert!(p.try_take().is_none());
    assert!(p.wait_timeout(Duration::from_millis(50)).is_none());
    t.kill_shell(&json!({"shell_id": id}));
    let r = p.wait_timeout(DEADLINE).expect("completed by the exit");
    assert_eq!(
        r.text,
        "<status>killed</status>\n<exit_code>143</exit_code>"
    );
}

#[test]
fn pending_times_out_without_a_waiting_thread() {
    let t = tools();
    let id = background(&t, "sleep 1000");
    let p = t.bash_output_f(&json!({"bash_id": id, "block": true, "timeout": 0.2}));
    // Nobody waits; the timer completes it.
    wait_until("the pending is ready", || p.is_ready());
    assert_eq!(p.wait().text, "<status>running</status>");
}

#[test]
fn pending_without_block_is_ready_at_once() {
    let t = tools();
    let id = background(&t, "echo now");
    assert!(block(&t, &id).contains("now"));
    let mut p = t.bash_output_f(&json!({"bash_id": id}));
    assert!(p.try_take().is_some());
    let mut p = t.bash_output_f(&json!({"bash_id": "bash_9"}));
    let r = p.try_take().unwrap();
    assert_eq!(r.text, "No task found with ID: bash_9");
}

/// The smallest executor: park the thread until the waker unparks it.
fn block_on<F: Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    let end = Instant::now() + DEADLINE;
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        assert!(Instant::now() < end, "future never completed");
        std::thread::park_timeout(DEADLINE);
    }
}

#[test]
fn pending_is_a_future() {
    let t = tools();
    let id = background(&t, "sleep 0.2; echo awaited");
    let p = t.bash_output_f(&json!({"bash_id": id, "block": true, "timeout": 60}));
    let r = block_on(p);
    assert_eq!(
        r.text,
        "<status>completed</status>\n<exit_code>0</exit_code>\n<stdout>\nawaited\n</stdout>"
    );
}

#[test]
fn readers_at_once_never_show_the_same_output_twice_nor_lose_any() {
    let t = Arc::new(tools());
    // Fixed-width records with no whitespace, so trimming removes nothing and
    // every chunk is a plain substring of the whole.
    let id = background(&t, "for i in $(seq 1 3000); do printf 'r%05d' $i; done");
    let expected: String = (1..=3000).map(|i| format!("r{i:05}")).collect();
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let t = t.clone();
            let id = id.clone();
            std::thread::spawn(move || {
                let mut chunks = Vec::new();
                loop {
                    let r = t.bash_output(&json!({"bash_id": id}));
                    if let Some(body) = r.text.split("<stdout>\n").nth(1) {
                        chunks.push(body.trim_end_matches("\n</stdout>").to_string());
                    }
                    if !r.text.contains("running") {
                        return chunks;
                    }
                }
            })
        })
        .collect();
    let chunks: Vec<String> = readers
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    for c in &chunks {
        assert!(
            expected.contains(c.as_str()),
            "a chunk that was never written: {c}"
        );
    }
    let total: usize = chunks.iter().map(String::len).sum();
    assert_eq!(total, expected.len(), "bytes shown twice or lost");
}

#[test]
fn tail_keeps_the_last_lines_says_how_many_were_left_out_and_consumes_all() {
    let t = tools();
    let id = background(&t, "seq 1 10; echo error one; echo error two");
    block(&t, &id);
    // (The block read consumed everything: read a fresh shell each time.)
    let id = background(&t, "seq 1 10; echo error one; echo error two");
    let r = t.bash_output(&json!({"bash_id": id, "block": true, "timeout": 60, "tail": 3}));
    assert_eq!(
        r.text,
        "<status>completed</status>\n<exit_code>0</exit_code>\n<stdout>\n[9 earlier lines not shown]\n10\nerror one\nerror two\n</stdout>"
    );
    // Everything was consumed: nothing is left to read.
    assert_eq!(
        t.bash_output(&json!({"bash_id": id})).text,
        "<status>completed</status>\n<exit_code>0</exit_code>"
    );
    // After the filter; and no line when nothing was left out.
    let id = background(&t, "seq 1 10; echo error one; echo error two");
    let r = t.bash_output(
        &json!({"bash_id": id, "block": true, "timeout": 60, "filter": "ERROR", "tail": 1}),
    );
    assert!(
        r.text
            .ends_with("<stdout>\n[1 earlier lines not shown]\nerror two\n</stdout>"),
        "{}",
        r.text
    );
    let id = background(&t, "echo only");
    let r = t.bash_output(&json!({"bash_id": id, "block": true, "timeout": 60, "tail": 5}));
    assert!(r.text.ends_with("<stdout>\nonly\n</stdout>"), "{}", r.text);
}

#[test]
fn a_bad_tail_is_an_error_naming_it() {
    let t = tools();
    let id = background(&t, "echo x");
    for bad in [
        json!(0),
        json!(-1),
        json!(1.5),
        json!("3"),
        json!(null),
        json!(true),
    ] {
        let r = t.bash_output(&json!({"bash_id": id, "tail": bad}));
        assert!(r.is_error, "{bad}: {r:?}");
        assert_eq!(
            r.text, "Invalid input: the tail parameter must be a whole number of 1 or more",
            "{bad}"
        );
    }
    // 2.0 is a whole number, as JSON Schema says.
    assert!(!t.bash_output(&json!({"bash_id": id, "tail": 2.0})).is_error);
}
