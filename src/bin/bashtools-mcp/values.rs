//! The values flags take, each read with an error that names the flag as
//! it was written: seconds, counts, numbers. The lowest module of the
//! binary: the flags, the checks and the parser all use it.

use std::time::Duration;

/// A bad command line: one line naming the flag as it was written; exit 2.
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

/// Seconds as the flags take them: `120`, `0.5`.
pub(crate) fn secs_text(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", d.as_secs())
    } else {
        format!("{s}")
    }
}

/// A number of seconds, zero allowed (`--kill-grace 0`: no grace).
pub(crate) fn secs(flag: &str, v: &str) -> Result<Duration, UsageError> {
    v.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| UsageError(format!("{flag} wants a number of seconds, not {v:?}")))
}

/// A number of seconds above zero (a timeout of 0 would end every call
/// at once).
pub(crate) fn positive_secs(flag: &str, v: &str) -> Result<Duration, UsageError> {
    let d = secs(flag, v)?;
    if d.is_zero() {
        return Err(UsageError(format!(
            "{flag} wants a number of seconds above 0, not {v:?}"
        )));
    }
    Ok(d)
}

pub(crate) fn number<T: std::str::FromStr>(
    flag: &str,
    v: &str,
    what: &str,
) -> Result<T, UsageError> {
    v.parse::<T>()
        .map_err(|_| UsageError(format!("{flag} wants {what}, not {v:?}")))
}

/// A count above zero (a limit of 0 would leave nothing).
pub(crate) fn positive<T: std::str::FromStr + Default + PartialEq>(
    flag: &str,
    v: &str,
    what: &str,
) -> Result<T, UsageError> {
    let n: T = number(flag, v, what)?;
    if n == T::default() {
        return Err(UsageError(format!(
            "{flag} wants {what} above 0, not {v:?}"
        )));
    }
    Ok(n)
}
