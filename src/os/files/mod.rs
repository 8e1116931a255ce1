//! The files of commands' output: the private directory they are written
//! in (`outdir.rs`), the output cap that stops a command whose file grows
//! too big (`output_cap.rs`), and the thread that does the file work
//! nobody needs to wait for (`reclaim.rs`).
//!
//! **Entry point:** [`outdir::OutputDir`], made once per `BashTools`; each
//! command's file comes from it, and is registered with the cap's watcher
//! ([`output_cap::Watch`]) while it is written.

pub(crate) mod outdir;
pub(crate) mod output_cap;
pub(crate) mod reclaim;
