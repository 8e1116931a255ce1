//! The crate's one public error type.
//!
//! Tool calls never return this: a failed tool call is a [`ToolResult`](crate::ToolResult)
//! with `is_error: true`, because that is what a model can read and act on.
//! [`Error`] is for the embedder: building a [`BashTools`](crate::BashTools) can
//! fail before any tool exists.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// Why a [`BashTools`](crate::BashTools) could not be built.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
}

#[derive(Debug)]
enum ErrorKind {
    /// The configured working directory does not exist.
    WorkingDirectoryMissing(PathBuf),
    /// The configured working directory exists but is not a directory.
    WorkingDirectoryNotADirectory(PathBuf),
    /// The process's own current directory could not be read (no
    /// `working_directory` was configured, so it was needed).
    CurrentDirectory(io::Error),
    /// The private directory for output files could not be made.
    OutputDirectory(PathBuf, io::Error),
}

impl Error {
    pub(crate) fn working_directory_missing(path: PathBuf) -> Self {
        Error {
            kind: ErrorKind::WorkingDirectoryMissing(path),
        }
    }

    pub(crate) fn working_directory_not_a_directory(path: PathBuf) -> Self {
        Error {
            kind: ErrorKind::WorkingDirectoryNotADirectory(path),
        }
    }

    pub(crate) fn current_directory(err: io::Error) -> Self {
        Error {
            kind: ErrorKind::CurrentDirectory(err),
        }
    }

    pub(crate) fn output_directory(path: PathBuf, err: io::Error) -> Self {
        Error {
            kind: ErrorKind::OutputDirectory(path, err),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::WorkingDirectoryMissing(p) => {
                write!(f, "working directory does not exist: {}", p.display())
            }
            ErrorKind::WorkingDirectoryNotADirectory(p) => {
                write!(f, "working directory is not a directory: {}", p.display())
            }
            ErrorKind::CurrentDirectory(e) => {
                write!(f, "cannot read the current directory: {e}")
            }
            ErrorKind::OutputDirectory(p, e) => {
                write!(
                    f,
                    "cannot create the private output directory in {}: {e}",
                    p.display()
                )
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::CurrentDirectory(e) | ErrorKind::OutputDirectory(_, e) => Some(e),
            _ => None,
        }
    }
}
