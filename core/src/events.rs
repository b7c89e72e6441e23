//! Typed events a session emits while it runs.
//!
//! Tags are stable snake_case strings (`#[serde(tag = "type")]`); hosts and
//! SDKs match on them. New variants may be added; existing tags never change.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::llm::TokenUsage;

/// Everything a run reports, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A run started for `prompt`.
    AgentStart { prompt: String },
    /// A model turn starts (1-based).
    TurnStart { turn: u32 },
    /// Visible model text, in order.
    TextDelta { text: String },
    /// A tool call is about to run.
    ToolStart {
        tool_call_id: String,
        tool_name: String,
        arguments: Value,
    },
    /// A tool call finished; `is_error` marks tool errors fed back to the model.
    ToolEnd {
        tool_call_id: String,
        tool_name: String,
        output: String,
        is_error: bool,
    },
    /// A model turn ended with the usage of its model call.
    TurnEnd { turn: u32, usage: TokenUsage },
    /// The run finished with the final answer.
    AgentEnd {
        text: String,
        usage: TokenUsage,
        tool_calls_count: usize,
    },
    /// The run failed; no `agent_end` follows.
    Error { error: String },
    /// The permission policy (or the host) refused a tool call.
    PermissionDenied {
        tool_call_id: String,
        tool_name: String,
        reason: String,
    },
    /// A tool call waits for the host to confirm it.
    ConfirmationRequired {
        tool_call_id: String,
        tool_name: String,
        arguments: Value,
        timeout_ms: u64,
    },
    /// The host answered a confirmation.
    ConfirmationReceived {
        tool_call_id: String,
        tool_name: String,
        approved: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Nobody confirmed in time; the call was denied.
    ConfirmationTimeout {
        tool_call_id: String,
        tool_name: String,
        timeout_ms: u64,
    },
    /// Older turns were summarised to keep the request under the context limit.
    ContextCompacted {
        summarized_messages: usize,
        tokens_before: usize,
        tokens_after: usize,
    },
    /// A budget guard answered `soft` (kind `soft`) or `deny` (kind `hard`).
    BudgetThresholdHit {
        resource: String,
        kind: BudgetThresholdKind,
        consumed: f64,
        limit: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The host asked the session to reach a safe, persistable state so it
    /// can be moved; `deadline_ms` is the Unix epoch deadline in milliseconds.
    PassivationRequested {
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        deadline_ms: Option<u64>,
    },
    /// Another session invoked this one.
    PeerInvocation {
        from_session_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from_tenant_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        correlation_id: Option<String>,
    },
}

/// Which threshold a [`AgentEvent::BudgetThresholdHit`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BudgetThresholdKind {
    Soft,
    Hard,
}

impl AgentEvent {
    /// The event's stable wire tag.
    pub fn tag(&self) -> &'static str {
        match self {
            AgentEvent::AgentStart { .. } => "agent_start",
            AgentEvent::TurnStart { .. } => "turn_start",
            AgentEvent::TextDelta { .. } => "text_delta",
            AgentEvent::ToolStart { .. } => "tool_start",
            AgentEvent::ToolEnd { .. } => "tool_end",
            AgentEvent::TurnEnd { .. } => "turn_end",
            AgentEvent::AgentEnd { .. } => "agent_end",
            AgentEvent::Error { .. } => "error",
            AgentEvent::PermissionDenied { .. } => "permission_denied",
            AgentEvent::ConfirmationRequired { .. } => "confirmation_required",
            AgentEvent::ConfirmationReceived { .. } => "confirmation_received",
            AgentEvent::ConfirmationTimeout { .. } => "confirmation_timeout",
            AgentEvent::ContextCompacted { .. } => "context_compacted",
            AgentEvent::BudgetThresholdHit { .. } => "budget_threshold_hit",
            AgentEvent::PassivationRequested { .. } => "passivation_requested",
            AgentEvent::PeerInvocation { .. } => "peer_invocation",
        }
    }

    /// Every tag this build can emit, for capability lists and catalogs.
    pub const TAGS: &'static [&'static str] = &[
        "agent_start",
        "turn_start",
        "text_delta",
        "tool_start",
        "tool_end",
        "turn_end",
        "agent_end",
        "error",
        "permission_denied",
        "confirmation_required",
        "confirmation_received",
        "confirmation_timeout",
        "context_compacted",
        "budget_threshold_hit",
        "passivation_requested",
        "peer_invocation",
    ];

    /// Whether a host may inject this event onto a session's stream (the
    /// cluster vocabulary the framework itself never emits).
    pub fn is_host_injectable(&self) -> bool {
        matches!(
            self,
            AgentEvent::PassivationRequested { .. } | AgentEvent::PeerInvocation { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_match_the_serialized_type_field() {
        let samples = [
            AgentEvent::AgentStart { prompt: "p".into() },
            AgentEvent::TurnStart { turn: 1 },
            AgentEvent::TextDelta { text: "t".into() },
            AgentEvent::ToolStart {
                tool_call_id: "c".into(),
                tool_name: "read".into(),
                arguments: Value::Null,
            },
            AgentEvent::ToolEnd {
                tool_call_id: "c".into(),
                tool_name: "read".into(),
                output: String::new(),
                is_error: false,
            },
            AgentEvent::TurnEnd {
                turn: 1,
                usage: TokenUsage::default(),
            },
            AgentEvent::AgentEnd {
                text: String::new(),
                usage: TokenUsage::default(),
                tool_calls_count: 0,
            },
            AgentEvent::Error { error: "e".into() },
            AgentEvent::PermissionDenied {
                tool_call_id: "c".into(),
                tool_name: "write".into(),
                reason: "r".into(),
            },
            AgentEvent::ConfirmationRequired {
                tool_call_id: "c".into(),
                tool_name: "bash".into(),
                arguments: Value::Null,
                timeout_ms: 1,
            },
            AgentEvent::ConfirmationReceived {
                tool_call_id: "c".into(),
                tool_name: "bash".into(),
                approved: true,
                reason: None,
            },
            AgentEvent::ConfirmationTimeout {
                tool_call_id: "c".into(),
                tool_name: "bash".into(),
                timeout_ms: 1,
            },
            AgentEvent::ContextCompacted {
                summarized_messages: 2,
                tokens_before: 10,
                tokens_after: 5,
            },
            AgentEvent::BudgetThresholdHit {
                resource: "tokens".into(),
                kind: BudgetThresholdKind::Soft,
                consumed: 1.0,
                limit: 2.0,
                message: None,
            },
            AgentEvent::PassivationRequested {
                reason: "drain".into(),
                deadline_ms: Some(1),
            },
            AgentEvent::PeerInvocation {
                from_session_id: "s".into(),
                from_tenant_id: None,
                correlation_id: None,
            },
        ];
        assert_eq!(samples.len(), AgentEvent::TAGS.len());
        for (event, tag) in samples.iter().zip(AgentEvent::TAGS) {
            let json = serde_json::to_value(event).unwrap();
            assert_eq!(json["type"], *tag);
            assert_eq!(event.tag(), *tag);
        }
    }

    #[test]
    fn cluster_events_use_the_seed_json_tags() {
        let event: AgentEvent = serde_json::from_value(serde_json::json!({
            "type": "passivation_requested", "reason": "node drain", "deadline_ms": 1700000000000u64
        }))
        .unwrap();
        assert!(event.is_host_injectable());
        let peer = serde_json::to_value(AgentEvent::PeerInvocation {
            from_session_id: "a".into(),
            from_tenant_id: Some("t".into()),
            correlation_id: None,
        })
        .unwrap();
        assert_eq!(
            peer,
            serde_json::json!({"type": "peer_invocation", "from_session_id": "a", "from_tenant_id": "t"})
        );
    }
}
