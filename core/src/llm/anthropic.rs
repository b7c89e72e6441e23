//! Anthropic Messages API client.
//!
//! The stream is a sequence of named SSE events: `message_start`, then per
//! content block `content_block_start` / `_delta` / `_stop`, then
//! `message_delta` (stop reason, output tokens) and `message_stop`. Tool
//! inputs arrive as `input_json_delta` fragments per block index; a call is
//! emitted whole at its block's `content_block_stop`.

use std::collections::HashMap;
use std::fmt;

use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{json, Map, Value};

use super::http::{ErrorContext, EventDecoder, HttpClient};
use super::sse::SseEvent;
use super::{LlmChunk, LlmClient, LlmError, LlmRequest, LlmStream, Message, TokenUsage, ToolCall};
use crate::config::{ModelConfig, ProviderConfig};

/// The official SDK's default; `base_url` excludes `/v1`.
const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const API_VERSION: &str = "2023-06-01";
/// The API requires `max_tokens`; used when neither request nor model sets it.
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// Client for `POST {base_url}/v1/messages`.
pub struct AnthropicClient {
    http: HttpClient,
    url: String,
    max_tokens: Option<u32>,
    temperature: Option<f64>,
}

impl fmt::Debug for AnthropicClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicClient")
            .field("url", &self.url)
            .field("http", &self.http)
            .finish()
    }
}

impl AnthropicClient {
    pub fn new(provider: &ProviderConfig, model: &ModelConfig) -> Result<Self, LlmError> {
        let http = HttpClient::new(provider)?;
        let base_url = provider.base_url.as_deref().unwrap_or(DEFAULT_BASE_URL);
        let url = http.endpoint(base_url, "/v1/messages")?;
        Ok(Self {
            http,
            url,
            max_tokens: model.max_tokens,
            temperature: model.temperature,
        })
    }

    fn request_body(&self, request: &LlmRequest) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(request.model));
        let max_tokens = request
            .max_tokens
            .or(self.max_tokens)
            .unwrap_or(DEFAULT_MAX_TOKENS);
        body.insert("max_tokens".into(), json!(max_tokens));
        if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
            body.insert("system".into(), json!(system));
        }
        body.insert(
            "messages".into(),
            Value::Array(wire_messages(&request.messages)),
        );
        if !request.tools.is_empty() {
            let tools = request.tools.iter().map(|t| {
                json!({"name": t.name, "description": t.description, "input_schema": t.parameters})
            });
            body.insert("tools".into(), tools.collect());
        }
        if let Some(temperature) = request.temperature.or(self.temperature) {
            body.insert("temperature".into(), json!(temperature));
        }
        body.insert("stream".into(), json!(true));
        Value::Object(body)
    }
}

/// Converts the history. Results of one round of tool calls must come back
/// as ONE user message of `tool_result` blocks, so consecutive tool messages
/// are merged. An assistant turn with neither text nor calls is dropped:
/// the API rejects empty content.
fn wire_messages(messages: &[Message]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    let mut results: Vec<Value> = Vec::new();
    for message in messages {
        if let Message::Tool {
            tool_call_id,
            content,
            is_error,
            ..
        } = message
        {
            results.push(json!({
                "type": "tool_result",
                "tool_use_id": tool_call_id,
                "content": content,
                "is_error": is_error,
            }));
            continue;
        }
        if !results.is_empty() {
            out.push(json!({"role": "user", "content": std::mem::take(&mut results)}));
        }
        match message {
            Message::User { content } => out.push(json!({"role": "user", "content": content})),
            Message::Assistant {
                content,
                tool_calls,
            } => {
                let mut blocks = Vec::with_capacity(tool_calls.len() + 1);
                if !content.is_empty() {
                    blocks.push(json!({"type": "text", "text": content}));
                }
                for call in tool_calls {
                    let input = match &call.arguments {
                        Value::Null => Value::Object(Map::new()),
                        other => other.clone(),
                    };
                    blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
                }
                if !blocks.is_empty() {
                    out.push(json!({"role": "assistant", "content": blocks}));
                }
            }
            Message::Tool { .. } => unreachable!("handled above"),
        }
    }
    if !results.is_empty() {
        out.push(json!({"role": "user", "content": results}));
    }
    out
}

#[async_trait::async_trait]
impl LlmClient for AnthropicClient {
    async fn stream(&self, request: LlmRequest) -> Result<LlmStream, LlmError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = self.http.api_key() {
            headers.insert("x-api-key", self.http.secret_header(key.expose())?);
        }
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        let body = self.request_body(&request);
        tracing::debug!(url = %self.url, model = %request.model, "messages request");
        let response = self.http.post_json(&self.url, headers, &body).await?;
        let decoder = AnthropicDecoder::new(self.http.errors().clone());
        Ok(self.http.llm_stream(response, decoder))
    }
}

/// A `tool_use` content block being assembled.
#[derive(Debug)]
struct ToolBlock {
    id: String,
    name: String,
    /// `input` of `content_block_start`, used when no delta follows.
    initial_input: Value,
    partial_json: String,
}

/// Interprets the Messages API event sequence.
struct AnthropicDecoder {
    errors: ErrorContext,
    tools: HashMap<u64, ToolBlock>,
    input_tokens: usize,
    output_tokens: usize,
    done: bool,
}

impl AnthropicDecoder {
    fn new(errors: ErrorContext) -> Self {
        Self {
            errors,
            tools: HashMap::new(),
            input_tokens: 0,
            output_tokens: 0,
            done: false,
        }
    }

    /// Prompt tokens include cache writes and reads, which Anthropic counts
    /// separately from `input_tokens`.
    fn record_usage(&mut self, usage: &Value) {
        let field = |name: &str| usage[name].as_u64().map(|n| n as usize);
        let cached = ["cache_creation_input_tokens", "cache_read_input_tokens"]
            .iter()
            .filter_map(|name| field(name))
            .sum::<usize>();
        if let Some(input) = field("input_tokens") {
            self.input_tokens = input + cached;
        }
        // `output_tokens` is cumulative: the latest value is the total.
        if let Some(output) = field("output_tokens") {
            self.output_tokens = output;
        }
    }

    fn block_start(&mut self, index: u64, block: &Value) -> Vec<LlmChunk> {
        match block["type"].as_str() {
            Some("text") => match block["text"].as_str().filter(|t| !t.is_empty()) {
                Some(text) => vec![LlmChunk::TextDelta(text.to_string())],
                None => Vec::new(),
            },
            Some("tool_use") => {
                let tool = ToolBlock {
                    id: block["id"].as_str().unwrap_or_default().to_string(),
                    name: block["name"].as_str().unwrap_or_default().to_string(),
                    initial_input: block.get("input").cloned().unwrap_or(Value::Null),
                    partial_json: String::new(),
                };
                self.tools.insert(index, tool);
                Vec::new()
            }
            // Thinking and server-tool blocks are not part of the answer.
            _ => Vec::new(),
        }
    }

    fn block_delta(&mut self, index: u64, delta: &Value) -> Result<Vec<LlmChunk>, LlmError> {
        match delta["type"].as_str() {
            Some("text_delta") => Ok(delta["text"]
                .as_str()
                .filter(|t| !t.is_empty())
                .map(|t| LlmChunk::TextDelta(t.to_string()))
                .into_iter()
                .collect()),
            Some("input_json_delta") => {
                let tool = self.tools.get_mut(&index).ok_or_else(|| {
                    self.errors.protocol(format!(
                        "input_json_delta for block {index}, which is not a tool_use"
                    ))
                })?;
                tool.partial_json
                    .push_str(delta["partial_json"].as_str().unwrap_or_default());
                Ok(Vec::new())
            }
            _ => Ok(Vec::new()),
        }
    }

    fn block_stop(&mut self, index: u64) -> Result<Vec<LlmChunk>, LlmError> {
        let Some(tool) = self.tools.remove(&index) else {
            return Ok(Vec::new());
        };
        if tool.name.is_empty() {
            return Err(self
                .errors
                .protocol(format!("tool_use block {index} has no name")));
        }
        let arguments = if !tool.partial_json.trim().is_empty() {
            serde_json::from_str(&tool.partial_json).map_err(|e| {
                self.errors.protocol(format!(
                    "tool_use '{}' has invalid JSON input: {e}",
                    tool.name
                ))
            })?
        } else if tool.initial_input.is_object() {
            tool.initial_input
        } else {
            Value::Object(Map::new())
        };
        Ok(vec![LlmChunk::ToolCall(ToolCall {
            id: tool.id,
            name: tool.name,
            arguments,
        })])
    }

    fn stream_error(&self, payload: &Value) -> LlmError {
        let error = &payload["error"];
        let message = error["message"].as_str().unwrap_or("unknown error");
        match error["type"].as_str() {
            Some("overloaded_error") => self.errors.rate_limited(529, message),
            Some("rate_limit_error") => self.errors.rate_limited(429, message),
            Some(kind) => self.errors.stream(format!("{kind}: {message}")),
            None => self.errors.stream(message),
        }
    }
}

impl EventDecoder for AnthropicDecoder {
    fn on_event(&mut self, event: SseEvent) -> Result<Vec<LlmChunk>, LlmError> {
        let payload: Value = serde_json::from_str(&event.data)
            .map_err(|e| self.errors.protocol(format!("invalid JSON in stream: {e}")))?;
        // The event name and the payload's `type` agree; trust either.
        let kind = event
            .event
            .as_deref()
            .or_else(|| payload["type"].as_str())
            .unwrap_or_default();
        let index = payload["index"].as_u64().unwrap_or(0);
        match kind {
            "message_start" => {
                self.record_usage(&payload["message"]["usage"]);
                Ok(Vec::new())
            }
            "content_block_start" => Ok(self.block_start(index, &payload["content_block"])),
            "content_block_delta" => self.block_delta(index, &payload["delta"]),
            "content_block_stop" => self.block_stop(index),
            "message_delta" => {
                self.record_usage(&payload["usage"]);
                Ok(Vec::new())
            }
            "message_stop" => {
                self.done = true;
                let usage = TokenUsage::new(self.input_tokens, self.output_tokens);
                Ok(vec![LlmChunk::Usage(usage)])
            }
            "error" => Err(self.stream_error(&payload)),
            // `ping` and event types added after this client was written.
            _ => Ok(Vec::new()),
        }
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn on_end(&mut self) -> Result<Vec<LlmChunk>, LlmError> {
        Err(self
            .errors
            .transport("stream ended unexpectedly (no message_stop)"))
    }
}
