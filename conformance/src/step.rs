//! The step vocabulary of a scenario. A step is an object with exactly one
//! action key, plus optional `timeoutMs` (overrides the scenario's per-step
//! timeout) and `comment` (prose for readers). See `conformance/README.md`.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::base64;
use crate::events::EventsCheck;

/// One parsed step.
#[derive(Debug, Clone)]
pub struct Step {
    pub action: Action,
    pub timeout: Option<Duration>,
}

#[derive(Debug, Clone)]
pub enum Action {
    /// Write the value (after `${name}` substitution) as one line.
    Send(Value),
    /// Write the text and a newline, byte for byte.
    SendRaw(String),
    /// Write the decoded bytes and a newline.
    SendBytes(Vec<u8>),
    /// Write one JSON-RPC request line of exactly `bytes` bytes (newline
    /// excluded), padded inside `params.padding`.
    SendOversized(Oversized),
    /// Take the first queued message matching the pattern, waiting for it.
    Expect(Value),
    ExpectEvents(EventsCheck),
    /// No unconsumed message matching `matching` is queued after `ms`.
    ExpectNothing {
        ms: u64,
        matching: Value,
    },
    CloseStdin,
    ExpectExit {
        code: Option<i32>,
        within_ms: u64,
    },
    Sleep(u64),
    /// Stop acknowledging the stream of this request id.
    Stall(Value),
    /// Acknowledge everything received so far on it, and go on acking.
    Resume(Value),
    /// Stop the bridge (SIGKILL when `kill`, else close stdin and wait for a
    /// clean exit) and start a fresh one in the same workspace.
    RestartBridge {
        kill: bool,
    },
    /// Check a workspace file.
    ReadFile(ReadFile),
}

/// `readFile`: a workspace file's contents, or its absence.
#[derive(Debug, Clone)]
pub struct ReadFile {
    /// Relative to the workspace, without `..`.
    pub path: String,
    pub check: FileCheck,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FileCheck {
    /// Exactly this text (after `${name}` substitution).
    Equals(Value),
    /// The contents, as a JSON string, match this pattern.
    Matches(Value),
    /// The file does not exist.
    Absent,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Oversized {
    pub bytes: usize,
    #[serde(default = "default_oversized_id")]
    pub id: Value,
    #[serde(default = "default_oversized_method")]
    pub method: String,
}

fn default_oversized_id() -> Value {
    Value::String("oversized".into())
}

fn default_oversized_method() -> String {
    "initialize".into()
}

impl Oversized {
    /// The line, without its newline.
    pub fn line(&self) -> Result<Vec<u8>, String> {
        let head = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":{},"params":{{"padding":""#,
            self.id,
            Value::String(self.method.clone())
        );
        let tail = r#""}}"#;
        let pad = self
            .bytes
            .checked_sub(head.len() + tail.len())
            .ok_or_else(|| {
                format!(
                    "sendOversized: {} bytes is shorter than the request frame",
                    self.bytes
                )
            })?;
        let mut line = Vec::with_capacity(self.bytes);
        line.extend_from_slice(head.as_bytes());
        line.resize(head.len() + pad, b'x');
        line.extend_from_slice(tail.as_bytes());
        Ok(line)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ExpectNothingArgs {
    ms: u64,
    #[serde(default)]
    matching: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ExpectExitArgs {
    #[serde(default)]
    code: Option<i32>,
    within_ms: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RestartArgs {
    kill: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadFileArgs {
    path: String,
    #[serde(default)]
    equals: Option<Value>,
    #[serde(default)]
    matches: Option<Value>,
    #[serde(default)]
    absent: Option<bool>,
}

fn read_file(arg: &Value) -> Result<ReadFile, String> {
    let a: ReadFileArgs = ReadFileArgs::deserialize(arg).map_err(|e| e.to_string())?;
    let p = std::path::Path::new(&a.path);
    if a.path.is_empty()
        || !p
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
    {
        return Err(format!(
            "path {:?} must be relative to the workspace, without ..",
            a.path
        ));
    }
    let check = match (a.equals, a.matches, a.absent) {
        (Some(text @ Value::String(_)), None, None) => FileCheck::Equals(text),
        (Some(_), None, None) => return Err("equals takes a string".into()),
        (None, Some(pattern), None) => FileCheck::Matches(pattern),
        (None, None, Some(true)) => FileCheck::Absent,
        _ => return Err("needs exactly one of equals, matches, absent: true".into()),
    };
    Ok(ReadFile {
        path: a.path,
        check,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct StreamRef {
    request_id: Value,
}

const META_KEYS: &[&str] = &["timeoutMs", "comment"];

impl Step {
    pub fn parse(value: &Value) -> Result<Step, String> {
        let map = value.as_object().ok_or("a step must be an object")?;
        let actions: Vec<(&String, &Value)> = map
            .iter()
            .filter(|(key, _)| !META_KEYS.contains(&key.as_str()))
            .collect();
        let [(key, arg)] = actions.as_slice() else {
            let keys: Vec<&str> = actions.iter().map(|(k, _)| k.as_str()).collect();
            return Err(format!(
                "a step needs exactly one action key, found [{}]",
                keys.join(", ")
            ));
        };
        let timeout = match map.get("timeoutMs") {
            None => None,
            Some(ms) => Some(Duration::from_millis(
                ms.as_u64().ok_or("timeoutMs must be a number")?,
            )),
        };
        if map.get("comment").is_some_and(|c| !c.is_string()) {
            return Err("comment must be a string".into());
        }
        let action = parse_action(key, arg).map_err(|e| format!("{key}: {e}"))?;
        Ok(Step { action, timeout })
    }
}

fn parse_action(key: &str, arg: &Value) -> Result<Action, String> {
    fn args<T: for<'de> Deserialize<'de>>(arg: &Value) -> Result<T, String> {
        T::deserialize(arg).map_err(|e| e.to_string())
    }
    fn text(arg: &Value) -> Result<&str, String> {
        arg.as_str().ok_or_else(|| "expects a string".to_string())
    }
    Ok(match key {
        "send" => Action::Send(arg.clone()),
        "sendRaw" => Action::SendRaw(text(arg)?.to_string()),
        "sendBytes" => Action::SendBytes(base64::decode(text(arg)?)?),
        "sendOversized" => {
            let oversized: Oversized = args(arg)?;
            oversized.line()?;
            Action::SendOversized(oversized)
        }
        "expect" => Action::Expect(arg.clone()),
        "expectEvents" => Action::ExpectEvents(args(arg)?),
        "expectNothing" => {
            let a: ExpectNothingArgs = args(arg)?;
            Action::ExpectNothing {
                ms: a.ms,
                matching: a.matching.unwrap_or_else(|| Value::String("$any".into())),
            }
        }
        "closeStdin" if arg == &Value::Bool(true) => Action::CloseStdin,
        "closeStdin" => return Err("expects true".into()),
        "expectExit" => {
            let a: ExpectExitArgs = args(arg)?;
            Action::ExpectExit {
                code: a.code,
                within_ms: a.within_ms,
            }
        }
        "sleep" => Action::Sleep(arg.as_u64().ok_or("expects milliseconds")?),
        "stall" => Action::Stall(args::<StreamRef>(arg)?.request_id),
        "resume" => Action::Resume(args::<StreamRef>(arg)?.request_id),
        "restartBridge" => Action::RestartBridge {
            kill: args::<RestartArgs>(arg)?.kill,
        },
        "readFile" => Action::ReadFile(read_file(arg)?),
        other => {
            return Err(format!(
                "unknown action {other:?} (known: {})",
                KNOWN.join(", ")
            ))
        }
    })
}

const KNOWN: &[&str] = &[
    "send",
    "sendRaw",
    "sendBytes",
    "sendOversized",
    "expect",
    "expectEvents",
    "expectNothing",
    "closeStdin",
    "expectExit",
    "sleep",
    "stall",
    "resume",
    "restartBridge",
    "readFile",
];

/// Rejects object keys outside `allowed` (for hand-parsed objects).
pub fn only_keys(map: &Map<String, Value>, allowed: &[&str], what: &str) -> Result<(), String> {
    match map.keys().find(|key| !allowed.contains(&key.as_str())) {
        Some(key) => Err(format!(
            "{what}: unknown key {key:?} (allowed: {})",
            allowed.join(", ")
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_each_action() {
        for step in [
            json!({"send": {"id": 1}}),
            json!({"sendRaw": "{"}),
            json!({"sendBytes": "/w=="}),
            json!({"sendOversized": {"bytes": 1000}}),
            json!({"expect": {"id": 1}, "timeoutMs": 50, "comment": "why"}),
            json!({"expectEvents": {"requestId": 1, "types": ["*"], "mode": "contains"}}),
            json!({"expectNothing": {"ms": 10}}),
            json!({"closeStdin": true}),
            json!({"expectExit": {"code": 0, "withinMs": 10}}),
            json!({"sleep": 5}),
            json!({"stall": {"requestId": 1}}),
            json!({"resume": {"requestId": "${id}"}}),
            json!({"restartBridge": {"kill": true}}),
            json!({"readFile": {"path": "a/tools.log", "equals": "r1\n"}}),
            json!({"readFile": {"path": "x", "matches": {"$contains": "r"}}}),
            json!({"readFile": {"path": "x", "absent": true}}),
        ] {
            Step::parse(&step).unwrap_or_else(|e| panic!("{step}: {e}"));
        }
    }

    #[test]
    fn rejects_malformed_steps() {
        for (step, needle) in [
            (json!({"send": 1, "expect": 2}), "exactly one action"),
            (json!({"comment": "x"}), "exactly one action"),
            (json!({"expct": {}}), "unknown action \"expct\""),
            (
                json!({"expectEvents": {"requestId": 1, "type": []}}),
                "unknown field",
            ),
            (
                json!({"expectEvents": {"requestId": 1, "types": [], "mode": "fuzzy"}}),
                "unknown variant",
            ),
            (json!({"sendOversized": {"bytes": 10}}), "shorter"),
            (json!({"sleep": "1s"}), "milliseconds"),
            (json!({"closeStdin": false}), "expects true"),
            (json!({"send": 1, "timeoutMs": "x"}), "timeoutMs"),
            (json!({"restartBridge": {}}), "missing field `kill`"),
            (json!({"restartBridge": {"kill": 1}}), "invalid type"),
            (
                json!({"readFile": {"path": "../x", "absent": true}}),
                "without ..",
            ),
            (
                json!({"readFile": {"path": "/etc/x", "absent": true}}),
                "relative",
            ),
            (json!({"readFile": {"path": "x"}}), "exactly one"),
            (
                json!({"readFile": {"path": "x", "equals": "a", "absent": true}}),
                "exactly one",
            ),
            (
                json!({"readFile": {"path": "x", "absent": false}}),
                "exactly one",
            ),
            (
                json!({"readFile": {"path": "x", "equals": 1}}),
                "takes a string",
            ),
        ] {
            let err = Step::parse(&step).unwrap_err();
            assert!(err.contains(needle), "{step}: {err}");
        }
    }

    #[test]
    fn oversized_lines_have_the_exact_length_and_parse() {
        let o = Oversized {
            bytes: 4096,
            id: json!(9),
            method: "session/send".into(),
        };
        let line = o.line().unwrap();
        assert_eq!(line.len(), 4096);
        let value: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["id"], 9);
        assert_eq!(value["method"], "session/send");
    }
}
