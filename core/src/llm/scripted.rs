//! The scripted provider: replays a fixed list of model turns.
//!
//! It is a product feature, not a test double: it powers offline demos and
//! deterministic replay. The turn it plays is chosen by the request itself
//! (the number of assistant messages already in the history), so the provider
//! holds no state, any number of sessions can share it, and a run resumed in
//! another process continues the script where it stopped.

use std::sync::Arc;

use futures::{stream, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{estimate_tokens, LlmChunk, LlmClient, LlmError, LlmRequest, LlmStream, Message};
use super::{TokenUsage, ToolCall};

/// One recorded tool call of a scripted turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptedToolCall {
    /// Optional explicit id; defaults to `call_<turn>_<index>`.
    #[serde(default)]
    pub id: Option<String>,
    pub name: String,
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// One recorded model answer: text, tool calls, or both.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScriptedTurn {
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub tool_calls: Vec<ScriptedToolCall>,
}

/// Replays [`ScriptedTurn`]s in order.
#[derive(Debug, Clone)]
pub struct ScriptedClient {
    turns: Vec<ScriptedTurn>,
}

impl ScriptedClient {
    pub fn new(turns: Vec<ScriptedTurn>) -> Self {
        Self { turns }
    }

    /// Parses a JSON script: either an array of turns or `{"turns": [...]}`.
    pub fn from_json(text: &str) -> Result<Self, String> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Script {
            Bare(Vec<ScriptedTurn>),
            Wrapped { turns: Vec<ScriptedTurn> },
        }
        let script: Script =
            serde_json::from_str(text).map_err(|e| format!("invalid script JSON: {e}"))?;
        Ok(Self::new(match script {
            Script::Bare(turns) | Script::Wrapped { turns } => turns,
        }))
    }

    pub fn turns(&self) -> &[ScriptedTurn] {
        &self.turns
    }
}

#[async_trait::async_trait]
impl LlmClient for ScriptedClient {
    async fn stream(&self, request: LlmRequest) -> Result<LlmStream, LlmError> {
        let played = request
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .count();
        let turn = self
            .turns
            .get(played)
            .ok_or(LlmError::ScriptExhausted { played })?;

        let mut tail = Vec::new();
        let mut completion_bytes = turn.text.len();
        for (index, call) in turn.tool_calls.iter().enumerate() {
            completion_bytes += call.name.len() + call.arguments.to_string().len();
            tail.push(Ok(LlmChunk::ToolCall(ToolCall {
                id: call
                    .id
                    .clone()
                    .unwrap_or_else(|| format!("call_{played}_{index}")),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            })));
        }
        tail.push(Ok(LlmChunk::Usage(TokenUsage::new(
            estimate_tokens(&request),
            completion_bytes.div_ceil(4),
        ))));
        // Text is split on word boundaries, lazily, so consumers see real
        // incremental deltas and a long turn costs no memory up front.
        let text: Arc<str> = Arc::from(turn.text.as_str());
        let deltas = stream::unfold(0usize, move |start| {
            let text = text.clone();
            async move {
                if start >= text.len() {
                    return None;
                }
                let end = text[start..]
                    .find(' ')
                    .map_or(text.len(), |i| start + i + 1);
                Some((Ok(LlmChunk::TextDelta(text[start..end].to_string())), end))
            }
        });
        Ok(Box::pin(deltas.chain(stream::iter(tail))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;
    use serde_json::json;

    fn request(messages: Vec<Message>) -> LlmRequest {
        LlmRequest {
            model: "demo".into(),
            system: None,
            messages,
            tools: vec![],
            max_tokens: None,
            temperature: None,
        }
    }

    async fn collect(client: &ScriptedClient, req: LlmRequest) -> Vec<LlmChunk> {
        let stream = client.stream(req).await.unwrap();
        stream.map(|c| c.unwrap()).collect().await
    }

    #[tokio::test]
    async fn plays_the_turn_matching_the_history() {
        let client = ScriptedClient::from_json(
            r#"[{"tool_calls":[{"name":"ls","arguments":{"path":"."}}]},{"text":"all done"}]"#,
        )
        .unwrap();
        let first = collect(
            &client,
            request(vec![Message::User {
                content: "hi".into(),
            }]),
        )
        .await;
        assert_eq!(
            first[0],
            LlmChunk::ToolCall(ToolCall {
                id: "call_0_0".into(),
                name: "ls".into(),
                arguments: json!({"path": "."})
            })
        );
        let history = vec![
            Message::User {
                content: "hi".into(),
            },
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![],
            },
        ];
        let second = collect(&client, request(history)).await;
        assert_eq!(second[0], LlmChunk::TextDelta("all ".into()));
        assert_eq!(second[1], LlmChunk::TextDelta("done".into()));
        assert!(matches!(second[2], LlmChunk::Usage(u) if u.total_tokens > 0));
    }

    #[tokio::test]
    async fn an_exhausted_script_is_an_error() {
        let client = ScriptedClient::new(vec![]);
        let err = client.stream(request(vec![])).await.err().unwrap();
        assert_eq!(err, LlmError::ScriptExhausted { played: 0 });
    }

    #[test]
    fn accepts_wrapped_scripts_and_rejects_garbage() {
        assert_eq!(
            ScriptedClient::from_json(r#"{"turns":[{"text":"x"}]}"#)
                .unwrap()
                .turns()
                .len(),
            1
        );
        assert!(ScriptedClient::from_json("{").is_err());
    }
}
