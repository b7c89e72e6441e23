//! The tool-calling loop: model turn → tool calls → results → next turn.
//!
//! With a store, the loop writes a checkpoint after every settled round (and
//! after every tool result inside a round), so another process can continue
//! the run with `resume_run`: settled rounds are facts and are not repeated,
//! a tool call without a recorded result runs once.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::budget_enforce::{current_guard, enforce};
use crate::emitter::Emitter;
use crate::error::{CodeError, Result};
use crate::events::AgentEvent;
use crate::llm::{estimate_tokens, LlmRequest, Message, TokenUsage, ToolCall};
use crate::model_call::{compact, model_turn};
use crate::persist;
use crate::session::{EventRecord, RunRecord, RunResult, RunStatus, SessionInner, TraceEvent};
use crate::session_state::ActiveRun;
use crate::snapshot::{LoopCheckpoint, PendingRound, CHECKPOINT_SCHEMA_VERSION};
use crate::tool_call::run_tool;
use crate::tools::ToolContext;

/// Where a run starts: a new prompt, or another run's checkpoint.
pub(crate) enum LoopStart {
    Prompt(String),
    Resume(Box<LoopCheckpoint>),
}

pub(crate) struct LoopInput {
    pub session: Arc<SessionInner>,
    pub start: LoopStart,
    pub sink: Option<mpsc::Sender<EventRecord>>,
    pub cancel: CancellationToken,
}

/// The loop's running state, as checkpointed.
struct Progress {
    prompt: String,
    history: Vec<Message>,
    turn: u32,
    usage: TokenUsage,
    tool_calls_count: usize,
}

pub(crate) async fn run_loop(input: LoopInput) -> Result<RunResult> {
    let LoopInput {
        session,
        start,
        sink,
        cancel,
    } = input;
    let run_id = fresh_run_id(&session);
    let (prompt, mut superseded) = match &start {
        LoopStart::Prompt(prompt) => (prompt.clone(), None),
        LoopStart::Resume(checkpoint) => {
            (checkpoint.prompt.clone(), Some(checkpoint.run_id.clone()))
        }
    };
    let mut emitter = Emitter::new(session.clone(), run_id.clone(), sink, cancel.clone());
    let (ended, _) = tokio::sync::watch::channel(false);
    {
        let mut state = session.state.lock().expect("session state");
        state.start_run(RunRecord {
            id: run_id.clone(),
            status: RunStatus::Running,
            prompt: prompt.clone(),
            started_ms: session.host_env.now_ms(),
            ended_ms: None,
        });
        state.active = Some(ActiveRun {
            run_id: run_id.clone(),
            cancel: cancel.clone(),
            passivation: None,
            ended: ended.clone(),
            sink: emitter.sink.clone(),
        });
    }
    // The running record reaches the store too, so a crash leaves a trace.
    persist::save_snapshot_logged(&session).await;
    emitter
        .emit(AgentEvent::AgentStart {
            prompt: prompt.clone(),
        })
        .await;

    let outcome = drive(&session, start, &mut emitter, &cancel, &mut superseded).await;
    let status = match &outcome {
        Ok(_) => RunStatus::Completed,
        Err(CodeError::Cancelled) => RunStatus::Cancelled,
        Err(CodeError::Passivated { .. }) => RunStatus::Passivated,
        Err(_) => RunStatus::Failed,
    };
    // A run that ended here needs no resuming; a cancelled or passivated
    // one keeps its last checkpoint for another node.
    if matches!(status, RunStatus::Completed | RunStatus::Failed) {
        persist::delete_checkpoint(&session, &run_id).await;
        if let Some(old) = superseded.take() {
            persist::delete_checkpoint(&session, &old).await;
        }
    }
    let result = match outcome {
        Ok((text, usage, tool_calls_count)) => {
            emitter
                .emit(AgentEvent::AgentEnd {
                    text: text.clone(),
                    usage,
                    tool_calls_count,
                })
                .await;
            Ok(RunResult {
                run_id: run_id.clone(),
                text,
                usage,
                tool_calls_count,
            })
        }
        Err(error) => {
            if !matches!(error, CodeError::Passivated { .. }) {
                emitter
                    .emit(AgentEvent::Error {
                        error: error.to_string(),
                    })
                    .await;
            }
            Err(error)
        }
    };
    {
        let ended_ms = session.host_env.now_ms();
        let mut state = session.state.lock().expect("session state");
        state.finish_run(&run_id, status, ended_ms);
        state.active = None;
    }
    persist::save_snapshot_logged(&session).await;
    let _ = ended.send(true);
    result
}

/// Runs the rounds; returns the final text, the run's usage and its tool call count.
async fn drive(
    session: &Arc<SessionInner>,
    start: LoopStart,
    emitter: &mut Emitter,
    cancel: &CancellationToken,
    superseded: &mut Option<String>,
) -> Result<(String, TokenUsage, usize)> {
    let (mut progress, pending) = match start {
        LoopStart::Prompt(prompt) => {
            let mut history = session.state.lock().expect("session state").history.clone();
            let user = Message::User {
                content: prompt.clone(),
            };
            history.push(user.clone());
            commit(session, vec![user], TokenUsage::default());
            let progress = Progress {
                prompt,
                history,
                turn: 0,
                usage: TokenUsage::default(),
                tool_calls_count: 0,
            };
            (progress, None)
        }
        LoopStart::Resume(checkpoint) => {
            let checkpoint = *checkpoint;
            // The checkpoint's conversation is the truth for this run.
            session.state.lock().expect("session state").history = checkpoint.history.clone();
            let progress = Progress {
                prompt: checkpoint.prompt,
                history: checkpoint.history,
                turn: checkpoint.turn,
                usage: checkpoint.usage,
                tool_calls_count: checkpoint.tool_calls_count,
            };
            (progress, checkpoint.pending)
        }
    };
    let tool_ctx = ToolContext {
        workspace: session.workspace.clone(),
        cancel: cancel.clone(),
    };

    // A round interrupted mid-way: its recorded results are facts, the
    // calls without a result run now, once.
    if let Some(pending) = pending {
        progress.turn += 1;
        emitter
            .emit(AgentEvent::TurnStart {
                turn: progress.turn,
            })
            .await;
        settle_round(
            session,
            &mut progress,
            pending,
            &tool_ctx,
            emitter,
            TokenUsage::default(),
            superseded,
        )
        .await?;
        after_round(session, &progress, emitter)?;
    }

    let tool_defs = session.offered_tools();
    loop {
        progress.turn += 1;
        let turn = progress.turn;
        emitter.emit(AgentEvent::TurnStart { turn }).await;
        let mut request = LlmRequest {
            model: session.model_id.clone(),
            system: session.system_prompt.clone(),
            messages: progress.history.clone(),
            tools: tool_defs.clone(),
            max_tokens: None,
            temperature: None,
        };
        if let Some(history) = compact(session, &request, emitter, cancel).await? {
            progress.history = history.clone();
            request.messages = history;
        }
        let guard = current_guard(session);
        if let Some(guard) = &guard {
            let check = guard.check_before_llm(&session.id, estimate_tokens(&request));
            let decision = tokio::select! {
                // Cancellation wins when both are ready.
                biased;
                _ = cancel.cancelled() => return Err(CodeError::Cancelled),
                decision = check => decision,
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
                // Cancellation wins when both are ready.
                biased;
                _ = cancel.cancelled() => return Err(CodeError::Cancelled),
                _ = guard.record_after_llm(&session.id, &usage) => {}
            }
        }
        progress.usage.add(&usage);
        let assistant = Message::Assistant {
            content: text.clone(),
            tool_calls: calls.clone(),
        };

        if calls.is_empty() {
            progress.history.push(assistant.clone());
            commit(session, vec![assistant], usage);
            emitter.emit(AgentEvent::TurnEnd { turn, usage }).await;
            return Ok((text, progress.usage, progress.tool_calls_count));
        }

        let pending = PendingRound {
            assistant,
            results: Vec::new(),
        };
        checkpoint(session, emitter, &progress, Some(&pending), superseded).await;
        settle_round(
            session,
            &mut progress,
            pending,
            &tool_ctx,
            emitter,
            usage,
            superseded,
        )
        .await?;
        after_round(session, &progress, emitter)?;
    }
}

/// Runs the round's tool calls that have no recorded result, checkpointing
/// after each, then commits the round and checkpoints its end.
async fn settle_round(
    session: &Arc<SessionInner>,
    progress: &mut Progress,
    mut pending: PendingRound,
    tool_ctx: &ToolContext,
    emitter: &mut Emitter,
    usage: TokenUsage,
    superseded: &mut Option<String>,
) -> Result<()> {
    let Message::Assistant { tool_calls, .. } = &pending.assistant else {
        return Err(CodeError::Internal(
            "a pending round must start with an assistant message".into(),
        ));
    };
    let calls: Vec<ToolCall> = tool_calls.clone();
    for call in &calls {
        let recorded = pending
            .results
            .iter()
            .any(|r| matches!(r, Message::Tool { tool_call_id, .. } if *tool_call_id == call.id));
        if recorded {
            continue;
        }
        let result = run_tool(session, call, tool_ctx, emitter).await;
        if tool_ctx.cancel.is_cancelled() {
            return Err(CodeError::Cancelled);
        }
        progress.tool_calls_count += 1;
        pending.results.push(result);
        checkpoint(session, emitter, progress, Some(&pending), superseded).await;
    }
    // The assistant message and all its results land together, so the
    // history never holds a call without its result.
    let mut round = vec![pending.assistant];
    for call in &calls {
        if let Some(result) = pending
            .results
            .iter()
            .find(|r| matches!(r, Message::Tool { tool_call_id, .. } if *tool_call_id == call.id))
        {
            round.push(result.clone());
        }
    }
    progress.history.extend(round.iter().cloned());
    commit(session, round, usage);
    checkpoint(session, emitter, progress, None, superseded).await;
    // A turn is the model call and the tool calls it asked for.
    emitter
        .emit(AgentEvent::TurnEnd {
            turn: progress.turn,
            usage,
        })
        .await;
    Ok(())
}

/// The safe point after a settled round: passivation and the round limit.
fn after_round(session: &SessionInner, progress: &Progress, emitter: &Emitter) -> Result<()> {
    let passivation = session
        .state
        .lock()
        .expect("session state")
        .active
        .as_ref()
        .and_then(|a| a.passivation.clone());
    if let Some((reason, _)) = passivation {
        return Err(CodeError::Passivated {
            run_id: emitter.run_id.clone(),
            reason,
        });
    }
    if progress.turn as usize >= session.max_tool_rounds {
        return Err(CodeError::MaxToolRounds(session.max_tool_rounds));
    }
    Ok(())
}

async fn checkpoint(
    session: &SessionInner,
    emitter: &Emitter,
    progress: &Progress,
    pending: Option<&PendingRound>,
    superseded: &mut Option<String>,
) {
    if session.store.is_none() {
        return;
    }
    let checkpoint = LoopCheckpoint {
        schema_version: CHECKPOINT_SCHEMA_VERSION,
        session_id: session.id.clone(),
        run_id: emitter.run_id.clone(),
        prompt: progress.prompt.clone(),
        turn: progress.turn - u32::from(pending.is_some()),
        history: progress.history.clone(),
        usage: progress.usage,
        tool_calls_count: progress.tool_calls_count,
        pending: pending.cloned(),
        created_ms: session.host_env.now_ms(),
    };
    persist::write_checkpoint(session, &checkpoint).await;
    // Once this run's checkpoint stands, the checkpoint of the run it
    // resumed is superseded: resuming that run again must not repeat work.
    if let Some(old) = superseded.take() {
        persist::delete_checkpoint(session, &old).await;
    }
}

/// A run id not used by any retained run of this session: a sequential
/// generator restarts in every process, and a restored session must not
/// reuse the ids (and so the checkpoints) of its earlier runs.
fn fresh_run_id(session: &SessionInner) -> String {
    loop {
        let id = session.host_env.next_id("run");
        let state = session.state.lock().expect("session state");
        if !state.runs.iter().any(|r| r.record.id == id) {
            return id;
        }
    }
}

fn commit(session: &SessionInner, messages: Vec<Message>, usage: TokenUsage) {
    let mut state = session.state.lock().expect("session state");
    state.history.extend(messages);
    state.usage.add(&usage);
}
