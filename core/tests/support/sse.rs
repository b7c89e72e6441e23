//! Builders for server-sent-event bodies, so tests read like the wire format.

use serde_json::Value;

/// `data: <json>` as one complete event (OpenAI style).
pub fn data(json: &Value) -> String {
    format!("data: {json}\n\n")
}

/// `event: <name>` + `data: <json>` as one complete event (Anthropic style).
pub fn event(name: &str, json: &Value) -> String {
    format!("event: {name}\ndata: {json}\n\n")
}

/// The OpenAI end-of-stream marker.
pub fn done() -> String {
    "data: [DONE]\n\n".to_string()
}

/// Cuts `body` into pieces of about `size` bytes (on character boundaries),
/// so event lines, field names and JSON are split across network writes.
pub fn pieces(body: &str, size: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for ch in body.chars() {
        current.push(ch);
        if current.len() >= size {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}
