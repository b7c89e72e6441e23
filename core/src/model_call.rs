//! One model call of the loop: compaction first when due, then the
//! streamed answer with its text deltas, tool calls and usage.

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::compaction;
use crate::emitter::Emitter;
use crate::error::{CodeError, Result};
use crate::events::AgentEvent;
use crate::llm::{LlmChunk, LlmRequest, Message, TokenUsage, ToolCall};
use crate::session::SessionInner;

/// Compacts the history before a model call when the policy says so; the
/// session's stored history is replaced too. A failed summary is logged and
/// the request goes out as it is.
pub(crate) async fn compact(
    session: &SessionInner,
    request: &LlmRequest,
    emitter: &mut Emitter,
    cancel: &CancellationToken,
) -> Result<Option<Vec<Message>>> {
    let Some(policy) = session.compaction else {
        return Ok(None);
    };
    let outcome = tokio::select! {
        // Cancellation wins when both are ready.
        biased;
        _ = cancel.cancelled() => return Err(CodeError::Cancelled),
        outcome = compaction::compact_if_needed(session.llm.as_ref(), request, policy) => outcome,
    };
    match outcome {
        Ok(Some(done)) => {
            session.state.lock().expect("session state").history = done.history.clone();
            emitter
                .emit(AgentEvent::ContextCompacted {
                    summarized_messages: done.summarized_messages,
                    tokens_before: done.tokens_before,
                    tokens_after: done.tokens_after,
                })
                .await;
            Ok(Some(done.history))
        }
        Ok(None) => Ok(None),
        Err(error) => {
            tracing::warn!("context compaction failed; sending the request as is: {error}");
            Ok(None)
        }
    }
}

/// One model call: streams text deltas out, collects tool calls and usage.
pub(crate) async fn model_turn(
    session: &SessionInner,
    request: LlmRequest,
    emitter: &mut Emitter,
    cancel: &CancellationToken,
) -> Result<(String, Vec<ToolCall>, TokenUsage)> {
    let mut stream = tokio::select! {
        // Cancellation wins when both are ready.
        biased;
        _ = cancel.cancelled() => return Err(CodeError::Cancelled),
        stream = session.llm.stream(request) => stream?,
    };
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut usage = TokenUsage::default();
    loop {
        let chunk = tokio::select! {
            // Cancellation wins when both are ready.
            biased;
            _ = cancel.cancelled() => return Err(CodeError::Cancelled),
            chunk = stream.next() => chunk,
        };
        match chunk {
            None => break,
            Some(Err(e)) => return Err(e.into()),
            Some(Ok(LlmChunk::TextDelta(delta))) => {
                text.push_str(&delta);
                emitter.emit(AgentEvent::TextDelta { text: delta }).await;
            }
            Some(Ok(LlmChunk::ToolCall(call))) => calls.push(call),
            Some(Ok(LlmChunk::Usage(u))) => usage = u,
        }
    }
    Ok((text, calls, usage))
}
