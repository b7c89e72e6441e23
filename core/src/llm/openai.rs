//! OpenAI-compatible chat-completions client (OpenAI itself, Azure-style
//! gateways, vLLM, llama.cpp, Ollama, OpenRouter, ...).
//!
//! Answers are always streamed. Text deltas are passed on as they arrive;
//! tool calls arrive as fragments keyed by `index` (id and name first, the
//! JSON arguments cut anywhere) and are assembled here, then emitted whole
//! when the model finishes, so callers never see partial arguments.

use std::collections::BTreeMap;
use std::fmt;

use reqwest::header::{HeaderMap, AUTHORIZATION};
use serde_json::{json, Map, Value};

use super::http::{ErrorContext, EventDecoder, HttpClient};
use super::sse::SseEvent;
use super::{LlmChunk, LlmClient, LlmError, LlmRequest, LlmStream, Message, TokenUsage, ToolCall};
use crate::config::{ModelConfig, ProviderConfig};

/// Where the official SDKs point by default; `base_url` includes `/v1`.
const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// Client for `POST {base_url}/chat/completions`.
pub struct OpenAiClient {
    http: HttpClient,
    url: String,
    max_tokens: Option<u32>,
    temperature: Option<f64>,
}

impl fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiClient")
            .field("url", &self.url)
            .field("http", &self.http)
            .finish()
    }
}

impl OpenAiClient {
    /// A missing API key is allowed: local servers usually need none.
    pub fn new(provider: &ProviderConfig, model: &ModelConfig) -> Result<Self, LlmError> {
        let http = HttpClient::new(provider)?;
        let base_url = provider.base_url.as_deref().unwrap_or(DEFAULT_BASE_URL);
        let url = http.endpoint(base_url, "/chat/completions")?;
        Ok(Self {
            http,
            url,
            max_tokens: model.max_tokens,
            temperature: model.temperature,
        })
    }

    fn request_body(&self, request: &LlmRequest) -> Value {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
            messages.push(json!({"role": "system", "content": system}));
        }
        messages.extend(request.messages.iter().map(wire_message));
        let mut body = Map::new();
        body.insert("model".into(), json!(request.model));
        body.insert("messages".into(), Value::Array(messages));
        if !request.tools.is_empty() {
            let tools = request.tools.iter().map(|t| {
                json!({
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                })
            });
            body.insert("tools".into(), tools.collect());
        }
        body.insert("stream".into(), json!(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
        if let Some(max_tokens) = request.max_tokens.or(self.max_tokens) {
            body.insert("max_tokens".into(), json!(max_tokens));
        }
        if let Some(temperature) = request.temperature.or(self.temperature) {
            body.insert("temperature".into(), json!(temperature));
        }
        Value::Object(body)
    }
}

fn wire_message(message: &Message) -> Value {
    match message {
        Message::User { content } => json!({"role": "user", "content": content}),
        Message::Assistant {
            content,
            tool_calls,
        } => {
            if tool_calls.is_empty() {
                return json!({"role": "assistant", "content": content});
            }
            let calls: Vec<Value> = tool_calls
                .iter()
                .map(|call| {
                    json!({
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments.to_string()},
                    })
                })
                .collect();
            // The API wants `null`, not "", for a turn that only calls tools.
            let content = if content.is_empty() {
                Value::Null
            } else {
                json!(content)
            };
            json!({"role": "assistant", "content": content, "tool_calls": calls})
        }
        Message::Tool {
            tool_call_id,
            content,
            ..
        } => json!({"role": "tool", "tool_call_id": tool_call_id, "content": content}),
    }
}

#[async_trait::async_trait]
impl LlmClient for OpenAiClient {
    async fn stream(&self, request: LlmRequest) -> Result<LlmStream, LlmError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = self.http.api_key() {
            let value = self
                .http
                .secret_header(&format!("Bearer {}", key.expose()))?;
            headers.insert(AUTHORIZATION, value);
        }
        let body = self.request_body(&request);
        tracing::debug!(url = %self.url, model = %request.model, "chat completion request");
        let response = self.http.post_json(&self.url, headers, &body).await?;
        let decoder = OpenAiDecoder::new(self.http.errors().clone());
        Ok(self.http.llm_stream(response, decoder))
    }
}

/// A tool call being assembled from its fragments.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Interprets `data: {chat.completion.chunk}` events.
struct OpenAiDecoder {
    errors: ErrorContext,
    calls: BTreeMap<u64, PartialCall>,
    /// A `finish_reason` arrived: the answer is complete, usage may follow.
    finished: bool,
    /// `[DONE]` arrived.
    done: bool,
}

impl OpenAiDecoder {
    fn new(errors: ErrorContext) -> Self {
        Self {
            errors,
            calls: BTreeMap::new(),
            finished: false,
            done: false,
        }
    }

    fn add_fragment(&mut self, position: usize, fragment: &Value) {
        let index = fragment["index"].as_u64().unwrap_or(position as u64);
        let call = self.calls.entry(index).or_default();
        if let Some(id) = fragment["id"].as_str().filter(|id| !id.is_empty()) {
            call.id = id.to_string();
        }
        let function = &fragment["function"];
        if let Some(name) = function["name"].as_str() {
            // OpenAI sends the name once; some compatible servers split it,
            // others repeat it in every fragment.
            if call.name != name {
                call.name.push_str(name);
            }
        }
        if let Some(arguments) = function["arguments"].as_str() {
            call.arguments.push_str(arguments);
        }
    }

    /// Emits every assembled call, in index order.
    fn flush_calls(&mut self) -> Result<Vec<LlmChunk>, LlmError> {
        std::mem::take(&mut self.calls)
            .into_iter()
            .map(|(index, call)| {
                if call.name.is_empty() {
                    return Err(self
                        .errors
                        .protocol(format!("tool call {index} has no name")));
                }
                let arguments = if call.arguments.trim().is_empty() {
                    Value::Object(Map::new())
                } else {
                    serde_json::from_str(&call.arguments).map_err(|e| {
                        self.errors.protocol(format!(
                            "tool call '{}' has invalid JSON arguments: {e}",
                            call.name
                        ))
                    })?
                };
                let id = if call.id.is_empty() {
                    format!("call_{index}")
                } else {
                    call.id
                };
                Ok(LlmChunk::ToolCall(ToolCall {
                    id,
                    name: call.name,
                    arguments,
                }))
            })
            .collect()
    }
}

impl EventDecoder for OpenAiDecoder {
    fn on_event(&mut self, event: SseEvent) -> Result<Vec<LlmChunk>, LlmError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return self.flush_calls();
        }
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| self.errors.protocol(format!("invalid JSON in stream: {e}")))?;
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            let message = error["message"]
                .as_str()
                .map_or_else(|| error.to_string(), str::to_string);
            return Err(self.errors.stream(message));
        }
        let mut out = Vec::new();
        let choice = chunk["choices"].as_array().and_then(|choices| {
            choices
                .iter()
                .find(|c| c["index"].as_u64().unwrap_or(0) == 0)
        });
        if let Some(choice) = choice {
            let delta = &choice["delta"];
            if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                out.push(LlmChunk::TextDelta(text.to_string()));
            }
            if let Some(fragments) = delta["tool_calls"].as_array() {
                for (position, fragment) in fragments.iter().enumerate() {
                    self.add_fragment(position, fragment);
                }
            }
            // Some compatible servers send `""` instead of `null` mid-stream.
            if choice["finish_reason"]
                .as_str()
                .is_some_and(|r| !r.is_empty())
            {
                self.finished = true;
                out.extend(self.flush_calls()?);
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let count = |field: &str| usage[field].as_u64().unwrap_or(0) as usize;
            let (prompt, completion) = (count("prompt_tokens"), count("completion_tokens"));
            out.push(LlmChunk::Usage(TokenUsage {
                prompt_tokens: prompt,
                completion_tokens: completion,
                total_tokens: usage["total_tokens"]
                    .as_u64()
                    .map_or(prompt + completion, |t| t as usize),
            }));
        }
        Ok(out)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn on_end(&mut self) -> Result<Vec<LlmChunk>, LlmError> {
        if self.finished {
            return self.flush_calls();
        }
        Err(self
            .errors
            .transport("stream ended unexpectedly (no finish_reason or [DONE])"))
    }
}
