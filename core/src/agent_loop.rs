//! The tool-calling loop: model turn → tool calls → results → next turn.

use std::sync::Arc;

use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::budget::{BudgetDecision, BudgetGuard};
use crate::emitter::Emitter;
use crate::error::{CodeError, Result};
use crate::events::{AgentEvent, BudgetThresholdKind};
use crate::llm::{estimate_tokens, LlmChunk, LlmRequest, Message, TokenUsage, ToolCall};
use crate::session::{EventRecord, RunRecord, RunResult, RunStatus, SessionInner, TraceEvent};
use crate::tool_call::run_tool;
use crate::tools::ToolContext;

pub(crate) struct LoopInput {
    pub session: Arc<SessionInner>,
    pub prompt: String,
    pub sink: Option<mpsc::Sender<EventRecord>>,
    pub cancel: CancellationToken,
}

pub(crate) async fn run_loop(input: LoopInput) -> Result<RunResult> {
    let LoopInput {
        session,
        prompt,
        sink,
        cancel,
    } = input;
    let run_id = session.host_env.next_id("run");
    let started_ms = session.host_env.now_ms();
    session
        .state
        .lock()
        .expect("session state")
        .start_run(RunRecord {
            id: run_id.clone(),
            status: RunStatus::Running,
            prompt: prompt.clone(),
            started_ms,
            ended_ms: None,
        });
    let mut emitter = Emitter {
        session: session.clone(),
        run_id: run_id.clone(),
        seq: 0,
        sink,
        cancel: cancel.clone(),
    };
    emitter
        .emit(AgentEvent::AgentStart {
            prompt: prompt.clone(),
        })
        .await;

    let outcome = drive(&session, &prompt, &mut emitter, &cancel).await;
    let status = match &outcome {
        Ok(_) => RunStatus::Completed,
        Err(CodeError::Cancelled) => RunStatus::Cancelled,
        Err(_) => RunStatus::Failed,
    };
    let ended_ms = session.host_env.now_ms();
    session
        .state
        .lock()
        .expect("session state")
        .finish_run(&run_id, status, ended_ms);
    match outcome {
        Ok((text, usage, tool_calls_count)) => {
            emitter
                .emit(AgentEvent::AgentEnd {
                    text: text.clone(),
                    usage,
                    tool_calls_count,
                })
                .await;
            Ok(RunResult {
                run_id,
                text,
                usage,
                tool_calls_count,
            })
        }
        Err(error) => {
            emitter
                .emit(AgentEvent::Error {
                    error: error.to_string(),
                })
                .await;
            Err(error)
        }
    }
}

/// Runs the rounds; returns the final text, the run's usage and its tool call count.
async fn drive(
    session: &Arc<SessionInner>,
    prompt: &str,
    emitter: &mut Emitter,
    cancel: &CancellationToken,
) -> Result<(String, TokenUsage, usize)> {
    let mut history = session.state.lock().expect("session state").history.clone();
    let user = Message::User {
        content: prompt.to_string(),
    };
    history.push(user.clone());
    commit(session, vec![user], TokenUsage::default());

    let tool_defs = session.offered_tools();
    let tool_ctx = ToolContext {
        workspace: session.workspace.clone(),
        cancel: cancel.clone(),
    };
    let mut run_usage = TokenUsage::default();
    let mut tool_calls_count = 0;
    let mut turn: u32 = 0;
    loop {
        turn += 1;
        emitter.emit(AgentEvent::TurnStart { turn }).await;
        let request = LlmRequest {
            model: session.model_id.clone(),
            system: session.system_prompt.clone(),
            messages: history.clone(),
            tools: tool_defs.clone(),
            max_tokens: None,
            temperature: None,
        };
        let guard = current_guard(session);
        if let Some(guard) = &guard {
            let check = guard.check_before_llm(&session.id, estimate_tokens(&request));
            let decision = tokio::select! {
                decision = check => decision,
                _ = cancel.cancelled() => return Err(CodeError::Cancelled),
            };
            enforce(decision, emitter).await?;
        }

        let started_ms = session.host_env.now_ms();
        let outcome = model_turn(session, request, emitter, cancel).await;
        session
            .state
            .lock()
            .expect("session state")
            .record_trace(TraceEvent {
                run_id: emitter.run_id.clone(),
                kind: "llm".into(),
                name: session.model_id.clone(),
                started_ms,
                ended_ms: session.host_env.now_ms(),
                ok: outcome.is_ok(),
            });
        let (text, calls, usage) = outcome?;
        if let Some(guard) = &guard {
            tokio::select! {
                _ = guard.record_after_llm(&session.id, &usage) => {}
                _ = cancel.cancelled() => return Err(CodeError::Cancelled),
            }
        }
        run_usage.add(&usage);
        let assistant = Message::Assistant {
            content: text.clone(),
            tool_calls: calls.clone(),
        };
        history.push(assistant.clone());

        if calls.is_empty() {
            emitter.emit(AgentEvent::TurnEnd { turn, usage }).await;
            commit(session, vec![assistant], usage);
            return Ok((text, run_usage, tool_calls_count));
        }

        let mut round = vec![assistant];
        for call in calls {
            tool_calls_count += 1;
            let result = run_tool(session, &call, &tool_ctx, emitter).await;
            if cancel.is_cancelled() {
                return Err(CodeError::Cancelled);
            }
            history.push(result.clone());
            round.push(result);
        }
        // The assistant message and all its tool results land together, so
        // stored history never holds a call without its result.
        commit(session, round, usage);
        // A turn is the model call and the tool calls it asked for.
        emitter.emit(AgentEvent::TurnEnd { turn, usage }).await;

        if turn as usize >= session.max_tool_rounds {
            return Err(CodeError::MaxToolRounds(session.max_tool_rounds));
        }
    }
}

pub(crate) fn current_guard(session: &SessionInner) -> Option<Arc<dyn BudgetGuard>> {
    session.budget_guard.lock().expect("budget guard").clone()
}

fn commit(session: &SessionInner, messages: Vec<Message>, usage: TokenUsage) {
    let mut state = session.state.lock().expect("session state");
    state.history.extend(messages);
    state.usage.add(&usage);
}

/// Applies a budget decision: `Ok` to go on, `Err` when denied.
pub(crate) async fn enforce(decision: BudgetDecision, emitter: &mut Emitter) -> Result<()> {
    match decision {
        BudgetDecision::Allow => Ok(()),
        BudgetDecision::Soft {
            resource,
            consumed,
            limit,
            message,
        } => {
            emitter
                .emit(AgentEvent::BudgetThresholdHit {
                    resource,
                    kind: BudgetThresholdKind::Soft,
                    consumed,
                    limit,
                    message,
                })
                .await;
            Ok(())
        }
        BudgetDecision::Deny { resource, reason } => {
            emitter
                .emit(AgentEvent::BudgetThresholdHit {
                    resource: resource.clone(),
                    kind: BudgetThresholdKind::Hard,
                    consumed: 0.0,
                    limit: 0.0,
                    message: Some(reason.clone()),
                })
                .await;
            Err(CodeError::BudgetExhausted { resource, reason })
        }
    }
}

/// One model call: streams text deltas out, collects tool calls and usage.
async fn model_turn(
    session: &SessionInner,
    request: LlmRequest,
    emitter: &mut Emitter,
    cancel: &CancellationToken,
) -> Result<(String, Vec<ToolCall>, TokenUsage)> {
    let mut stream = tokio::select! {
        stream = session.llm.stream(request) => stream?,
        _ = cancel.cancelled() => return Err(CodeError::Cancelled),
    };
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut usage = TokenUsage::default();
    loop {
        let chunk = tokio::select! {
            chunk = stream.next() => chunk,
            _ = cancel.cancelled() => return Err(CodeError::Cancelled),
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
