//! The error type of the runtime. Each variant is one thing a caller can act on.

use thiserror::Error;

/// Result alias used across the crate.
pub type Result<T, E = CodeError> = std::result::Result<T, E>;

/// Errors surfaced by the public API of the runtime.
#[derive(Debug, Error)]
pub enum CodeError {
    /// The agent configuration could not be read or is invalid.
    #[error("config error: {0}")]
    Config(String),
    /// The model provider failed (HTTP, wire format, auth, rate limit, ...).
    #[error(transparent)]
    Llm(#[from] crate::llm::LlmError),
    /// A budget guard denied an LLM or tool call.
    #[error("Budget exhausted on '{resource}': {reason}")]
    BudgetExhausted { resource: String, reason: String },
    /// The session already runs a prompt; sessions run one prompt at a time.
    #[error("session {0} is busy with another run")]
    SessionBusy(String),
    /// The session was closed.
    #[error("session {0} is closed")]
    SessionClosed(String),
    /// The run was cancelled by its caller.
    #[error("run cancelled")]
    Cancelled,
    /// The run stopped at a safe point because the host asked the session to
    /// passivate; resume it elsewhere with `resume_run(run_id)`.
    #[error("run '{run_id}' passivated at a safe point ({reason}); resume it with resume_run")]
    Passivated { run_id: String, reason: String },
    /// `resume_run` on a session without a store (seed 000 text).
    #[error("resume_run requires a session_store on this session")]
    NoSessionStore,
    /// `resume_run` found no checkpoint (seed 000 text).
    #[error("no loop checkpoint found for run '{0}'")]
    CheckpointNotFound(String),
    /// Persistence failed or a stored document was refused.
    #[error("store error: {0}")]
    Store(String),
    /// The caller passed an argument the runtime cannot use.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The run ended without a final answer after this many tool rounds.
    #[error("max_tool_rounds ({0}) reached without a final answer")]
    MaxToolRounds(usize),
    /// A bug or a crashed task inside the runtime.
    #[error("internal error: {0}")]
    Internal(String),
    /// A filesystem or process error outside of a tool call.
    #[error("io error: {0}")]
    Io(#[from] std::io::Error),
}

impl From<crate::store::StoreError> for CodeError {
    fn from(error: crate::store::StoreError) -> Self {
        CodeError::Store(error.to_string())
    }
}
