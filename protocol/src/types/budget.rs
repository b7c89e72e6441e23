//! The budget guard: `session/setBudgetGuard` and `host/budget/*`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Usage;

/// Default deadline of each budget check, from seed 000.
pub const DEFAULT_BUDGET_TIMEOUT_MS: u64 = 5000;

/// Which guard methods the host implements; the others are permissive.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BudgetGuardSpec {
    #[serde(default)]
    pub check_before_llm: bool,
    #[serde(default)]
    pub record_after_llm: bool,
    #[serde(default)]
    pub check_before_tool: bool,
    /// Deadline of every call in milliseconds (default 5000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetBudgetGuardParams {
    pub session_id: String,
    /// `null` clears the guard.
    pub guard: Option<BudgetGuardSpec>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BudgetCheckBeforeLlmParams {
    pub session_id: String,
    pub estimated_tokens: usize,
    pub timeout_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BudgetRecordAfterLlmParams {
    pub session_id: String,
    pub usage: Usage,
    pub timeout_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BudgetCheckBeforeToolParams {
    pub session_id: String,
    pub tool_name: String,
    pub timeout_ms: u64,
}

/// The answer to a budget check: `null` means allow.
pub type BudgetDecisionResult = Option<a3s_code_core::budget::BudgetDecision>;
