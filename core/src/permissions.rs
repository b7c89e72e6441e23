//! Permission checks before a tool call runs.
//!
//! A [`PermissionPolicy`] holds rules in three lists and a default. Rules are
//! `tool` or `tool(argument)`: the tool part is a glob on the tool name
//! (`write*`), the argument part matches the call's primary argument, either
//! as a prefix (`bash(git status:*)`) or as a glob (`read(src/**)`).
//! Evaluation order is deny → allow → ask → default. `Ask` pauses the call
//! and asks a [`ConfirmationHandler`]; no handler, a rejection or a timeout
//! all mean deny.

use std::fmt::Debug;

use globset::{GlobBuilder, GlobMatcher};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the policy says about one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PermissionDecision {
    Allow,
    Deny,
    /// Ask the host (a human) before running.
    #[default]
    Ask,
}

/// Rules deciding which tool calls may run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PermissionPolicy {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
    #[serde(default)]
    pub ask: Vec<String>,
    /// Applies when no rule matches (default: ask).
    #[serde(default)]
    pub default_decision: PermissionDecision,
}

/// A parsed rule.
#[derive(Debug, Clone)]
struct Rule {
    tool: GlobMatcher,
    argument: Option<ArgumentPattern>,
}

#[derive(Debug, Clone)]
enum ArgumentPattern {
    Prefix(String),
    Glob(GlobMatcher),
}

impl Rule {
    fn parse(text: &str) -> Option<Rule> {
        let text = text.trim();
        let (tool, argument) = match text.split_once('(') {
            Some((tool, rest)) => (tool.trim(), Some(rest.strip_suffix(')')?.trim())),
            None => (text, None),
        };
        let tool = glob(tool)?;
        let argument = match argument {
            None => None,
            Some(arg) => Some(match arg.strip_suffix(":*") {
                Some(prefix) => ArgumentPattern::Prefix(prefix.to_string()),
                None => ArgumentPattern::Glob(glob(arg)?),
            }),
        };
        Some(Rule { tool, argument })
    }

    fn matches_tool(&self, tool: &str) -> bool {
        self.tool.is_match(tool)
    }

    fn matches(&self, tool: &str, argument: Option<&str>) -> bool {
        if !self.matches_tool(tool) {
            return false;
        }
        match (&self.argument, argument) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(ArgumentPattern::Prefix(prefix)), Some(arg)) => arg.starts_with(prefix.as_str()),
            (Some(ArgumentPattern::Glob(glob)), Some(arg)) => glob.is_match(arg),
        }
    }
}

fn glob(pattern: &str) -> Option<GlobMatcher> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

fn parse_rules(rules: &[String]) -> Vec<Rule> {
    rules
        .iter()
        .filter_map(|r| {
            let rule = Rule::parse(r);
            if rule.is_none() {
                tracing::warn!("ignoring an unparsable permission rule: {r:?}");
            }
            rule
        })
        .collect()
}

impl PermissionPolicy {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn allow(mut self, rule: impl Into<String>) -> Self {
        self.allow.push(rule.into());
        self
    }

    pub fn deny(mut self, rule: impl Into<String>) -> Self {
        self.deny.push(rule.into());
        self
    }

    pub fn ask(mut self, rule: impl Into<String>) -> Self {
        self.ask.push(rule.into());
        self
    }

    pub fn with_default(mut self, decision: PermissionDecision) -> Self {
        self.default_decision = decision;
        self
    }

    /// Every rule that does not parse, for early, clear errors.
    pub fn invalid_rules(&self) -> Vec<String> {
        self.allow
            .iter()
            .chain(&self.deny)
            .chain(&self.ask)
            .filter(|r| Rule::parse(r).is_none())
            .cloned()
            .collect()
    }

    /// Decides one call: deny → allow → ask → default.
    pub fn evaluate(&self, tool: &str, arguments: &Value) -> PermissionDecision {
        let argument = primary_argument(tool, arguments);
        let hit = |rules: &[String]| {
            parse_rules(rules)
                .iter()
                .any(|r| r.matches(tool, argument.as_deref()))
        };
        if hit(&self.deny) {
            PermissionDecision::Deny
        } else if hit(&self.allow) {
            PermissionDecision::Allow
        } else if hit(&self.ask) {
            PermissionDecision::Ask
        } else {
            self.default_decision
        }
    }

    /// True when no call of `tool` could ever run: such tools are not
    /// offered to the model at all.
    pub fn denies_outright(&self, tool: &str) -> bool {
        if parse_rules(&self.deny)
            .iter()
            .any(|r| r.argument.is_none() && r.matches_tool(tool))
        {
            return true;
        }
        self.default_decision == PermissionDecision::Deny
            && !parse_rules(&self.allow)
                .iter()
                .chain(parse_rules(&self.ask).iter())
                .any(|r| r.matches_tool(tool))
    }
}

/// The argument a rule's `(...)` part is matched against.
pub fn primary_argument(tool: &str, arguments: &Value) -> Option<String> {
    let field = |name: &str| {
        arguments
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    match tool {
        "bash" => field("command"),
        "read" | "write" | "edit" => field("file_path"),
        "ls" => field("path").or_else(|| Some(".".into())),
        "glob" | "grep" => field("path").or_else(|| field("pattern")),
        "web_fetch" => field("url"),
        "git" => arguments.get("args").and_then(Value::as_array).map(|args| {
            args.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" ")
        }),
        _ => None,
    }
}

/// What the host is asked to confirm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfirmationRequest {
    pub session_id: String,
    pub tool_call_id: String,
    pub tool_name: String,
    pub arguments: Value,
    pub timeout_ms: u64,
}

/// The host's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfirmationOutcome {
    Approved,
    Rejected {
        reason: String,
    },
    /// Nobody answered before the deadline.
    TimedOut,
}

/// Asks a human (through the host) whether a call may run.
#[async_trait::async_trait]
pub trait ConfirmationHandler: Send + Sync + Debug {
    /// Must resolve by `request.timeout_ms`; the loop enforces it too.
    async fn confirm(&self, request: &ConfirmationRequest) -> ConfirmationOutcome;
}

/// Default deadline for a confirmation.
pub const DEFAULT_CONFIRMATION_TIMEOUT_MS: u64 = 60_000;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn seed_004_policy() -> PermissionPolicy {
        PermissionPolicy {
            allow: ["read*", "ls*", "glob*", "grep*", "code_*"]
                .map(String::from)
                .to_vec(),
            deny: ["write*", "edit*", "patch*", "bash*", "git*"]
                .map(String::from)
                .to_vec(),
            ask: vec![],
            default_decision: PermissionDecision::Deny,
        }
    }

    #[test]
    fn the_seed_004_sample_allows_reading_and_denies_writing() {
        let policy = seed_004_policy();
        let read = json!({"file_path": "src/main.rs"});
        assert_eq!(policy.evaluate("read", &read), PermissionDecision::Allow);
        assert_eq!(policy.evaluate("write", &read), PermissionDecision::Deny);
        assert_eq!(
            policy.evaluate("bash", &json!({"command": "ls"})),
            PermissionDecision::Deny
        );
        assert_eq!(
            policy.evaluate("web_fetch", &json!({"url": "x"})),
            PermissionDecision::Deny
        );
        for tool in ["write", "edit", "patch", "bash", "git", "web_fetch"] {
            assert!(policy.denies_outright(tool), "{tool}");
        }
        for tool in ["read", "ls", "glob", "grep"] {
            assert!(!policy.denies_outright(tool), "{tool}");
        }
    }

    #[test]
    fn argument_rules_match_prefixes_and_globs_and_deny_wins() {
        let policy = PermissionPolicy::new()
            .allow("bash(git status:*)")
            .allow("read(src/**)")
            .deny("read(src/secret/**)")
            .ask("bash(cargo *)")
            .with_default(PermissionDecision::Deny);
        let bash = |c: &str| policy.evaluate("bash", &json!({"command": c}));
        let read = |p: &str| policy.evaluate("read", &json!({"file_path": p}));
        assert_eq!(bash("git status --short"), PermissionDecision::Allow);
        assert_eq!(bash("git push"), PermissionDecision::Deny);
        assert_eq!(bash("cargo test"), PermissionDecision::Ask);
        assert_eq!(read("src/lib.rs"), PermissionDecision::Allow);
        assert_eq!(read("src/a/b.rs"), PermissionDecision::Allow);
        assert_eq!(read("src/secret/key.pem"), PermissionDecision::Deny);
        assert_eq!(read("README.md"), PermissionDecision::Deny);
        // A deny with an argument pattern does not remove the tool outright.
        assert!(!policy.denies_outright("read"));
        assert!(!policy.denies_outright("bash"));
        assert!(policy.denies_outright("write"));
    }

    #[test]
    fn the_default_is_ask_and_bad_rules_are_reported() {
        let policy = PermissionPolicy::new().allow("read(");
        assert_eq!(policy.evaluate("ls", &json!({})), PermissionDecision::Ask);
        assert_eq!(policy.invalid_rules(), vec!["read(".to_string()]);
        let wire: PermissionPolicy = serde_json::from_value(json!({
            "allow": ["read*"], "default_decision": "deny"
        }))
        .unwrap();
        assert_eq!(wire.default_decision, PermissionDecision::Deny);
    }
}
