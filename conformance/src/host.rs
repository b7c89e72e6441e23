//! The runner's side of the connection: it plays the host.
//!
//! Every line the bridge writes is checked (JSON, `"jsonrpc":"2.0"`, reverse
//! request ids are strings starting with `bridge-`) and kept in a queue that
//! steps read from. While it receives, the host also does what a real host
//! does without being told: it acknowledges `session/event` notifications
//! with `$/streamAck` (unless the scenario stalled that stream) and answers
//! reverse requests from the scenario's `reverse` rules (a request no rule
//! covers gets `-32601`). Rules may name an occurrence (`nth`): the host
//! counts the reverse requests of each method over the whole scenario,
//! across bridge restarts.

use std::collections::HashMap;
use std::thread;
use std::time::Instant;

use serde_json::{json, Value};

use crate::bridge::{Bridge, Incoming, Writer, MAX_LINE_BYTES};
use crate::pattern::{self, brief};
use crate::scenario::{Reply, ReverseRule};
use crate::vars::Vars;

/// One message received from the bridge.
#[derive(Debug)]
pub struct Received {
    pub value: Value,
    /// Taken by an `expect` or `expectEvents` step.
    pub consumed: bool,
}

#[derive(Debug, Default)]
struct StreamAcks {
    stalled: bool,
    last_seq: Option<u64>,
}

/// What one call to [`Host::pump`] saw.
#[derive(Debug, PartialEq, Eq)]
pub enum Pumped {
    Message,
    Timeout,
    Closed,
}

pub struct Host {
    pub bridge: Bridge,
    pub queue: Vec<Received>,
    pub vars: Vars,
    rules: Vec<ReverseRule>,
    /// Reverse requests received so far, per method.
    occurrences: HashMap<String, u64>,
    streams: HashMap<String, StreamAcks>,
    stdout_closed: bool,
    lines: usize,
}

impl Host {
    pub fn new(bridge: Bridge, rules: Vec<ReverseRule>, vars: Vars) -> Host {
        Host {
            bridge,
            queue: Vec::new(),
            vars,
            rules,
            occurrences: HashMap::new(),
            streams: HashMap::new(),
            stdout_closed: false,
            lines: 0,
        }
    }

    pub fn writer(&self) -> &Writer {
        &self.bridge.writer
    }

    /// Talks to `bridge` from now on, as to a fresh connection: the old
    /// process's unconsumed messages and stream states are dropped; the
    /// variables and the reverse-request counts are kept. Returns the old
    /// bridge.
    pub fn replace_bridge(&mut self, bridge: Bridge) -> Bridge {
        self.queue.clear();
        self.streams.clear();
        self.stdout_closed = false;
        self.lines = 0;
        std::mem::replace(&mut self.bridge, bridge)
    }

    /// Waits until `deadline` for one line and handles it. An `Err` is a
    /// protocol violation by the bridge (the scenario fails with it).
    pub fn pump(&mut self, deadline: Instant) -> Result<Pumped, String> {
        if self.stdout_closed {
            return Ok(Pumped::Closed);
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        let incoming = match self.bridge.incoming.recv_timeout(wait) {
            Ok(incoming) => incoming,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => return Ok(Pumped::Timeout),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Incoming::Eof,
        };
        match incoming {
            Incoming::Line(bytes) => {
                self.lines += 1;
                self.handle_line(&bytes)?;
                Ok(Pumped::Message)
            }
            Incoming::TooLong(len) => Err(format!(
                "stdout line {} is {len} bytes, over the {MAX_LINE_BYTES}-byte line limit",
                self.lines + 1
            )),
            Incoming::Eof => {
                self.stdout_closed = true;
                Ok(Pumped::Closed)
            }
            Incoming::ReadError(e) => {
                self.stdout_closed = true;
                Err(format!("reading the bridge's stdout: {e}"))
            }
        }
    }

    /// Handles everything that arrives until `deadline`.
    pub fn drain_until(&mut self, deadline: Instant) -> Result<(), String> {
        while Instant::now() < deadline {
            if self.pump(deadline)? == Pumped::Closed {
                std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
            }
        }
        Ok(())
    }

    /// Stops acknowledging the stream of request `id`.
    pub fn stall(&mut self, id: &Value) {
        self.streams.entry(id.to_string()).or_default().stalled = true;
    }

    /// Acknowledges everything received on the stream so far and goes on.
    pub fn resume(&mut self, id: &Value) {
        let acks = self.streams.entry(id.to_string()).or_default();
        acks.stalled = false;
        if let Some(seq) = acks.last_seq {
            send_ack(&self.bridge.writer, id, seq);
        }
    }

    fn handle_line(&mut self, bytes: &[u8]) -> Result<(), String> {
        let line = self.lines;
        let text = std::str::from_utf8(bytes).map_err(|e| {
            format!(
                "stdout line {line} is not UTF-8 ({e}): {}",
                String::from_utf8_lossy(bytes)
            )
        })?;
        let value: Value = serde_json::from_str(text).map_err(|e| {
            let shown: String = text.chars().take(300).collect();
            format!("stdout line {line} is not JSON ({e}); stdout must carry protocol messages only: {shown}")
        })?;
        match &value {
            Value::Object(_) => {
                check_envelope(&value).map_err(|e| format!("stdout line {line}: {e}"))?;
                self.observe(&value)?;
            }
            Value::Array(items) if !items.is_empty() => {
                for item in items {
                    check_envelope(item).map_err(|e| format!("stdout line {line} (batch): {e}"))?;
                }
            }
            _ => {
                return Err(format!(
                    "stdout line {line} is not a JSON-RPC message: {}",
                    brief(&value, 200)
                ))
            }
        }
        self.queue.push(Received {
            value,
            consumed: false,
        });
        Ok(())
    }

    /// Acks stream events and answers reverse requests.
    fn observe(&mut self, message: &Value) -> Result<(), String> {
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            return Ok(());
        };
        match message.get("id") {
            Some(id) if !id.is_null() => {
                if !id.as_str().is_some_and(|s| s.starts_with("bridge-")) {
                    return Err(format!(
                        "reverse request {method} has id {id}; ids of reverse requests must be strings starting with \"bridge-\""
                    ));
                }
                let count = self.occurrences.entry(method.to_string()).or_default();
                *count += 1;
                let nth = *count;
                self.answer(
                    method,
                    nth,
                    id,
                    message.get("params").unwrap_or(&Value::Null),
                )
            }
            _ if method == "session/event" => {
                let params = message.get("params").unwrap_or(&Value::Null);
                let (Some(request_id), Some(seq)) = (
                    params.get("requestId"),
                    params.get("seq").and_then(Value::as_u64),
                ) else {
                    return Err(format!(
                        "session/event without params.requestId and params.seq: {}",
                        brief(message, 300)
                    ));
                };
                let acks = self.streams.entry(request_id.to_string()).or_default();
                acks.last_seq = Some(seq);
                if !acks.stalled {
                    send_ack(&self.bridge.writer, request_id, seq);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Answers the `nth` reverse request of `method` with the first rule
    /// that fits.
    fn answer(&self, method: &str, nth: u64, id: &Value, params: &Value) -> Result<(), String> {
        let chosen = choose_rule(&self.rules, &self.vars, method, nth, params)?;
        let envelope = |key: &str, body: Value| json!({"jsonrpc": "2.0", "id": id, key: body});
        let (reply, delay) = match chosen {
            None => (
                Some(envelope(
                    "error",
                    json!({"code": -32601, "message": format!("the scenario has no reverse rule for {method}"),
                           "data": {"code": "METHOD_NOT_FOUND"}}),
                )),
                Default::default(),
            ),
            Some(rule) => (
                match &rule.reply {
                    Reply::Result(v) => Some(envelope("result", self.vars.substitute(v)?)),
                    Reply::Error(e) => Some(envelope("error", self.vars.substitute(e)?)),
                    Reply::Malformed => Some(envelope(
                        "result",
                        json!({"unexpected": "not the shape the bridge asked for"}),
                    )),
                    Reply::Never => None,
                },
                rule.delay,
            ),
        };
        if let Some(reply) = reply {
            let bytes = reply.to_string().into_bytes();
            if delay.is_zero() {
                self.bridge.writer.line(bytes);
            } else {
                let writer = self.bridge.writer.clone();
                thread::spawn(move || {
                    thread::sleep(delay);
                    writer.line(bytes);
                });
            }
        }
        Ok(())
    }
}

/// The first rule for `method` whose `nth` (if any) is `nth` and whose
/// `params` pattern (if any) matches.
fn choose_rule<'r>(
    rules: &'r [ReverseRule],
    vars: &Vars,
    method: &str,
    nth: u64,
    params: &Value,
) -> Result<Option<&'r ReverseRule>, String> {
    for rule in rules
        .iter()
        .filter(|r| r.method == method && r.nth.is_none_or(|n| n == nth))
    {
        let fits = match &rule.params {
            None => true,
            Some(p) => pattern::matches(&vars.substitute(p)?, params).is_ok(),
        };
        if fits {
            return Ok(Some(rule));
        }
    }
    Ok(None)
}

fn send_ack(writer: &Writer, request_id: &Value, seq: u64) {
    let ack = json!({"jsonrpc": "2.0", "method": "$/streamAck", "params": {"requestId": request_id, "seq": seq}});
    writer.line(ack.to_string().into_bytes());
}

/// Every message carries `"jsonrpc":"2.0"` and is a request, a notification
/// or a response.
fn check_envelope(message: &Value) -> Result<(), String> {
    if message.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return Err(format!(
            "missing \"jsonrpc\":\"2.0\": {}",
            brief(message, 300)
        ));
    }
    let is_call = message.get("method").is_some_and(Value::is_string);
    let is_response = message.get("id").is_some()
        && (message.get("result").is_some() ^ message.get("error").is_some());
    if !is_call && !is_response {
        return Err(format!(
            "neither a request, a notification nor a response: {}",
            brief(message, 300)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{check_envelope, choose_rule};
    use crate::scenario::{Reply, ReverseRule};
    use crate::vars::Vars;
    use serde_json::json;
    use std::time::Duration;

    #[test]
    fn rules_fit_by_method_occurrence_and_params() {
        let rule = |method: &str, nth: Option<u64>, params, reply| ReverseRule {
            method: method.into(),
            params,
            nth,
            reply,
            delay: Duration::ZERO,
        };
        let rules = [
            rule("host/b", None, None, Reply::Result(json!("b"))),
            rule("host/a", Some(3), None, Reply::Never),
            rule(
                "host/a",
                None,
                Some(json!({"sessionId": "${s}"})),
                Reply::Result(json!("mine")),
            ),
            rule("host/a", None, None, Reply::Result(json!("other"))),
        ];
        let mut vars = Vars::default();
        vars.set("s", json!("s-1"));
        let pick = |nth, params| {
            choose_rule(&rules, &vars, "host/a", nth, &params)
                .unwrap()
                .map(|r| r.reply.clone())
        };
        let mine = json!({"sessionId": "s-1"});
        assert_eq!(pick(1, mine.clone()), Some(Reply::Result(json!("mine"))));
        assert_eq!(pick(2, json!({})), Some(Reply::Result(json!("other"))));
        assert_eq!(pick(3, mine.clone()), Some(Reply::Never));
        assert_eq!(pick(4, mine), Some(Reply::Result(json!("mine"))));
        assert!(choose_rule(&rules, &vars, "host/c", 1, &json!({}))
            .unwrap()
            .is_none());
        let unknown = [rule(
            "host/a",
            None,
            Some(json!({"x": "${nope}"})),
            Reply::Never,
        )];
        assert!(choose_rule(&unknown, &vars, "host/a", 1, &json!({})).is_err());
    }

    #[test]
    fn envelopes() {
        check_envelope(&json!({"jsonrpc": "2.0", "id": 1, "result": null})).unwrap();
        check_envelope(&json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700}})).unwrap();
        check_envelope(&json!({"jsonrpc": "2.0", "method": "session/event"})).unwrap();
        check_envelope(&json!({"id": 1, "result": {}})).unwrap_err();
        check_envelope(&json!({"jsonrpc": "2.0", "id": 1})).unwrap_err();
        check_envelope(&json!({"jsonrpc": "2.0", "id": 1, "result": 1, "error": {}})).unwrap_err();
    }
}
