//! The allow-list gate on hostile input: `gate::check_allowed` must stay linear.
//!
//! `cargo bench --bench gate` checks a 1 MB line holding 100 000 substitutions, and a
//! few other shapes, and prints the median and the worst of several runs. Plain
//! `std::time`, no harness.

use std::time::{Duration, Instant};

use bashtools::gate::check_allowed;

const ALLOWED: &[&str] = &["echo", "ls", "cat"];
const RUNS: usize = 15;

fn measure(name: &str, line: &str) {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let verdict = check_allowed(line, ALLOWED);
            let took = started.elapsed();
            std::hint::black_box(verdict).ok();
            took
        })
        .collect();
    times.sort();
    println!(
        "| {name} | {:.1} KB | {:.1} ms | {:.1} ms |",
        line.len() as f64 / 1000.0,
        times[RUNS / 2].as_secs_f64() * 1000.0,
        times[RUNS - 1].as_secs_f64() * 1000.0,
    );
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let cases: Vec<(&str, String)> = vec![
        (
            "1 MB, 100 000 sequential substitutions",
            // "echo " then 100 000 × " $(ls)x" padded to 1 MB.
            {
                let mut line = "echo".to_string() + &" $(ls) ".repeat(100_000);
                line.push_str(&"a".repeat(1_000_000 - line.len().min(1_000_000)));
                line
            },
        ),
        (
            "100 000 nested substitutions (refused at depth 64)",
            "$(".repeat(100_000) + &")".repeat(100_000),
        ),
        (
            "1 MB of one quoted word",
            format!("echo '{}'", "x".repeat(1_000_000)),
        ),
        ("50 000 commands in a list", "ls; ".repeat(50_000)),
    ];
    println!("| case | line | median | worst of {RUNS} |");
    println!("|---|---|---|---|");
    for (name, line) in &cases {
        if filter.as_deref().map_or(true, |f| name.contains(f)) {
            measure(name, line);
        }
    }
}
