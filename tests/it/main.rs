//! One test binary for the suites that touch no process-wide state: they
//! set no environment variable, signal mask, disposition or rlimit, and
//! assert nothing about this process as a whole (its zombie children, its
//! threads, its memory peak, its inotify watches), so they may share a
//! process. Linking one binary instead of one per suite is most of what a
//! clean `cargo test` spends on 2 cores.
//!
//! The suites that do touch such state keep a binary of their own beside
//! this folder (`bash`, `containment*`, `host_children`, `hardening_host`,
//! `interactive`, `launcher`, `leaks`, `limits`, `output_files`,
//! `persist_cwd`, `persist_env`, `rendering`, `sandbox`, `typed_api`,
//! `concurrency`). Run one suite of this binary with
//! `cargo test --test it SUITE::`.

#[cfg(feature = "mcp")]
#[path = "../mcp/client.rs"]
mod client;
#[path = "../common/mod.rs"]
mod common;
#[cfg(feature = "mcp")]
#[path = "../escapes/mod.rs"]
mod escapes;

mod async_tools;
mod bad_input;
mod bash_output;
mod carried_state;
mod gate_differential;
mod gates;
mod kill_shell;
mod layers;
mod list_shells;
mod long_command;
#[cfg(feature = "mcp")]
mod mcp;
#[cfg(feature = "mcp")]
mod mcp_cli;
#[cfg(feature = "mcp")]
mod mcp_delivery;
#[cfg(feature = "mcp")]
mod mcp_policy;
mod model_reads;
mod monitor;
mod notifications;
mod policy;
mod policy_differential;
mod readme_defaults;
#[cfg(feature = "mcp")]
mod remote;
mod secrets;
mod stdin;
mod tasks;
