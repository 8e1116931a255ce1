//! The layer that talks to the kernel, as subsystems, each a folder (or a
//! file) with one entry point named in its module doc:
//!
//! | subsystem | what | entry point |
//! |---|---|---|
//! | `sys` | helpers every other one shares: errno, a blocked signal mask, pidfds, capabilities | — |
//! | `sandbox/` | Landlock rules, seccomp filter, read-only view | `sandbox::prepare` |
//! | `launch/` | every program we run, set up in the child | `launch::launch` |
//! | `reaper/` | the thread that collects our children's exits | `reaper::init` |
//! | `files/` | output directory, output cap, off-thread file work | `files::outdir::OutputDir` |
//! | `terminals/` | pseudo-terminals and the thread that serves them | `terminals::Terminals` |
//! | `bash/` | starting bash, the end record of `cd` and exports | `bash::spawn::prepare` |
//! | `contain/` | cells or sessions, budgets, the keeper | `contain::Contain` |
//! | `process` | the seam the shells use, composed of the above | `process::Process` |
//!
//! They depend one way, in this order (a subsystem uses only those of a
//! lower rank; `tests/it/layers.rs` checks it): `sys`; `sandbox`; `launch`;
//! `reaper`, `files`, `terminals`, `bash`; `contain`; `process`.
//!
//! Nothing here knows about tools, texts or shells: it imports only the
//! crate's leaf modules, and reports events up through callbacks it is
//! given (the reaper's exit hooks, `contain`'s `OnGone`).

pub(crate) mod bash;
pub(crate) mod contain;
pub(crate) mod files;
pub(crate) mod launch;
pub(crate) mod process;
pub(crate) mod reaper;
pub(crate) mod sandbox;
pub(crate) mod sys;
pub(crate) mod terminals;
