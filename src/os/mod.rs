//! The layer that talks to the kernel: starting commands, reaping them,
//! process groups, the output cap and the private output directory.
//!
//! Nothing here knows about tools, texts or shells: it imports only the
//! leaf modules and reports events up through callbacks it is given.

pub(crate) mod cap;
pub(crate) mod cgroup;
pub(crate) mod clone3;
pub(crate) mod contain;
pub(crate) mod group;
pub(crate) mod keeper;
pub(crate) mod outdir;
pub(crate) mod reaper;
pub(crate) mod spawn;
