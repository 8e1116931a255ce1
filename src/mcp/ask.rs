//! Asking the person through the client (README, "Policy"): `elicitation/create`.
//!
//! In a classic session whose client declared `elicitation`, the call's
//! thread sends the request (ids of our own, `bashtools-ask-N`) and waits
//! for the response the reader hands over by id, or `approval_timeout`;
//! nothing else waits with it. In the stateless revision the server never
//! sends a request: the call's result is an `InputRequiredResult` carrying
//! the same question and a `requestState`, and the client retries the call
//! with the answer and that state ([`Stamp`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crossbeam_channel::{bounded, Sender};
use hmac::{Hmac, Mac};
use parking_lot::Mutex;
use serde_json::{json, Value};
use sha2::Sha256;

use super::writer::Writer;
use crate::Approval;

/// How the person answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    Once,
    Always,
    /// Declined, cancelled, denied, an error, or a malformed answer.
    Denied,
    /// No answer in time.
    TimedOut,
}

/// The `params` of `elicitation/create` for `approval` (both eras).
pub(crate) fn question(approval: &Approval) -> Value {
    let mut message = format!(
        "Run this command?\n\n{}\n\nNeeds approval: {}",
        approval.line,
        approval.words()
    );
    if let Some(why) = &approval.justification {
        message.push_str(&format!("\nWhy: {why}"));
    }
    let prefix = approval.suggested_prefix.join(" ");
    let mut choices = vec![json!({"const": "once", "title": "Allow once"})];
    if !prefix.is_empty() {
        choices.push(
            json!({"const": "always", "title": format!("Allow always for this session: {prefix}")}),
        );
    }
    choices.push(json!({"const": "deny", "title": "Deny"}));
    json!({
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {"decision": {"type": "string", "oneOf": choices}},
            "required": ["decision"],
        },
    })
}

/// Reads an `ElicitResult`: `accept` with `once` or `always` runs the
/// line; everything else denies it.
pub(crate) fn answer_of(result: &Value) -> Answer {
    if result.get("action").and_then(Value::as_str) != Some("accept") {
        return Answer::Denied;
    }
    match result
        .get("content")
        .and_then(|c| c.get("decision"))
        .and_then(Value::as_str)
    {
        Some("once") => Answer::Once,
        Some("always") => Answer::Always,
        _ => Answer::Denied,
    }
}

/// Requests of ours waiting for the client's response.
#[derive(Default)]
pub(crate) struct Asks {
    next: AtomicU64,
    waiting: Mutex<HashMap<String, Sender<Result<Value, Value>>>>,
}

impl Asks {
    /// Sends `elicitation/create` with `params` and waits for the answer
    /// until `timeout`.
    pub(crate) fn ask(&self, out: &Writer, params: Value, timeout: Duration) -> Answer {
        let id = format!(
            "bashtools-ask-{}",
            self.next.fetch_add(1, Ordering::Relaxed) + 1
        );
        let (tx, rx) = bounded(1);
        self.waiting.lock().insert(id.clone(), tx);
        out.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": params}),
        );
        let got = rx.recv_deadline(Instant::now() + timeout);
        self.waiting.lock().remove(&id);
        match got {
            Ok(Ok(result)) => answer_of(&result),
            Ok(Err(_)) | Err(crossbeam_channel::RecvTimeoutError::Disconnected) => Answer::Denied,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => Answer::TimedOut,
        }
    }

    /// Hands a response to the call waiting for it; one nobody waits for
    /// (late, or not ours) is dropped.
    pub(crate) fn answered(&self, id: &Value, answer: Result<Value, Value>) {
        let Some(id) = id.as_str() else {
            return;
        };
        if let Some(tx) = self.waiting.lock().remove(id) {
            let _ = tx.send(answer);
        }
    }

    /// Ends every wait (the session is ending): each is denied.
    pub(crate) fn close(&self) {
        self.waiting.lock().clear();
    }
}

/// Signs and checks `requestState`s: HMAC-SHA256 under a key made at start
/// over the caller, the exact arguments, the suggested prefix and an
/// expiry, each state good once.
pub(crate) struct Stamp {
    key: [u8; 32],
    used: Mutex<HashMap<String, u64>>,
}

/// What a checked state vouches for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Vouched {
    pub suggested_prefix: Vec<String>,
}

impl Stamp {
    /// A stamp with a fresh random key; `None` when the system gives no
    /// randomness (the stateless ask is then off: such requests are told
    /// the client cannot ask).
    pub(crate) fn new() -> Option<Stamp> {
        let mut key = [0u8; 32];
        getrandom::getrandom(&mut key).ok()?;
        Some(Stamp {
            key,
            used: Mutex::new(HashMap::new()),
        })
    }

    fn mac(&self, payload: &[u8]) -> Vec<u8> {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key).expect("any key length");
        mac.update(payload);
        mac.finalize().into_bytes().to_vec()
    }

    /// A state for `caller`'s call with `arguments`, good for `ttl`.
    pub(crate) fn issue(
        &self,
        caller: &str,
        arguments: &Value,
        prefix: &[String],
        ttl: Duration,
    ) -> String {
        let mut nonce = [0u8; 16];
        let _ = getrandom::getrandom(&mut nonce);
        let payload = json!({
            "caller": caller,
            "arguments": arguments.to_string(),
            "prefix": prefix,
            "expires": now_secs().saturating_add(ttl.as_secs().max(1)),
            "nonce": hex(&nonce),
        })
        .to_string();
        format!(
            "{}.{}",
            hex(payload.as_bytes()),
            hex(&self.mac(payload.as_bytes()))
        )
    }

    /// Checks `state` for `caller`'s call with `arguments`, and uses it up.
    /// Any mismatch — altered, expired, for other arguments or another
    /// caller, already used — is `Err` with the reason.
    pub(crate) fn redeem(
        &self,
        state: &str,
        caller: &str,
        arguments: &Value,
    ) -> Result<Vouched, &'static str> {
        let (payload, mac) = state.split_once('.').ok_or("not a state of this server")?;
        let payload = unhex(payload).ok_or("not a state of this server")?;
        let mac = unhex(mac).ok_or("not a state of this server")?;
        let mut check = <Hmac<Sha256> as Mac>::new_from_slice(&self.key).expect("any key length");
        check.update(&payload);
        check
            .verify_slice(&mac)
            .map_err(|_| "altered, or not from this server")?;
        let v: Value =
            serde_json::from_slice(&payload).map_err(|_| "not a state of this server")?;
        let expires = v["expires"].as_u64().unwrap_or(0);
        let now = now_secs();
        if now > expires {
            return Err("expired");
        }
        if v["caller"].as_str() != Some(caller) {
            return Err("issued to another caller");
        }
        if v["arguments"].as_str() != Some(arguments.to_string().as_str()) {
            return Err("issued for other arguments");
        }
        let nonce = v["nonce"].as_str().unwrap_or_default().to_string();
        let mut used = self.used.lock();
        used.retain(|_, until| *until >= now);
        if used.insert(nonce, expires).is_some() {
            return Err("already used");
        }
        let suggested_prefix = v["prefix"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|w| w.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Vouched { suggested_prefix })
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_is_good_once_for_its_caller_and_arguments() {
        let stamp = Stamp::new().unwrap();
        let args = json!({"command": "git push"});
        let prefix = vec!["git".to_string(), "push".to_string()];
        let state = stamp.issue("c", &args, &prefix, Duration::from_secs(60));
        assert_eq!(
            stamp.redeem(&state, "other", &args),
            Err("issued to another caller")
        );
        assert_eq!(
            stamp.redeem(&state, "c", &json!({"command": "git push --force"})),
            Err("issued for other arguments")
        );
        assert_eq!(
            stamp.redeem(&state, "c", &args).unwrap().suggested_prefix,
            prefix
        );
        assert_eq!(stamp.redeem(&state, "c", &args), Err("already used"));
        // Any byte changed: refused.
        let fresh = stamp.issue("c", &args, &prefix, Duration::from_secs(60));
        for at in [0, fresh.len() / 2, fresh.len() - 1] {
            let mut bytes = fresh.clone().into_bytes();
            bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
            let altered = String::from_utf8(bytes).unwrap();
            assert!(stamp.redeem(&altered, "c", &args).is_err(), "{at}");
        }
        // Another server's key: refused.
        let other = Stamp::new().unwrap();
        assert!(other.redeem(&fresh, "c", &args).is_err());
        assert!(stamp.redeem(&fresh, "c", &args).is_ok());
    }

    #[test]
    fn answers_are_read_strictly() {
        assert_eq!(
            answer_of(&json!({"action": "accept", "content": {"decision": "once"}})),
            Answer::Once
        );
        assert_eq!(
            answer_of(&json!({"action": "accept", "content": {"decision": "always"}})),
            Answer::Always
        );
        for denied in [
            json!({"action": "accept", "content": {"decision": "deny"}}),
            json!({"action": "accept", "content": {}}),
            json!({"action": "decline"}),
            json!({"action": "cancel", "content": {"decision": "once"}}),
            json!(null),
        ] {
            assert_eq!(answer_of(&denied), Answer::Denied, "{denied}");
        }
    }
}
