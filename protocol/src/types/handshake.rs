//! `initialize`: version, peer info, capabilities and limits.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Name and version of a peer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PeerInfo {
    pub name: String,
    pub version: String,
}

/// What the host can answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Reverse request methods (`host/...`) the host answers.
    #[serde(default)]
    pub reverse_requests: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    pub protocol_version: u32,
    pub client_info: PeerInfo,
    #[serde(default)]
    pub capabilities: ClientCapabilities,
}

/// What this bridge build serves: nothing is listed that is not compiled in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    pub methods: Vec<String>,
    pub events: Vec<String>,
    pub reverse_requests: Vec<String>,
}

/// Bounds the host must respect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// Longest accepted line in bytes, newline excluded.
    pub max_line_bytes: usize,
    /// Requests the bridge runs at once; more are answered `OVERLOADED`.
    pub max_in_flight_requests: usize,
    /// Events a stream sends beyond the last `$/streamAck`.
    pub stream_window: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub protocol_version: u32,
    pub server_info: PeerInfo,
    pub capabilities: ServerCapabilities,
    pub limits: Limits,
}
