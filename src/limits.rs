//! Per-command budgets (memory, processes, CPU) and what an ended command
//! cost. A leaf: it imports nothing of the crate.
//!
//! The limits are applied by the cgroup each command runs in (`os/budget.rs`
//! says how, on cgroup v2 and on the v1 controllers of a hybrid host); the
//! cost is read from the same cgroup once the command's leader has ended.

use std::fmt;
use std::time::Duration;

/// The default of [`Builder::pids_limit`](crate::Builder::pids_limit) where
/// cgroups can be made: a fork bomb fails inside its own tree.
pub const DEFAULT_PIDS_LIMIT: u64 = 4096;

/// The most pids a Linux kernel can have (`PID_MAX_LIMIT` on 64-bit):
/// the largest process limit accepted.
const PID_MAX_LIMIT: u64 = 4 << 20;

/// The smallest memory limit accepted (1 MiB): below it not even bash starts.
pub(crate) const MIN_MEMORY_LIMIT: u64 = 1 << 20;

/// The budget of one command's whole tree. Every field is optional; `None`
/// leaves that resource unlimited (for the process count: the builder's
/// default).
///
/// ```
/// use bashtools::Limits;
/// let limits = Limits::new().memory(512 << 20).pids(100).cpu(1.5);
/// assert_eq!(limits.memory_bytes(), Some(512 << 20));
/// assert_eq!(Limits::parse_memory("512M"), Ok(512 << 20));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Limits {
    pub(crate) memory: Option<u64>,
    pub(crate) pids: Option<u64>,
    /// In thousandths of a CPU.
    pub(crate) cpu: Option<u64>,
}

impl Limits {
    /// No limit set.
    pub fn new() -> Limits {
        Limits::default()
    }
    /// At most `bytes` of memory for the whole tree, no swap: past it the
    /// tree is stopped and the result says "Out of memory".
    pub fn memory(mut self, bytes: u64) -> Limits {
        self.memory = Some(bytes);
        self
    }
    /// At most `n` processes and threads at once (0: none).
    pub fn pids(mut self, n: u64) -> Limits {
        self.pids = Some(n);
        self
    }
    /// At most `cpus` CPUs' worth of time (0.5: half of one), to a
    /// thousandth of a CPU.
    pub fn cpu(mut self, cpus: f64) -> Limits {
        // NaN and negatives become 0, refused when the limits are checked.
        self.cpu = Some((cpus * 1000.0).round().max(0.0) as u64);
        self
    }
    /// The memory limit, in bytes.
    pub fn memory_bytes(&self) -> Option<u64> {
        self.memory
    }
    /// The process limit (`Some(0)`: none).
    pub fn pids_max(&self) -> Option<u64> {
        self.pids
    }
    /// The CPU limit, in CPUs.
    pub fn cpus(&self) -> Option<f64> {
        self.cpu.map(|m| m as f64 / 1000.0)
    }

    /// `512M`, `2G`, `65536K` or a number of bytes. Suffixes K, M, G (and
    /// their lower case) count in 1024s. Refuses what is not one, and
    /// anything below 1 MiB.
    pub fn parse_memory(text: &str) -> Result<u64, ParseLimitError> {
        let t = text.trim();
        let (digits, shift) = match t.char_indices().last() {
            Some((i, 'K' | 'k')) => (&t[..i], 10),
            Some((i, 'M' | 'm')) => (&t[..i], 20),
            Some((i, 'G' | 'g')) => (&t[..i], 30),
            _ => (t, 0),
        };
        let error = |problem| ParseLimitError::new(text, problem);
        let n: u64 = digits
            .parse()
            .ok()
            .filter(|_| digits.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| error(LimitProblem::NotASize))?;
        let bytes = n
            .checked_mul(1 << shift)
            .ok_or_else(|| error(LimitProblem::TooLarge))?;
        Limits::check_memory(bytes).map_err(error)?;
        Ok(bytes)
    }

    /// `1.5`, `0.2`, `4`: a positive number of CPUs.
    pub fn parse_cpu(text: &str) -> Result<f64, ParseLimitError> {
        let error = |problem| ParseLimitError::new(text, problem);
        let cpus: f64 = text
            .trim()
            .parse()
            .map_err(|_| error(LimitProblem::NotACpuCount))?;
        Limits::check_cpu(cpus).map_err(error)?;
        Ok(cpus)
    }

    /// What is wrong with `bytes` as a memory limit, if anything.
    fn check_memory(bytes: u64) -> Result<(), LimitProblem> {
        if bytes < MIN_MEMORY_LIMIT {
            return Err(LimitProblem::MemoryTooSmall);
        }
        Ok(())
    }

    /// What is wrong with `cpus` as a CPU limit, if anything.
    fn check_cpu(cpus: f64) -> Result<(), LimitProblem> {
        // 1 ms of a 100 ms period is the least the kernel takes.
        if !cpus.is_finite() || !(0.01..=1_000_000.0).contains(&cpus) {
            return Err(LimitProblem::CpuOutOfRange);
        }
        Ok(())
    }

    /// What is wrong with `n` as a process limit, if anything: above the
    /// kernel's most pids (`PID_MAX_LIMIT`), `pids.max` refuses it, and
    /// every command would fail to start.
    fn check_pids(n: u64) -> Result<(), LimitProblem> {
        if n > PID_MAX_LIMIT {
            return Err(LimitProblem::PidsOutOfRange);
        }
        Ok(())
    }

    /// The first invalid value, with the option that set it.
    pub(crate) fn check(&self) -> Result<(), LimitError> {
        if let Some(n) = self.pids {
            Limits::check_pids(n).map_err(|p| {
                LimitError::invalid("pids_limit", ParseLimitError::new(&n.to_string(), p))
            })?;
        }
        if let Some(m) = self.memory {
            Limits::check_memory(m).map_err(|p| {
                LimitError::invalid("memory_limit", ParseLimitError::new(&m.to_string(), p))
            })?;
        }
        if let Some(c) = self.cpus() {
            Limits::check_cpu(c).map_err(|p| {
                LimitError::invalid("cpu_limit", ParseLimitError::new(&c.to_string(), p))
            })?;
        }
        Ok(())
    }

    /// These limits with `over`'s set fields in place of ours.
    pub(crate) fn overridden_by(self, over: &Limits) -> Limits {
        Limits {
            memory: over.memory.or(self.memory),
            pids: over.pids.or(self.pids),
            cpu: over.cpu.or(self.cpu),
        }
    }
}

/// What an ended command cost, and the limits it ran into.
///
/// Filled by `os/` when the leader is reaped (all but `wall`), and by the
/// shells, which know when it started (`wall`).
///
/// `cpu` and `peak_memory` are the whole tree's where the command ran in a
/// cgroup with the controller that counts them ([`Usage::of_tree`]); else
/// the leader's and those of its children it waited for (`getrusage(2)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub(crate) wall: Duration,
    pub(crate) cpu: Option<Duration>,
    pub(crate) peak_memory: Option<u64>,
    pub(crate) cpu_of_tree: bool,
    pub(crate) memory_of_tree: bool,
    pub(crate) out_of_memory: Option<u64>,
    pub(crate) pids_reached: Option<u64>,
}

impl Usage {
    /// The memory limit (bytes) the tree was stopped at, if it ran out:
    /// every process of it was killed.
    pub fn out_of_memory(&self) -> Option<u64> {
        self.out_of_memory
    }
    /// The process limit the tree reached, if it did: some of its forks
    /// failed.
    pub fn pids_limit_reached(&self) -> Option<u64> {
        self.pids_reached
    }
    /// From its start to its leader's end.
    pub fn wall(&self) -> Duration {
        self.wall
    }
    /// CPU time, user plus system (`None`: unknown, its status was lost).
    pub fn cpu(&self) -> Option<Duration> {
        self.cpu
    }
    /// The most memory it held at once, in bytes.
    pub fn peak_memory(&self) -> Option<u64> {
        self.peak_memory
    }
    /// Whether [`cpu`](Self::cpu) and [`peak_memory`](Self::peak_memory)
    /// count every process of the tree (read from its cgroup), rather than
    /// the leader and the children it waited for.
    pub fn of_tree(&self) -> bool {
        self.cpu_of_tree && self.memory_of_tree
    }
}

/// Why commands get no process limit
/// ([`BashTools::pids_limit`](crate::BashTools::pids_limit)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoPidsLimit {
    /// A process limit of 0 turned it off.
    TurnedOff,
    /// No cgroup with the pids controller can be made here; the text says
    /// why.
    Unavailable(String),
}

impl fmt::Display for NoPidsLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoPidsLimit::TurnedOff => f.write_str("pids_limit is 0"),
            NoPidsLimit::Unavailable(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for NoPidsLimit {}

/// Why a text (or a value) is not a limit: what was given, and the
/// problem with it. `Display` says both, e.g. `'12x' is not a size (a
/// number with K, M or G, e.g. 512M)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseLimitError {
    value: String,
    problem: LimitProblem,
}

/// What is wrong with a limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitProblem {
    /// Not a number with an optional K, M or G.
    NotASize,
    /// More bytes than a `u64` holds.
    TooLarge,
    /// Not a number of CPUs.
    NotACpuCount,
    /// Below the smallest memory limit, 1 MiB.
    MemoryTooSmall,
    /// Not a number of CPUs between 0.01 and a million.
    CpuOutOfRange,
    /// More processes than the kernel can ever have (4 194 304).
    PidsOutOfRange,
}

impl ParseLimitError {
    fn new(value: &str, problem: LimitProblem) -> ParseLimitError {
        ParseLimitError {
            value: value.to_string(),
            problem,
        }
    }

    /// The value as it was given.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// What is wrong with it.
    pub fn problem(&self) -> LimitProblem {
        self.problem
    }
}

impl fmt::Display for ParseLimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = match self.problem {
            LimitProblem::NotASize => "is not a size (a number with K, M or G, e.g. 512M)",
            LimitProblem::TooLarge => "is too large",
            LimitProblem::NotACpuCount => "is not a number of CPUs (e.g. 1.5)",
            LimitProblem::MemoryTooSmall => "is out of range: the smallest memory limit is 1M",
            LimitProblem::CpuOutOfRange => {
                "is out of range: a CPU limit is a positive number of CPUs, at least 0.01"
            }
            LimitProblem::PidsOutOfRange => {
                "is out of range: the kernel never has more than 4194304 processes (0 = no limit)"
            }
        };
        write!(f, "'{}' {why}", self.value)
    }
}

impl std::error::Error for ParseLimitError {}

/// Why the limits asked for cannot be had, and the option that asked:
/// carried from the budget up to the builder's [`Error`](crate::Error).
#[derive(Debug)]
pub(crate) struct LimitError {
    pub(crate) option: &'static str,
    pub(crate) reason: LimitReason,
}

/// The two ways a limit fails at build.
#[derive(Debug)]
pub(crate) enum LimitReason {
    /// Its value is out of range.
    Invalid(ParseLimitError),
    /// It cannot be applied on this host (no cgroup, no controller: why).
    Unavailable(String),
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = self.option;
        match &self.reason {
            LimitReason::Invalid(why) => write!(f, "{o}: {why}"),
            LimitReason::Unavailable(why) => write!(f, "{o} cannot be applied: {why}"),
        }
    }
}

impl LimitError {
    pub(crate) fn invalid(option: &'static str, error: ParseLimitError) -> LimitError {
        LimitError {
            option,
            reason: LimitReason::Invalid(error),
        }
    }

    pub(crate) fn unavailable(option: &'static str, why: String) -> LimitError {
        LimitError {
            option,
            reason: LimitReason::Unavailable(why),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_read_with_their_suffixes() {
        assert_eq!(Limits::parse_memory("512M"), Ok(512 << 20));
        assert_eq!(Limits::parse_memory("2g"), Ok(2 << 30));
        assert_eq!(Limits::parse_memory("2048K"), Ok(2 << 20));
        assert_eq!(Limits::parse_memory("1048576"), Ok(1 << 20));
        for bad in ["0", "12Q", "-5M", "", "M", "1.5G", "512K", "1 M", "+5M"] {
            assert!(Limits::parse_memory(bad).is_err(), "{bad}");
        }
        let e = Limits::parse_memory("99999999999G").unwrap_err();
        assert_eq!(e.problem(), LimitProblem::TooLarge);
        assert_eq!(e.value(), "99999999999G");
        assert_eq!(e.to_string(), "'99999999999G' is too large");
    }

    #[test]
    fn cpus_are_positive_numbers() {
        assert_eq!(Limits::parse_cpu("1.5"), Ok(1.5));
        assert_eq!(Limits::parse_cpu("0.2"), Ok(0.2));
        for bad in ["0", "-1", "nan", "inf", "x", "", "0.001"] {
            assert!(Limits::parse_cpu(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_commands_limits_replace_the_defaults_field_by_field() {
        let base = Limits::new().memory(1 << 30).pids(4096);
        let over = Limits::new().pids(10).cpu(0.5);
        assert_eq!(
            base.overridden_by(&over),
            Limits::new().memory(1 << 30).pids(10).cpu(0.5)
        );
    }
}
