//! Cgroup mode through the forked launcher — what every architecture but
//! x86_64 gets, and any kernel that refuses `clone3`: the child joins its
//! cell (`cgroup.procs`) before anything else, so none of the command's
//! code runs outside it. Forced here with `BASHTOOLS_LAUNCH=fork`, read when
//! the tools are built; every test of this file sets it. (CI also runs the
//! whole suite with it.)

mod common;
mod escapes;

use std::time::Duration;

use bashtools::{BashTools, Containment};
use common::*;
use escapes::{left_after, marker, wait_started, Escape};
use serde_json::json;

fn forked_tools(b: bashtools::Builder) -> Option<BashTools> {
    std::env::set_var("BASHTOOLS_LAUNCH", "fork");
    let tools = b.build().unwrap();
    if tools.containment() != Containment::Cgroup {
        eprintln!("SKIP: no cgroup v2 can be made here");
        assert!(std::env::var_os("BASHTOOLS_TEST_REQUIRE_CGROUP").is_none());
        return None;
    }
    Some(tools)
}

#[test]
fn a_forked_command_joins_its_cgroup_before_it_runs() {
    let Some(tools) = forked_tools(builder()) else {
        return;
    };
    let jail = tools.cgroup().unwrap();
    let name = jail.file_name().unwrap().to_owned();
    let r = bash(
        &tools,
        json!({"command": format!("{}; echo \"[$BASH_ENV] $?\"", print_cell(&jail))}),
    );
    let line = r.text.lines().find(|l| l.starts_with("cell:")).unwrap();
    assert!(
        line.contains(&format!("/{}/run-", name.to_str().unwrap())),
        "{}",
        r.text
    );
    assert!(r.text.ends_with("[] 0"), "no BASH_ENV and $? 0: {}", r.text);
}

#[test]
fn the_users_bash_env_still_runs_in_a_forked_command() {
    let scratch = Scratch::new("fork-env");
    let env_file = scratch.path("env.sh");
    std::fs::write(&env_file, "greeting=from-bash-env\n").unwrap();
    let Some(tools) = forked_tools(builder().env("BASH_ENV", &env_file)) else {
        return;
    };
    let r = bash(
        &tools,
        json!({"command": "echo \"$greeting $BASH_ENV $?\""}),
    );
    assert_eq!(r.text, format!("from-bash-env {} 0", env_file.display()));
}

#[test]
fn setsid_is_stopped_by_stop_all_after_a_forked_start() {
    let Some(tools) = forked_tools(builder()) else {
        return;
    };
    let m = marker();
    let r = bash(
        &tools,
        json!({"command": format!("{}\necho started", Escape::Setsid.command(&m))}),
    );
    assert_eq!(r.text, "started");
    wait_started(&m);
    tools.stop_all();
    let left = left_after(&m, Duration::from_millis(1));
    assert!(left.is_empty(), "{left:?}");
}
