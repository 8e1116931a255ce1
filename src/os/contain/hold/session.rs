//! A command held by its session (no cell could be made): the session's
//! id, which is also its group's and its leader's pid. What is left of it
//! is found and signalled through `/proc` (`group.rs`).

/// A command's session id (= group id = leader pid; 0 until spawned), and
/// whether its leader has been reaped.
pub(in crate::os::contain) struct SessionHold {
    pub(super) sid: u32,
    pub(super) exited: bool,
}

impl SessionHold {
    pub(super) fn new() -> SessionHold {
        SessionHold {
            sid: 0,
            exited: false,
        }
    }
}
