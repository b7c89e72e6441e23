//! Budget / cost guards (seed 000).
//!
//! The host owns the policy; the loop asks the guard before every LLM call
//! (and tool call) and reports usage after every LLM call, then enforces the
//! decision: `Soft` emits a `budget_threshold_hit` event of kind `soft` and
//! goes on, `Deny` emits one of kind `hard` and fails the guarded call with
//! `Budget exhausted on '<resource>': <reason>`.

use std::fmt::Debug;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::llm::TokenUsage;

/// What a guard decided for one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum BudgetDecision {
    /// Go on.
    Allow,
    /// Go on, but a threshold was crossed.
    Soft {
        resource: String,
        consumed: f64,
        limit: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// Refuse the call.
    Deny { resource: String, reason: String },
}

/// A host-owned budget policy. Missing methods are permissive.
#[async_trait::async_trait]
pub trait BudgetGuard: Send + Sync + Debug {
    /// Called before every LLM request with an estimate of its prompt tokens.
    async fn check_before_llm(
        &self,
        session_id: &str,
        estimated_prompt_tokens: usize,
    ) -> BudgetDecision;

    /// Called after every LLM request with the usage it reported.
    async fn record_after_llm(&self, _session_id: &str, _usage: &TokenUsage) {}

    /// Called before every tool call.
    async fn check_before_tool(&self, _session_id: &str, _tool_name: &str) -> BudgetDecision {
        BudgetDecision::Allow
    }
}
