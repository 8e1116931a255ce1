//! Unit tests of `reaper`.

use super::*;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Children started while set get no pidfd (the sweep at SIGCHLD
/// reaps them). Other tests' children may be swept too while it is
/// set, which is as correct, only not as quick.
pub(super) static NO_PIDFD: AtomicBool = AtomicBool::new(false);

fn exit_of(script: &str) -> Exit {
    use crate::os::launch::{launch, ChildSetup, Via};
    use std::ffi::CString;
    let c = |s: &str| CString::new(s).unwrap();
    let setup = ChildSetup::new(
        c("/bin/sh"),
        vec![c("sh"), c("-c"), c(script)],
        vec![],
        c("/"),
    );
    let (tx, rx) = crossbeam_channel::bounded(1);
    init()
        .unwrap()
        .spawn(
            || launch(&setup, Via::Clone3),
            Box::new(move |exit, _| {
                let _ = tx.send(exit);
            }),
        )
        .unwrap();
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the exit is collected")
}

#[test]
fn an_exit_is_collected_through_the_pidfd_and_without_one() {
    assert_eq!(exit_of("exit 3"), Exit::Code(3));
    NO_PIDFD.store(true, std::sync::atomic::Ordering::Relaxed);
    let swept = exit_of("kill -TERM $$");
    NO_PIDFD.store(false, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(swept, Exit::Signal(nix::libc::SIGTERM));
}
