//! A long-lived thread that runs jobs — spawns — for other threads: the
//! thread a sandbox restricts once, so that what it starts is restricted
//! and nothing else is (see `sandbox`).
//!
//! Landlock domains and `no_new_privs` belong to a thread, and a child made
//! by `posix_spawn(3)` (`clone(2)`) inherits its thread's. A spawn handed
//! to this thread therefore starts a sandboxed command, at the cost of two
//! channel hops, while the host's own threads stay free.
//!
//! Jobs run one at a time, in the order they were sent. The thread must not
//! start the process's other threads (the reaper, the timer): they would
//! inherit its restriction. They are started before it.

use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::thread::{JoinHandle, ThreadId};

use crossbeam_channel::{bounded, unbounded, Sender};

type Job = Box<dyn FnOnce() + Send>;

/// The thread and the way to it.
pub(crate) struct Spawner {
    /// Where jobs go; `None` once dropping (the thread then ends).
    jobs: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    id: ThreadId,
    /// The thread's id in the kernel (`gettid(2)`).
    #[cfg_attr(not(test), allow(dead_code))]
    tid: i32,
}

impl Spawner {
    /// Starts the thread; `setup` runs on it first (to restrict it), and
    /// its answer is returned with the spawner. A failed setup ends the
    /// thread and is returned.
    pub(crate) fn start<T, E>(
        name: &str,
        setup: impl FnOnce() -> Result<T, E> + Send + 'static,
    ) -> io::Result<Result<(Spawner, T), E>>
    where
        T: Send + 'static,
        E: Send + 'static,
    {
        let (jobs, incoming) = unbounded::<Job>();
        let (ready, answer) = bounded(1);
        let thread = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                let tid = nix::unistd::gettid().as_raw();
                let outcome = setup();
                let ok = outcome.is_ok();
                let _ = ready.send((tid, outcome));
                if !ok {
                    return;
                }
                for job in incoming {
                    job();
                }
            })?;
        let id = thread.thread().id();
        let (tid, outcome) = answer
            .recv()
            .map_err(|_| io::Error::other("the spawner thread ended while it was set up"))?;
        Ok(match outcome {
            Ok(value) => Ok((
                Spawner {
                    jobs: Some(jobs),
                    thread: Some(thread),
                    id,
                    tid,
                },
                value,
            )),
            Err(e) => {
                let _ = thread.join();
                Err(e)
            }
        })
    }

    /// Runs `job` on the thread and returns its answer. A job that panics
    /// is an error here, and the thread goes on.
    pub(crate) fn run<R: Send + 'static>(
        &self,
        job: impl FnOnce() -> R + Send + 'static,
    ) -> io::Result<R> {
        let (reply, answer) = bounded(1);
        let job: Job = Box::new(move || {
            let _ = reply.send(panic::catch_unwind(AssertUnwindSafe(job)));
        });
        let gone = || io::Error::other("the sandbox's spawner thread has ended");
        self.jobs
            .as_ref()
            .ok_or_else(gone)?
            .send(job)
            .map_err(|_| gone())?;
        match answer.recv() {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(_)) => Err(io::Error::other("a spawn panicked on the spawner thread")),
            Err(_) => Err(gone()),
        }
    }

    /// The path by which a process started from this thread opens this
    /// process's descriptor `fd`. `/proc/PID/fd/N` names the host's main
    /// thread, which a sandboxed process may not inspect;
    /// `/proc/PID/task/TID/fd/N` names this thread, in the same sandbox,
    /// and the same descriptor table. For a descriptor handed to commands
    /// by path (containment's startup file).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn proc_fd_path(&self, fd: i32) -> PathBuf {
        PathBuf::from(format!(
            "/proc/{}/task/{}/fd/{fd}",
            std::process::id(),
            self.tid
        ))
    }
}

impl Drop for Spawner {
    /// Ends the thread after the jobs already sent, and joins it — unless
    /// this is that thread (a job held the last handle), which then ends on
    /// its own once the job returns.
    fn drop(&mut self) {
        self.jobs = None;
        if std::thread::current().id() == self.id {
            return;
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_on_the_spawner_thread_and_a_panic_is_an_error() {
        let (spawner, setup_thread) =
            Spawner::start("test-spawner", || Ok::<_, ()>(std::thread::current().id()))
                .unwrap()
                .unwrap();
        let job_thread = spawner.run(|| std::thread::current().id()).unwrap();
        assert_eq!(job_thread, setup_thread);
        assert_ne!(job_thread, std::thread::current().id());
        assert!(spawner.run(|| panic!("in a job")).is_err());
        assert_eq!(spawner.run(|| 2 + 2).unwrap(), 4);
        let path = spawner.proc_fd_path(7);
        assert!(path.starts_with(format!("/proc/{}/task/", std::process::id())));
        assert!(path.ends_with("fd/7"));
    }

    #[test]
    fn a_failed_setup_is_returned_and_ends_the_thread() {
        let outcome = Spawner::start("test-spawner", || Err::<(), _>("no")).unwrap();
        assert!(matches!(outcome, Err("no")));
    }
}
