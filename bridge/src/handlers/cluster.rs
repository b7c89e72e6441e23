//! Seed 000 cluster seams: `session/resumeRun`, `session/passivate`,
//! `session/injectEvent`, `session/save`.

use a3s_code_core::SendOptions;
use a3s_code_protocol::errors::ErrorObject;
use a3s_code_protocol::types::{
    EmptyResult, RunResult, SessionInjectEventParams, SessionInjectEventResult,
    SessionPassivateParams, SessionPassivateResult, SessionRef, SessionResumeRunParams,
};

use super::{to_result, Ctx, HandlerResult};
use crate::errors;

pub async fn resume_run(ctx: Ctx, params: SessionResumeRunParams) -> HandlerResult {
    let session = ctx.shared.state.session(&params.session_id)?;
    let options = SendOptions {
        cancel: Some(ctx.cancel.clone()),
    };
    let result = session
        .resume_run_with(&params.run_id, options)
        .await
        .map_err(|e| errors::from_core(&e))?;
    to_result(RunResult::from(result))
}

pub async fn passivate(ctx: Ctx, params: SessionPassivateParams) -> HandlerResult {
    let session = ctx.shared.state.session(&params.session_id)?;
    let run_id = session
        .passivate(&params.reason, params.deadline_ms)
        .await
        .map_err(|e| errors::from_core(&e))?;
    to_result(SessionPassivateResult { run_id })
}

pub async fn inject_event(ctx: Ctx, params: SessionInjectEventParams) -> HandlerResult {
    let session = ctx.shared.state.session(&params.session_id)?;
    if !params.event.is_host_injectable() {
        return Err(ErrorObject::invalid_params(format!(
            "only passivation_requested and peer_invocation may be injected, not {}",
            params.event.tag()
        )));
    }
    let delivered = session
        .inject_event(params.event)
        .await
        .map_err(|e| errors::from_core(&e))?;
    to_result(SessionInjectEventResult { delivered })
}

pub async fn save(ctx: Ctx, params: SessionRef) -> HandlerResult {
    let session = ctx.shared.state.session(&params.session_id)?;
    session.save().await.map_err(|e| errors::from_core(&e))?;
    to_result(EmptyResult {})
}
