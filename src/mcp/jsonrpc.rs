//! JSON-RPC 2.0 messages as MCP uses them: one JSON object per line, no
//! batches, ids that are strings or numbers (never `null`).
//!
//! Parsing is strict and total: every line is either a message or the error
//! response it deserves, so a bad line costs one answer, never the server.

use serde_json::{json, Map, Value};

/// The line is not JSON (or not UTF-8).
pub(crate) const PARSE_ERROR: i64 = -32700;
/// JSON, but not a request: not an object, a batch, no `jsonrpc` or `method`.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// A method this server does not have.
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// A known method with bad `params` (an unknown tool, a bad log level).
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// Something went wrong on our side (a thread could not start).
pub(crate) const INTERNAL_ERROR: i64 = -32603;
/// MCP 2026-07-28: the `_meta` protocol version is not one we speak.
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub(crate) fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub(crate) fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }
}

/// One message from the client.
#[derive(Debug, PartialEq)]
pub(crate) enum Message {
    /// Has an id: expects exactly one response (unless cancelled).
    Request {
        id: Value,
        method: String,
        params: Map<String, Value>,
    },
    /// No id: must never be answered.
    Notification {
        method: String,
        params: Map<String, Value>,
    },
    /// A response to a request of ours (`elicitation/create`): its id and
    /// its `result`, or its `error`.
    Response {
        id: Value,
        answer: Result<Value, Value>,
    },
}

/// A line that is not a message, and the id its error response names
/// (`null` when the id could not be read).
#[derive(Debug, PartialEq)]
pub(crate) struct Rejected {
    pub id: Value,
    pub error: RpcError,
}

fn reject(id: &Value, code: i64, message: &str) -> Rejected {
    Rejected {
        id: id.clone(),
        error: RpcError::new(code, message),
    }
}

/// Reads one line (without its newline) as a message.
pub(crate) fn parse(line: &[u8]) -> Result<Message, Rejected> {
    // `from_slice` checks UTF-8 too: invalid bytes are a parse error.
    let value: Value = serde_json::from_slice(line).map_err(|e| Rejected {
        id: Value::Null,
        error: RpcError::new(PARSE_ERROR, format!("Parse error: {e}")),
    })?;
    let obj = match value {
        Value::Object(obj) => obj,
        Value::Array(_) => return Err(reject(
            &Value::Null,
            INVALID_REQUEST,
            "Invalid request: batch arrays are not supported; send one JSON-RPC object per line",
        )),
        _ => {
            return Err(reject(
                &Value::Null,
                INVALID_REQUEST,
                "Invalid request: a message must be a JSON object",
            ))
        }
    };
    let id = match obj.get("id") {
        None => None,
        Some(id @ Value::String(_)) => Some(id.clone()),
        // A number is echoed as we read it: one that is not a whole number
        // within 64 bits would come back changed (`1e400`, a u64 + 1 read
        // as a float and rounded), and a client could not match it.
        Some(id @ Value::Number(n)) if n.is_i64() || n.is_u64() => Some(id.clone()),
        Some(Value::Number(_)) => {
            return Err(reject(
                &Value::Null,
                INVALID_REQUEST,
                "Invalid request: a numeric id must be a whole number that fits in 64 bits; send a larger one as a string",
            ))
        }
        Some(_) => {
            return Err(reject(
                &Value::Null,
                INVALID_REQUEST,
                "Invalid request: id must be a string or a number",
            ))
        }
    };
    let id_or_null = id.clone().unwrap_or(Value::Null);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(reject(
            &id_or_null,
            INVALID_REQUEST,
            "Invalid request: jsonrpc must be \"2.0\"",
        ));
    }
    let method = match obj.get("method") {
        Some(Value::String(m)) => m.clone(),
        None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => {
            let answer = match obj.get("result") {
                Some(result) => Ok(result.clone()),
                None => Err(obj.get("error").cloned().unwrap_or(Value::Null)),
            };
            return Ok(Message::Response {
                id: id_or_null,
                answer,
            });
        }
        None => {
            return Err(reject(
                &id_or_null,
                INVALID_REQUEST,
                "Invalid request: method is missing",
            ))
        }
        Some(_) => {
            return Err(reject(
                &id_or_null,
                INVALID_REQUEST,
                "Invalid request: method must be a string",
            ))
        }
    };
    let params = match obj.get("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p.clone(),
        Some(_) => {
            return Err(reject(
                &id_or_null,
                INVALID_PARAMS,
                "Invalid params: params must be an object",
            ))
        }
    };
    Ok(match id {
        Some(id) => Message::Request { id, method, params },
        None => Message::Notification { method, params },
    })
}

/// A result response.
pub(crate) fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response.
pub(crate) fn error(id: &Value, e: &RpcError) -> Value {
    let mut err = json!({"code": e.code, "message": e.message});
    if let Some(data) = &e.data {
        err["data"] = data.clone();
    }
    json!({"jsonrpc": "2.0", "id": id, "error": err})
}

/// A notification from the server.
pub(crate) fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// The key of a request id in tables: `1` and `"1"` are different ids.
pub(crate) fn id_key(id: &Value) -> String {
    id.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(line: &str) -> (Value, i64) {
        let r = parse(line.as_bytes()).unwrap_err();
        (r.id, r.error.code)
    }

    #[test]
    fn a_numeric_id_that_would_come_back_changed_is_refused() {
        for line in [
            &br#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#[..],
            br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
        ] {
            let r = parse(line).unwrap_err();
            assert_eq!((r.id, r.error.code), (Value::Null, INVALID_REQUEST));
        }
        for line in [
            &br#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#[..],
            br#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"}"#,
        ] {
            assert!(matches!(parse(line), Ok(Message::Request { .. })));
        }
        // Past what a float holds: not JSON serde_json reads at all.
        let r = parse(br#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#).unwrap_err();
        assert_eq!(r.id, Value::Null);
    }

    #[test]
    fn requests_and_notifications() {
        let m = parse(br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#).unwrap();
        assert_eq!(
            m,
            Message::Request {
                id: json!(3),
                method: "ping".into(),
                params: Map::new()
            }
        );
        let m = parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert!(matches!(m, Message::Notification { .. }));
        let m = parse(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#).unwrap();
        assert_eq!(
            m,
            Message::Response {
                id: json!("a"),
                answer: Ok(json!({}))
            }
        );
    }

    #[test]
    fn every_bad_line_has_its_code() {
        assert_eq!(code("not json"), (Value::Null, PARSE_ERROR));
        assert_eq!(code("[1,2]"), (Value::Null, INVALID_REQUEST));
        assert_eq!(code("[]"), (Value::Null, INVALID_REQUEST));
        assert_eq!(code("42"), (Value::Null, INVALID_REQUEST));
        assert_eq!(
            code(r#"{"id":1,"method":"ping"}"#),
            (json!(1), INVALID_REQUEST)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1}"#),
            (json!(1), INVALID_REQUEST)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            (Value::Null, INVALID_REQUEST)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":7}"#),
            (json!(1), INVALID_REQUEST)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#),
            (json!(1), INVALID_PARAMS)
        );
        let bad_utf8 = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}";
        assert_eq!(parse(bad_utf8).unwrap_err().error.code, PARSE_ERROR);
    }

    #[test]
    fn ids_of_different_types_are_different_keys() {
        assert_ne!(id_key(&json!(1)), id_key(&json!("1")));
    }
}
