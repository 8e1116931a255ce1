//! Monitors: a command whose stdout lines are delivered as notifications,
//! in batches (contract §7).
//!
//! One reader thread per monitor. It waits with `poll(2)` on the command's
//! stdout pipe, with the end of the current batch window (or the monitor's
//! deadline) as the timeout, so a line reaches the recipient within
//! `batch_window` of its arrival plus the time to send it, and nothing polls
//! on a timer. The stream ends at EOF — when everything that held the
//! pipe's write end has closed it, the leader and whatever it started —
//! not at the leader's exit: a background producer's lines keep coming.
//!
//! The batching itself ([`Batcher`]) and the line splitting ([`Lines`]),
//! in `batch.rs`, are
//! plain state machines, with time passed in, so they are tested without
//! processes.

use std::io::Read;
use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::Instant;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use crate::config::MonitorOptions;
use crate::shells::{Key, StopReason, Supervisor};
use crate::status::TaskStatus;
use crate::tasks::{Notification, Tasks};
use crate::texts;

mod batch;
pub(crate) use batch::{Batcher, Lines};

/// Everything the reader thread of one monitor needs.
pub(crate) struct MonitorRun {
    pub shells: Arc<Supervisor>,
    pub options: MonitorOptions,
    /// Event lines show what a terminal would (`render_output`).
    pub render: bool,
    pub tasks: Tasks,
    pub key: Key,
    pub id: String,
    pub description: String,
    pub recipient: String,
    pub call: Option<String>,
    pub output: std::path::PathBuf,
    /// `None`: no deadline (a timeout too long to be a point in time).
    pub deadline: Option<Instant>,
    /// The read end of the command's stdout pipe, non-blocking.
    pub stdout: std::fs::File,
    /// Masked in every event and in the end's summary (README, "Secrets").
    pub secrets: crate::secrets::Shared,
}

/// How the reading ended.
enum End {
    /// Everything that held the pipe's write end has closed it (EOF): the
    /// leader's exit alone does not end the stream, so a background
    /// producer's lines keep coming.
    Stream,
    TimedOut,
    Flood,
}

impl MonitorRun {
    /// The reader thread's body: read, batch, notify; then the end notice.
    pub(crate) fn run(self) {
        let opts = self.options.clone();
        let mut batcher = Batcher::new(opts.clone());
        let mut lines = Lines::new(opts.line_limit);
        let end = self.read(&mut batcher, &mut lines);
        let now = Instant::now();
        if let Some(last) = lines.finish() {
            batcher.push(self.shown(last), now);
        }
        for batch in batcher.finish(now) {
            self.send_event(&batch);
        }
        let why = match end {
            End::Stream => None,
            End::TimedOut => {
                self.send_event(&[texts::MONITOR_TIMED_OUT.to_string()]);
                self.shells.stop(&[self.key], StopReason::MonitorTimeout);
                None
            }
            End::Flood => {
                self.shells.stop(&[self.key], StopReason::Flood);
                Some(texts::flood_reason(opts.flood_timeout))
            }
        };
        // The stream can end before the leader does (it closed its stdout):
        // the monitor lasts until the leader exits, or its deadline.
        let exited = {
            let table = self.shells.table();
            let inner = table.lock();
            let (_, exited) = table.wait_exited(inner, &[self.key], self.deadline);
            exited
        };
        if !exited {
            self.send_event(&[texts::MONITOR_TIMED_OUT.to_string()]);
            self.shells.stop(&[self.key], StopReason::MonitorTimeout);
        }
        self.send_end(why.as_deref());
    }

    /// An event line as the model reads it.
    fn shown(&self, line: String) -> String {
        if self.render {
            crate::output::render::render_text(&line)
        } else {
            line
        }
    }

    fn read(&self, batcher: &mut Batcher, lines: &mut Lines) -> End {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let now = Instant::now();
            if self.deadline.is_some_and(|d| now >= d) {
                return End::TimedOut;
            }
            if batcher.window_end().is_some_and(|end| now >= end) {
                if let Some(batch) = batcher.flush(now) {
                    self.send_event(&batch);
                }
                if batcher.flooding(now) {
                    return End::Flood;
                }
            }
            let wake = crate::deadline::min(batcher.window_end(), self.deadline);
            let ms = wake.map_or(-1, |w| {
                w.saturating_duration_since(now)
                    .as_millis()
                    .min(i32::MAX as u128) as i32
            });
            let mut fds = [PollFd::new(self.stdout.as_fd(), PollFlags::POLLIN)];
            // Round up so a window's end is not missed by a millisecond.
            let timeout = if ms < 0 {
                PollTimeout::NONE
            } else {
                PollTimeout::try_from(ms.saturating_add(1)).unwrap_or(PollTimeout::MAX)
            };
            match poll(&mut fds, timeout) {
                Ok(0) | Err(_) => continue,
                Ok(_) => {}
            }
            let pipe_ready = fds[0].revents().is_some_and(|r| !r.is_empty());
            if pipe_ready {
                match (&self.stdout).read(&mut buf) {
                    Ok(0) => return End::Stream,
                    Ok(n) => {
                        let now = Instant::now();
                        lines.feed(&buf[..n], &mut |l| batcher.push(self.shown(l), now));
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                        ) => {}
                    Err(_) => return End::Stream,
                }
            }
        }
    }

    fn send_event(&self, lines: &[String]) {
        // Each line as shown (cut at the line limit), then masked.
        let secrets = self.secrets.read();
        let lines: Vec<String> = lines.iter().map(|l| secrets.mask(l).into_owned()).collect();
        drop(secrets);
        let (text, label) = texts::monitor_event(&self.id, &self.description, &lines);
        self.tasks.notify(Notification {
            recipient: self.recipient.clone(),
            task_id: self.id.clone(),
            text,
            label,
            status: None,
        });
    }

    fn send_end(&self, why: Option<&str>) {
        let (status, code) = {
            let inner = self.shells.table().lock();
            inner
                .get(self.key)
                .map(|s| (s.status(), s.exit_code().unwrap_or(-1)))
                .unwrap_or((TaskStatus::Killed, -1))
        };
        let summary = texts::monitor_summary(&self.description, status, code, why);
        let summary = self.secrets.read().mask(&summary).into_owned();
        let text = texts::end_notification(
            &self.id,
            self.call.as_deref(),
            &self.output,
            status,
            &summary,
        );
        self.tasks.finish_with(&self.id, status, text, summary);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn opts() -> MonitorOptions {
        MonitorOptions::default()
            .batch_window(Duration::from_millis(100))
            .burst_limit(3)
            .flood_timeout(Duration::from_millis(300))
    }

    fn lines_of(bytes: &[u8], limit: usize) -> Vec<String> {
        let mut l = Lines::new(limit);
        let mut out = Vec::new();
        l.feed(bytes, &mut |s| out.push(s));
        out.extend(l.finish());
        out
    }

    #[test]
    fn lines_are_split_and_a_last_line_without_newline_is_kept() {
        assert_eq!(lines_of(b"a\nb\r\nc", 10), ["a", "b", "c"]);
        assert_eq!(lines_of(b"a\n\n", 10), ["a", ""]);
    }

    #[test]
    fn a_long_line_is_cut_at_the_limit_in_characters() {
        assert_eq!(
            lines_of("ééééé\nok\n".as_bytes(), 3),
            ["ééé...(truncated)", "ok"]
        );
        assert_eq!(lines_of(b"abc\n", 3), ["abc"]);
    }

    #[test]
    fn a_line_that_never_ends_holds_no_more_than_the_limit() {
        let mut l = Lines::new(5);
        for _ in 0..1000 {
            l.feed(&[b'x'; 1000], &mut |_| panic!("no line yet"));
        }
        assert!(l.buf.len() <= 5);
        assert_eq!(l.finish().unwrap(), "xxxxx...(truncated)");
    }

    #[test]
    fn lines_within_a_window_go_out_together() {
        let t0 = Instant::now();
        let mut b = Batcher::new(opts());
        b.push("one".into(), t0);
        b.push("two".into(), t0 + Duration::from_millis(50));
        assert_eq!(b.window_end(), Some(t0 + Duration::from_millis(100)));
        assert_eq!(
            b.flush(t0 + Duration::from_millis(100)).unwrap(),
            ["one", "two"]
        );
        assert_eq!(b.window_end(), None);
    }

    #[test]
    fn past_the_burst_limit_lines_are_counted_and_reported_next() {
        let t0 = Instant::now();
        let mut b = Batcher::new(opts());
        for i in 0..10 {
            b.push(format!("l{i}"), t0);
        }
        assert_eq!(
            b.flush(t0 + Duration::from_millis(100)).unwrap(),
            ["l0", "l1", "l2"]
        );
        // The count comes within one more window, even with no new line.
        let t1 = t0 + Duration::from_millis(100);
        assert_eq!(b.window_end(), Some(t1 + Duration::from_millis(100)));
        b.push("l10".into(), t1);
        assert_eq!(
            b.flush(t1 + Duration::from_millis(100)).unwrap(),
            [texts::suppressed(7), "l10".to_string()]
        );
    }

    #[test]
    fn a_burst_holds_no_more_than_the_burst_limit() {
        let t0 = Instant::now();
        let mut b = Batcher::new(opts());
        for i in 0..100_000 {
            b.push(format!("line {i}"), t0);
            assert!(b.lines.len() <= 3);
        }
        assert_eq!(b.suppressed, 99_997);
    }

    #[test]
    fn the_count_is_sent_at_the_end_if_nothing_follows() {
        let t0 = Instant::now();
        let mut b = Batcher::new(opts());
        for i in 0..5 {
            b.push(format!("l{i}"), t0);
        }
        let batches = b.finish(t0);
        assert_eq!(batches.len(), 2);
        assert_eq!(batches[1], [texts::suppressed(2)]);
    }

    #[test]
    fn suppression_in_every_window_for_the_flood_timeout_is_a_flood() {
        let t0 = Instant::now();
        let mut b = Batcher::new(opts());
        let mut now = t0;
        // Windows of 100 ms, each suppressing: 100 and 200 ms of flood are
        // below the 300 ms flood_timeout, the third window reaches it.
        for _ in 0..2 {
            for i in 0..5 {
                b.push(format!("l{i}"), now);
            }
            now += Duration::from_millis(100);
            b.flush(now);
            assert!(!b.flooding(now));
        }
        for i in 0..5 {
            b.push(format!("l{i}"), now);
        }
        now += Duration::from_millis(100);
        b.flush(now);
        assert!(b.flooding(now));
    }

    #[test]
    fn a_quiet_window_ends_a_flood() {
        let t0 = Instant::now();
        let mut b = Batcher::new(opts());
        for i in 0..5 {
            b.push(format!("l{i}"), t0);
        }
        let t1 = t0 + Duration::from_millis(100);
        b.flush(t1);
        b.push("calm".into(), t1);
        let t2 = t1 + Duration::from_millis(400);
        b.flush(t2);
        assert!(!b.flooding(t2));
    }
}
