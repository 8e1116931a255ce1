//! What every tool costs, side by side with the floor (the project's
//! benchmark issue). Each case runs beside its baseline in the same run and
//! prints median, p99 and the ratio; peak RSS where memory is the point.
//!
//! `cargo bench --bench tools` (under 10 minutes on 2 cores), or
//! `cargo bench --bench tools -- --quick` (under a minute; CI runs it so the
//! benchmark cannot rot). Results and what they mean: BENCHMARKS.md.

use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bashtools::{BashTools, Caller, Command as Cmd, MonitorOptions, Outcome, Sandbox, Tasks};
use serde_json::json;

struct Mode {
    quick: bool,
}

impl Mode {
    fn n(&self, full: usize, quick: usize) -> usize {
        if self.quick {
            quick
        } else {
            full
        }
    }
}

fn main() {
    // The host that the `keeper` case SIGKILLs: this binary, run again.
    if std::env::args().nth(1).as_deref() == Some("--host-to-kill") {
        host_to_kill(&std::env::args().nth(2).expect("a marker"));
    }
    let quick = std::env::args().any(|a| a == "--quick");
    let only: Option<String> = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .filter(|a| a != "bench");
    let mode = Mode { quick };
    println!(
        "bashtools benchmarks ({}), {} cores",
        if quick { "quick" } else { "full" },
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    type Case = (&'static str, fn(&Mode));
    let cases: [Case; 18] = [
        ("true", fg_true),
        ("echo", fg_echo),
        ("launcher", launcher_true),
        ("cwd", persist_cwd_true),
        ("sandbox", sandbox_true),
        ("contain", containment_true),
        ("limits", limits_true),
        ("gib", one_gib),
        ("render", render_gib),
        ("block", block_latency),
        ("notify", notify_latency),
        ("thousand", thousand_shells),
        ("kill", kill_latency),
        ("stop", stop_scaling),
        ("keeper", keeper),
        ("monitor", monitor_lines),
        ("pty", pty_throughput),
        ("echo", pty_echo),
    ];
    for (name, case) in cases {
        if only.as_deref().map_or(true, |o| o == name) {
            case(&mode);
        }
    }
}

// ---- statistics -----------------------------------------------------------

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

struct Stats {
    median: Duration,
    p99: Duration,
}

fn stats(mut v: Vec<Duration>) -> Stats {
    v.sort();
    Stats {
        median: percentile(&v, 0.5),
        p99: percentile(&v, 0.99),
    }
}

/// The median of the ratios of runs taken side by side (`ours[i]` beside
/// `base[i]`): each pair shares the machine's state of its moment, so on a
/// machine whose speed drifts this is steadier than a ratio of medians.
fn paired_ratio(ours: &[Duration], base: &[Duration]) -> f64 {
    let mut r: Vec<f64> = ours
        .iter()
        .zip(base)
        .map(|(o, b)| o.as_secs_f64() / b.as_secs_f64().max(1e-9))
        .collect();
    r.sort_by(f64::total_cmp);
    r.get(r.len() / 2).copied().unwrap_or(0.0)
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn ratio(a: Duration, b: Duration) -> String {
    format!("{:.3}x", a.as_secs_f64() / b.as_secs_f64().max(1e-9))
}

/// A line of the results table.
fn row(case: &str, ours: &str, baseline: &str, ratio: &str, target: &str) {
    println!("| {case} | {ours} | {baseline} | {ratio} | {target} |");
}

/// A row of a time beside its baseline's, with their ratio.
fn versus(case: &str, ours: Duration, base: Duration, target: &str) {
    row(case, &ms(ours), &ms(base), &ratio(ours, base), target);
}

/// A row of a time beside the time it is made of (a grace, a window) and
/// what it adds.
fn over(case: &str, ours: Duration, floor: Duration, target: &str) {
    let extra = format!("+{}", ms(ours.saturating_sub(floor)));
    row(case, &ms(ours), &ms(floor), &extra, target);
}

fn header(title: &str) {
    println!("\n### {title}\n");
    println!("| case | bashtools | baseline | ratio | target |");
    println!("|---|---|---|---|---|");
}

// ---- process facts --------------------------------------------------------

fn status_field(name: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(name))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Peak resident set (KiB) since the last [`reset_peak`].
fn peak_rss_kib() -> u64 {
    status_field("VmHWM:")
}

fn rss_kib() -> u64 {
    status_field("VmRSS:")
}

/// Resets the peak RSS counter (Linux 4.0+: writing 5 to clear_refs).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn threads() -> u64 {
    status_field("Threads:")
}

/// CPU time (user + system) of this process, all threads.
fn cpu_time() -> Duration {
    let mut usage = std::mem::MaybeUninit::<nix::libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        nix::libc::getrusage(nix::libc::RUSAGE_SELF, usage.as_mut_ptr());
        usage.assume_init()
    };
    let tv = |t: nix::libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// The nanosecond timestamp a command printed as the first line of its
/// `bash_output` stdout.
fn stamp_in(text: &str) -> u128 {
    text.split("<stdout>\n")
        .nth(1)
        .and_then(|s| s.lines().next())
        .and_then(|s| s.trim().parse().ok())
        .expect("a timestamp")
}

fn tools() -> BashTools {
    BashTools::builder().build().expect("tools")
}

fn me() -> Caller {
    Caller::default()
}

// ---- cases ----------------------------------------------------------------

/// Foreground `bash` of `true`, beside `bash -c true` through std.
fn fg_true(mode: &Mode) {
    let n = mode.n(1000, 150);
    let t = tools();
    let input = json!({"command": "true"});
    for _ in 0..n / 10 {
        t.bash(&input, &me());
        Command::new("bash").args(["-c", "true"]).status().unwrap();
    }
    // Interleaved, so drift of the machine hits both alike, and the order
    // turns each round, so neither always runs first.
    let (mut ours, mut base) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        for k in 0..2 {
            let s = Instant::now();
            if (i + k) % 2 == 0 {
                assert!(!t.bash(&input, &me()).is_error);
                ours.push(s.elapsed());
            } else {
                Command::new("bash").args(["-c", "true"]).status().unwrap();
                base.push(s.elapsed());
            }
        }
    }
    let paired = paired_ratio(&ours, &base);
    let (o, b) = (stats(ours), stats(base));
    header(&format!(
        "foreground `bash` of `true` ({:?} mode), {n} times",
        t.containment()
    ));
    versus("median", o.median, b.median, "<= 1.10x");
    versus("p99", o.p99, b.p99, "");
    row("paired", "", "", &format!("{paired:.3}x"), "<= 1.10x");
}

/// Foreground `bash` of `echo hi` (a command that prints), beside
/// `bash -c 'echo hi'` through std with its output read from a pipe: the
/// output file's whole life (written, read, emptied for the next command)
/// beside the cheapest way to get the same bytes.
fn fg_echo(mode: &Mode) {
    let n = mode.n(1000, 150);
    let t = tools();
    let input = json!({"command": "echo hi"});
    let raw = || {
        let out = Command::new("bash")
            .args(["-c", "echo hi"])
            .output()
            .unwrap();
        assert_eq!(out.stdout, b"hi\n");
    };
    for _ in 0..n / 10 {
        t.bash(&input, &me());
        raw();
    }
    let (mut ours, mut base) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        for k in 0..2 {
            let s = Instant::now();
            if (i + k) % 2 == 0 {
                assert_eq!(t.bash(&input, &me()).text, "hi");
                ours.push(s.elapsed());
            } else {
                raw();
                base.push(s.elapsed());
            }
        }
    }
    let paired = paired_ratio(&ours, &base);
    let (o, b) = (stats(ours), stats(base));
    header(&format!(
        "foreground `bash` of `echo hi` ({:?} mode), {n} times, beside `bash -c 'echo hi'` read from a pipe",
        t.containment()
    ));
    versus("median", o.median, b.median, "<= 1.10x");
    versus("p99", o.p99, b.p99, "");
    row("paired", "", "", &format!("{paired:.3}x"), "<= 1.10x");
}

/// The one launcher: foreground `true` in session mode, in cgroup mode,
/// and in cgroup mode with the sandbox, interleaved with a raw
/// `posix_spawn` of `bash -c true` (std's `Command`, which uses it on
/// glibc), the order turning each round; paired ratios to the raw spawn.
fn launcher_true(mode: &Mode) {
    let n = mode.n(1000, 150);
    let dir = std::env::temp_dir();
    std::env::set_var("BASHTOOLS_CONTAINMENT", "session");
    let session = BashTools::builder()
        .working_directory(&dir)
        .build()
        .expect("tools");
    std::env::remove_var("BASHTOOLS_CONTAINMENT");
    let cgroup = BashTools::builder()
        .working_directory(&dir)
        .build()
        .expect("tools");
    let sandboxed = BashTools::builder()
        .working_directory(&dir)
        .sandbox(Sandbox::new().best_effort(true))
        .build()
        .expect("tools");
    let status = sandboxed.sandbox_status().expect("a sandbox status");
    let input = json!({"command": "true"});
    let raw = || {
        Command::new("bash").args(["-c", "true"]).status().unwrap();
    };
    let kinds: [&dyn Fn(); 4] = [
        &raw,
        &|| assert!(!session.bash(&input, &me()).is_error),
        &|| assert!(!cgroup.bash(&input, &me()).is_error),
        &|| assert!(!sandboxed.bash(&input, &me()).is_error),
    ];
    for _ in 0..n / 10 {
        kinds.iter().for_each(|k| k());
    }
    let mut times: [Vec<Duration>; 4] = Default::default();
    for i in 0..n {
        for k in 0..4 {
            let kind = (i + k) % 4;
            let s = Instant::now();
            kinds[kind]();
            times[kind].push(s.elapsed());
        }
    }
    let paired: Vec<f64> = (1..4).map(|k| paired_ratio(&times[k], &times[0])).collect();
    let [base, session_t, cgroup_t, sandbox_t] = times.map(stats);
    header(&format!(
        "the launcher: foreground `true` beside a raw posix_spawn of `bash -c true`, {n} times \
         (cgroup mode: {:?}; sandbox: {status})",
        cgroup.containment()
    ));
    versus(
        "median, sessions",
        session_t.median,
        base.median,
        "<= 1.10x",
    );
    versus("median, cgroups", cgroup_t.median, base.median, "<= 1.15x");
    versus(
        "median, cgroups + sandbox",
        sandbox_t.median,
        base.median,
        "<= 1.20x",
    );
    versus("p99, sessions", session_t.p99, base.p99, "");
    versus("p99, cgroups", cgroup_t.p99, base.p99, "");
    versus("p99, cgroups + sandbox", sandbox_t.p99, base.p99, "");
    let r = |x: f64| format!("{x:.3}x");
    row("paired, sessions", "", "", &r(paired[0]), "<= 1.10x");
    row("paired, cgroups", "", "", &r(paired[1]), "<= 1.15x");
    row(
        "paired, cgroups + sandbox",
        "",
        "",
        &r(paired[2]),
        "<= 1.20x",
    );
}

/// Foreground `bash` of `true` in a Landlock sandbox, beside the same
/// without one: what the child's restrictions (capabilities, seccomp,
/// `landlock_restrict_self`) and the kernel's checks on every path a
/// sandboxed bash opens add.
fn sandbox_true(mode: &Mode) {
    let n = mode.n(1000, 150);
    let dir = std::env::temp_dir();
    let boxed = BashTools::builder()
        .working_directory(&dir)
        .sandbox(Sandbox::new().best_effort(true))
        .build()
        .expect("tools");
    let status = boxed.sandbox_status().expect("a sandbox status");
    let plain = BashTools::builder()
        .working_directory(&dir)
        .build()
        .expect("tools");
    let input = json!({"command": "true"});
    for _ in 0..n / 10 {
        boxed.bash(&input, &me());
        plain.bash(&input, &me());
    }
    // Interleaved, so drift of the machine hits both alike.
    let (mut ours, mut base) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let s = Instant::now();
        let r = boxed.bash(&input, &me());
        ours.push(s.elapsed());
        assert!(!r.is_error);
        let s = Instant::now();
        let r = plain.bash(&input, &me());
        base.push(s.elapsed());
        assert!(!r.is_error);
    }
    let (o, b) = (stats(ours), stats(base));
    header(&format!(
        "foreground `bash` of `true` sandboxed ({status}) beside unsandboxed, {n} times"
    ));
    versus("median", o.median, b.median, "<= 1.10x");
    versus("p99", o.p99, b.p99, "");
}

/// Foreground `true` with `persist_working_directory` on and off,
/// interleaved: what recording the directory a command ends in costs (the
/// startup file bash reads, its `EXIT` trap, the record file made, read
/// and removed by the host).
fn persist_cwd_true(mode: &Mode) {
    let n = mode.n(1000, 150);
    let dir = std::env::temp_dir();
    let make = |cwd: bool, env: bool| {
        BashTools::builder()
            .working_directory(&dir)
            .persist_working_directory(cwd)
            .persist_environment(env)
            .build()
            .expect("tools")
    };
    // Off, the sticky cwd, the carried environment, both (the server's).
    let tools = [
        make(false, false),
        make(true, false),
        make(false, true),
        make(true, true),
    ];
    let input = json!({"command": "true"});
    for _ in 0..n / 10 {
        for t in &tools {
            t.bash(&input, &me());
        }
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(n); tools.len()];
    for i in 0..n {
        // The order turns each round, so no kind always runs first.
        for k in 0..tools.len() {
            let which = (i + k) % tools.len();
            let s = Instant::now();
            assert!(!tools[which].bash(&input, &me()).is_error);
            samples[which].push(s.elapsed());
        }
    }
    let paired: Vec<f64> = samples[1..]
        .iter()
        .map(|s| paired_ratio(s, &samples[0]))
        .collect();
    let st: Vec<Stats> = samples.into_iter().map(stats).collect();
    header(&format!(
        "foreground `true` with persist_working_directory and persist_environment beside neither, {n} times"
    ));
    versus(
        "median, persist_working_directory",
        st[1].median,
        st[0].median,
        "<= 1.10x",
    );
    versus(
        "median, persist_environment",
        st[2].median,
        st[0].median,
        "",
    );
    versus(
        "median, both (the server's)",
        st[3].median,
        st[0].median,
        "",
    );
    versus("p99, both", st[3].p99, st[0].p99, "");
    for (name, r) in ["persist_working_directory", "persist_environment", "both"]
        .iter()
        .zip(paired)
    {
        row(&format!("paired, {name}"), "", "", &format!("{r:.3}x"), "");
    }
}

/// Foreground `true` with containment on (a cgroup per command) and off
/// (sessions), interleaved with `bash -c true` through std: what a cgroup
/// per command costs (mkdir, the startup file, removal).
fn containment_true(mode: &Mode) {
    let n = mode.n(1000, 150);
    let on = tools();
    std::env::set_var("BASHTOOLS_CONTAINMENT", "session");
    let off = tools();
    std::env::remove_var("BASHTOOLS_CONTAINMENT");
    let input = json!({"command": "true"});
    let raw = || {
        Command::new("bash").args(["-c", "true"]).status().unwrap();
    };
    for _ in 0..n / 10 {
        on.bash(&input, &me());
        off.bash(&input, &me());
        raw();
    }
    let (mut a, mut b, mut base) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        // The order turns each round, so no kind always runs first.
        for k in 0..3 {
            let s = Instant::now();
            match (i + k) % 3 {
                0 => assert!(!on.bash(&input, &me()).is_error),
                1 => assert!(!off.bash(&input, &me()).is_error),
                _ => raw(),
            }
            let took = s.elapsed();
            [&mut a, &mut b, &mut base][(i + k) % 3].push(took);
        }
    }
    let (pa, pb) = (paired_ratio(&a, &base), paired_ratio(&b, &base));
    let (a, b, base) = (stats(a), stats(b), stats(base));
    header(&format!(
        "foreground `true` by containment mode ({:?} and Session), {n} times",
        on.containment()
    ));
    versus("median, containment on", a.median, base.median, "<= 1.15x");
    versus("median, containment off", b.median, base.median, "<= 1.10x");
    versus("p99, containment on", a.p99, base.p99, "");
    versus("p99, containment off", b.p99, base.p99, "");
    let paired = |r: f64| format!("{r:.3}x");
    row("paired, containment on", "", "", &paired(pa), "<= 1.15x");
    row("paired, containment off", "", "", &paired(pb), "<= 1.10x");
}

/// Foreground `true` with every limit set (memory, processes, CPU) beside
/// the same tools with none (`pids_limit(0)`), turn about; both in cgroup
/// mode, so the difference is the limits' own cost: the child joining its
/// v1 directories on a hybrid host, and the cost read at its end.
fn limits_true(mode: &Mode) {
    let n = mode.n(1000, 150);
    let limited = match BashTools::builder()
        .memory_limit(1 << 30)
        .pids_limit(4096)
        .cpu_limit(2.0)
        .build()
    {
        Ok(t) => t,
        Err(e) => {
            println!("\n### foreground `true` with limits: not run ({e})");
            return;
        }
    };
    let plain = BashTools::builder().pids_limit(0).build().expect("tools");
    let input = json!({"command": "true"});
    for _ in 0..n / 10 {
        limited.bash(&input, &me());
        plain.bash(&input, &me());
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for i in 0..n {
        for k in 0..2 {
            let s = Instant::now();
            if (i + k) % 2 == 0 {
                assert!(!limited.bash(&input, &me()).is_error);
            } else {
                assert!(!plain.bash(&input, &me()).is_error);
            }
            [&mut a, &mut b][(i + k) % 2].push(s.elapsed());
        }
    }
    let pa = paired_ratio(&a, &b);
    let (a, b) = (stats(a), stats(b));
    header(&format!(
        "foreground `true` with memory, pids and cpu limits vs none ({:?}), {n} times",
        limited.containment()
    ));
    versus("median, limits vs none", a.median, b.median, "<= 1.05x");
    versus("p99, limits vs none", a.p99, b.p99, "");
    row(
        "paired, limits vs none",
        "",
        "",
        &format!("{pa:.3}x"),
        "<= 1.05x",
    );
}

/// The baseline of a command's output: `bash -c 'CMD > file'` through std,
/// timed; the file is removed after.
fn raw_into(cmd: &str, file: &std::path::Path) -> Duration {
    let s = Instant::now();
    Command::new("bash")
        .args(["-c", &format!("{cmd} > {}", file.display())])
        .status()
        .unwrap();
    let took = s.elapsed();
    let _ = std::fs::remove_file(file);
    took
}

/// A command printing 1 GiB (a quarter in quick mode), beside `bash -c 'CMD > file'`.
fn one_gib(mode: &Mode) {
    let bytes: u64 = if mode.quick { 256 << 20 } else { 1 << 30 };
    let cmd = format!("head -c {bytes} /dev/zero | tr '\\0' a");
    let t = tools();
    let file = std::env::temp_dir().join(format!("bashtools-bench-{}", std::process::id()));
    let runs = mode.n(5, 2);
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    let idle = rss_kib();
    let mut peak_growth = 0;
    // The order turns each run: what one leaves to the machine (our big
    // file's blocks are freed after the result, off its way) then falls
    // on either alike.
    for i in 0..runs * 2 {
        if i % 4 == 0 || i % 4 == 3 {
            reset_peak();
            let s = Instant::now();
            let r = t.bash(&json!({"command": cmd, "timeout": 600}), &me());
            ours.push(s.elapsed());
            peak_growth = peak_growth.max(peak_rss_kib().saturating_sub(idle));
            assert!(
                r.text.contains("characters truncated"),
                "{}",
                &r.text[..100]
            );
        } else {
            base.push(raw_into(&cmd, &file));
        }
    }
    let (o, b) = (stats(ours), stats(base));
    header(&format!("foreground `bash` printing {} MiB", bytes >> 20));
    versus("wall, median", o.median, b.median, "<= 1.25x");
    row(
        "peak RSS growth over idle",
        &format!("{} KiB", peak_growth),
        "",
        "",
        "<= 16 MiB",
    );
}

/// 1 GiB of lines (a quarter in quick mode) shown as a terminal would
/// (`render_output`, the default) beside the same tools showing the raw
/// bytes, in turn in the same run; and 1 GiB of a progress line redrawn
/// with `\r`, rendered (the slow path: every char through the state
/// machine).
fn render_gib(mode: &Mode) {
    let bytes: u64 = if mode.quick { 256 << 20 } else { 1 << 30 };
    let lines = format!("yes 'Compiling some-crate v1.2.3 (/src/some-crate)' | head -c {bytes}");
    let bars = format!("yes 'progress 123456' | head -c {bytes} | tr '\n' '\r'");
    let rendered = tools();
    let raw = BashTools::builder().render_output(false).build().unwrap();
    let runs = mode.n(5, 2);
    let (mut on, mut off, mut bar) = (Vec::new(), Vec::new(), Vec::new());
    let idle = rss_kib();
    let mut peak_growth = 0;
    let run = |t: &BashTools, cmd: &str, into: &mut Vec<Duration>| {
        reset_peak();
        let s = Instant::now();
        let r = t.bash(&json!({"command": cmd, "timeout": 600}), &me());
        into.push(s.elapsed());
        assert!(!r.is_error, "{}", &r.text[..r.text.len().min(200)]);
        peak_rss_kib().saturating_sub(idle)
    };
    for i in 0..runs {
        let order = if i % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        };
        for render in order {
            let g = if render {
                run(&rendered, &lines, &mut on)
            } else {
                run(&raw, &lines, &mut off)
            };
            peak_growth = peak_growth.max(g);
        }
        peak_growth = peak_growth.max(run(&rendered, &bars, &mut bar));
    }
    let (on, off, bar) = (stats(on), stats(off), stats(bar));
    header(&format!("rendering {} MiB of output", bytes >> 20));
    versus(
        "lines: rendered vs raw, median",
        on.median,
        off.median,
        "<= 1.3x",
    );
    versus(
        "progress bar redrawn with \r: rendered vs raw lines, median",
        bar.median,
        off.median,
        "reported",
    );
    row(
        "peak RSS growth over idle",
        &format!("{} KiB", peak_growth),
        "",
        "",
        "flat (<= 16 MiB)",
    );
}

/// `bash_output` with `block`: from the shell's last act to the return.
fn block_latency(mode: &Mode) {
    let n = mode.n(300, 40);
    let t = tools();
    let mut lat = Vec::with_capacity(n);
    for i in 0..n {
        let r = t.bash(
            &json!({"command": "sleep 0.01; exec date +%s%N", "run_in_background": true}),
            &me(),
        );
        assert!(!r.is_error);
        let id = format!("bash_{}", i + 1);
        let r = t.bash_output(&json!({"bash_id": id, "block": true, "timeout": 60}));
        let back = now_ns();
        let printed = stamp_in(&r.text);
        lat.push(Duration::from_nanos((back.saturating_sub(printed)) as u64));
    }
    let s = stats(lat);
    header(&format!(
        "`bash_output` with `block`: exit → return, {n} shells"
    ));
    row("median", &ms(s.median), "—", "", "<= 1 ms");
    row("p99", &ms(s.p99), "—", "", "<= 2 ms");
    println!("\n(the time is taken from the command's last output, just before its exit, so it includes `date` exiting)");
}

/// Background shell exit → notification received.
fn notify_latency(mode: &Mode) {
    let n = mode.n(300, 40);
    let tasks = Tasks::new();
    let rx = tasks.subscribe("main");
    let t = BashTools::builder().tasks(tasks.clone()).build().unwrap();
    let mut lat = Vec::with_capacity(n);
    for _ in 0..n {
        let r = t.bash(
            &json!({"command": "sleep 0.01; exec date +%s%N", "run_in_background": true}),
            &me(),
        );
        let id = r
            .text
            .split("ID: ")
            .nth(1)
            .unwrap()
            .split('.')
            .next()
            .unwrap()
            .to_string();
        let note = rx.recv_timeout(Duration::from_secs(60)).expect("notified");
        let back = now_ns();
        assert_eq!(note.task_id, id);
        let out = t.bash_output(&json!({"bash_id": id}));
        let printed = stamp_in(&out.text);
        lat.push(Duration::from_nanos(back.saturating_sub(printed) as u64));
    }
    let s = stats(lat);
    header(&format!(
        "background shell exit → notification received, {n} shells"
    ));
    row("median", &ms(s.median), "—", "", "<= 1 ms");
    row("p99", &ms(s.p99), "—", "", "<= 5 ms");
}

/// 1 000 background shells at once, each `sleep 1` then exit.
fn thousand_shells(mode: &Mode) {
    let n = mode.n(1000, 200);
    let tasks = Tasks::new();
    let rx = tasks.subscribe("main");
    let t = BashTools::builder().tasks(tasks.clone()).build().unwrap();
    // Warm the process-wide threads (reaper, timer, watcher) first.
    t.bash(&json!({"command": "true"}), &me());
    let threads_before = threads();
    let rss_before = rss_kib();
    let start = Instant::now();
    for _ in 0..n {
        let r = t.bash(
            &json!({"command": "sleep 1", "run_in_background": true}),
            &me(),
        );
        assert!(!r.is_error, "{}", r.text);
    }
    let spawned = start.elapsed();
    let threads_running = threads();
    let rss_running = rss_kib();
    let mut got = 0;
    while got < n {
        rx.recv_timeout(Duration::from_secs(120))
            .expect("all notify");
        got += 1;
    }
    let all = start.elapsed();
    let running = t.background_pids().len();
    header(&format!("{n} background shells at once, each `sleep 1`"));
    row("spawn all", &ms(spawned), "", "", "");
    row(
        "all reaped and notified",
        &ms(all),
        "",
        "",
        &format!("{n} notifications"),
    );
    row("notifications", &got.to_string(), "", "", "");
    row("still running after", &running.to_string(), "", "", "0");
    row(
        "threads before / while running",
        &format!("{threads_before} / {threads_running}"),
        "",
        "",
        "independent of the number of shells",
    );
    row(
        "host memory per running shell",
        &format!(
            "{:.1} KiB",
            (rss_running.saturating_sub(rss_before)) as f64 / n as f64
        ),
        "",
        "",
        "<= 16 KiB",
    );
}

/// `kill_shell` of a group that ignores SIGTERM, beside its kill_grace.
fn kill_latency(mode: &Mode) {
    let n = mode.n(30, 5);
    let grace = Duration::from_millis(200);
    let t = BashTools::builder().kill_grace(grace).build().unwrap();
    let mut lat = Vec::new();
    for i in 0..n {
        let id = format!("bash_{}", i + 1);
        t.bash(
            &json!({"command": "trap '' TERM; echo ready; while :; do sleep 1; done", "run_in_background": true}),
            &me(),
        );
        // Wait until the trap is set, so TERM is really ignored.
        let r = t.bash_output(&json!({"bash_id": id, "block": true, "timeout": 0.3}));
        assert!(
            r.text.contains("ready") || r.text.contains("running"),
            "{}",
            r.text
        );
        let s = Instant::now();
        let r = t.kill_shell(&json!({"shell_id": id}));
        lat.push(s.elapsed());
        assert!(!r.is_error, "{}", r.text);
    }
    let s = stats(lat);
    header(&format!(
        "`kill_shell` of a group ignoring SIGTERM, kill_grace {}",
        ms(grace)
    ));
    over("median", s.median, grace, "<= grace + 20 ms");
    over("p99", s.p99, grace, "");
}

/// A monitor fed short lines, beside `bash -c 'CMD > /dev/null'`; and the
/// line → notification latency of a slow stream.
fn monitor_lines(mode: &Mode) {
    let lines = mode.n(1_000_000, 100_000);
    let window = Duration::from_millis(200);
    let tasks = Tasks::new();
    let rx = tasks.subscribe("main");
    let t = BashTools::builder()
        .tasks(tasks.clone())
        .monitor_options(
            MonitorOptions::default()
                .batch_window(window)
                .flood_timeout(Duration::from_secs(3600)),
        )
        .build()
        .unwrap();
    let cmd = format!("seq 1 {lines}");
    let s = Instant::now();
    Command::new("bash")
        .args(["-c", &format!("{cmd} > /dev/null")])
        .status()
        .unwrap();
    let base = s.elapsed();

    reset_peak();
    let rss_before = rss_kib();
    let cpu_before = cpu_time();
    let s = Instant::now();
    t.monitor(
        &json!({"description": "lines", "command": cmd, "timeout_ms": 3_600_000}),
        &me(),
    );
    let mut events = 0u64;
    loop {
        let n = rx
            .recv_timeout(Duration::from_secs(600))
            .expect("the monitor ends");
        if n.status.is_some() {
            break;
        }
        events += 1;
    }
    let wall = s.elapsed();
    let cpu = cpu_time().saturating_sub(cpu_before);
    let peak_growth = peak_rss_kib().saturating_sub(rss_before);

    // Latency: one line every 20 ms, each carrying its own timestamp.
    let count = mode.n(100, 25);
    let slow = format!("for i in $(seq 1 {count}); do date +%s%N; sleep 0.02; done");
    t.monitor(
        &json!({"description": "slow", "command": slow, "timeout_ms": 3_600_000}),
        &me(),
    );
    let mut lat = Vec::new();
    loop {
        let n = rx
            .recv_timeout(Duration::from_secs(600))
            .expect("the monitor ends");
        if n.status.is_some() {
            break;
        }
        let back = now_ns();
        let body = n
            .text
            .split("<event>")
            .nth(1)
            .unwrap_or("")
            .split("</event>")
            .next()
            .unwrap_or("");
        // The first line of a batch waited longest: it opened the window.
        if let Some(first) = body
            .lines()
            .next()
            .and_then(|l| l.trim().parse::<u128>().ok())
        {
            lat.push(Duration::from_nanos(back.saturating_sub(first) as u64));
        }
    }
    let l = stats(lat);
    header(&format!(
        "monitor: {lines} short lines, batch_window {}",
        ms(window)
    ));
    versus("wall", wall, base, "");
    row(
        "host CPU per line",
        &format!("{:.0} ns", cpu.as_nanos() as f64 / lines as f64),
        "",
        "",
        "reported",
    );
    row(
        "lines per second",
        &format!("{:.0}", lines as f64 / wall.as_secs_f64()),
        "",
        "",
        "",
    );
    row("event notifications", &events.to_string(), "", "", "");
    row(
        "peak RSS growth",
        &format!("{peak_growth} KiB"),
        "",
        "",
        "flat",
    );
    over(
        "line → notification, median",
        l.median,
        window,
        "<= batch_window + 5 ms",
    );
    over("line → notification, p99", l.p99, window, "");
}

/// `kill_shell` of one shell, and `stop_all`, with 1, 100 and 1 000 live
/// shells (200 at most in quick mode): the cost per shell stopped must stay
/// flat as the count grows. Each shell is a `sleep` that obeys TERM, so the
/// grace is never waited out: what is timed is the bookkeeping and the
/// signalling.
fn stop_scaling(mode: &Mode) {
    let counts: &[usize] = if mode.quick {
        &[1, 100, 200]
    } else {
        &[1, 100, 1000]
    };
    let kills = mode.n(20, 5);
    let t = BashTools::builder()
        .kill_grace(Duration::from_secs(5))
        .build()
        .unwrap();
    header(&format!(
        "stopping with N live shells ({:?} mode), per shell stopped",
        t.containment()
    ));
    let start_n = |n: usize| -> Vec<String> {
        (0..n)
            .map(|_| {
                let r = t.bash(
                    &json!({"command": "exec sleep 1000", "run_in_background": true}),
                    &me(),
                );
                assert!(!r.is_error, "{}", r.text);
                r.task_id.expect("an ID")
            })
            .collect()
    };
    for &n in counts {
        // kill_shell of one shell while n are live, a fresh one started
        // after each, so n stay live through the samples: the oldest (long
        // settled), then the newest (just started: its exec may still be
        // closing the host's descriptors, a cost of the spawn that the
        // kill then waits for). "The oldest" is at least OLD old whatever
        // n is: with one live shell the oldest is the one started after
        // the last kill, and the exit of a process that slept a while
        // costs the kernel more than that of one that just ran (measured:
        // 0.07 ms against 0.17-0.19 ms from our signal to its exit being
        // seen), a cost of age, not of n.
        const OLD: Duration = Duration::from_secs(1);
        let mut born = std::collections::HashMap::new();
        let mut ids = start_n(n);
        let now = Instant::now();
        born.extend(ids.iter().map(|id| (id.clone(), now)));
        // Every shell started so far has exec'd its sleep: the oldest are
        // settled. The settle wait looks at every shell's /proc entry, so
        // it runs only when the shell to kill was started in this loop (N
        // smaller than the kills), never right before every timed kill.
        settled(&t);
        let mut fresh = std::collections::HashSet::new();
        for (which, oldest) in [("oldest", true), ("newest", false)] {
            let mut lat = Vec::new();
            for _ in 0..kills {
                let id = if oldest {
                    ids.remove(0)
                } else {
                    ids.pop().unwrap()
                };
                if oldest && fresh.contains(&id) {
                    settled(&t);
                }
                if oldest {
                    let age = born.get(&id).map_or(OLD, |b: &Instant| b.elapsed());
                    std::thread::sleep(OLD.saturating_sub(age));
                    // The same warm-up before every such kill, whatever n:
                    // a wait above leaves the whole machine idle, not only
                    // the shell to kill.
                    t.bash(&json!({"command": "true"}), &me());
                }
                let s = Instant::now();
                let r = t.kill_shell(&json!({"shell_id": id}));
                lat.push(s.elapsed());
                assert!(!r.is_error, "{}", r.text);
                let new = start_n(1);
                born.insert(new[0].clone(), Instant::now());
                fresh.extend(new.iter().cloned());
                ids.extend(new);
            }
            let k = stats(lat);
            row(
                &format!("`kill_shell` of the {which}, {n} live: median / p99"),
                &format!("{} / {}", ms(k.median), ms(k.p99)),
                "",
                "",
                "flat in N",
            );
        }
        let s = Instant::now();
        t.stop_all();
        let all = s.elapsed();
        assert!(t.background_pids().is_empty());
        row(
            &format!("`stop_all` of {n}: total, per shell"),
            &format!("{}, {}", ms(all), ms(all / n as u32)),
            "",
            "",
            "per shell flat in N",
        );
    }
}

/// Waits until every background shell of `t` has exec'd its `sleep`: no
/// start is still in flight.
fn settled(t: &BashTools) {
    let comm = |pid: u32| std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let end = Instant::now() + Duration::from_secs(120);
    while !t
        .background_pids()
        .into_iter()
        .all(|p| comm(p).trim() == "sleep")
    {
        assert!(Instant::now() < end, "the shells never settled");
        // A look at every shell's /proc entry: not in a tight loop, which
        // would load the machine the kill is then timed on.
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The keeper's memory (the RSS of its bash, from `/proc`), and the time
/// from the host's SIGKILL to "nothing left": a host (this binary, run
/// again) with a background shell, a foreground `cmd &`, a `setsid` escape
/// and a shell that ignores TERM (kill_grace 1 s) is SIGKILLed; the clock
/// stops when the last of them is gone and the output directory removed.
fn keeper(mode: &Mode) {
    let runs = mode.n(5, 2);
    header("the keeper");
    let (mut obeying, mut all, mut rss) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..runs {
        let m = format!("1000.{}{run:03}", std::process::id());
        let exe = std::env::current_exe().unwrap();
        let mut host = Command::new(exe)
            .args(["--host-to-kill", &m])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut said = String::new();
        {
            use std::io::BufRead;
            let mut out = std::io::BufReader::new(host.stdout.take().unwrap());
            loop {
                let mut line = String::new();
                if out.read_line(&mut line).unwrap() == 0 || line == "ready\n" {
                    break;
                }
                said.push_str(&line);
            }
        }
        let field = |k: &str| {
            said.lines()
                .find_map(|l| l.strip_prefix(k))
                .unwrap_or_default()
                .to_string()
        };
        let outdir = std::path::PathBuf::from(field("outdir="));
        let keeper: u32 = field("keeper=").parse().expect("the keeper's pid");
        rss.push(rss_of(keeper));
        let killed = Instant::now();
        host.kill().unwrap();
        host.wait().unwrap();
        // The TERM-obeying ones go at the keeper's TERM; the last one at
        // its KILL after the grace.
        wait_gone(&format!("{m}1"), Duration::from_secs(30));
        obeying.push(killed.elapsed());
        wait_gone(&m, Duration::from_secs(30));
        wait_removed(&outdir, killed + Duration::from_secs(30));
        all.push(killed.elapsed());
    }
    rss.sort();
    row(
        "keeper RSS (its bash), median",
        &format!("{} KiB", rss[rss.len() / 2]),
        "",
        "",
        "reported",
    );
    let (o, a) = (stats(obeying), stats(all));
    over(
        "host SIGKILL → TERM-obeying commands gone, median",
        o.median,
        Duration::ZERO,
        "reported",
    );
    over(
        "host SIGKILL → all gone and directory removed (grace 1 s), median",
        a.median,
        Duration::from_secs(1),
        "<= grace + 1 s",
    );
    over("  same, worst", a.p99, Duration::from_secs(1), "");
}

/// The host the `keeper` case kills: prints its output directory and its
/// keeper's pid, starts its commands, prints `ready`, and waits.
fn host_to_kill(m: &str) -> ! {
    let t = BashTools::builder()
        .kill_grace(Duration::from_secs(1))
        .build()
        .unwrap();
    println!("outdir={}", t.output_directory().display());
    let me_pid = std::process::id();
    let keeper = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .find(|&p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            let ppid = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().nth(1)?.parse::<u32>().ok());
            ppid == Some(me_pid)
                && std::fs::read(format!("/proc/{p}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains("bashtools-keeper"))
        })
        .expect("a keeper");
    println!("keeper={keeper}");
    // Markers `{m}1` obey TERM; `{m}2` ignores it.
    let bg = json!({"command": format!("sleep {m}1"), "run_in_background": true});
    assert!(!t.bash(&bg, &me()).is_error);
    let fg = t.bash(
        &json!({"command": format!("sleep {m}1 & echo started")}),
        &me(),
    );
    assert_eq!(fg.text, "started");
    let esc = t.bash(
        &json!({"command": format!("setsid sleep {m}1 & echo started")}),
        &me(),
    );
    assert_eq!(esc.text, "started");
    let stubborn = json!({"command": format!("trap '' TERM; echo ready; while :; do sleep {m}2; done"), "run_in_background": true});
    let r = t.bash(&stubborn, &me());
    let id = r.task_id.expect("an ID");
    let r = t.bash_output(&json!({"bash_id": id, "block": true, "timeout": 0.5}));
    assert!(r.text.contains("running"), "{}", r.text);
    // Every one runs before the host is killed.
    while with_marker(m).len() < 4 {
        // A process appearing signals nothing: looked for again.
        std::thread::sleep(Duration::from_millis(5));
    }
    println!("ready");
    loop {
        std::thread::park();
    }
}

/// `VmRSS` of `pid`, KiB.
/// Waits until directory `dir` is removed or `until`: woken by inotify on
/// its parent (the removal is an `IN_DELETE` there), not by a timer.
fn wait_removed(dir: &std::path::Path, until: Instant) {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
    use std::os::fd::AsFd;
    let inotify = Inotify::init(InitFlags::IN_CLOEXEC | InitFlags::IN_NONBLOCK).expect("inotify");
    let parent = dir.parent().expect("a parent");
    inotify
        .add_watch(
            parent,
            AddWatchFlags::IN_DELETE | AddWatchFlags::IN_MOVED_FROM,
        )
        .expect("a watch");
    // Looked at after the watch exists, so a removal in between is seen.
    while dir.exists() {
        let left = until.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "{} was never removed", dir.display());
        let ms = left.as_millis().min(i32::MAX as u128) as i32;
        let mut polls = [PollFd::new(inotify.as_fd(), PollFlags::POLLIN)];
        let _ = poll(
            &mut polls,
            PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX),
        );
        let _ = inotify.read_events();
    }
}

fn rss_of(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// Live processes whose command line holds `m`.
fn with_marker(m: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            let live = std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| s[s.rfind(')')? + 2..].chars().next())
                .is_some_and(|c| c != 'Z' && c != 'X');
            live && std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(m))
        })
        .collect()
}

/// Waits until nothing with marker `m` is left: a pidfd `poll` on what is
/// left, so the time is the exit's own.
fn wait_gone(m: &str, limit: Duration) {
    use std::os::fd::{AsFd, FromRawFd, OwnedFd};
    let end = Instant::now() + limit;
    loop {
        let left = with_marker(m);
        if left.is_empty() || Instant::now() > end {
            return;
        }
        let fds: Vec<OwnedFd> = left
            .iter()
            .filter_map(|&p| {
                // SAFETY: a plain syscall; a non-negative result is ours.
                let fd = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, p as i32, 0) };
                // SAFETY: just returned by the kernel.
                (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as i32) })
            })
            .collect();
        let mut polls: Vec<nix::poll::PollFd> = fds
            .iter()
            .map(|f| nix::poll::PollFd::new(f.as_fd(), nix::poll::PollFlags::POLLIN))
            .collect();
        let _ = nix::poll::poll(&mut polls, nix::poll::PollTimeout::from(100u16));
    }
}

/// The kernel's floor for a terminal: `cmd` on a fresh pseudo-terminal
/// (output processing off, as ours), its master read with blocking 64 KiB
/// reads into a file until EIO, by a program that does nothing else.
fn raw_pty(cmd: &str, file: &std::path::Path) -> Duration {
    use nix::libc;
    use std::io::{Read, Write};
    use std::os::fd::FromRawFd;
    let s = Instant::now();
    // SAFETY: plain calls on descriptors this function owns.
    let master = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
    assert!(master >= 0);
    // SAFETY: calls on the master this function just opened.
    unsafe {
        libc::grantpt(master);
        libc::unlockpt(master);
    }
    let mut modes = std::mem::MaybeUninit::<libc::termios>::uninit();
    // SAFETY: tcgetattr fills the termios before it is read.
    unsafe {
        libc::tcgetattr(master, modes.as_mut_ptr());
        let mut modes = modes.assume_init();
        modes.c_oflag &= !libc::OPOST;
        libc::tcsetattr(master, libc::TCSANOW, &modes);
    }
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: the buffer and its length are ours; ptsname_r NUL-terminates.
    unsafe { libc::ptsname_r(master, name.as_mut_ptr(), name.len()) };
    // SAFETY: a NUL-terminated string in our buffer.
    let slave_path = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .to_string();
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&slave_path)
        .unwrap();
    let mut child = Command::new("bash")
        .args(["-c", cmd])
        .stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave)
        .spawn()
        .unwrap();
    // SAFETY: the master is ours alone from here.
    let mut master = unsafe { std::fs::File::from_raw_fd(master) };
    let mut out = std::fs::File::create(file).unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    while let Ok(n) = master.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.write_all(&buf[..n]).unwrap();
    }
    child.wait().unwrap();
    s.elapsed()
}

/// An interactive command printing 256 MiB (64 in quick mode) on its
/// terminal, copied into its output file by the terminals' I/O thread,
/// beside `bash -c 'CMD > file'` (time from start to the recorded end), and
/// beside the kernel's floor for a terminal ([`raw_pty`]).
fn pty_throughput(mode: &Mode) {
    let bytes: u64 = if mode.quick { 64 << 20 } else { 256 << 20 };
    let cmd = format!("head -c {bytes} /dev/zero | tr '\\0' a");
    let t = BashTools::builder()
        .interactive(true)
        .build()
        .expect("tools");
    let file = std::env::temp_dir().join(format!("bashtools-bench-pty-{}", std::process::id()));
    let runs = mode.n(5, 2);
    let (mut ours, mut base, mut floor) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        floor.push(raw_pty(&cmd, &file));
        let _ = std::fs::remove_file(&file);
        let s = Instant::now();
        let Ok(Outcome::Background(bg)) = t.run(&Cmd::new(cmd.as_str()).interactive(true), &me())
        else {
            panic!("an interactive command starts in the background")
        };
        let info = t.wait(bg.id(), Duration::from_secs(600)).unwrap();
        ours.push(s.elapsed());
        let size = std::fs::metadata(info.output_file()).unwrap().len();
        assert_eq!(size, bytes, "all of it reached the file");
        base.push(raw_into(&cmd, &file));
    }
    let (o, b, f) = (stats(ours), stats(base), stats(floor));
    let rate = |d: Duration| format!("{:.0} MB/s", bytes as f64 / d.as_secs_f64() / 1e6);
    header(&format!(
        "interactive command printing {} MiB on its terminal",
        bytes >> 20
    ));
    row(
        "throughput, median",
        &rate(o.median),
        &rate(b.median),
        &format!("{:.2}x", b.median.as_secs_f64() / o.median.as_secs_f64()),
        ">= 0.5x",
    );
    row(
        "beside the kernel's floor (a bare pty reader)",
        &rate(o.median),
        &rate(f.median),
        &format!("{:.2}x", f.median.as_secs_f64() / o.median.as_secs_f64()),
        "",
    );
}

/// `write_stdin` to an echoing `cat`: from the write to the first byte of
/// its echo in the output file (the yield not counted: it is zero here).
fn pty_echo(mode: &Mode) {
    let n = mode.n(500, 100);
    let t = BashTools::builder()
        .interactive(true)
        .build()
        .expect("tools");
    let Ok(Outcome::Background(bg)) = t.run(&Cmd::new("cat").interactive(true), &me()) else {
        panic!("an interactive command starts in the background")
    };
    let out = bg.output_file().to_path_buf();
    let size = || std::fs::metadata(&out).map_or(0, |m| m.len());
    let mut times = Vec::with_capacity(n);
    for i in 0..n + n / 10 {
        let before = size();
        let s = Instant::now();
        t.send_input(bg.id(), "ping\n", Duration::ZERO).unwrap();
        while size() == before {
            assert!(s.elapsed() < Duration::from_secs(30), "no echo");
            std::thread::yield_now();
        }
        let took = s.elapsed();
        // Let cat's own copy land before the next write.
        let echoed = before + 2 * "ping\n".len() as u64;
        while size() < echoed {
            std::thread::yield_now();
        }
        if i >= n / 10 {
            times.push(took);
        }
    }
    t.send_input(bg.id(), "\u{4}", Duration::ZERO).unwrap();
    let o = stats(times);
    header(&format!("`write_stdin` to `cat`, echo back, {n} times"));
    row("median", &ms(o.median), "", "", "< 5 ms");
    row("p99", &ms(o.p99), "", "", "");
}
