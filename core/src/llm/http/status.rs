//! Turning an HTTP error response into the `LlmError` a caller can act on.
//!
//! Both providers wrap errors as `{"error": {"message": ...}}`; compatible
//! servers vary, so the message is looked for in a few places and the raw
//! body (shortened) is the fallback. The body has already had the API key
//! scrubbed by the caller.

use std::time::Duration;

use serde_json::Value;

use crate::llm::LlmError;

const ERROR_MESSAGE_LIMIT: usize = 500;

/// Maps a non-success status and its body to the error a caller can act on.
pub(crate) fn classify_status(
    provider: &str,
    status: u16,
    retry_after: Option<Duration>,
    body: &str,
) -> LlmError {
    let provider = provider.to_string();
    let message = error_message(status, body);
    match status {
        401 | 403 => LlmError::Auth {
            provider,
            status,
            message,
        },
        429 | 529 => LlmError::RateLimited {
            provider,
            status,
            message,
            retry_after_ms: retry_after.map(|d| d.as_millis() as u64),
        },
        400 | 413 if says_context_overflow(body) => LlmError::ContextOverflow { provider, message },
        _ => LlmError::Http {
            provider,
            status,
            message,
        },
    }
}

/// Phrases providers use for "the prompt does not fit": OpenAI's error code
/// and message, Anthropic's, and common OpenAI-compatible servers (vLLM,
/// llama.cpp, Ollama, Azure, OpenRouter).
fn says_context_overflow(body: &str) -> bool {
    const PHRASES: [&str; 7] = [
        "context_length_exceeded",
        "maximum context length",
        "prompt is too long",
        "context window",
        "exceeds the context",
        "context length",
        "too many tokens",
    ];
    let body = body.to_ascii_lowercase();
    PHRASES.iter().any(|p| body.contains(p))
}

/// The human message of a JSON error body (`{"error":{"message"}}` for both
/// OpenAI and Anthropic, plus common variants), else the raw body, shortened.
fn error_message(status: u16, body: &str) -> String {
    let from_json = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        [
            v.pointer("/error/message"),
            v.get("error"),
            v.get("message"),
            v.get("detail"),
        ]
        .into_iter()
        .flatten()
        .find_map(|m| m.as_str().map(str::to_string))
    });
    let message = from_json.unwrap_or_else(|| body.trim().to_string());
    if message.is_empty() {
        let reason = reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("no error message");
        return reason.to_string();
    }
    truncate(message, ERROR_MESSAGE_LIMIT)
}

fn truncate(mut text: String, limit: usize) -> String {
    if text.len() > limit {
        let mut end = limit;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_statuses_and_extracts_messages() {
        let err = classify_status("p", 401, None, r#"{"error":{"message":"bad key"}}"#);
        assert!(
            matches!(err, LlmError::Auth { status: 401, ref message, .. } if message == "bad key")
        );
        let err = classify_status("p", 529, Some(Duration::from_secs(3)), "");
        assert!(matches!(
            err,
            LlmError::RateLimited {
                retry_after_ms: Some(3000),
                ..
            }
        ));
        let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
        assert!(matches!(
            classify_status("p", 400, None, body),
            LlmError::ContextOverflow { .. }
        ));
        let err = classify_status("p", 400, None, r#"{"detail":"bad field"}"#);
        assert!(
            matches!(err, LlmError::Http { status: 400, ref message, .. } if message == "bad field")
        );
        let err = classify_status("p", 502, None, "  ");
        assert!(matches!(err, LlmError::Http { ref message, .. } if message == "Bad Gateway"));
        let long = "x".repeat(2000);
        let err = classify_status("p", 500, None, &long);
        assert!(err.to_string().len() < 700);
    }
}
