//! Stream notifications: `session/event` and `$/streamAck`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::RequestId;

/// Where and when an event happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventMetadata {
    pub run_id: String,
    pub session_id: String,
    /// Position of the event within its run, from 0.
    pub seq: u64,
    pub timestamp_ms: u64,
}

/// The versioned wrapper of every event on the wire. `payload` is the
/// event's fields (see the `AgentEvent` schema), without `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EventEnvelope {
    pub version: u32,
    #[serde(rename = "type")]
    pub event_type: String,
    pub payload: Value,
    pub metadata: EventMetadata,
}

impl EventEnvelope {
    /// Wraps a core event record.
    pub fn from_record(record: &a3s_code_core::EventRecord) -> Self {
        let mut payload = serde_json::to_value(&record.event).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut payload {
            map.remove("type");
        }
        Self {
            version: crate::EVENT_ENVELOPE_VERSION,
            event_type: record.event.tag().to_string(),
            payload,
            metadata: EventMetadata {
                run_id: record.run_id.clone(),
                session_id: record.session_id.clone(),
                seq: record.seq,
                timestamp_ms: record.timestamp_ms,
            },
        }
    }
}

/// `session/event`: one event of the stream opened by request `requestId`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionEventParams {
    pub request_id: RequestId,
    /// Counts this stream's notifications from 0, without gaps.
    pub seq: u64,
    pub event: EventEnvelope,
}

/// `$/streamAck`: the host consumed every event of the stream up to `seq`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StreamAckParams {
    pub request_id: RequestId,
    pub seq: u64,
}
