//! Direct tool calls, artifacts and run records.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `session/tool`: the host runs one tool itself, without the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionToolParams {
    pub session_id: String,
    /// Tool name, e.g. `read`, `glob`.
    pub name: String,
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionToolResult {
    /// The run recorded for this call.
    pub run_id: String,
    /// What the tool produced (a preview and an artifact URI when large).
    pub output: String,
    /// A tool error (bad arguments, outside the workspace, ...).
    pub is_error: bool,
}

/// `session/artifact`: reads a stored artifact by byte range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionArtifactParams {
    pub session_id: String,
    /// Artifact id or `artifact://` URI.
    pub artifact: String,
    #[serde(default)]
    pub offset: usize,
    /// Bytes to read (default and cap 1 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionArtifactResult {
    pub uri: String,
    pub offset: usize,
    /// UTF-8 text; never splits a character.
    pub data: String,
    pub eof: bool,
    pub total: usize,
    pub sha256: String,
}

/// One run of a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunInfo {
    pub id: String,
    /// `running`, `completed`, `failed`, `cancelled` or `passivated`.
    pub status: String,
    pub prompt: String,
    pub started_ms: u64,
    pub ended_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionRunsResult {
    pub runs: Vec<RunInfo>,
}
