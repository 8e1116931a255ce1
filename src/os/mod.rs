//! The layer that talks to the kernel: starting commands, reaping them,
//! process groups, the output cap, the private output directory, the
//! pseudo-terminals of interactive commands, and the sandbox of commands.
//!
//! Nothing here knows about tools, texts or shells: it imports only the
//! leaf modules and reports events up through callbacks it is given. The
//! shells reach it through one seam, [`process::Process`].

pub(crate) mod bash;
pub(crate) mod budget;
pub(crate) mod cgroup;
pub(crate) mod cgroup_v1;
pub(crate) mod contain;
pub(crate) mod files;
pub(crate) mod group;
pub(crate) mod keeper;
pub(crate) mod launch;
pub(crate) mod process;
pub(crate) mod reaper;
pub(crate) mod sandbox;
pub(crate) mod sys;
pub(crate) mod terminals;
