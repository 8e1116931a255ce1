//! Rendering (SPEC §4 "Rendering", `render_output`, on by default): what a
//! model reads is what a terminal would show — on real commands' output,
//! in `bash`, `bash_output` and monitor events — while the output file
//! keeps the raw bytes.

mod common;

use bashtools::{ShellId, Tasks};
use common::*;
use serde_json::json;

#[test]
fn colours_progress_bars_and_backspaces_are_rendered() {
    let t = tools();
    // Coloured ls (GNU ls emits SGR and, with some terminals, other CSI).
    let dir = Scratch::new("render-ls");
    std::fs::create_dir(dir.path("subdir")).unwrap();
    std::fs::write(dir.path("file"), "x").unwrap();
    let r = bash(
        &t,
        json!({"command": format!("ls --color=always {}", dir.0.display())}),
    );
    assert_eq!(r.text, "file\nsubdir", "{r:?}");
    // A git-style progress line, redrawn with \r, then a summary.
    let r = bash(
        &t,
        json!({"command": "for p in 10 50 100; do printf 'Receiving objects: %3d%%\\r' $p; done; printf '\\nReceiving objects: done.\\n'"}),
    );
    assert_eq!(r.text, "Receiving objects: 100%\nReceiving objects: done.");
    // A pip/cargo-style bar with colour, cleared with ESC[2K, and \r\n.
    let r = bash(
        &t,
        json!({"command": "printf '\\033[32m[=====>    ]\\033[0m 50%%\\r\\033[2K\\033[32m[==========]\\033[0m 100%%\\r\\nok\\r\\n'"}),
    );
    assert_eq!(r.text, "[==========] 100%\nok");
    // A backspace spinner.
    let r = bash(&t, json!({"command": "printf 'wait |\\b/\\b-\\bdone\\n'"}));
    assert_eq!(r.text, "wait done");
    // The output file keeps the bytes as written.
    let r = bash(
        &t,
        json!({"command": "printf '\\033[31mred\\033[0m\\n'; sleep 1000", "timeout": 0.3}),
    );
    let id = id_of(&r);
    let out = t.read_output(&ShellId::from(id.as_str()), None).unwrap();
    assert_eq!(out.text(), "red");
    let raw = std::fs::read(out.info().output_file()).unwrap();
    assert_eq!(raw, b"\x1b[31mred\x1b[0m\n");
    let pids = t.background_pids();
    drop(t);
    assert_gone(&pids);
}

#[test]
fn bash_output_filters_rendered_lines_and_raw_output_turns_it_off() {
    let t = tools();
    let id = id_of(&bash(
        &t,
        json!({"command": "printf '\\033[1mERROR\\033[0m: one\\nfine\\n'", "run_in_background": true}),
    ));
    t.wait(&ShellId::from(id.as_str()), DEADLINE).unwrap();
    // `^ERROR` matches only because the filter sees the rendered line.
    let r = t.bash_output(&json!({"bash_id": id, "filter": "^error:"}));
    assert!(
        r.text.contains("<stdout>\nERROR: one\n</stdout>"),
        "{}",
        r.text
    );

    let raw = builder().render_output(false).build().unwrap();
    let r = bash(&raw, json!({"command": "printf 'a\\rb\\033[0m\\n'"}));
    assert_eq!(r.text, "a\rb\u{1b}[0m");
}

#[test]
fn monitor_events_are_rendered() {
    let tasks = Tasks::new();
    let inbox = tasks.subscribe("main");
    let t = builder().tasks(tasks).build().unwrap();
    let r = t.monitor(
        &json!({"description": "colours", "command": "printf '\\033[33mwarn\\033[0m: disk\\n'"}),
        &me(),
    );
    assert!(!r.is_error, "{r:?}");
    let event = inbox.recv_timeout(DEADLINE).expect("an event");
    assert!(event.text.contains("warn: disk"), "{}", event.text);
    assert!(!event.text.contains('\u{1b}'), "{:?}", event.text);
}

/// Peak resident memory of this process, in KiB.
fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_50_mb_progress_stream_renders_in_flat_memory() {
    let t = tools();
    let before = peak_kib();
    let r = bash(
        &t,
        json!({"command": "yes 'progress 12345678' | head -c 50000000 | tr '\\n' '\\r'; echo; echo end"}),
    );
    let grew = peak_kib().saturating_sub(before);
    assert!(!r.is_error, "{r:?}");
    assert!(
        r.text.ends_with("\nend"),
        "{:?}",
        &r.text[r.text.len().saturating_sub(80)..]
    );
    assert!(r.text.len() < 100, "one redrawn line: {:?}", r.text);
    // 50 MB went through; the memory it took is the current line's, not
    // the stream's (a loose bound: other tests of this binary run too).
    assert!(grew < 20 * 1024, "peak grew by {grew} KiB");
}
