//! The persisted documents: a session snapshot and a run's loop checkpoint.
//!
//! Both carry `schema_version`; a build refuses documents from a newer one.

use serde::{Deserialize, Serialize};

use crate::llm::{Message, TokenUsage};
use crate::session::{IdentityTags, RunRecord};

/// Version of [`SessionSnapshot`] this build writes and reads.
pub const SESSION_SCHEMA_VERSION: u32 = 1;
/// Version of [`LoopCheckpoint`] this build writes and reads.
pub const CHECKPOINT_SCHEMA_VERSION: u32 = 1;

/// What restores a session in another process: identity, conversation,
/// usage and runs (`SessionSnapshotV1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionSnapshot {
    pub schema_version: u32,
    pub session_id: String,
    #[serde(default)]
    pub tenant_id: Option<String>,
    #[serde(default)]
    pub principal: Option<String>,
    #[serde(default)]
    pub agent_template_id: Option<String>,
    #[serde(default)]
    pub correlation_id: Option<String>,
    pub history: Vec<Message>,
    pub usage: TokenUsage,
    pub runs: Vec<RunRecord>,
    pub created_ms: u64,
    pub updated_ms: u64,
}

impl SessionSnapshot {
    pub fn identity(&self) -> IdentityTags {
        IdentityTags {
            tenant_id: self.tenant_id.clone(),
            principal: self.principal.clone(),
            agent_template_id: self.agent_template_id.clone(),
            correlation_id: self.correlation_id.clone(),
        }
    }
}

/// A round whose tool calls had not all settled when the checkpoint was
/// written: the facts recorded so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingRound {
    /// The assistant message holding the round's tool calls.
    pub assistant: Message,
    /// Results recorded so far, in call order.
    pub results: Vec<Message>,
}

/// The tool loop's state, keyed by run id, written after every settled
/// round (and after every tool result inside a round), so another process
/// can continue the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopCheckpoint {
    pub schema_version: u32,
    pub session_id: String,
    pub run_id: String,
    pub prompt: String,
    /// Rounds that settled.
    pub turn: u32,
    /// The conversation up to the end of the last settled round.
    pub history: Vec<Message>,
    pub usage: TokenUsage,
    pub tool_calls_count: usize,
    #[serde(default)]
    pub pending: Option<PendingRound>,
    pub created_ms: u64,
}
