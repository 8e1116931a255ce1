//! Bash, and the protocol we keep with it: how a command is started
//! (`spawn.rs`: `bash -c`, its environment, its standard streams), the
//! startup file whose `EXIT` trap records the directory a command ends in
//! and the variables it exported (`lastdir.rs`), and the reading of that
//! record's `export -p` listing as data, never as code (`exports.rs`, a
//! pure parser: no system call).
//!
//! **Entry point:** [`spawn::prepare`], which turns a command into the
//! launcher's `ChildSetup` (`os::launch`); the record is read back through
//! [`lastdir::Record`].

pub(crate) mod exports;
pub(crate) mod lastdir;
pub(crate) mod spawn;
