//! Permissions: the policy in `session/create` options and the
//! `host/permission/request` confirmation.

use a3s_code_core::permissions::{PermissionDecision, PermissionPolicy};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Rules deciding which tool calls run: deny → allow → ask → default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PermissionPolicyParams {
    /// Rules such as `read*`, `bash(git status:*)`, `read(src/**)`.
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
    #[serde(default)]
    pub ask: Vec<String>,
    /// `allow`, `deny` or `ask` (the default).
    #[serde(default)]
    pub default_decision: PermissionDecision,
}

impl From<PermissionPolicyParams> for PermissionPolicy {
    fn from(p: PermissionPolicyParams) -> Self {
        PermissionPolicy {
            allow: p.allow,
            deny: p.deny,
            ask: p.ask,
            default_decision: p.default_decision,
        }
    }
}

/// `host/permission/request`: may this tool call run?
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRequestParams {
    pub session_id: String,
    pub tool_call_id: String,
    pub tool_name: String,
    pub arguments: Value,
    pub timeout_ms: u64,
}

/// The host's answer; anything else counts as a rejection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRequestResult {
    pub approved: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
