//! Unit tests of `budget`.

use super::*;

/// The cgroup v2 path, which a hybrid host (this project's CI) cannot
/// run for real: what is written to a cell's files and read back, with
/// a plain directory standing in for the kernel's.
#[test]
fn on_cgroup_v2_the_limits_and_the_cost_are_the_cells_files() {
    let dir = std::env::temp_dir().join(format!("bashtools-v2-cell-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let budget = Budget {
        asked: Limits::new().memory(64 << 20).cpu(1.5),
        defaults: Limits::new().memory(64 << 20).pids(4096).cpu(1.5),
        places: [Some(ControllerHome::V2); 3],
        missing: Default::default(),
        v1: Vec::new(),
    };
    let open = File::open(&dir).unwrap();
    let mut set = budget.wrap(Cell::at(dir.clone()), open);
    set.set_limits(&budget, &budget.defaults()).unwrap();
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    assert_eq!(read("memory.max"), (64u64 << 20).to_string());
    assert_eq!(read("memory.swap.max"), "0");
    assert_eq!(read("memory.oom.group"), "1");
    assert_eq!(read("pids.max"), "4096");
    assert_eq!(read("cpu.max"), "150000 100000");
    // A command's own limits replace them; only what differs is written.
    std::fs::remove_file(dir.join("pids.max")).unwrap();
    set.set_limits(&budget, &Limits::new().memory(1 << 30).pids(4096))
        .unwrap();
    assert_eq!(read("memory.max"), (1u64 << 30).to_string());
    assert_eq!(read("cpu.max"), "max 100000");
    assert!(
        !dir.join("pids.max").exists(),
        "an unchanged limit is not written again"
    );
    // The end of a command that ran out of memory and reached its
    // process limit, as the kernel's files would say it.
    set.set_limits(&budget, &budget.defaults()).unwrap();
    set.begin();
    std::fs::write(
        dir.join("cpu.stat"),
        "usage_usec 2500000
user_usec 2000000
system_usec 500000
",
    )
    .unwrap();
    std::fs::write(
        dir.join("memory.peak"),
        "67108864
",
    )
    .unwrap();
    std::fs::write(
        dir.join("memory.events"),
        "low 0
high 0
max 12
oom 1
oom_kill 1
oom_group_kill 1
",
    )
    .unwrap();
    std::fs::write(
        dir.join("pids.events"),
        "max 3
",
    )
    .unwrap();
    let cost = set.cost(&budget, Rusage::default());
    assert_eq!(cost.cpu, Some(Duration::from_millis(2500)));
    assert_eq!(cost.peak_memory, Some(64 << 20));
    assert!(cost.cpu_of_tree && cost.memory_of_tree);
    assert_eq!(cost.out_of_memory, Some(64 << 20));
    assert_eq!(cost.pids_reached, Some(4096));
    // Such a cell is never reused; nor, with memory on v2 (no reset of
    // memory.peak), any cell that ran a command.
    assert!(!set.reusable(&budget));
    drop(set);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn flat_keyed_files_are_read_by_key() {
    let events = "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n";
    assert_eq!(field(events, "oom_kill"), Some(1));
    assert_eq!(field(events, "max"), Some(3));
    assert_eq!(field(events, "oom"), Some(1));
    assert_eq!(
        field("usage_usec 1234\nuser_usec 1000\n", "usage_usec"),
        Some(1234)
    );
    assert_eq!(field("", "max"), None);
}
