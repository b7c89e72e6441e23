//! Target `classify`: JSON text, parsed as the bridge parses a line, into
//! `Incoming::classify` (each element of a batch separately, as the server
//! does). Never panics; every `Err` is a `-32600` `INVALID_REQUEST` with the
//! id when one can be read; every `Ok` agrees with an independent reading of
//! the JSON-RPC 2.0 rules and survives a round trip.

use a3s_code_protocol::Incoming;
use serde_json::Value;

use crate::check::{readable_id, spec_kind, Kind};
use crate::rng::Rng;
use crate::{corpus, mutate, Target};

fn check_one(value: &Value) -> Result<u64, String> {
    let id = readable_id(value);
    let spec = spec_kind(value);
    let obj = value.as_object();
    let member = |key: &str| obj.and_then(|o| o.get(key)).cloned();
    let kind = match Incoming::classify(value.clone()) {
        Err((got_id, error)) => {
            if error.code != -32600 || error.data_code() != Some("INVALID_REQUEST") {
                return Err(format!(
                    "an Err with code {} ({:?})",
                    error.code, error.data
                ));
            }
            if got_id != id {
                return Err(format!("Err carries id {got_id:?}, the message has {id:?}"));
            }
            if let Some(spec) = spec {
                return Err(format!("a valid {spec:?} was rejected: {}", error.message));
            }
            let reason = error.message.split([':', '"']).next().unwrap_or_default();
            return Ok(reason.len() as u64 * 31 + reason.bytes().map(u64::from).sum::<u64>());
        }
        Ok(Incoming::Request(request)) => {
            if request.method.as_str() != member("method").unwrap_or_default()
                || Some(&request.id) != id.as_ref()
                || request.params != member("params")
            {
                return Err(format!(
                    "request fields differ from the message: {request:?}"
                ));
            }
            let again = serde_json::to_value(&request).map_err(|e| e.to_string())?;
            if Incoming::classify(again) != Ok(Incoming::Request(request.clone())) {
                return Err(format!(
                    "request does not survive a round trip: {request:?}"
                ));
            }
            Kind::Request
        }
        Ok(Incoming::Notification(note)) => {
            if note.method.as_str() != member("method").unwrap_or_default()
                || note.params != member("params")
            {
                return Err(format!("notification fields differ: {note:?}"));
            }
            Kind::Notification
        }
        Ok(Incoming::Response(response)) => {
            if response.id != id || response.result != member("result") {
                return Err(format!("response fields differ: {response:?}"));
            }
            Kind::Response
        }
    };
    if spec.as_ref() != Some(&kind) {
        return Err(format!("classified as {kind:?}, the rules say {spec:?}"));
    }
    Ok(kind as u64 + 1)
}

pub struct Classify;

impl Classify {
    /// Checks one line; returns features (which outcomes it reached).
    pub fn check(case: &[u8]) -> Result<Vec<u64>, String> {
        let Ok(text) = std::str::from_utf8(case) else {
            return Ok(vec![0]);
        };
        let Ok(value) = serde_json::from_str::<Value>(text) else {
            return Ok(vec![1]);
        };
        let mut features = Vec::new();
        match value {
            Value::Array(items) if !items.is_empty() => {
                for item in &items {
                    features.push(1000 + check_one(item)?);
                }
            }
            single => features.push(check_one(&single)?),
        }
        Ok(features)
    }
}

impl Target for Classify {
    fn name(&self) -> &'static str {
        "classify"
    }

    fn header_len(&self) -> usize {
        0
    }

    fn seeds(&self, rng: &mut Rng) -> Vec<Vec<u8>> {
        let mut seeds: Vec<Vec<u8>> = [
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":-0,"method":"m","params":null}"#,
            r#"{"jsonrpc":"2.0","id":"bridge-1","error":{"code":-1,"message":"x","data":{}}}"#,
            r#"[{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}},1,[]]"#,
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        seeds.extend((0..24).map(|_| corpus::classify_case(rng)));
        seeds
    }

    fn mutate(&self, rng: &mut Rng, base: &[u8], other: &[u8]) -> Vec<u8> {
        let parsed = serde_json::from_slice::<Value>(base).ok();
        match (rng.below(10), parsed) {
            (0..=4, Some(mut v)) => {
                for _ in 0..rng.range(1, 3) {
                    mutate::mutate_value(rng, &mut v);
                }
                mutate::to_text(rng, &v)
            }
            (8, _) => corpus::classify_case(rng),
            (9, _) => mutate::value(rng, 4).to_string().into_bytes(),
            _ => {
                let mut data = base.to_vec();
                mutate::mutate_bytes(rng, &mut data, other, 256, 1 << 16);
                data
            }
        }
    }

    fn run(&mut self, case: &[u8]) -> Result<Vec<u64>, String> {
        Classify::check(case)
    }
}
