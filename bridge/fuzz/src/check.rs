//! The JSON-RPC rules, read independently of the protocol crate: what the
//! input asks for, and whether each line the bridge writes is well formed.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use a3s_code_protocol::{ErrorObject, RequestId};
use serde_json::Value;

use crate::corpus::reverse_methods;

#[derive(Debug, PartialEq)]
pub enum Kind {
    Request,
    Notification,
    Response,
}

/// The id as JSON-RPC allows it: a string or an integer (within i64).
pub fn readable_id(v: &Value) -> Option<RequestId> {
    id_of(v.as_object()?.get("id")?)
}

fn id_of(id: &Value) -> Option<RequestId> {
    match id {
        Value::String(s) => Some(RequestId::String(s.clone())),
        id => id.as_i64().map(RequestId::Number),
    }
}

/// What a message is by the rules; `None`: invalid.
pub fn spec_kind(v: &Value) -> Option<Kind> {
    let obj = v.as_object()?;
    if obj.get("jsonrpc")? != "2.0" {
        return None;
    }
    if let Some(method) = obj.get("method") {
        method.as_str()?;
        if obj
            .get("params")
            .is_some_and(|p| !p.is_object() && !p.is_array())
        {
            return None;
        }
        return match obj.get("id") {
            None => Some(Kind::Notification),
            Some(_) => readable_id(v).map(|_| Kind::Request),
        };
    }
    if let Some(error) = obj.get("error") {
        serde_json::from_value::<ErrorObject>(error.clone()).ok()?;
    }
    (obj.contains_key("result") || obj.contains_key("error")).then_some(Kind::Response)
}

/// What the input (as the bridge frames it) asks of the bridge.
#[derive(Debug, Default)]
pub struct Expect {
    /// Valid requests read before the first `shutdown` (included): each
    /// must be answered.
    pub required: HashMap<RequestId, usize>,
    /// Messages carrying a readable id: no id is answered more often.
    pub allowed: HashMap<RequestId, usize>,
    pub shutdown: Option<RequestId>,
    /// Frames and batch elements: an upper bound on responses.
    pub messages: usize,
}

pub fn expect(input: &[u8], max_line: usize) -> Expect {
    let mut e = Expect::default();
    for frame in crate::frames::oracle(input, max_line) {
        e.messages += 1;
        let Some(Ok(text)) = frame.map(std::str::from_utf8) else {
            continue;
        };
        let Ok(value) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        let items = match value {
            Value::Array(items) => items,
            single => vec![single],
        };
        for item in &items {
            e.add(item);
        }
    }
    e
}

impl Expect {
    /// One message the bridge reads (also the host's reactions).
    pub fn add(&mut self, item: &Value) {
        self.messages += 1;
        let id = readable_id(item);
        if let Some(id) = &id {
            *self.allowed.entry(id.clone()).or_default() += 1;
        }
        if let (None, Some(Kind::Request), Some(id)) = (&self.shutdown, spec_kind(item), id) {
            *self.required.entry(id.clone()).or_default() += 1;
            if item["method"] == "shutdown" {
                self.shutdown = Some(id);
            }
        }
    }
}

/// Everything learnt from the bridge's output.
#[derive(Debug, Default)]
pub struct Observed {
    pub responses: HashMap<Option<RequestId>, usize>,
    pub total_responses: usize,
    pub features: Vec<u64>,
    /// What the host sent in reaction (acks, answers to reverse requests).
    pub reactions: Vec<Value>,
    /// Next `seq` of each stream, by request id.
    streams: HashMap<RequestId, u64>,
    /// Ids whose request was answered: a later event must start a new stream.
    ended: HashSet<RequestId>,
}

fn feature(parts: impl Hash) -> u64 {
    let mut h = DefaultHasher::new();
    parts.hash(&mut h);
    h.finish()
}

impl Observed {
    /// Checks one output line (newline removed); returns its messages.
    pub fn line(&mut self, line: &[u8]) -> Result<Vec<Value>, String> {
        let text = std::str::from_utf8(line).map_err(|e| format!("output is not UTF-8: {e}"))?;
        let value: Value = serde_json::from_str(text)
            .map_err(|e| format!("output line is not JSON ({e}): {text}"))?;
        match value {
            Value::Object(_) => {
                self.message(&value)
                    .map_err(|e| format!("bad output: {e}: {text}"))?;
                Ok(vec![value])
            }
            Value::Array(items) if !items.is_empty() => {
                for item in &items {
                    self.response(item)
                        .map_err(|e| format!("bad batch response: {e}: {text}"))?;
                }
                self.features.push(feature(("batch", items.len().min(4))));
                Ok(items)
            }
            _ => Err(format!("output is neither an object nor a batch: {text}")),
        }
    }

    fn message(&mut self, v: &Value) -> Result<(), String> {
        if v["jsonrpc"] != "2.0" {
            return Err("no \"jsonrpc\":\"2.0\"".into());
        }
        let Some(method) = v.get("method") else {
            return self.response(v);
        };
        let method = method.as_str().ok_or("method is not a string")?;
        let params = &v["params"];
        if let Some(id) = v.get("id") {
            // A reverse request.
            let id = id.as_str().ok_or("reverse request id is not a string")?;
            if !id.starts_with("bridge-") || !reverse_methods().iter().any(|m| m == method) {
                return Err(format!("unexpected reverse request {method} {id}"));
            }
            params["timeoutMs"].as_u64().ok_or("no timeoutMs")?;
            self.features.push(feature(("reverse", method)));
            return Ok(());
        }
        match method {
            "session/event" => {
                let id = id_of(&params["requestId"]).ok_or("event without a request id")?;
                let seq = params["seq"].as_u64().ok_or("event without seq")?;
                let event = &params["event"];
                let kind = event["type"].as_str().ok_or("event without type")?;
                if event["version"] != 1 || !event["metadata"].is_object() {
                    return Err("bad event envelope".into());
                }
                // Gap-free from 0; a reused id starts a new stream at 0.
                let next = self.streams.entry(id.clone()).or_default();
                if seq != *next && seq != 0 {
                    return Err(format!("stream {id}: seq {seq} where {next} was due"));
                }
                if self.ended.remove(&id) && seq != 0 {
                    return Err(format!("stream {id}: event {seq} after the response"));
                }
                *next = seq + 1;
                self.features.push(feature(("event", kind)));
            }
            "$/cancelRequest" => {
                let id = params["id"].as_str().unwrap_or_default();
                if !id.starts_with("bridge-") {
                    return Err("the bridge cancelled a request it did not send".into());
                }
                self.features.push(feature("cancel"));
            }
            other => return Err(format!("unexpected notification {other}")),
        }
        Ok(())
    }

    fn response(&mut self, v: &Value) -> Result<(), String> {
        if v["jsonrpc"] != "2.0" || v.get("method").is_some() {
            return Err("not a response".into());
        }
        let id = match v.get("id").ok_or("response without id")? {
            Value::Null => None,
            id => Some(id_of(id).ok_or("response id is neither string nor integer")?),
        };
        let (feature_of, ends_a_run) = match (v.get("result"), v.get("error")) {
            (Some(_), None) if id.is_some() => (feature(("ok", self.total_responses.min(1))), true),
            (None, Some(error)) => {
                let error: ErrorObject = serde_json::from_value(error.clone())
                    .map_err(|e| format!("bad error object: {e}"))?;
                let code = error.data_code().ok_or("error without data.code")?;
                let words: Vec<&str> = error.message.split_whitespace().take(3).collect();
                // Refusals that never started the request (duplicate id,
                // overload, handshake, shutdown) say nothing of a run that
                // has the same id.
                let refusal = [-32600, -32601, -32002, -32001].contains(&error.code)
                    || code == "SHUTTING_DOWN";
                (feature(("error", error.code, code, words)), !refusal)
            }
            _ => return Err("a response needs exactly one of result and error".into()),
        };
        self.features.push(feature_of);
        if let (Some(id), true) = (&id, ends_a_run) {
            self.ended.insert(id.clone());
        }
        *self.responses.entry(id).or_default() += 1;
        self.total_responses += 1;
        Ok(())
    }

    /// Compares the output with what the input asked for.
    pub fn finish(&mut self, expect: &Expect, shut_down: bool) -> Result<(), String> {
        let events: u64 = self.streams.values().sum();
        let log2 = |n: u64| 64 - n.leading_zeros();
        self.features.push(feature(("events", log2(events))));
        self.features
            .push(feature(("responses", log2(self.total_responses as u64))));
        let answered = |id: &RequestId| {
            self.responses
                .get(&Some(id.clone()))
                .copied()
                .unwrap_or_default()
        };
        for (id, n) in &expect.required {
            if answered(id) < *n {
                return Err(format!(
                    "missing response: id {id} was requested {n} time(s), answered {}",
                    answered(id)
                ));
            }
        }
        for (id, n) in &self.responses {
            let allowed = id.as_ref().map(|id| expect.allowed.get(id).copied());
            if let Some(allowed) = allowed {
                if *n > allowed.unwrap_or_default() {
                    return Err(format!("extra response: id {id:?} answered {n} time(s)"));
                }
            }
        }
        if self.total_responses > expect.messages {
            return Err(format!(
                "extra response: {} responses to {} messages",
                self.total_responses, expect.messages
            ));
        }
        if shut_down && expect.shutdown.is_none() {
            return Err(
                "unexpected exit: serve returned Shutdown without a shutdown request".into(),
            );
        }
        Ok(())
    }
}
