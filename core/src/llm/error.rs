//! Provider errors, one variant per thing a caller can act on.

use thiserror::Error;

/// Why a model call failed. Messages never contain API keys.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum LlmError {
    /// 401/403: the API key is missing, wrong or lacks access.
    #[error("authentication failed ({status}) at {provider}: {message}")]
    Auth {
        provider: String,
        status: u16,
        message: String,
    },
    /// 429 (or Anthropic 529): the provider asks us to slow down.
    #[error("rate limited ({status}) by {provider}: {message}")]
    RateLimited {
        provider: String,
        status: u16,
        message: String,
        retry_after_ms: Option<u64>,
    },
    /// The prompt does not fit the model's context window.
    #[error("context window exceeded at {provider}: {message}")]
    ContextOverflow { provider: String, message: String },
    /// Any other HTTP error status.
    #[error("provider {provider} returned HTTP {status}: {message}")]
    Http {
        provider: String,
        status: u16,
        message: String,
    },
    /// The connection failed or the request timed out.
    #[error("transport error talking to {provider}: {message}")]
    Transport { provider: String, message: String },
    /// The provider sent something that is not its documented wire format.
    #[error("malformed response from {provider}: {message}")]
    Protocol { provider: String, message: String },
    /// An error event inside an otherwise successful stream.
    #[error("{provider} stream error: {message}")]
    Stream { provider: String, message: String },
    /// The scripted provider has no turn left to play.
    #[error("scripted model exhausted: no turn left after {played} turns")]
    ScriptExhausted { played: usize },
}

impl LlmError {
    /// Whether retrying the same call later may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::RateLimited { .. } | LlmError::Transport { .. } => true,
            LlmError::Http { status, .. } => *status >= 500,
            _ => false,
        }
    }
}
