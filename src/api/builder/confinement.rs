//! The builder's setters of what a command may do and use: the sandbox,
//! an interactive terminal, and its memory, process and CPU budgets.

use super::*;

impl Builder {
    /// Runs every command in a Landlock [`Sandbox`]: it writes only in the
    /// working directory, the sandbox's directories and a private
    /// `TMPDIR`, reaches no TCP port unless allowed, and signals no process
    /// outside it. Default: none. What the kernel enforces is
    /// [`BashTools::sandbox_status`].
    ///
    /// ```
    /// use bashtools::{BashTools, Caller, Sandbox};
    /// use serde_json::json;
    /// let tools = BashTools::builder()
    ///     .working_directory(std::env::temp_dir())
    ///     .sandbox(Sandbox::new().best_effort(true))
    ///     .build()?;
    /// let r = tools.bash(&json!({"command": "touch \"$TMPDIR/scratch\" && echo ok"}),
    ///                    &Caller::default());
    /// assert_eq!(r.text, "ok");
    /// # Ok::<(), bashtools::Error>(())
    /// ```
    pub fn sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// Offers interactive commands (default `false`): `bash` takes
    /// `interactive: true`, which starts the command at once in the
    /// background on a pseudo-terminal of its own, and the `write_stdin`
    /// tool types into it ([`BashTools::send_input`]).
    ///
    /// The gates (`allowed_commands`, the validator) check the command line
    /// only: what is typed into a running program (a shell, a REPL, a
    /// debugger) is not a command line and is not checked. `build()`
    /// therefore refuses this option beside a gate unless
    /// [`interactive_ungated`](Self::interactive_ungated) is set too.
    ///
    /// ```
    /// use std::time::Duration;
    /// use bashtools::{BashTools, Caller, Command, Outcome};
    /// let tools = BashTools::builder().interactive(true).build()?;
    /// let cmd = Command::new("read -p 'name? ' n; echo \"hi $n\"").interactive(true);
    /// let Outcome::Background(bg) = tools.run(&cmd, &Caller::default())? else { panic!() };
    /// let out = tools.send_input(bg.id(), "bob\n", Duration::from_secs(10))?;
    /// assert!(out.text().contains("hi bob"), "{}", out.text());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn interactive(mut self, on: bool) -> Self {
        self.interactive = on;
        self
    }

    /// Accepts [`interactive`](Self::interactive) beside `allowed_commands`
    /// or a validator, knowing that what is typed into a running program is
    /// not checked by them (default `false`).
    pub fn interactive_ungated(mut self, on: bool) -> Self {
        self.interactive_ungated = on;
        self
    }

    /// The size of an interactive command's terminal, in columns and rows
    /// (80 × 24).
    pub fn terminal_size(mut self, columns: u16, rows: u16) -> Self {
        self.terminal_size = (columns, rows);
        self
    }

    /// At most `bytes` of memory for each command's whole tree, no swap
    /// (cgroup `memory.max`, `memory.swap.max = 0`, `memory.oom.group`; on a
    /// hybrid host the v1 memory controller). Past it the tree is stopped
    /// and the result says "Out of memory". At least 1 MiB. Default: none.
    ///
    /// Needs cgroups: where they cannot be made, [`build`](Self::build)
    /// fails with [`ErrorKind::LimitUnavailable`](crate::ErrorKind) rather
    /// than run commands without it.
    ///
    /// ```no_run
    /// let tools = bashtools::BashTools::builder()
    ///     .memory_limit(512 << 20)
    ///     .build()?;
    /// # Ok::<(), bashtools::Error>(())
    /// ```
    pub fn memory_limit(mut self, bytes: u64) -> Self {
        self.limits.memory = Some(bytes);
        self
    }

    /// At most `n` processes and threads at once in each command's tree
    /// (`pids.max`): a fork bomb fails inside its own tree, and the result
    /// says the limit was reached. 0: none. Default:
    /// [`DEFAULT_PIDS_LIMIT`](crate::DEFAULT_PIDS_LIMIT) where cgroups with
    /// the pids controller can be made, none elsewhere
    /// ([`BashTools::pids_limit`](crate::BashTools::pids_limit) says which).
    /// Set explicitly, it needs cgroups, as [`memory_limit`](Self::memory_limit).
    pub fn pids_limit(mut self, n: u64) -> Self {
        self.limits.pids = Some(n);
        self
    }

    /// At most `cpus` CPUs' worth of time for each command's tree
    /// (`cpu.max`; v1 `cpu.cfs_quota_us`), e.g. 0.5 or 2; at least 0.01.
    /// Default: none. Needs cgroups, as [`memory_limit`](Self::memory_limit).
    pub fn cpu_limit(mut self, cpus: f64) -> Self {
        self.limits = self.limits.cpu(cpus);
        self
    }
}
