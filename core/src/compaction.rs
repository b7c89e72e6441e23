//! Context compaction: when a request would pass the context threshold,
//! older turns are summarised by the model and replaced by the summary.
//!
//! The split never falls between an assistant message's tool calls and
//! their results: providers reject a tool result whose call is gone, and a
//! call without its result.

use futures::StreamExt;

use crate::error::Result;
use crate::llm::{estimate_tokens, LlmChunk, LlmClient, LlmRequest, Message};

/// Share of `max_context_tokens` the kept recent messages may use.
const KEEP_SHARE: f64 = 0.5;

const SUMMARY_PROMPT: &str = "You compress conversations. Summarise the transcript below so the \
conversation can continue without it: keep decisions, facts learned, file paths, tool results that \
still matter, and open tasks. Be concise.";

/// The marker that starts a summary message in the history.
pub const SUMMARY_PREFIX: &str = "[Summary of the earlier conversation]";

/// When and how far to compact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompactionPolicy {
    pub max_context_tokens: usize,
    /// Fraction of `max_context_tokens` that triggers compaction (e.g. 0.8).
    pub threshold: f64,
}

/// What a compaction did.
#[derive(Debug, Clone, PartialEq)]
pub struct Compacted {
    pub history: Vec<Message>,
    pub summarized_messages: usize,
    pub tokens_before: usize,
    pub tokens_after: usize,
}

/// Tokens a request with this history would take.
fn request_tokens(base: &LlmRequest, history: &[Message]) -> usize {
    let request = LlmRequest {
        messages: history.to_vec(),
        ..base.clone()
    };
    estimate_tokens(&request)
}

/// Where the kept tail may start: not on a tool result, so a call and its
/// results stay on the same side.
fn is_boundary(history: &[Message], index: usize) -> bool {
    !matches!(history.get(index), Some(Message::Tool { .. }))
}

/// The first index of the recent tail to keep, or `None` if nothing can be
/// summarised (fewer than two messages before the tail).
pub fn split_point(history: &[Message], base: &LlmRequest, keep_tokens: usize) -> Option<usize> {
    let mut start = history.len();
    // Grow the tail backwards while it fits, then snap to a boundary.
    while start > 0 && request_tokens(base, &history[start - 1..]) <= keep_tokens {
        start -= 1;
    }
    // Always keep at least the last message group.
    if start == history.len() {
        start = history.len().saturating_sub(1);
    }
    // Snap forward past tool results (their call goes into the summary with
    // them); if that leaves no tail, snap back to the call instead.
    let mut forward = start;
    while forward < history.len() && !is_boundary(history, forward) {
        forward += 1;
    }
    if forward < history.len() {
        start = forward;
    } else {
        while start > 0 && !is_boundary(history, start) {
            start -= 1;
        }
    }
    (start >= 2).then_some(start)
}

/// Compacts `history` if `base` (the request about to be sent, with the
/// current history) passes the policy's threshold. `Ok(None)` when nothing
/// needed or could be done.
pub async fn compact_if_needed(
    llm: &dyn LlmClient,
    base: &LlmRequest,
    policy: CompactionPolicy,
) -> Result<Option<Compacted>> {
    let history = &base.messages;
    let tokens_before = estimate_tokens(base);
    let trigger = (policy.max_context_tokens as f64 * policy.threshold) as usize;
    if tokens_before <= trigger {
        return Ok(None);
    }
    let keep_tokens = (policy.max_context_tokens as f64 * KEEP_SHARE) as usize;
    let Some(split) = split_point(history, base, keep_tokens) else {
        return Ok(None);
    };
    let summary = summarize(llm, &base.model, &history[..split]).await?;
    let mut compacted = vec![Message::User {
        content: format!("{SUMMARY_PREFIX}\n{summary}"),
    }];
    compacted.extend_from_slice(&history[split..]);
    let tokens_after = request_tokens(base, &compacted);
    Ok(Some(Compacted {
        history: compacted,
        summarized_messages: split,
        tokens_before,
        tokens_after,
    }))
}

/// Asks the model for a summary of `older`, rendered as a plain transcript
/// (no tool definitions, so the model cannot call tools here).
async fn summarize(llm: &dyn LlmClient, model: &str, older: &[Message]) -> Result<String> {
    let mut transcript = String::new();
    for message in older {
        let line = match message {
            Message::User { content } => format!("user: {content}\n"),
            Message::Assistant {
                content,
                tool_calls,
            } => {
                let mut line = format!("assistant: {content}\n");
                for call in tool_calls {
                    line.push_str(&format!(
                        "assistant called {}({})\n",
                        call.name, call.arguments
                    ));
                }
                line
            }
            Message::Tool { name, content, .. } => format!("tool {name} returned: {content}\n"),
        };
        transcript.push_str(&line);
    }
    let request = LlmRequest {
        model: model.to_string(),
        system: Some(SUMMARY_PROMPT.to_string()),
        messages: vec![Message::User {
            content: transcript,
        }],
        tools: Vec::new(),
        max_tokens: None,
        temperature: None,
    };
    let mut stream = llm.stream(request).await?;
    let mut summary = String::new();
    while let Some(chunk) = stream.next().await {
        if let LlmChunk::TextDelta(text) = chunk? {
            summary.push_str(&text);
        }
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCall;
    use serde_json::json;

    fn base(history: Vec<Message>) -> LlmRequest {
        LlmRequest {
            model: "m".into(),
            system: None,
            messages: history,
            tools: vec![],
            max_tokens: None,
            temperature: None,
        }
    }

    fn user(n: usize) -> Message {
        Message::User {
            content: "u".repeat(n),
        }
    }

    #[test]
    fn the_split_never_separates_a_call_from_its_results() {
        let call = |id: &str| ToolCall {
            id: id.into(),
            name: "read".into(),
            arguments: json!({}),
        };
        let history = vec![
            user(400),
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![call("a"), call("b")],
            },
            Message::Tool {
                tool_call_id: "a".into(),
                name: "read".into(),
                content: "x".repeat(400),
                is_error: false,
            },
            Message::Tool {
                tool_call_id: "b".into(),
                name: "read".into(),
                content: "y".repeat(40),
                is_error: false,
            },
            Message::Assistant {
                content: "done".into(),
                tool_calls: vec![],
            },
        ];
        // Room for only the last two messages: the tail must grow back to the
        // assistant message that made the calls, or not include the results.
        for keep in [5, 20, 40, 200] {
            if let Some(split) = split_point(&history, &base(history.clone()), keep) {
                assert!(
                    !matches!(history[split], Message::Tool { .. }),
                    "keep={keep} split={split}"
                );
            }
        }
        assert_eq!(split_point(&history, &base(history.clone()), 20), Some(4));
    }

    #[test]
    fn nothing_is_split_when_too_little_precedes_the_tail() {
        let history = vec![user(10), user(10)];
        assert_eq!(split_point(&history, &base(history.clone()), 1), None);
    }
}
