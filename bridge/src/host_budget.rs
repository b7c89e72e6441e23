//! A core `BudgetGuard` answered by the host through `host/budget/*`.
//!
//! Fail-closed as seed 000 requires: a check that errors, times out, has no
//! handler or returns a malformed decision is a deny; a method the host did
//! not implement is permissive; a failing `recordAfterLlm` is ignored.

use std::sync::Arc;
use std::time::Duration;

use a3s_code_core::budget::{BudgetDecision, BudgetGuard};
use a3s_code_core::llm::TokenUsage;
use a3s_code_protocol::types::{
    BudgetCheckBeforeLlmParams, BudgetCheckBeforeToolParams, BudgetGuardSpec,
    BudgetRecordAfterLlmParams, DEFAULT_BUDGET_TIMEOUT_MS,
};
use serde_json::Value;

use crate::reverse::ReverseClient;

/// Resource named in fail-closed denials, so hosts can tell them from their own.
pub const FAIL_CLOSED_RESOURCE: &str = "budget_guard";

#[derive(Debug)]
pub struct HostBudgetGuard {
    reverse: Arc<ReverseClient>,
    spec: BudgetGuardSpec,
}

impl HostBudgetGuard {
    pub fn new(reverse: Arc<ReverseClient>, spec: BudgetGuardSpec) -> Self {
        Self { reverse, spec }
    }

    fn timeout_ms(&self) -> u64 {
        self.spec.timeout_ms.unwrap_or(DEFAULT_BUDGET_TIMEOUT_MS)
    }

    async fn check(&self, method: &str, params: Value) -> BudgetDecision {
        let timeout = Duration::from_millis(self.timeout_ms());
        let deny = |reason: String| BudgetDecision::Deny {
            resource: FAIL_CLOSED_RESOURCE.into(),
            reason,
        };
        match self.reverse.call(method, params, timeout).await {
            Ok(Value::Null) => BudgetDecision::Allow,
            Ok(value) => serde_json::from_value::<BudgetDecision>(value)
                .unwrap_or_else(|e| deny(format!("{method} returned a malformed decision: {e}"))),
            Err(error) => deny(format!("{method} failed: {error}")),
        }
    }
}

#[async_trait::async_trait]
impl BudgetGuard for HostBudgetGuard {
    async fn check_before_llm(
        &self,
        session_id: &str,
        estimated_prompt_tokens: usize,
    ) -> BudgetDecision {
        if !self.spec.check_before_llm {
            return BudgetDecision::Allow;
        }
        let params = BudgetCheckBeforeLlmParams {
            session_id: session_id.to_string(),
            estimated_tokens: estimated_prompt_tokens,
            timeout_ms: self.timeout_ms(),
        };
        self.check("host/budget/checkBeforeLlm", to_value(params))
            .await
    }

    async fn record_after_llm(&self, session_id: &str, usage: &TokenUsage) {
        if !self.spec.record_after_llm {
            return;
        }
        let params = BudgetRecordAfterLlmParams {
            session_id: session_id.to_string(),
            usage: (*usage).into(),
            timeout_ms: self.timeout_ms(),
        };
        let timeout = Duration::from_millis(self.timeout_ms());
        if let Err(error) = self
            .reverse
            .call("host/budget/recordAfterLlm", to_value(params), timeout)
            .await
        {
            tracing::warn!("host/budget/recordAfterLlm failed (ignored): {error}");
        }
    }

    async fn check_before_tool(&self, session_id: &str, tool_name: &str) -> BudgetDecision {
        if !self.spec.check_before_tool {
            return BudgetDecision::Allow;
        }
        let params = BudgetCheckBeforeToolParams {
            session_id: session_id.to_string(),
            tool_name: tool_name.to_string(),
            timeout_ms: self.timeout_ms(),
        };
        self.check("host/budget/checkBeforeTool", to_value(params))
            .await
    }
}

fn to_value<T: serde::Serialize>(value: T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
