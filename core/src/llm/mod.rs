//! Model providers behind one trait.
//!
//! A provider turns an [`LlmRequest`] into a stream of [`LlmChunk`]s. Providers
//! assemble tool calls whose name and arguments arrive split across wire
//! chunks and yield each one whole, so the agent loop never sees partial JSON.
//! Dropping the stream cancels the underlying HTTP request.

mod anthropic;
mod error;
mod factory;
mod http;
mod openai;
mod scripted;
mod sse;

pub use anthropic::AnthropicClient;
pub use error::LlmError;
pub use factory::client_for;
pub use openai::OpenAiClient;
pub use scripted::{ScriptedClient, ScriptedToolCall, ScriptedTurn};

use std::fmt::Debug;
use std::pin::Pin;

use futures::Stream;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Token counts reported by a provider for one or more model calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TokenUsage {
    pub prompt_tokens: usize,
    pub completion_tokens: usize,
    pub total_tokens: usize,
}

impl TokenUsage {
    pub fn new(prompt_tokens: usize, completion_tokens: usize) -> Self {
        Self {
            prompt_tokens,
            completion_tokens,
            total_tokens: prompt_tokens + completion_tokens,
        }
    }

    /// Adds another call's usage to this running total.
    pub fn add(&mut self, other: &TokenUsage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.total_tokens += other.total_tokens;
    }
}

/// A tool call requested by the model, arguments already parsed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

/// One message of the conversation history, in provider-neutral form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    User {
        content: String,
    },
    Assistant {
        #[serde(default)]
        content: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        tool_call_id: String,
        name: String,
        content: String,
        #[serde(default)]
        is_error: bool,
    },
}

/// A tool as offered to the model: name, description and JSON Schema of its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// One model call.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmRequest {
    /// The provider's model id (without the `provider/` prefix).
    pub model: String,
    pub system: Option<String>,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDefinition>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
}

/// One piece of a streamed model answer.
#[derive(Debug, Clone, PartialEq)]
pub enum LlmChunk {
    /// Visible text, in order.
    TextDelta(String),
    /// A complete tool call (assembled by the provider from its wire fragments).
    ToolCall(ToolCall),
    /// Token usage of this call; providers send it once, near the end.
    Usage(TokenUsage),
}

/// The stream a provider returns for one call.
pub type LlmStream = Pin<Box<dyn Stream<Item = Result<LlmChunk, LlmError>> + Send>>;

/// A model provider.
#[async_trait::async_trait]
pub trait LlmClient: Send + Sync + Debug {
    /// Starts one model call. Errors that happen before the first byte (HTTP
    /// status, connection) are returned here; later ones arrive in the stream.
    async fn stream(&self, request: LlmRequest) -> Result<LlmStream, LlmError>;
}

/// Rough prompt size in tokens (4 bytes a token), used where a provider has
/// not reported real counts yet, e.g. for budget checks before a call.
pub fn estimate_tokens(request: &LlmRequest) -> usize {
    let mut bytes = request.system.as_ref().map_or(0, String::len);
    for message in &request.messages {
        bytes += match message {
            Message::User { content } => content.len(),
            Message::Assistant {
                content,
                tool_calls,
            } => {
                content.len()
                    + tool_calls
                        .iter()
                        .map(|c| c.name.len() + c.arguments.to_string().len())
                        .sum::<usize>()
            }
            Message::Tool { content, .. } => content.len(),
        };
    }
    for tool in &request.tools {
        bytes += tool.name.len() + tool.description.len() + tool.parameters.to_string().len();
    }
    bytes.div_ceil(4)
}
