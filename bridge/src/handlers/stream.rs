//! `session/stream`: events as notifications under flow control, then the result.

use a3s_code_core::SendOptions;
use a3s_code_protocol::types::{EventEnvelope, RunResult, SessionEventParams, SessionPromptParams};
use a3s_code_protocol::{ErrorObject, JsonRpcVersion};
use serde::Serialize;

use super::{to_result, Ctx, HandlerResult};
use crate::errors;

/// The `session/event` notification, typed.
#[derive(Serialize)]
struct EventNotification {
    jsonrpc: JsonRpcVersion,
    method: &'static str,
    params: SessionEventParams,
}

pub async fn stream(ctx: Ctx, params: SessionPromptParams) -> HandlerResult {
    let shared = ctx.shared.clone();
    let session = shared.state.session(&params.session_id)?;
    let mut run = session
        .stream_with(
            &params.prompt,
            SendOptions {
                cancel: Some(ctx.cancel.clone()),
            },
        )
        .map_err(|e| errors::from_core(&e))?;
    let mut gate = shared
        .windows
        .open(ctx.request_id.clone(), shared.config.stream_window);
    let mut seq = 0u64;
    let mut cut_short = false;
    while let Some(record) = run.next().await {
        if !gate.admit(seq, &ctx.cancel).await {
            // Cancelled while the host was not reading: stop forwarding;
            // `result` below drains what the cancelled run still emits.
            cut_short = true;
            break;
        }
        // Serialized once, straight from the typed params (a generic
        // `Notification` would first turn them into a JSON tree).
        let note = EventNotification {
            jsonrpc: JsonRpcVersion,
            method: "session/event",
            params: SessionEventParams {
                request_id: ctx.request_id.clone(),
                seq,
                event: EventEnvelope::from_record(&record),
            },
        };
        shared.out.send(&note).await;
        seq += 1;
    }
    drop(gate);
    let result = run.result().await;
    if cut_short {
        // The host did not see every event, so even a run that finished
        // before the cancel took effect is answered as cancelled: a success
        // would claim a complete stream that was not delivered.
        return Err(ErrorObject::cancelled());
    }
    let result = result.map_err(|e| errors::from_core(&e))?;
    to_result(RunResult::from(result))
}
