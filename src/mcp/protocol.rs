//! Protocol versions and the two ways a client opens: the classic
//! `initialize` handshake, and the stateless 2026-07-28 form in which every
//! request names its version in `params._meta`.
//!
//! A request whose `_meta` names `2026-07-28` is served statelessly
//! (its result carries `resultType` and the server's identity in `_meta`),
//! whether or not `initialize` was ever sent; a request without it is
//! classic and needs the handshake first.

use serde_json::{json, Map, Value};

use super::jsonrpc::{RpcError, INVALID_PARAMS, UNSUPPORTED_PROTOCOL_VERSION};

/// The versions of the `initialize` handshake, oldest first.
pub const CLASSIC_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The stateless revision.
pub const STATELESS_VERSION: &str = "2026-07-28";

pub(crate) const META_VERSION_KEY: &str = META_VERSION;
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// Every version served, newest first (what `server/discover` and `-32022`
/// list).
pub(crate) fn supported_versions() -> Vec<&'static str> {
    let mut v = vec![STATELESS_VERSION];
    v.extend(CLASSIC_VERSIONS.iter().rev());
    v
}

/// The version an `initialize` answers: the client's when it is a classic
/// one we speak, else the newest classic one (the client then decides
/// whether it can go on).
pub(crate) fn negotiate(requested: Option<&str>) -> &'static str {
    CLASSIC_VERSIONS
        .iter()
        .find(|v| Some(**v) == requested)
        .copied()
        .unwrap_or(CLASSIC_VERSIONS[CLASSIC_VERSIONS.len() - 1])
}

/// The severities of `notifications/message`, least severe first (RFC 5424).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl Level {
    pub(crate) fn parse(s: &str) -> Option<Level> {
        Some(match s {
            "debug" => Level::Debug,
            "info" => Level::Info,
            "notice" => Level::Notice,
            "warning" => Level::Warning,
            "error" => Level::Error,
            "critical" => Level::Critical,
            "alert" => Level::Alert,
            "emergency" => Level::Emergency,
            _ => return None,
        })
    }

    /// Whether a message of level `info` (all of ours) passes this threshold.
    pub(crate) fn hears_info(self) -> bool {
        self <= Level::Info
    }
}

fn bad_level(level: &Value) -> RpcError {
    RpcError::new(
        INVALID_PARAMS,
        format!("Invalid params: unknown log level {level}"),
    )
}

/// A log level argument (`logging/setLevel`, `_meta` logLevel).
pub(crate) fn level(value: &Value) -> Result<Level, RpcError> {
    value
        .as_str()
        .and_then(Level::parse)
        .ok_or_else(|| bad_level(value))
}

/// How one request is to be served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// After (or needing) the `initialize` handshake.
    Classic,
    /// Self-contained 2026-07-28 request; `log` is the level its `_meta`
    /// asked for. Without one, no `notifications/message` may be sent for
    /// it (2026-07-28 basic/utilities: the client opts in per request).
    Stateless { log: Option<Level> },
}

/// Whether results carry `structuredContent` and tools an `outputSchema`:
/// from protocol version 2025-06-18 on, which introduced them (every
/// stateless request speaks 2026-07-28). `classic`: the version the
/// handshake agreed on.
pub(crate) fn structured(era: Era, classic: Option<&str>) -> bool {
    match era {
        Era::Stateless { .. } => true,
        // Versions are dates: they sort as strings.
        Era::Classic => classic.is_some_and(|v| v >= "2025-06-18"),
    }
}

/// The era of a request, from its `params._meta`.
///
/// # Errors
/// `-32022` for a version we do not speak (with `supported` and
/// `requested` in its data); `-32602` for a stateless request without
/// client capabilities or with a bad log level.
pub(crate) fn era(params: &Map<String, Value>) -> Result<Era, RpcError> {
    let Some(meta) = params.get("_meta").and_then(Value::as_object) else {
        return Ok(Era::Classic);
    };
    let Some(version) = meta.get(META_VERSION) else {
        return Ok(Era::Classic);
    };
    let requested = version.as_str().unwrap_or_default();
    if CLASSIC_VERSIONS.contains(&requested) {
        // A classic version has no stateless form: the handshake decides.
        return Ok(Era::Classic);
    }
    if requested != STATELESS_VERSION {
        return Err(RpcError::new(
            UNSUPPORTED_PROTOCOL_VERSION,
            format!(
                "Unsupported protocol version {version}: this server speaks {}",
                supported_versions().join(", ")
            ),
        )
        .with_data(json!({"supported": supported_versions(), "requested": version})));
    }
    if !meta.get(META_CAPABILITIES).is_some_and(Value::is_object) {
        return Err(RpcError::new(
            INVALID_PARAMS,
            format!("Invalid params: _meta must carry {META_CAPABILITIES} (an object) with {META_VERSION}"),
        ));
    }
    let log = match meta.get(META_LOG_LEVEL) {
        None | Some(Value::Null) => None,
        Some(l) => Some(level(l)?),
    };
    Ok(Era::Stateless { log })
}

/// Who we are.
pub(crate) fn server_info() -> Value {
    json!({"name": "bashtools", "title": "bashtools", "version": env!("CARGO_PKG_VERSION")})
}

/// What we offer: tools (a fixed list) and log messages (the notifications).
pub(crate) fn capabilities() -> Value {
    json!({
        "tools": {"listChanged": false},
        "logging": {},
        // Claude Code's channels: task notifications as events that wake
        // an idle agent (`inbox.rs`).
        "experimental": {"claude/channel": {}},
    })
}

/// Whether `client_info` (`clientInfo` of `initialize`, or of a stateless
/// request's `_meta`) names Claude Code, the one client that takes
/// channel events.
pub(crate) fn is_claude_code(client_info: Option<&Value>) -> bool {
    client_info
        .and_then(|i| i.get("name"))
        .and_then(Value::as_str)
        .is_some_and(|name| name == "claude-code" || name.starts_with("claude-code/"))
}

/// The result of `initialize`.
pub(crate) fn initialize_result(version: &str, instructions: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": capabilities(),
        "serverInfo": server_info(),
        "instructions": instructions,
    })
}

/// How long a client may keep `server/discover` and `tools/list`: the
/// tools never change while the process lives, but a new process may be
/// configured differently.
const TTL_MS: u64 = 3_600_000;

/// The result of `server/discover` (2026-07-28), before [`stateless`].
pub(crate) fn discover_result(instructions: &str) -> Value {
    let mut capabilities = capabilities();
    // Extensions exist from 2026-07-28 on: only here.
    capabilities["extensions"] = json!({ super::tasks::EXTENSION: {} });
    json!({
        "supportedVersions": supported_versions(),
        "capabilities": capabilities,
        "instructions": instructions,
        "ttlMs": TTL_MS,
        "cacheScope": "private",
    })
}

/// The cache fields 2026-07-28 requires on `tools/list`.
pub(crate) fn cacheable(mut result: Value) -> Value {
    result["ttlMs"] = json!(TTL_MS);
    result["cacheScope"] = json!("private");
    result
}

/// A `CreateTaskResult` in the stateless form (`resultType: "task"`).
pub(crate) fn as_task(created: Value) -> Value {
    let mut r = stateless(created);
    r["resultType"] = json!("task");
    r
}

/// A result in the stateless form: `resultType` (required) and the
/// server's identity in `_meta` (recommended on every result).
pub(crate) fn stateless(mut result: Value) -> Value {
    result["resultType"] = json!("complete");
    result["_meta"] = json!({ META_SERVER_INFO: server_info() });
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(m: Value) -> Map<String, Value> {
        json!({ "_meta": m }).as_object().unwrap().clone()
    }

    #[test]
    fn versions_are_negotiated() {
        for v in CLASSIC_VERSIONS {
            assert_eq!(negotiate(Some(v)), v);
        }
        assert_eq!(negotiate(Some("1999-01-01")), "2025-11-25");
        assert_eq!(negotiate(Some(STATELESS_VERSION)), "2025-11-25");
        assert_eq!(negotiate(None), "2025-11-25");
    }

    #[test]
    fn the_era_comes_from_meta() {
        assert_eq!(era(&Map::new()), Ok(Era::Classic));
        let ok = meta(json!({META_VERSION: STATELESS_VERSION, META_CAPABILITIES: {}}));
        assert_eq!(era(&ok), Ok(Era::Stateless { log: None }));
        let logged = meta(
            json!({META_VERSION: STATELESS_VERSION, META_CAPABILITIES: {}, META_LOG_LEVEL: "debug"}),
        );
        assert_eq!(
            era(&logged),
            Ok(Era::Stateless {
                log: Some(Level::Debug)
            })
        );
        let bad = meta(json!({META_VERSION: "2099-01-01", META_CAPABILITIES: {}}));
        let e = era(&bad).unwrap_err();
        assert_eq!(e.code, UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(e.data.unwrap()["requested"], "2099-01-01");
        let no_caps = meta(json!({META_VERSION: STATELESS_VERSION}));
        assert_eq!(era(&no_caps).unwrap_err().code, INVALID_PARAMS);
    }

    #[test]
    fn levels_are_ordered() {
        assert!(Level::Debug.hears_info());
        assert!(Level::Info.hears_info());
        assert!(!Level::Warning.hears_info());
        assert_eq!(Level::parse("loud"), None);
    }
}
