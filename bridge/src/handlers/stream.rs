//! `session/stream`: events as notifications under flow control, then the result.

use a3s_code_core::SendOptions;
use a3s_code_protocol::types::{EventEnvelope, RunResult, SessionEventParams, SessionPromptParams};
use a3s_code_protocol::{ErrorObject, Notification};

use super::{to_result, Ctx, HandlerResult};
use crate::errors;

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
        let params = SessionEventParams {
            request_id: ctx.request_id.clone(),
            seq,
            event: EventEnvelope::from_record(&record),
        };
        let note = Notification::new(
            "session/event",
            serde_json::to_value(params).unwrap_or_default(),
        );
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
