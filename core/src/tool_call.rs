//! One tool call: permission check, budget check, execution, large output
//! kept as an artifact, and the events around it.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::budget::BudgetDecision;
use crate::budget_enforce::{current_guard, enforce};
use crate::emitter::Emitter;
use crate::events::AgentEvent;
use crate::llm::{Message, ToolCall};
use crate::permissions::{ConfirmationOutcome, ConfirmationRequest, PermissionDecision};
use crate::session::{RunRecord, RunStatus, SessionInner, TraceEvent};
use crate::tools::ToolContext;

/// Runs one tool call behind the budget guard; always yields a tool message.
pub(crate) async fn run_tool(
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
                // Cancellation wins when both are ready.
                biased;
                _ = ctx.cancel.cancelled() => BudgetDecision::Deny {
                    resource: "run".into(),
                    reason: "cancelled".into(),
                },
                decision = guard.check_before_tool(&session.id, &call.name) => decision,
            };
            enforce(decision, emitter).await.err()
        }
        None => None,
    };
    let (output, is_error) = match denied {
        Some(error) => (error.to_string(), true),
        None => execute(session, call, ctx, &emitter.run_id).await,
    };
    finish_tool(call, output, is_error, emitter).await
}

/// Runs the tool, records its trace, and turns output over the inline limit
/// into an artifact (the model sees a preview, size, sha256 and URI).
async fn execute(
    session: &SessionInner,
    call: &ToolCall,
    ctx: &ToolContext,
    run_id: &str,
) -> (String, bool) {
    let started_ms = session.host_env.now_ms();
    let result = session
        .tools
        .execute(&call.name, call.arguments.clone(), ctx)
        .await;
    let ended_ms = session.host_env.now_ms();
    session
        .state
        .lock()
        .expect("session state")
        .record_trace(TraceEvent {
            run_id: run_id.to_string(),
            kind: "tool".into(),
            name: call.name.clone(),
            started_ms,
            ended_ms,
            ok: result.is_ok(),
        });
    match result {
        Ok(output) if output.content.len() > session.artifacts.limits().inline_threshold_bytes => {
            let id = session.host_env.next_id("artifact");
            match session
                .artifacts
                .capture(id, &call.name, &call.id, output.content, ended_ms)
            {
                Some((_, text)) => (text, false),
                None => (String::new(), false),
            }
        }
        Ok(output) => (output.content, false),
        Err(error) => (error.to_string(), true),
    }
}

/// What a direct tool call from the host produced.
#[derive(Debug, Clone, PartialEq)]
pub struct DirectToolResult {
    /// The run recorded for this call (its events are in `run_events`).
    pub run_id: String,
    pub output: String,
    pub is_error: bool,
}

/// A tool call made by the host itself: no model, no permission prompt (the
/// host is the authority), but the same workspace boundaries, output limits,
/// artifacts, events and run record as a model's call.
pub(crate) async fn run_direct(
    session: Arc<SessionInner>,
    name: &str,
    arguments: serde_json::Value,
    cancel: CancellationToken,
) -> DirectToolResult {
    let run_id = session.host_env.next_id("run");
    let started_ms = session.host_env.now_ms();
    session
        .state
        .lock()
        .expect("session state")
        .start_run(RunRecord {
            id: run_id.clone(),
            status: RunStatus::Running,
            prompt: format!("tool:{name}"),
            started_ms,
            ended_ms: None,
        });
    let call = ToolCall {
        id: session.host_env.next_id("call"),
        name: name.to_string(),
        arguments,
    };
    let mut emitter = Emitter::new(session.clone(), run_id.clone(), None, cancel.clone());
    emitter
        .emit(AgentEvent::ToolStart {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            arguments: call.arguments.clone(),
        })
        .await;
    let ctx = ToolContext {
        workspace: session.workspace.clone(),
        cancel,
    };
    let (output, is_error) = execute(&session, &call, &ctx, &run_id).await;
    finish_tool(&call, output.clone(), is_error, &mut emitter).await;
    let status = if is_error {
        RunStatus::Failed
    } else {
        RunStatus::Completed
    };
    let ended_ms = session.host_env.now_ms();
    session
        .state
        .lock()
        .expect("session state")
        .finish_run(&run_id, status, ended_ms);
    DirectToolResult {
        run_id,
        output,
        is_error,
    }
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
                // Cancellation wins when both are ready.
                biased;
                _ = cancel.cancelled() => ConfirmationOutcome::Rejected { reason: "run cancelled".into() },
                outcome = tokio::time::timeout(deadline, handler.confirm(&request)) => {
                    outcome.unwrap_or(ConfirmationOutcome::TimedOut)
                }
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
