//! `session/tool`, `session/artifact`, `session/runs`.

use a3s_code_core::artifacts::MAX_READ_BYTES;
use a3s_code_protocol::errors::{DataCode, ErrorObject};
use a3s_code_protocol::types::{
    RunInfo, SessionArtifactParams, SessionArtifactResult, SessionRef, SessionRunsResult,
    SessionToolParams, SessionToolResult,
};

use super::{to_result, Ctx, HandlerResult};
use crate::errors;

pub async fn call(ctx: Ctx, params: SessionToolParams) -> HandlerResult {
    let session = ctx.shared.state.session(&params.session_id)?;
    let result = session
        .call_tool(&params.name, params.arguments, Some(ctx.cancel.clone()))
        .await
        .map_err(|e| errors::from_core(&e))?;
    to_result(SessionToolResult {
        run_id: result.run_id,
        output: result.output,
        is_error: result.is_error,
    })
}

pub async fn artifact(ctx: Ctx, params: SessionArtifactParams) -> HandlerResult {
    let session = ctx.shared.state.session(&params.session_id)?;
    let limit = params.limit.unwrap_or(MAX_READ_BYTES);
    let slice = session
        .read_artifact(&params.artifact, params.offset, limit)
        .map_err(|e| match e {
            a3s_code_core::artifacts::ArtifactError::NotFound(_) => {
                ErrorObject::runtime(DataCode::ArtifactNotFound, e.to_string())
            }
            other => ErrorObject::invalid_params(other.to_string()),
        })?;
    to_result(SessionArtifactResult {
        uri: slice.artifact.uri,
        offset: slice.offset,
        data: slice.data,
        eof: slice.eof,
        total: slice.total,
        sha256: slice.artifact.sha256,
    })
}

pub async fn runs(ctx: Ctx, params: SessionRef) -> HandlerResult {
    let session = ctx.shared.state.session(&params.session_id)?;
    let runs = session
        .runs()
        .into_iter()
        .map(|r| RunInfo {
            id: r.id,
            status: serde_json::to_value(r.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            prompt: r.prompt,
            started_ms: r.started_ms,
            ended_ms: r.ended_ms,
        })
        .collect();
    to_result(SessionRunsResult { runs })
}
