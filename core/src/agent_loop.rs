//! The tool-calling loop: model turn → tool calls → results → next turn.

use std::sync::Arc;

use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::budget::{BudgetDecision, BudgetGuard};
use crate::error::{CodeError, Result};
use crate::events::{AgentEvent, BudgetThresholdKind};
use crate::llm::{estimate_tokens, LlmChunk, LlmRequest, Message, TokenUsage, ToolCall};
use crate::permissions::{ConfirmationOutcome, ConfirmationRequest, PermissionDecision};
use crate::session::{EventRecord, RunRecord, RunResult, RunStatus, SessionInner};
use crate::tools::ToolContext;

pub(crate) struct LoopInput {
    pub session: Arc<SessionInner>,
    pub prompt: String,
    pub sink: Option<mpsc::Sender<EventRecord>>,
    pub cancel: CancellationToken,
}

/// Emits events with run metadata, in order, waiting when the consumer is slow.
struct Emitter {
    session: Arc<SessionInner>,
    run_id: String,
    seq: u64,
    sink: Option<mpsc::Sender<EventRecord>>,
    cancel: CancellationToken,
}

impl Emitter {
    async fn emit(&mut self, event: AgentEvent) {
        let record = EventRecord {
            event,
            run_id: self.run_id.clone(),
            session_id: self.session.id.clone(),
            seq: self.seq,
            timestamp_ms: self.session.host_env.now_ms(),
        };
        self.seq += 1;
        if let Some(sink) = &self.sink {
            // A dropped receiver means nobody listens any more; the run goes
            // on. A cancelled run stops waiting for a stalled consumer.
            tokio::select! {
                _ = sink.send(record) => {}
                _ = self.cancel.cancelled() => {}
            }
        }
    }
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
        .runs
        .push(RunRecord {
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
    {
        let mut state = session.state.lock().expect("session state");
        if let Some(run) = state.runs.iter_mut().rev().find(|r| r.id == run_id) {
            run.status = status;
            run.ended_ms = Some(session.host_env.now_ms());
        }
    }
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

        let (text, calls, usage) = model_turn(session, request, emitter, cancel).await?;
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

fn current_guard(session: &SessionInner) -> Option<Arc<dyn BudgetGuard>> {
    session.budget_guard.lock().expect("budget guard").clone()
}

fn commit(session: &SessionInner, messages: Vec<Message>, usage: TokenUsage) {
    let mut state = session.state.lock().expect("session state");
    state.history.extend(messages);
    state.usage.add(&usage);
}

/// Applies a budget decision: `Ok` to go on, `Err` when denied.
async fn enforce(decision: BudgetDecision, emitter: &mut Emitter) -> Result<()> {
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

/// Runs one tool call behind the budget guard; always yields a tool message.
async fn run_tool(
    session: &SessionInner,
    call: &ToolCall,
    ctx: &ToolContext,
    emitter: &mut Emitter,
) -> Message {
    emitter
        .emit(AgentEvent::ToolStart {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            arguments: call.arguments.clone(),
        })
        .await;
    if let Some(reason) = check_permission(session, call, emitter, &ctx.cancel).await {
        return finish_tool(call, reason, true, emitter).await;
    }
    let guard = current_guard(session);
    let denied = match &guard {
        Some(guard) => {
            let decision = tokio::select! {
                decision = guard.check_before_tool(&session.id, &call.name) => decision,
                _ = ctx.cancel.cancelled() => BudgetDecision::Deny {
                    resource: "run".into(),
                    reason: "cancelled".into(),
                },
            };
            enforce(decision, emitter).await.err()
        }
        None => None,
    };
    let (output, is_error) = match denied {
        Some(error) => (error.to_string(), true),
        None => match session
            .tools
            .execute(&call.name, call.arguments.clone(), ctx)
            .await
        {
            Ok(output) => (output.content, false),
            Err(error) => (error.to_string(), true),
        },
    };
    finish_tool(call, output, is_error, emitter).await
}

async fn finish_tool(
    call: &ToolCall,
    output: String,
    is_error: bool,
    emitter: &mut Emitter,
) -> Message {
    emitter
        .emit(AgentEvent::ToolEnd {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            output: output.clone(),
            is_error,
        })
        .await;
    Message::Tool {
        tool_call_id: call.id.clone(),
        name: call.name.clone(),
        content: output,
        is_error,
    }
}

/// Applies the permission policy; returns the refusal to feed back, if any.
async fn check_permission(
    session: &SessionInner,
    call: &ToolCall,
    emitter: &mut Emitter,
    cancel: &CancellationToken,
) -> Option<String> {
    let policy = session.permission_policy.as_ref()?;
    let denied = |reason: String| AgentEvent::PermissionDenied {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        reason,
    };
    match policy.evaluate(&call.name, &call.arguments) {
        PermissionDecision::Allow => None,
        PermissionDecision::Deny => {
            let reason = format!(
                "permission denied: the policy does not allow this {} call",
                call.name
            );
            emitter.emit(denied(reason.clone())).await;
            Some(reason)
        }
        PermissionDecision::Ask => {
            let Some(handler) = &session.confirmation else {
                let reason = format!(
                    "permission denied: {} needs confirmation and no confirmation handler is installed",
                    call.name
                );
                emitter.emit(denied(reason.clone())).await;
                return Some(reason);
            };
            let timeout_ms = session.confirmation_timeout_ms;
            emitter
                .emit(AgentEvent::ConfirmationRequired {
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    timeout_ms,
                })
                .await;
            let request = ConfirmationRequest {
                session_id: session.id.clone(),
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                arguments: call.arguments.clone(),
                timeout_ms,
            };
            let deadline = std::time::Duration::from_millis(timeout_ms);
            let outcome = tokio::select! {
                outcome = tokio::time::timeout(deadline, handler.confirm(&request)) => {
                    outcome.unwrap_or(ConfirmationOutcome::TimedOut)
                }
                _ = cancel.cancelled() => ConfirmationOutcome::Rejected { reason: "run cancelled".into() },
            };
            match outcome {
                ConfirmationOutcome::Approved => {
                    emitter
                        .emit(AgentEvent::ConfirmationReceived {
                            tool_call_id: call.id.clone(),
                            tool_name: call.name.clone(),
                            approved: true,
                            reason: None,
                        })
                        .await;
                    None
                }
                ConfirmationOutcome::Rejected { reason } => {
                    emitter
                        .emit(AgentEvent::ConfirmationReceived {
                            tool_call_id: call.id.clone(),
                            tool_name: call.name.clone(),
                            approved: false,
                            reason: Some(reason.clone()),
                        })
                        .await;
                    let reason = format!(
                        "permission denied: the host rejected this {} call: {reason}",
                        call.name
                    );
                    emitter.emit(denied(reason.clone())).await;
                    Some(reason)
                }
                ConfirmationOutcome::TimedOut => {
                    emitter
                        .emit(AgentEvent::ConfirmationTimeout {
                            tool_call_id: call.id.clone(),
                            tool_name: call.name.clone(),
                            timeout_ms,
                        })
                        .await;
                    let reason = format!(
                        "permission denied: nobody confirmed this {} call within {timeout_ms}ms",
                        call.name
                    );
                    emitter.emit(denied(reason.clone())).await;
                    Some(reason)
                }
            }
        }
    }
}
