//! A child the launcher starts in a cell is born in it, each way, and in
//! a cgroup namespace rooted at it where this process may make one.

use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;

use super::{Cell, Jail};
use crate::os::launch::launch;
use crate::os::launch::tests::{sh, wait, Scratch, BOTH};

#[test]
fn a_child_is_born_in_its_cgroup_and_namespace() {
    let jail = match Jail::create(&|_| ()) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("SKIP: no cgroup can be made here ({e}): the cgroup step is not tried");
            assert!(
                std::env::var_os("BASHTOOLS_TEST_REQUIRE_CGROUP").is_none(),
                "cgroups are required here"
            );
            return;
        }
    };
    let namespace = crate::os::sys::has_effective(crate::os::sys::CAP_SYS_ADMIN);
    for via in BOTH {
        let cell = jail.cell().unwrap();
        let dir = cell.open().unwrap();
        let out = Scratch::new("cgroup");
        let file = out.create();
        let setup = sh("cat /proc/self/cgroup; echo $$", &file).cgroup(dir.as_fd(), namespace);
        let pid = launch(&setup, via).unwrap();
        assert_eq!(wait(pid), 0);
        let text = out.text();
        let line = text.lines().find(|l| l.starts_with("0::")).unwrap();
        if namespace {
            assert_eq!(line, "0::/", "{via:?}: rooted at its cell: {text}");
        } else {
            eprintln!("no CAP_SYS_ADMIN: no cgroup namespace is asked for");
            assert!(line.ends_with(&format!("/{}", cell_name(&cell))), "{text}");
        }
        drop(setup);
        drop(dir);
        cell.remove().unwrap();
    }
    jail.destroy(std::time::Instant::now() + std::time::Duration::from_secs(5));
}

fn cell_name(cell: &Cell) -> String {
    let dir = cell.path().file_name().unwrap();
    String::from_utf8_lossy(dir.as_bytes()).into_owned()
}
