//! What the command line asks for, checked as a whole once every flag is
//! read: timeouts against the caps they are cut to, and the builder's
//! errors said with the flag that caused them, as the user wrote it.

use std::time::Duration;

use bashtools::defaults as d;

use crate::values::{secs_text, UsageError};

/// The timeouts as given (`None`: the default), checked against each other
/// once every flag is read.
#[derive(Default)]
pub(crate) struct Timeouts {
    pub default: Option<(String, Duration)>,
    pub max: Option<(String, Duration)>,
    pub block: Option<(String, Duration)>,
    pub monitor: Option<(String, Duration)>,
    pub monitor_min: Option<(String, Duration)>,
    pub monitor_max: Option<(String, Duration)>,
}

impl Timeouts {
    /// `Err` for a timeout asked for above the cap it would be cut to,
    /// naming both flags.
    pub(crate) fn check(&self) -> Result<(), UsageError> {
        let pick = |given: &Option<(String, Duration)>, flag: &str, default: Duration| {
            given
                .clone()
                .map(|(written, d)| (written, d, ""))
                .unwrap_or((flag.to_string(), default, " (its default)"))
        };
        let pairs = [
            (
                pick(&self.default, "--default-timeout", d::DEFAULT_TIMEOUT),
                pick(&self.max, "--max-timeout", d::MAX_TIMEOUT),
            ),
            (
                pick(&self.block, "--block-timeout", d::BLOCK_TIMEOUT),
                pick(&self.max, "--max-timeout", d::MAX_TIMEOUT),
            ),
            (
                pick(
                    &self.monitor_min,
                    "--monitor-min-timeout",
                    d::MONITOR_MIN_TIMEOUT,
                ),
                pick(
                    &self.monitor_max,
                    "--monitor-max-timeout",
                    d::MONITOR_MAX_TIMEOUT,
                ),
            ),
            (
                pick(&self.monitor, "--monitor-timeout", d::MONITOR_TIMEOUT),
                pick(
                    &self.monitor_max,
                    "--monitor-max-timeout",
                    d::MONITOR_MAX_TIMEOUT,
                ),
            ),
        ];
        for ((low, low_d, low_note), (high, high_d, high_note)) in pairs {
            // Only a timeout the command line asked for is wrong above
            // its cap; a default above a cap given lower is cut to it.
            if low_d > high_d && low_note.is_empty() {
                return Err(UsageError(format!(
                    "{low} {}{low_note} is above {high} {}{high_note}",
                    secs_text(low_d),
                    secs_text(high_d)
                )));
            }
        }
        Ok(())
    }
}

/// A build error, said with the flag that caused it as it was written.
pub(crate) fn build_error(e: &bashtools::Error, written: &Written) -> String {
    use bashtools::ErrorKind as K;
    let flag = |name: &str| {
        written
            .0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, w)| w.clone())
    };
    match e.kind() {
        K::WorkingDirectoryMissing | K::WorkingDirectoryNotADirectory => match flag("--working-directory") {
            Some(w) => format!("{w}: {e}"),
            None => e.to_string(),
        },
        K::InteractiveGated => format!(
            "{} beside {} needs --interactive-ungated: what is typed into a running program passes no gate",
            flag("--interactive").unwrap_or_else(|| "--interactive".into()),
            flag("--allow").unwrap_or_else(|| "--allow".into()),
        ),
        K::SandboxUnsupported | K::Sandbox => {
            let w = ["--sandbox", "--sandbox-allow-write", "--sandbox-allow-network", "--sandbox-best-effort"]
                .iter()
                .find_map(|n| flag(n))
                .unwrap_or_else(|| "--sandbox".into());
            format!("{w}: {e}")
        }
        K::LimitInvalid | K::LimitUnavailable => {
            let name = match e.option() {
                Some("memory_limit") => "--memory-limit",
                Some("cpu_limit") => "--cpu-limit",
                _ => "--pids-limit",
            };
            let w = flag(name).unwrap_or_else(|| name.into());
            // The library names its option (`memory_limit …`): the flag
            // as written takes its place.
            let text = e.to_string();
            let rest = e.option().and_then(|o| text.strip_prefix(o)).unwrap_or(&text);
            format!("{w}{rest}")
        }
        K::OutputDirectory => match flag("--output-root") {
            Some(w) => format!("{w}: {e}"),
            None => e.to_string(),
        },
        _ => e.to_string(),
    }
}

/// Each flag given, as it was written (`-h`, `--max-timeout`).
#[derive(Default)]
pub(crate) struct Written(pub(crate) Vec<(String, String)>);
