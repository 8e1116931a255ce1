//! Cgroup mode where the kernel cannot create a command inside its cgroup
//! (no `clone3`): bash moves itself from a startup file before the
//! command's first word runs. Forced here with
//! `BASHTOOLS_CGROUP_JOIN=startup`; every test of this file sets it.

mod common;
mod escapes;

use std::time::Duration;

use bashtools::{BashTools, Containment};
use common::*;
use escapes::{left_after, marker, wait_started, Escape};
use serde_json::json;

fn startup_tools(b: bashtools::Builder) -> Option<BashTools> {
    std::env::set_var("BASHTOOLS_CGROUP_JOIN", "startup");
    let tools = b.build().unwrap();
    if tools.containment() != Containment::Cgroup {
        eprintln!("SKIP: no cgroup v2 can be made here");
        return None;
    }
    Some(tools)
}

#[test]
fn a_command_joins_its_cgroup_before_it_runs() {
    let Some(tools) = startup_tools(builder()) else {
        return;
    };
    let name = tools.cgroup().unwrap().file_name().unwrap().to_owned();
    let r = bash(
        &tools,
        json!({"command": "cat /proc/self/cgroup; echo \"[$BASH_ENV] $?\""}),
    );
    let line = r.text.lines().find(|l| l.starts_with("0::")).unwrap();
    assert!(
        line.contains(&format!("/{}/run-", name.to_str().unwrap())),
        "{}",
        r.text
    );
    assert!(r.text.ends_with("[] 0"), "no BASH_ENV and $? 0: {}", r.text);
}

#[test]
fn the_users_bash_env_still_runs_after_the_startup_file() {
    let scratch = Scratch::new("startup-env");
    let env_file = scratch.path("env.sh");
    std::fs::write(&env_file, "greeting=from-bash-env\n").unwrap();
    let Some(tools) = startup_tools(builder().env("BASH_ENV", &env_file)) else {
        return;
    };
    let r = bash(
        &tools,
        json!({"command": "echo \"$greeting $BASH_ENV $?\""}),
    );
    assert_eq!(r.text, format!("from-bash-env {} 0", env_file.display()));
}

#[test]
fn setsid_is_stopped_by_stop_all_after_the_startup_file() {
    let Some(tools) = startup_tools(builder()) else {
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
