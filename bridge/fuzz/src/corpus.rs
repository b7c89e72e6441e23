//! Valid protocol lines to start from: the handshake, scripted agents,
//! sessions, runs, streams with acks, cancellation, budget guards answered
//! by the host, batches and the rest of the method table.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::rng::Rng;

/// The directory sessions are created in: fixed, so saved cases replay.
pub fn workspace() -> PathBuf {
    let dir = std::env::temp_dir().join("a3s-code-bridge-fuzz-ws");
    let _ = std::fs::create_dir_all(&dir);
    let readme = dir.join("README.md");
    if !readme.exists() {
        let _ = std::fs::write(&readme, "hello from the fuzzing workspace\n");
    }
    dir
}

/// Every reverse request this build may send (the host answers them all).
pub fn reverse_methods() -> Vec<String> {
    a3s_code_protocol::catalog::bridge_request_names()
}

/// Scripted turns: deterministic, instant, and only read-only tools.
const SCRIPTS: &[&str] = &[
    r#"turn { text = "Hi there." }"#,
    r#"turn {
      tool_call {
        name = "read"
        arguments = { file_path = "README.md" }
      }
    }
    turn { text = "The README says hello." }"#,
    r#"turn { tool_call { name = "ls" arguments = { path = "." } } }
    turn { text = "one two three four five six seven eight nine ten eleven twelve" }"#,
    r#"turn { tool_call { name = "nope" arguments = {} } }"#,
    "",
];

pub fn acl(rng: &mut Rng) -> String {
    format!(
        "default_model = \"offline/demo\"\nproviders \"offline\" {{\n  kind = \"scripted\"\n  models \"demo\" {{\n{}\n  }}\n}}\n",
        rng.pick(SCRIPTS)
    )
}

pub fn request(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

pub fn initialize() -> Value {
    request(
        json!("init"),
        "initialize",
        json!({"protocolVersion": 1, "clientInfo": {"name": "fuzz", "version": "0"},
               "capabilities": {"reverseRequests": reverse_methods()}}),
    )
}

/// A host id from a small pool, so cancels, acks and collisions hit.
pub fn id(rng: &mut Rng) -> Value {
    match rng.below(8) {
        0 => json!("a"),
        1 => json!("b"),
        n => json!(n),
    }
}

fn session(rng: &mut Rng) -> &'static str {
    if rng.one_in(5) {
        "s2"
    } else {
        "s1"
    }
}

/// A decision, or something that is not one, as the host answers a check.
pub fn decision(rng: &mut Rng) -> Value {
    match rng.below(6) {
        0 => Value::Null,
        1 => json!({"decision": "allow"}),
        2 => json!({"decision": "soft", "resource": "tokens", "consumed": 9, "limit": 10,
                    "message": "90% used"}),
        3 => json!({"decision": "deny", "resource": "tokens", "reason": "cap reached"}),
        4 => json!({"decision": "maybe"}),
        _ => json!("allow"),
    }
}

/// The host's answer to `host/permission/request`, or something else.
pub fn approval(rng: &mut Rng) -> Value {
    match rng.below(4) {
        0 => json!({"approved": true}),
        1 => json!({"approved": false, "reason": "no"}),
        2 => json!({"approved": "yes"}),
        _ => Value::Null,
    }
}

/// One message a host could send after the handshake.
pub fn message(rng: &mut Rng, ws: &str) -> Value {
    let s = session(rng);
    match rng.below(18) {
        0 => request(id(rng), "agent/create", json!({"config": acl(rng)})),
        1 => {
            let agent = if rng.one_in(5) { "agent-2" } else { "agent-1" };
            let mut options = json!({"sessionId": s, "maxToolRounds": rng.range(0, 3),
                "hostEnv": {"sequentialIdPrefix": "fz", "fixedTimeMs": 1}});
            if rng.one_in(2) {
                options["permissionPolicy"] = json!({"ask": ["read", "ls"], "deny": ["nope"],
                    "defaultDecision": *rng.pick(&["allow", "deny", "ask"])});
                options["confirmationTimeoutMs"] = json!(rng.range(1, 100));
            }
            request(
                id(rng),
                "session/create",
                json!({"agentId": agent, "workspace": ws, "options": options}),
            )
        }
        2 | 3 => request(
            id(rng),
            "session/send",
            json!({"sessionId": s, "prompt": "hi"}),
        ),
        4 | 5 => request(
            id(rng),
            "session/stream",
            json!({"sessionId": s, "prompt": "read it"}),
        ),
        6 => notification(
            "$/streamAck",
            json!({"requestId": id(rng), "seq": rng.range(0, 12)}),
        ),
        7 => notification("$/cancelRequest", json!({"id": id(rng)})),
        8 => {
            let guard = json!({"checkBeforeLlm": rng.one_in(2), "recordAfterLlm": rng.one_in(2),
                "checkBeforeTool": rng.one_in(2), "timeoutMs": rng.range(1, 100)});
            let guard = if rng.one_in(6) { Value::Null } else { guard };
            request(
                id(rng),
                "session/setBudgetGuard",
                json!({"sessionId": s, "guard": guard}),
            )
        }
        9 => request(id(rng), "session/info", json!({"sessionId": s})),
        10 => request(id(rng), "session/close", json!({"sessionId": s})),
        11 => request(id(rng), "agent/close", json!({"agentId": "agent-1"})),
        12 => request(id(rng), "shutdown", json!({})),
        13 => request(id(rng), "no/such", json!([])),
        14 => {
            let reply = format!("bridge-{}", rng.range(1, 4));
            if rng.one_in(3) {
                json!({"jsonrpc": "2.0", "id": reply,
                       "error": {"code": -32000, "message": "no budget"}})
            } else {
                let result = if rng.one_in(2) {
                    decision(rng)
                } else {
                    approval(rng)
                };
                json!({"jsonrpc": "2.0", "id": reply, "result": result})
            }
        }
        15 => (0..rng.range(0, 3)).map(|_| message(rng, ws)).collect(),
        16 => {
            // More requests at once than max_in_flight (8).
            let (method, params) = match rng.below(3) {
                0 => ("session/info", json!({"sessionId": s})),
                1 => ("session/send", json!({"sessionId": s, "prompt": "hi"})),
                _ => ("agent/create", json!({"config": acl(rng)})),
            };
            (0..rng.range(8, 12))
                .map(|n| request(json!(format!("burst-{n}")), method, params.clone()))
                .collect()
        }
        _ => initialize(),
    }
}

/// Bits of a dispatch case's first byte: how the in-process host behaves.
pub mod policy {
    /// Acknowledge every `session/event`.
    pub const ACK: u8 = 1;
    /// Acknowledge only every third event.
    pub const ACK_LAZILY: u8 = 2;
    /// Answer reverse requests (the answer is picked from the other bits).
    pub const ANSWER: u8 = 4;
    /// After the first three lines, send without waiting for the bridge to
    /// go idle between lines (a pipelining host: more concurrency).
    pub const PIPELINE: u8 = 8;
}

/// A dispatch case: the policy byte, then newline-terminated lines that
/// start with a valid `initialize`, an agent and a session.
pub fn dispatch_case(rng: &mut Rng, ws: &str) -> Vec<u8> {
    let mut lines = vec![initialize()];
    lines.push(request(
        json!(1),
        "agent/create",
        json!({"config": acl(rng)}),
    ));
    let mut options = json!({"sessionId": "s1"});
    if rng.one_in(3) {
        options["permissionPolicy"] = json!({"ask": ["read", "ls"]});
        options["confirmationTimeoutMs"] = json!(50);
    }
    lines.push(request(
        json!(2),
        "session/create",
        json!({"agentId": "agent-1", "workspace": ws, "options": options}),
    ));
    for _ in 0..rng.range(1, 8) {
        lines.push(message(rng, ws));
    }
    let mut case = vec![rng.byte() | policy::ACK | policy::ANSWER];
    for line in lines {
        case.extend_from_slice(line.to_string().as_bytes());
        case.push(b'\n');
    }
    case
}

/// One message as JSON text, for the classify target.
pub fn classify_case(rng: &mut Rng) -> Vec<u8> {
    let ws = "/tmp";
    let value = match rng.below(4) {
        0 => initialize(),
        1 => json!({"jsonrpc": "2.0", "id": "bridge-1", "result": null}),
        _ => message(rng, ws),
    };
    value.to_string().into_bytes()
}
