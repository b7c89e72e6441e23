//! The method catalog: one declarative table per direction.
//!
//! Capability lists, the OpenRPC document and the schema files all come from
//! these tables, so a method cannot be served without being documented, nor
//! documented without a schema.

use schemars::schema::RootSchema;
use schemars::{schema_for, JsonSchema};

use crate::errors::DataCode;
use crate::types::*;

/// Produces the JSON Schema of one params or result type.
pub type SchemaFn = fn() -> RootSchema;

fn schema<T: JsonSchema>() -> RootSchema {
    schema_for!(T)
}

/// Who sends a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    HostToBridge,
    BridgeToHost,
    Both,
}

/// One request method (a `result` is expected) or notification (`result` is `None`).
#[derive(Debug, Clone, Copy)]
pub struct MethodSpec {
    pub name: &'static str,
    pub direction: Direction,
    pub summary: &'static str,
    pub params: SchemaFn,
    pub result: Option<SchemaFn>,
    /// Runtime errors (`data.code`) beyond the generic JSON-RPC ones.
    pub errors: &'static [DataCode],
}

/// How a run (`session/send`, `session/stream`) can fail.
const RUN_ERRORS: &[DataCode] = &[
    DataCode::SessionNotFound,
    DataCode::SessionBusy,
    DataCode::BudgetExhausted,
    DataCode::LlmError,
    DataCode::MaxToolRounds,
    DataCode::Passivated,
    DataCode::Cancelled,
];

/// Requests the host sends to the bridge.
pub const HOST_REQUESTS: &[MethodSpec] = &[
    MethodSpec {
        name: "initialize",
        direction: Direction::HostToBridge,
        summary: "Handshake: protocol version, peer info, capabilities and limits. Must come first.",
        params: schema::<InitializeParams>,
        result: Some(schema::<InitializeResult>),
        errors: &[DataCode::UnsupportedProtocolVersion, DataCode::AlreadyInitialized],
    },
    MethodSpec {
        name: "shutdown",
        direction: Direction::HostToBridge,
        summary: "Stops taking work, lets in-flight requests finish within a grace period, closes sessions, answers, exits 0.",
        params: schema::<EmptyParams>,
        result: Some(schema::<EmptyResult>),
        errors: &[],
    },
    MethodSpec {
        name: "agent/create",
        direction: Direction::HostToBridge,
        summary: "Loads an agent configuration (ACL file path or inline ACL).",
        params: schema::<AgentCreateParams>,
        result: Some(schema::<AgentCreateResult>),
        errors: &[DataCode::ConfigError],
    },
    MethodSpec {
        name: "agent/close",
        direction: Direction::HostToBridge,
        summary: "Closes an agent and every session it built.",
        params: schema::<AgentCloseParams>,
        result: Some(schema::<EmptyResult>),
        errors: &[DataCode::AgentNotFound],
    },
    MethodSpec {
        name: "session/create",
        direction: Direction::HostToBridge,
        summary: "Builds a session of an agent, confined to a workspace directory.",
        params: schema::<SessionCreateParams>,
        result: Some(schema::<SessionCreateResult>),
        errors: &[DataCode::AgentNotFound, DataCode::ConfigError],
    },
    MethodSpec {
        name: "session/info",
        direction: Direction::HostToBridge,
        summary: "The session's id, workspace, tools and identity tags.",
        params: schema::<SessionRef>,
        result: Some(schema::<SessionInfoResult>),
        errors: &[DataCode::SessionNotFound],
    },
    MethodSpec {
        name: "session/send",
        direction: Direction::HostToBridge,
        summary: "Runs a prompt to completion.",
        params: schema::<SessionPromptParams>,
        result: Some(schema::<RunResult>),
        errors: RUN_ERRORS,
    },
    MethodSpec {
        name: "session/stream",
        direction: Direction::HostToBridge,
        summary: "Runs a prompt, sending its events as session/event notifications before the response.",
        params: schema::<SessionPromptParams>,
        result: Some(schema::<RunResult>),
        errors: RUN_ERRORS,
    },
    MethodSpec {
        name: "session/tool",
        direction: Direction::HostToBridge,
        summary: "Runs one tool directly (no model), inside the workspace, with the same limits and events.",
        params: schema::<SessionToolParams>,
        result: Some(schema::<SessionToolResult>),
        errors: &[DataCode::SessionNotFound, DataCode::SessionClosed],
    },
    MethodSpec {
        name: "session/artifact",
        direction: Direction::HostToBridge,
        summary: "Reads a stored artifact (large tool output) by byte range.",
        params: schema::<SessionArtifactParams>,
        result: Some(schema::<SessionArtifactResult>),
        errors: &[DataCode::SessionNotFound, DataCode::ArtifactNotFound],
    },
    MethodSpec {
        name: "session/runs",
        direction: Direction::HostToBridge,
        summary: "The session's retained runs, oldest first, with their status.",
        params: schema::<SessionRef>,
        result: Some(schema::<SessionRunsResult>),
        errors: &[DataCode::SessionNotFound],
    },
    MethodSpec {
        name: "session/resumeRun",
        direction: Direction::HostToBridge,
        summary: "Continues a run from its loop checkpoint as a new run (seed 000 resume_run).",
        params: schema::<SessionResumeRunParams>,
        result: Some(schema::<RunResult>),
        errors: &[
            DataCode::SessionNotFound,
            DataCode::SessionBusy,
            DataCode::NoSessionStore,
            DataCode::CheckpointNotFound,
            DataCode::StoreError,
        ],
    },
    MethodSpec {
        name: "session/passivate",
        direction: Direction::HostToBridge,
        summary: "Stops the running prompt at its next safe point (checkpointed) and returns its run id; past the deadline it is cancelled.",
        params: schema::<SessionPassivateParams>,
        result: Some(schema::<SessionPassivateResult>),
        errors: &[DataCode::SessionNotFound],
    },
    MethodSpec {
        name: "session/injectEvent",
        direction: Direction::HostToBridge,
        summary: "Delivers a host-produced passivation_requested or peer_invocation event to the running prompt's stream.",
        params: schema::<SessionInjectEventParams>,
        result: Some(schema::<SessionInjectEventResult>),
        errors: &[DataCode::SessionNotFound],
    },
    MethodSpec {
        name: "session/save",
        direction: Direction::HostToBridge,
        summary: "Writes the session snapshot to its store now.",
        params: schema::<SessionRef>,
        result: Some(schema::<EmptyResult>),
        errors: &[DataCode::SessionNotFound, DataCode::StoreError],
    },
    MethodSpec {
        name: "session/setBudgetGuard",
        direction: Direction::HostToBridge,
        summary: "Installs (or clears with null) a budget guard answered by host/budget/* reverse requests.",
        params: schema::<SetBudgetGuardParams>,
        result: Some(schema::<EmptyResult>),
        errors: &[DataCode::SessionNotFound],
    },
    MethodSpec {
        name: "session/close",
        direction: Direction::HostToBridge,
        summary: "Closes a session; a running prompt is cancelled.",
        params: schema::<SessionRef>,
        result: Some(schema::<EmptyResult>),
        errors: &[DataCode::SessionNotFound],
    },
];

/// Reverse requests the bridge sends to the host.
pub const BRIDGE_REQUESTS: &[MethodSpec] = &[
    MethodSpec {
        name: "host/budget/checkBeforeLlm",
        direction: Direction::BridgeToHost,
        summary: "Budget check before an LLM call. Error, timeout or malformed answer = deny.",
        params: schema::<BudgetCheckBeforeLlmParams>,
        result: Some(schema::<BudgetDecisionResult>),
        errors: &[],
    },
    MethodSpec {
        name: "host/budget/recordAfterLlm",
        direction: Direction::BridgeToHost,
        summary: "Reports the usage of an LLM call. Failures are ignored.",
        params: schema::<BudgetRecordAfterLlmParams>,
        result: Some(schema::<serde_json::Value>),
        errors: &[],
    },
    MethodSpec {
        name: "host/budget/checkBeforeTool",
        direction: Direction::BridgeToHost,
        summary: "Budget check before a tool call. Error, timeout or malformed answer = deny.",
        params: schema::<BudgetCheckBeforeToolParams>,
        result: Some(schema::<BudgetDecisionResult>),
        errors: &[],
    },
    PERMISSION_REQUEST,
];

/// Confirmation of a tool call that the permission policy marks `ask`.
pub const PERMISSION_REQUEST: MethodSpec = MethodSpec {
    name: "host/permission/request",
    direction: Direction::BridgeToHost,
    summary: "Asks the host to confirm a tool call. Error, timeout, no handler or a malformed answer = deny.",
    params: schema::<PermissionRequestParams>,
    result: Some(schema::<PermissionRequestResult>),
    errors: &[],
};

/// Notifications, in either direction.
pub const NOTIFICATIONS: &[MethodSpec] = &[
    MethodSpec {
        name: "session/event",
        direction: Direction::BridgeToHost,
        summary: "One event of a stream, tagged with the stream's request id and a gap-free sequence number.",
        params: schema::<SessionEventParams>,
        result: None,
        errors: &[],
    },
    MethodSpec {
        name: "$/streamAck",
        direction: Direction::HostToBridge,
        summary: "Grants flow-control credit: the host consumed the stream's events up to seq.",
        params: schema::<StreamAckParams>,
        result: None,
        errors: &[],
    },
    MethodSpec {
        name: "$/cancelRequest",
        direction: Direction::Both,
        summary: "Cancels a request the sender sent earlier.",
        params: schema::<CancelRequestParams>,
        result: None,
        errors: &[],
    },
];

/// Names of the host→bridge request methods, for `capabilities.methods`.
pub fn host_request_names() -> Vec<String> {
    HOST_REQUESTS.iter().map(|m| m.name.to_string()).collect()
}

/// Names of the reverse requests, for `capabilities.reverseRequests`.
pub fn bridge_request_names() -> Vec<String> {
    BRIDGE_REQUESTS.iter().map(|m| m.name.to_string()).collect()
}
