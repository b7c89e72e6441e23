//! Shared helpers for the provider integration tests (and, later, the
//! benchmark): a scripted local HTTP server, SSE body builders, and small
//! constructors for provider configurations and requests.
//!
//! Each test file includes this with `mod support;`, so not every helper is
//! used by every file.
#![allow(dead_code, unused_imports)]

pub mod server;
pub mod sse;

pub use server::{Framing, RecordedRequest, ScriptedResponse, TestServer};

use std::collections::BTreeMap;

use a3s_code_core::config::{ApiKey, ModelConfig, ProviderConfig, ProviderKind};
use a3s_code_core::llm::{LlmChunk, LlmError, LlmRequest, LlmStream, Message};
use futures::StreamExt;

/// A provider pointing at `base_url`, with a short timeout so a hung test
/// fails instead of waiting two minutes.
pub fn provider(kind: ProviderKind, base_url: &str, api_key: Option<&str>) -> ProviderConfig {
    ProviderConfig {
        name: "test-provider".into(),
        kind,
        api_key: api_key.map(ApiKey::new),
        base_url: Some(base_url.to_string()),
        timeout_ms: Some(10_000),
        max_retries: None,
        models: BTreeMap::new(),
    }
}

pub fn model(id: &str) -> ModelConfig {
    ModelConfig {
        id: id.into(),
        ..Default::default()
    }
}

/// A one-message request without system prompt or tools.
pub fn request(model: &str, prompt: &str) -> LlmRequest {
    LlmRequest {
        model: model.into(),
        system: None,
        messages: vec![Message::User {
            content: prompt.into(),
        }],
        tools: Vec::new(),
        max_tokens: None,
        temperature: None,
    }
}

/// Drains a stream, keeping errors in place.
pub async fn collect(stream: LlmStream) -> Vec<Result<LlmChunk, LlmError>> {
    stream.collect().await
}

/// Drains a stream that must succeed.
pub async fn collect_ok(stream: LlmStream) -> Vec<LlmChunk> {
    collect(stream)
        .await
        .into_iter()
        .map(|item| item.unwrap_or_else(|e| panic!("stream failed: {e}")))
        .collect()
}

/// The concatenated text deltas of a chunk list.
pub fn text_of(chunks: &[LlmChunk]) -> String {
    chunks
        .iter()
        .filter_map(|c| match c {
            LlmChunk::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}
