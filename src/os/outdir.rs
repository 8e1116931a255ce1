//! The private directory that holds the output files (SPEC section 2).
//!
//! Mode 0700 for the directory and 0600 for each file: a command's output can
//! hold secrets, and other users of the machine must not read it. The
//! directory is removed when its owner is dropped.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Counts the directories made by this process, so two values never collide.
static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// A directory of our own; removed with everything in it on drop.
#[derive(Debug)]
pub(crate) struct OutputDir {
    path: PathBuf,
}

impl OutputDir {
    /// Makes a fresh directory `bashtools-PID-N-NANOS` under `root`.
    /// `create` (not `create_all`) fails on an existing name, so nobody can
    /// plant a directory for us to write into.
    pub(crate) fn create(root: &Path) -> io::Result<OutputDir> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = format!(
            "bashtools-{}-{}-{nanos}",
            std::process::id(),
            SEQUENCE.fetch_add(1, Ordering::Relaxed)
        );
        let path = root.join(name);
        DirBuilder::new().mode(0o700).create(&path)?;
        Ok(OutputDir { path })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Creates a new output file, 0600, failing if the name exists.
    pub(crate) fn create_file(&self, name: &str) -> io::Result<(PathBuf, File)> {
        let path = self.path.join(name);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        Ok((path, file))
    }

    /// Removes the directory and every file in it. Idempotent.
    pub(crate) fn remove(&self) {
        // A missing directory is what we want; any other failure leaves files
        // in the temp directory, which is all that can be done from a drop.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        self.remove();
    }
}
