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
    /// A budget guard answered `soft` (kind `soft`) or `deny` (kind `hard`).
    BudgetThresholdHit {
        resource: String,
        kind: BudgetThresholdKind,
        consumed: f64,
        limit: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
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
            AgentEvent::BudgetThresholdHit { .. } => "budget_threshold_hit",
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
        "budget_threshold_hit",
    ];
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
            AgentEvent::BudgetThresholdHit {
                resource: "tokens".into(),
                kind: BudgetThresholdKind::Soft,
                consumed: 1.0,
                limit: 2.0,
                message: None,
            },
        ];
        assert_eq!(samples.len(), AgentEvent::TAGS.len());
        for (event, tag) in samples.iter().zip(AgentEvent::TAGS) {
            let json = serde_json::to_value(event).unwrap();
            assert_eq!(json["type"], *tag);
            assert_eq!(event.tag(), *tag);
        }
    }
}
