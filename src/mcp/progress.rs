//! `notifications/progress` for a call whose `_meta` carries a
//! `progressToken`: `progress` is the seconds elapsed (strictly
//! increasing), `total` the call's timeout in seconds, `message` the last
//! non-blank line the command wrote (at most [`MESSAGE_CHARS`] characters).

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::jsonrpc;

/// The longest `message`, in characters.
pub(crate) const MESSAGE_CHARS: usize = 200;

/// How much of the end of an output file is read for the last line.
const TAIL_BYTES: u64 = 16 * 1024;

/// The progress of one call.
pub(crate) struct Progress {
    token: Value,
    started: Instant,
    total: Duration,
    last: f64,
}

impl Progress {
    pub(crate) fn new(token: Value, total: Duration) -> Progress {
        Progress {
            token,
            started: Instant::now(),
            total,
            last: 0.0,
        }
    }

    /// The next `notifications/progress`, with the last line of `output`
    /// passed through `mask` (README, "Secrets").
    pub(crate) fn next(&mut self, output: Option<&Path>, mask: &dyn Fn(String) -> String) -> Value {
        let elapsed = (self.started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        let progress = if elapsed > self.last {
            elapsed
        } else {
            self.last + 0.001
        };
        self.last = progress;
        let mut params = json!({
            "progressToken": self.token,
            "progress": progress,
            "total": self.total.as_secs_f64(),
        });
        // Every report says something: the output's last line, or how long
        // a command that printed nothing has run.
        let message = output
            .and_then(last_line)
            .map(mask)
            .unwrap_or_else(|| format!("running for {} s", self.started.elapsed().as_secs()));
        params["message"] = json!(message);
        jsonrpc::notification("notifications/progress", params)
    }
}

/// The last non-blank line of a file's end, trimmed and cut to
/// [`MESSAGE_CHARS`] characters.
pub(crate) fn last_line(path: &Path) -> Option<String> {
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(TAIL_BYTES)))
        .ok()?;
    let mut buf = Vec::new();
    f.take(TAIL_BYTES).read_to_end(&mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf);
    let line = text.lines().rev().map(str::trim).find(|l| !l.is_empty())?;
    Some(line.chars().take(MESSAGE_CHARS).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_strictly_increases_and_echoes_the_token() {
        let mut p = Progress::new(json!({"any": ["json"]}), Duration::from_secs(9));
        let a = p.next(None, &|s| s);
        let b = p.next(None, &|s| s);
        assert_eq!(a["params"]["progressToken"], json!({"any": ["json"]}));
        assert_eq!(a["params"]["total"], json!(9.0));
        assert!(b["params"]["progress"].as_f64() > a["params"]["progress"].as_f64());
        assert_eq!(a["params"]["message"], json!("running for 0 s"));
    }

    #[test]
    fn the_message_is_the_last_non_blank_line_cut_to_200() {
        let dir = std::env::temp_dir().join(format!("bashtools-progress-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("out");
        std::fs::write(&f, format!("first\n{}\n  \n\n", "é".repeat(300))).unwrap();
        assert_eq!(last_line(&f), Some("é".repeat(200)));
        std::fs::write(&f, " \n\n").unwrap();
        assert_eq!(last_line(&f), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
