//! The README's option tables say the defaults the crate has: each is read
//! from `bashtools::defaults`, where every default is written once.

use bashtools::defaults::*;

/// The second cell of the README row whose first cell is `` `name` ``.
fn default_cell(readme: &str, name: &str) -> String {
    let prefix = format!("| `{name}` |");
    let row = readme
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no README row for {name}"));
    row[prefix.len()..]
        .split('|')
        .next()
        .unwrap()
        .trim()
        .to_string()
}

fn secs(d: std::time::Duration) -> String {
    format!("{} s", d.as_secs())
}

#[test]
fn the_readme_tables_show_the_defaults_of_the_crate() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let thousands = |n: usize| {
        let s = n.to_string();
        let (head, tail) = s.split_at(s.len() - 3);
        format!("{head} {tail}")
    };
    let rows = [
        ("default_timeout", secs(DEFAULT_TIMEOUT)),
        ("max_timeout", secs(MAX_TIMEOUT)),
        ("output_limit", thousands(OUTPUT_LIMIT)),
        ("kill_grace", secs(KILL_GRACE)),
        ("block_timeout", secs(BLOCK_TIMEOUT)),
        ("monitor_timeout", secs(MONITOR_TIMEOUT)),
        (
            "max_output_bytes",
            format!("{} GiB", MAX_OUTPUT_BYTES >> 30),
        ),
        ("noninteractive_env", NONINTERACTIVE_ENV.to_string()),
        ("render_output", RENDER_OUTPUT.to_string()),
        (
            "persist_working_directory",
            PERSIST_WORKING_DIRECTORY.to_string(),
        ),
        ("persist_environment", PERSIST_ENVIRONMENT.to_string()),
        (
            "pids_limit",
            format!(
                "{} where cgroups can be made",
                bashtools::DEFAULT_PIDS_LIMIT
            ),
        ),
        ("batch_window", format!("{} ms", BATCH_WINDOW.as_millis())),
        ("burst_limit", BURST_LIMIT.to_string()),
        ("line_limit", format!("{LINE_LIMIT} chars")),
        ("flood_timeout", secs(FLOOD_TIMEOUT)),
    ];
    for (name, expected) in rows {
        assert_eq!(default_cell(&readme, name), expected, "README row {name}");
    }
    let bounds = "| `monitor_min_timeout` / `monitor_max_timeout` |";
    assert!(
        readme.contains(&format!(
            "{bounds} {} / {} |",
            secs(MONITOR_MIN_TIMEOUT),
            secs(MONITOR_MAX_TIMEOUT)
        )),
        "README row of the monitor bounds"
    );
    assert!(
        readme.contains(&format!(
            "| `monitor_unattended_max_timeout` + `unattended` | {} / none |",
            secs(MONITOR_UNATTENDED_MAX_TIMEOUT)
        )),
        "README row of the unattended cap"
    );
}
