//! Deadlines that cannot overflow. `Instant::now() + d` panics when `d` is
//! huge (`Duration::MAX`, a timeout of 1e300 seconds from a tool call, a
//! server flag): every deadline of the crate is made here instead, and a
//! duration too long to be a point in time means "no deadline".

use std::time::{Duration, Instant};

/// `now + d`, or `None` (no deadline) when that is past what an `Instant`
/// can hold.
pub(crate) fn after(d: Duration) -> Option<Instant> {
    Instant::now().checked_add(d)
}

/// `at + d`, or the furthest point in time an `Instant` can hold near
/// there (some 68 years on), for a deadline that must exist (a monitor's
/// batch window) however long `d` is.
pub(crate) fn saturating_add(at: Instant, d: Duration) -> Instant {
    at.checked_add(d)
        .or_else(|| at.checked_add(Duration::from_secs(1 << 31)))
        .unwrap_or(at)
}

/// The earlier of two optional deadlines, where `None` is "never".
pub(crate) fn min(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (Some(x), None) | (None, Some(x)) => Some(x),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_duration_is_no_deadline_not_a_panic() {
        assert_eq!(after(Duration::MAX), None);
        assert!(after(Duration::from_secs(1)).is_some());
    }

    #[test]
    fn a_saturating_deadline_is_far_but_exists() {
        let now = Instant::now();
        assert!(saturating_add(now, Duration::MAX) > now + Duration::from_secs(1 << 30));
    }

    #[test]
    fn none_is_later_than_any_deadline() {
        let t = Instant::now();
        assert_eq!(min(Some(t), None), Some(t));
        assert_eq!(min(None, None), None);
    }
}
