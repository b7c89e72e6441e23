//! `session/*` methods other than streaming.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Deterministic ids and time; each field independent of the other.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostEnvConfig {
    /// Ids become `<prefix>-<kind>-<n>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential_id_prefix: Option<String>,
    /// Every timestamp is this Unix epoch millisecond.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_time_ms: Option<u64>,
}

/// Options of `session/create`; all optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionOptionsParams {
    /// `provider/model`; defaults to the configuration's `default_model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tool_rounds: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_env: Option<HostEnvConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_template_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
    /// Which tool calls may run; absent lets every call run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_policy: Option<super::PermissionPolicyParams>,
    /// Deadline of each `host/permission/request` (default 60000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation_timeout_ms: Option<u64>,
    /// Persist the session, its runs and loop checkpoints as files here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_session_store_dir: Option<String>,
    /// Caps on what a long-running session keeps in memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention_limits: Option<RetentionLimitsParams>,
    /// The model's context window in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_context_tokens: Option<usize>,
    /// Summarise older turns when a request would pass the threshold.
    #[serde(default)]
    pub auto_compact: bool,
    /// Fraction of `maxContextTokens` that triggers compaction (default 0.8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_compact_threshold: Option<f64>,
}

/// Seed 000 retention limits; omitted fields keep their defaults (64 runs,
/// 2048 events and 8 MiB per run, 8192 trace events, 512 sub-agent tasks).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RetentionLimitsParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_runs_retained: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_events_per_run: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_event_bytes_per_run: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_trace_events: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_terminal_subagent_tasks: Option<usize>,
    /// Lifts every cap; only for sessions known to be short.
    #[serde(default)]
    pub unbounded: bool,
}

impl From<RetentionLimitsParams> for a3s_code_core::retention::SessionRetentionLimits {
    fn from(p: RetentionLimitsParams) -> Self {
        let d = Self::default();
        Self {
            max_runs_retained: p.max_runs_retained.unwrap_or(d.max_runs_retained),
            max_events_per_run: p.max_events_per_run.unwrap_or(d.max_events_per_run),
            max_event_bytes_per_run: p
                .max_event_bytes_per_run
                .unwrap_or(d.max_event_bytes_per_run),
            max_trace_events: p.max_trace_events.unwrap_or(d.max_trace_events),
            max_terminal_subagent_tasks: p
                .max_terminal_subagent_tasks
                .unwrap_or(d.max_terminal_subagent_tasks),
            unbounded: p.unbounded,
        }
    }
}

/// `session/resumeRun`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionResumeRunParams {
    pub session_id: String,
    /// The run whose loop checkpoint to continue.
    pub run_id: String,
}

/// `session/passivate`: stop the running prompt at its next safe point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionPassivateParams {
    pub session_id: String,
    pub reason: String,
    /// Unix epoch milliseconds; past it the run is cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionPassivateResult {
    /// The run to resume elsewhere; `null` when nothing was running.
    pub run_id: Option<String>,
}

/// `session/injectEvent`: a host-produced cluster event for the stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionInjectEventParams {
    pub session_id: String,
    /// `{"type": "passivation_requested" | "peer_invocation", ...fields}`.
    pub event: a3s_code_core::AgentEvent,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionInjectEventResult {
    /// Whether a running prompt's stream received it.
    pub delivered: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionCreateParams {
    pub agent_id: String,
    /// Directory the session's tools are confined to.
    pub workspace: String,
    #[serde(default)]
    pub options: Option<SessionOptionsParams>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionCreateResult {
    pub session_id: String,
}

/// Params of methods that name only a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionRef {
    pub session_id: String,
}

/// What `session/info` reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfoResult {
    pub session_id: String,
    pub workspace: String,
    pub tools: Vec<String>,
    pub tenant_id: Option<String>,
    pub principal: Option<String>,
    pub agent_template_id: Option<String>,
    pub correlation_id: Option<String>,
}

/// Params of `session/send` and `session/stream`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionPromptParams {
    pub session_id: String,
    pub prompt: String,
}

/// Token counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub prompt_tokens: usize,
    pub completion_tokens: usize,
    pub total_tokens: usize,
}

impl From<a3s_code_core::llm::TokenUsage> for Usage {
    fn from(u: a3s_code_core::llm::TokenUsage) -> Self {
        Self {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            total_tokens: u.total_tokens,
        }
    }
}

/// The outcome of a run (`session/send`, `session/stream`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunResult {
    pub run_id: String,
    pub text: String,
    pub usage: Usage,
    pub tool_calls_count: usize,
}

impl From<a3s_code_core::RunResult> for RunResult {
    fn from(r: a3s_code_core::RunResult) -> Self {
        Self {
            run_id: r.run_id,
            text: r.text,
            usage: r.usage.into(),
            tool_calls_count: r.tool_calls_count,
        }
    }
}
