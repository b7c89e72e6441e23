//! Maps runtime errors to protocol error objects, in one place.

use a3s_code_core::llm::LlmError;
use a3s_code_core::CodeError;
use a3s_code_protocol::errors::{self, DataCode, ErrorObject};
use serde_json::json;

/// The error object a host receives for a runtime error.
pub fn from_core(error: &CodeError) -> ErrorObject {
    let message = error.to_string();
    match error {
        CodeError::Config(_) => ErrorObject::runtime(DataCode::ConfigError, message),
        CodeError::Llm(llm) => ErrorObject::runtime(DataCode::LlmError, message)
            .with_detail("kind", json!(llm_kind(llm)))
            .with_detail("retryable", json!(llm.is_retryable())),
        CodeError::BudgetExhausted { resource, reason } => {
            ErrorObject::runtime(DataCode::BudgetExhausted, message)
                .with_detail("resource", json!(resource))
                .with_detail("reason", json!(reason))
        }
        CodeError::SessionBusy(_) => ErrorObject::runtime(DataCode::SessionBusy, message),
        CodeError::SessionClosed(_) => ErrorObject::runtime(DataCode::SessionClosed, message),
        CodeError::Cancelled => ErrorObject::cancelled(),
        CodeError::Passivated { run_id, reason } => {
            ErrorObject::runtime(DataCode::Passivated, message)
                .with_detail("runId", json!(run_id))
                .with_detail("reason", json!(reason))
        }
        CodeError::NoSessionStore => ErrorObject::runtime(DataCode::NoSessionStore, message),
        CodeError::CheckpointNotFound(run_id) => {
            ErrorObject::runtime(DataCode::CheckpointNotFound, message)
                .with_detail("runId", json!(run_id))
        }
        CodeError::Store(_) => ErrorObject::runtime(DataCode::StoreError, message),
        CodeError::InvalidArgument(_) => ErrorObject::invalid_params(message),
        CodeError::MaxToolRounds(_) => ErrorObject::runtime(DataCode::MaxToolRounds, message),
        CodeError::Internal(_) => {
            ErrorObject::new(errors::INTERNAL_ERROR, DataCode::Internal, message)
        }
        CodeError::Io(_) => ErrorObject::runtime(DataCode::IoError, message),
    }
}

fn llm_kind(error: &LlmError) -> &'static str {
    match error {
        LlmError::Auth { .. } => "auth",
        LlmError::RateLimited { .. } => "rate_limited",
        LlmError::ContextOverflow { .. } => "context_overflow",
        LlmError::Http { .. } => "http",
        LlmError::Transport { .. } => "transport",
        LlmError::Protocol { .. } => "protocol",
        LlmError::Stream { .. } => "stream",
        LlmError::ScriptExhausted { .. } => "script_exhausted",
    }
}

pub fn session_not_found(id: &str) -> ErrorObject {
    ErrorObject::runtime(
        DataCode::SessionNotFound,
        format!("session not found: {id}"),
    )
}

pub fn agent_not_found(id: &str) -> ErrorObject {
    ErrorObject::runtime(DataCode::AgentNotFound, format!("agent not found: {id}"))
}

pub fn shutting_down() -> ErrorObject {
    ErrorObject::runtime(DataCode::ShuttingDown, "the bridge is shutting down")
}
