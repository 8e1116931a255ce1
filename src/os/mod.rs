//! The layer that talks to the kernel: starting commands, reaping them,
//! process groups, the output cap, the private output directory, the
//! pseudo-terminals of interactive commands, and the sandbox of commands.
//!
//! Nothing here knows about tools, texts or shells: it imports only the
//! leaf modules and reports events up through callbacks it is given. The
//! shells reach it through one seam, [`process::Process`].

pub(crate) mod budget;
pub(crate) mod cap;
pub(crate) mod cgroup;
pub(crate) mod cgroup_v1;
pub(crate) mod contain;
pub(crate) mod exports;
pub(crate) mod group;
pub(crate) mod keeper;
pub(crate) mod lastdir;
pub(crate) mod launch;
pub(crate) mod outdir;
pub(crate) mod process;
pub(crate) mod pty;
pub(crate) mod reaper;
pub(crate) mod reclaim;
pub(crate) mod sandbox;
pub(crate) mod spawn;
pub(crate) mod sys;
pub(crate) mod terminals;
