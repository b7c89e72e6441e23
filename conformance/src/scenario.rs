//! Scenario files: parsing, validation and loading (embedded or a directory).
//!
//! A scenario is data: `{"id", "description", "files", "reverse", "steps"}`
//! plus optional `timeoutMs` (per step, default 10 000), `bridgeArgs` (added
//! after the bridge's own arguments), `env` and `storeDir` (a second temp
//! directory, `${store}`). Its `id` must equal its file
//! name without `.json`, so ids are unique and easy to find.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Component, Path};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use serde_json::Value;

use crate::step::{only_keys, Step};

pub const DEFAULT_STEP_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone)]
pub struct Scenario {
    pub id: String,
    pub description: String,
    /// Workspace files: relative path → contents.
    pub files: BTreeMap<String, String>,
    pub reverse: Vec<ReverseRule>,
    pub steps: Vec<Step>,
    pub step_timeout: Duration,
    pub bridge_args: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// Whether to create a temporary directory available as `${store}`.
    pub store_dir: bool,
}

/// How the host answers a reverse request (`host/...`) from the bridge.
#[derive(Debug, Clone)]
pub struct ReverseRule {
    pub method: String,
    /// Optional pattern the request's `params` must match.
    pub params: Option<Value>,
    /// Only the `nth` (1-based) reverse request of this method fits.
    pub nth: Option<u64>,
    pub reply: Reply,
    pub delay: Duration,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `{"result": v}`; `v` may be `null`.
    Result(Value),
    /// `{"error": {code, message, data?}}`.
    Error(Value),
    /// A result of the wrong shape: an object with no expected field.
    Malformed,
    /// No answer at all.
    Never,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawScenario {
    id: String,
    description: String,
    #[serde(default)]
    files: BTreeMap<String, String>,
    #[serde(default)]
    reverse: Vec<Value>,
    steps: Vec<Value>,
    #[serde(default)]
    timeout_ms: Option<u64>,
    #[serde(default)]
    bridge_args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    store_dir: bool,
}

impl Scenario {
    /// Parses the scenario stored as `file_name` (e.g. `handshake.json`).
    pub fn parse(file_name: &str, text: &str) -> Result<Scenario> {
        let raw: RawScenario =
            serde_json::from_str(text).with_context(|| format!("{file_name}: invalid scenario"))?;
        let stem = file_name.strip_suffix(".json").unwrap_or(file_name);
        if raw.id != stem {
            bail!(
                "{file_name}: id {:?} must equal the file name without .json",
                raw.id
            );
        }
        if raw.description.trim().is_empty() {
            bail!("{file_name}: description must say what behaviour the scenario pins and why");
        }
        if raw.steps.is_empty() {
            bail!("{file_name}: no steps");
        }
        for path in raw.files.keys() {
            let p = Path::new(path);
            if path.is_empty() || !p.components().all(|c| matches!(c, Component::Normal(_))) {
                bail!("{file_name}: files: {path:?} must be a relative path without ..");
            }
        }
        let steps = raw
            .steps
            .iter()
            .enumerate()
            .map(|(index, step)| {
                Step::parse(step).map_err(|e| anyhow::anyhow!("{file_name}: steps[{index}]: {e}"))
            })
            .collect::<Result<_>>()?;
        let reverse = raw
            .reverse
            .iter()
            .enumerate()
            .map(|(index, rule)| {
                parse_rule(rule).map_err(|e| anyhow::anyhow!("{file_name}: reverse[{index}]: {e}"))
            })
            .collect::<Result<_>>()?;
        Ok(Scenario {
            id: raw.id,
            description: raw.description,
            files: raw.files,
            reverse,
            steps,
            step_timeout: raw
                .timeout_ms
                .map_or(DEFAULT_STEP_TIMEOUT, Duration::from_millis),
            bridge_args: raw.bridge_args,
            env: raw.env,
            store_dir: raw.store_dir,
        })
    }
}

fn parse_rule(rule: &Value) -> Result<ReverseRule, String> {
    let map = rule.as_object().ok_or("a reverse rule must be an object")?;
    only_keys(
        map,
        &["method", "params", "nth", "reply", "delayMs", "comment"],
        "reverse rule",
    )?;
    let method = map
        .get("method")
        .and_then(Value::as_str)
        .ok_or("method must be a string")?;
    let reply = map
        .get("reply")
        .and_then(Value::as_object)
        .ok_or("reply must be an object")?;
    only_keys(reply, &["result", "error", "malformed", "never"], "reply")?;
    if reply.len() != 1 {
        return Err("reply needs exactly one of result, error, malformed, never".into());
    }
    let reply = match reply.iter().next() {
        Some((key, value)) if key == "result" => Reply::Result(value.clone()),
        Some((key, value)) if key == "error" && value.is_object() => Reply::Error(value.clone()),
        Some((key, _)) if key == "error" => {
            return Err("reply.error must be an error object".into())
        }
        Some((key, Value::Bool(true))) if key == "malformed" => Reply::Malformed,
        Some((key, Value::Bool(true))) if key == "never" => Reply::Never,
        _ => return Err("reply.malformed / reply.never take true".into()),
    };
    let delay = match map.get("delayMs") {
        None => Duration::ZERO,
        Some(ms) => Duration::from_millis(ms.as_u64().ok_or("delayMs must be a number")?),
    };
    let nth = match map.get("nth") {
        None => None,
        Some(n) => Some(
            n.as_u64()
                .filter(|&n| n >= 1)
                .ok_or("nth must be a positive integer (1 is the first request)")?,
        ),
    };
    Ok(ReverseRule {
        method: method.to_string(),
        params: map.get("params").cloned(),
        nth,
        reply,
        delay,
    })
}

/// Parses `(file name, contents)` pairs, sorted by id.
pub fn parse_all<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Vec<Scenario>> {
    let mut scenarios: Vec<Scenario> = files
        .into_iter()
        .map(|(name, text)| Scenario::parse(name, text))
        .collect::<Result<_>>()?;
    scenarios.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(scenarios)
}

/// Reads every `*.json` file of `dir`.
pub fn load_dir(dir: &Path) -> Result<Vec<Scenario>> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "json") {
            let name = path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let text =
                fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
            files.push((name, text));
        }
    }
    parse_all(
        files
            .iter()
            .map(|(name, text)| (name.as_str(), text.as_str())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scenario(value: Value) -> Result<Scenario> {
        Scenario::parse("s.json", &value.to_string())
    }

    #[test]
    fn parses_a_full_scenario() {
        let s = scenario(json!({
            "id": "s", "description": "d", "files": {"a/b.txt": "x"}, "timeoutMs": 500,
            "bridgeArgs": ["--max-line-bytes", "1024"], "env": {"RUST_LOG": "debug"}, "storeDir": true,
            "reverse": [
                {"method": "host/a", "reply": {"result": null}},
                {"method": "host/b", "params": {"x": 1}, "reply": {"error": {"code": 1, "message": "m"}}, "delayMs": 5},
                {"method": "host/c", "reply": {"malformed": true}},
                {"method": "host/d", "reply": {"never": true}},
                {"method": "host/a", "nth": 3, "reply": {"result": 1}}
            ],
            "steps": [{"sleep": 1}]
        }))
        .unwrap();
        assert_eq!(s.step_timeout, Duration::from_millis(500));
        assert_eq!(s.reverse[0].reply, Reply::Result(Value::Null));
        assert_eq!(s.reverse[1].delay, Duration::from_millis(5));
        assert_eq!(s.reverse[2].reply, Reply::Malformed);
        assert_eq!(s.reverse[3].reply, Reply::Never);
        assert_eq!((s.reverse[0].nth, s.reverse[4].nth), (None, Some(3)));
        assert!(s.store_dir);
    }

    #[test]
    fn rejects_bad_scenarios() {
        let base = json!({"id": "s", "description": "d", "steps": [{"sleep": 1}]});
        scenario(base.clone()).unwrap();
        for (patch, needle) in [
            (json!({"id": "other"}), "must equal the file name"),
            (json!({"description": " "}), "description"),
            (json!({"steps": []}), "no steps"),
            (json!({"steps": [{"sleep": 1}, {"bogus": 1}]}), "steps[1]"),
            (json!({"files": {"../x": ""}}), "relative path"),
            (
                json!({"reverse": [{"method": "host/a", "reply": {}}]}),
                "exactly one",
            ),
            (
                json!({"reverse": [{"method": "host/a", "reply": {"never": false}}]}),
                "take true",
            ),
            (json!({"extra": 1}), "unknown field"),
            (
                json!({"reverse": [{"method": "host/a", "nth": 0, "reply": {"never": true}}]}),
                "nth must be a positive integer",
            ),
            (json!({"storeDir": "yes"}), "invalid type"),
        ] {
            let mut value = base.clone();
            for (key, item) in patch.as_object().unwrap() {
                value[key] = item.clone();
            }
            let err = format!("{:#}", scenario(value).unwrap_err());
            assert!(err.contains(needle), "{patch}: {err}");
        }
    }
}
