//! Reading tool arguments out of JSON (contract §4) once `params::check`
//! has checked them against the tool's schema; each reader still names the
//! argument rather than panic, should a value get past the check.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::texts;

/// A required string.
pub(crate) fn required_str<'a>(
    args: &'a Map<String, Value>,
    name: &str,
) -> Result<&'a str, String> {
    match args.get(name) {
        None | Some(Value::Null) => Err(texts::missing(name)),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(texts::wrong_type(name, "a string")),
    }
}

/// An optional string (`null` counts as absent).
pub(crate) fn optional_str<'a>(
    args: &'a Map<String, Value>,
    name: &str,
) -> Result<Option<&'a str>, String> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(texts::wrong_type(name, "a string")),
    }
}

/// An optional boolean.
pub(crate) fn optional_bool(args: &Map<String, Value>, name: &str) -> Result<bool, String> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(texts::wrong_type(name, "a boolean")),
    }
}

pub(crate) use crate::api::timeout_secs;

/// A time in milliseconds (`yield_ms`): absent falls back to `default` (as
/// would zero, negative or non-numeric, which the check refuses first); a
/// larger one than `max` is cut down.
pub(crate) fn millis(
    args: &Map<String, Value>,
    name: &str,
    default: Duration,
    max: Duration,
) -> Duration {
    let ms = args.get(name).and_then(Value::as_f64);
    let chosen = match ms {
        Some(ms) if ms.is_finite() && ms > 0.0 => {
            Duration::try_from_secs_f64(ms / 1000.0).unwrap_or(max)
        }
        _ => default,
    };
    chosen.min(max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn secs(v: Value) -> Duration {
        let args = json!({ "timeout": v });
        timeout_secs(
            args.as_object().unwrap(),
            "timeout",
            Duration::from_secs(120),
            Duration::from_secs(600),
        )
    }

    #[test]
    fn a_yield_in_milliseconds_falls_back_or_is_cut() {
        let ms = |v: Value| {
            let args = json!({ "yield_ms": v });
            millis(
                args.as_object().unwrap(),
                "yield_ms",
                Duration::from_secs(1),
                Duration::from_secs(600),
            )
        };
        assert_eq!(ms(json!(250)), Duration::from_millis(250));
        assert_eq!(ms(json!(0)), Duration::from_secs(1));
        assert_eq!(ms(json!(null)), Duration::from_secs(1));
        assert_eq!(ms(json!(1e12)), Duration::from_secs(600));
    }

    #[test]
    fn a_timeout_falls_back_or_is_cut() {
        assert_eq!(secs(json!(5)), Duration::from_secs(5));
        assert_eq!(secs(json!(1.5)), Duration::from_millis(1500));
        assert_eq!(secs(json!(0)), Duration::from_secs(120));
        assert_eq!(secs(json!(-3)), Duration::from_secs(120));
        assert_eq!(secs(json!("soon")), Duration::from_secs(120));
        assert_eq!(secs(json!("30")), Duration::from_secs(30));
        assert_eq!(secs(json!(1e300)), Duration::from_secs(600));
        assert_eq!(secs(json!(null)), Duration::from_secs(120));
        assert_eq!(secs(json!([1])), Duration::from_secs(120));
    }
}
