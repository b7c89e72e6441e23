//! Error codes: JSON-RPC numbers plus a stable string in `error.data.code`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// A request other than `initialize` arrived before the handshake.
pub const NOT_INITIALIZED: i64 = -32002;
/// Too many requests in flight; retry later.
pub const OVERLOADED: i64 = -32001;
/// A runtime error; `data.code` says which.
pub const RUNTIME_ERROR: i64 = -32000;
/// The request was cancelled by `$/cancelRequest`.
pub const REQUEST_CANCELLED: i64 = -32800;

/// The stable string codes SDKs map to typed errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DataCode {
    ParseError,
    InvalidRequest,
    LineTooLong,
    MethodNotFound,
    InvalidParams,
    UnsupportedProtocolVersion,
    Internal,
    NotInitialized,
    AlreadyInitialized,
    Overloaded,
    Cancelled,
    ShuttingDown,
    ConfigError,
    AgentNotFound,
    SessionNotFound,
    SessionBusy,
    SessionClosed,
    BudgetExhausted,
    LlmError,
    MaxToolRounds,
    StoreError,
    IoError,
    CallbackTimeout,
    ArtifactNotFound,
    Passivated,
    NoSessionStore,
    CheckpointNotFound,
}

impl DataCode {
    /// The wire string, e.g. `SESSION_BUSY`.
    pub fn as_str(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }

    /// Every code, for documentation and SDK generation.
    pub const ALL: &'static [DataCode] = &[
        DataCode::ParseError,
        DataCode::InvalidRequest,
        DataCode::LineTooLong,
        DataCode::MethodNotFound,
        DataCode::InvalidParams,
        DataCode::UnsupportedProtocolVersion,
        DataCode::Internal,
        DataCode::NotInitialized,
        DataCode::AlreadyInitialized,
        DataCode::Overloaded,
        DataCode::Cancelled,
        DataCode::ShuttingDown,
        DataCode::ConfigError,
        DataCode::AgentNotFound,
        DataCode::SessionNotFound,
        DataCode::SessionBusy,
        DataCode::SessionClosed,
        DataCode::BudgetExhausted,
        DataCode::LlmError,
        DataCode::MaxToolRounds,
        DataCode::StoreError,
        DataCode::IoError,
        DataCode::CallbackTimeout,
        DataCode::ArtifactNotFound,
        DataCode::Passivated,
        DataCode::NoSessionStore,
        DataCode::CheckpointNotFound,
    ];
}

/// A JSON-RPC error object. `data` is an object whose `code` member is a
/// [`DataCode`] string; other members give details.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorObject {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    pub fn new(code: i64, data_code: DataCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: Some(json!({"code": data_code.as_str()})),
        }
    }

    /// Adds a detail member to `data`.
    pub fn with_detail(mut self, key: &str, value: Value) -> Self {
        let data = self.data.get_or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(map) = data {
            map.insert(key.to_string(), value);
        }
        self
    }

    /// The `data.code` string, if present.
    pub fn data_code(&self) -> Option<&str> {
        self.data.as_ref()?.get("code")?.as_str()
    }

    pub fn parse_error(message: impl Into<String>) -> Self {
        Self::new(PARSE_ERROR, DataCode::ParseError, message)
    }
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(INVALID_REQUEST, DataCode::InvalidRequest, message)
    }
    pub fn line_too_long(limit: usize) -> Self {
        Self::new(
            INVALID_REQUEST,
            DataCode::LineTooLong,
            format!("line exceeds maxLineBytes ({limit} bytes); it was discarded"),
        )
        .with_detail("maxLineBytes", json!(limit))
    }
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            METHOD_NOT_FOUND,
            DataCode::MethodNotFound,
            format!("method not found: {method}"),
        )
    }
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, DataCode::InvalidParams, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, DataCode::Internal, message)
    }
    pub fn not_initialized() -> Self {
        Self::new(
            NOT_INITIALIZED,
            DataCode::NotInitialized,
            "the first request must be initialize",
        )
    }
    pub fn overloaded(limit: usize) -> Self {
        Self::new(
            OVERLOADED,
            DataCode::Overloaded,
            format!("too many requests in flight (limit {limit}); retry later"),
        )
        .with_detail("retryable", json!(true))
    }
    pub fn cancelled() -> Self {
        Self::new(REQUEST_CANCELLED, DataCode::Cancelled, "request cancelled")
    }
    pub fn runtime(data_code: DataCode, message: impl Into<String>) -> Self {
        Self::new(RUNTIME_ERROR, data_code, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_codes_are_screaming_snake_case_strings() {
        assert_eq!(DataCode::SessionBusy.as_str(), "SESSION_BUSY");
        assert_eq!(DataCode::LlmError.as_str(), "LLM_ERROR");
        let error = ErrorObject::overloaded(8);
        assert_eq!(error.code, -32001);
        assert_eq!(error.data_code(), Some("OVERLOADED"));
        assert_eq!(error.data.unwrap()["retryable"], true);
    }
}
