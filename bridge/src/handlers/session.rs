//! `session/create`, `session/info`, `session/send`, `session/close`.

use std::sync::Arc;

use a3s_code_core::host_env::{
    Clock, FixedClock, HostEnv, IdGenerator, SequentialIdGenerator, SystemClock, UuidIdGenerator,
};
use a3s_code_core::{SendOptions, SessionOptions};
use a3s_code_protocol::types::{
    EmptyResult, HostEnvConfig, RunResult, SessionCreateParams, SessionCreateResult,
    SessionInfoResult, SessionOptionsParams, SessionPromptParams, SessionRef,
};

use super::{to_result, Ctx, HandlerResult};
use crate::errors;
use crate::host_confirmation::HostConfirmation;

pub async fn create(ctx: Ctx, params: SessionCreateParams) -> HandlerResult {
    let agent = ctx.shared.state.agent(&params.agent_id)?;
    let mut options = core_options(params.options.unwrap_or_default());
    if options.permission_policy.is_some() {
        // `ask` decisions go to the host; without its handler they fail closed.
        options.confirmation_handler =
            Some(Arc::new(HostConfirmation::new(ctx.shared.reverse.clone())));
    }
    let session = agent
        .session_builder(&params.workspace)
        .options(options)
        .build()
        .await
        .map_err(|e| errors::from_core(&e))?;
    let session_id = session.session_id().to_string();
    ctx.shared.state.add_session(&params.agent_id, session)?;
    to_result(SessionCreateResult { session_id })
}

/// Wire options → core options.
fn core_options(wire: SessionOptionsParams) -> SessionOptions {
    let mut options = SessionOptions::new();
    options.model = wire.model;
    options.system_prompt = wire.system_prompt;
    options.max_tool_rounds = wire.max_tool_rounds;
    options.session_id = wire.session_id;
    options.tenant_id = wire.tenant_id;
    options.principal = wire.principal;
    options.agent_template_id = wire.agent_template_id;
    options.correlation_id = wire.correlation_id;
    options.host_env = wire.host_env.map(host_env);
    options.permission_policy = wire.permission_policy.map(Into::into);
    options.confirmation_timeout_ms = wire.confirmation_timeout_ms;
    if let Some(dir) = wire.file_session_store_dir {
        options = options.with_file_session_store(dir);
    }
    options.retention_limits = wire.retention_limits.map(Into::into);
    options.max_context_tokens = wire.max_context_tokens;
    options.auto_compact = wire.auto_compact;
    options.auto_compact_threshold = wire.auto_compact_threshold;
    options
}

/// Each field is independent: an omitted one keeps the system default.
fn host_env(config: HostEnvConfig) -> Arc<HostEnv> {
    let ids: Arc<dyn IdGenerator> = match config.sequential_id_prefix {
        Some(prefix) => Arc::new(SequentialIdGenerator::new(prefix)),
        None => Arc::new(UuidIdGenerator),
    };
    let clock: Arc<dyn Clock> = match config.fixed_time_ms {
        Some(ms) => Arc::new(FixedClock::new(ms)),
        None => Arc::new(SystemClock),
    };
    Arc::new(HostEnv::new(ids, clock))
}

pub async fn info(ctx: Ctx, params: SessionRef) -> HandlerResult {
    let session = ctx.shared.state.session(&params.session_id)?;
    let identity = session.identity().clone();
    to_result(SessionInfoResult {
        session_id: session.session_id().to_string(),
        workspace: session.workspace().root().display().to_string(),
        tools: session.tool_names(),
        tenant_id: identity.tenant_id,
        principal: identity.principal,
        agent_template_id: identity.agent_template_id,
        correlation_id: identity.correlation_id,
    })
}

pub async fn send(ctx: Ctx, params: SessionPromptParams) -> HandlerResult {
    let session = ctx.shared.state.session(&params.session_id)?;
    let options = SendOptions {
        cancel: Some(ctx.cancel.clone()),
    };
    let result = session
        .send(&params.prompt, Some(options))
        .await
        .map_err(|e| errors::from_core(&e))?;
    to_result(RunResult::from(result))
}

pub async fn close(ctx: Ctx, params: SessionRef) -> HandlerResult {
    let session = ctx.shared.state.remove_session(&params.session_id)?;
    session.close().await;
    to_result(EmptyResult {})
}
