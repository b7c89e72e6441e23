//! One handler per method area. Each takes typed params and returns a typed
//! result or a protocol error; the server owns ids, framing and cancellation.

mod agent;
mod budget;
mod cluster;
mod session;
mod stream;
mod tools;

use std::sync::Arc;

use a3s_code_protocol::{ErrorObject, RequestId};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::server::Shared;

/// What a handler gets: shared state plus its own request's id and cancel token.
pub struct Ctx {
    pub shared: Arc<Shared>,
    pub request_id: RequestId,
    pub cancel: CancellationToken,
}

pub type HandlerResult = Result<Value, ErrorObject>;

/// Methods served by [`dispatch`] (the server itself serves `initialize` and `shutdown`).
pub const DISPATCHED: &[&str] = &[
    "agent/create",
    "agent/close",
    "session/create",
    "session/info",
    "session/send",
    "session/stream",
    "session/setBudgetGuard",
    "session/tool",
    "session/artifact",
    "session/runs",
    "session/resumeRun",
    "session/passivate",
    "session/injectEvent",
    "session/save",
    "session/close",
];

/// Runs the handler of `method`.
pub async fn dispatch(ctx: Ctx, method: &str, params: Option<Value>) -> HandlerResult {
    match method {
        "agent/create" => agent::create(ctx, parse(params)?).await,
        "agent/close" => agent::close(ctx, parse(params)?).await,
        "session/create" => session::create(ctx, parse(params)?).await,
        "session/info" => session::info(ctx, parse(params)?).await,
        "session/send" => session::send(ctx, parse(params)?).await,
        "session/stream" => stream::stream(ctx, parse(params)?).await,
        "session/setBudgetGuard" => budget::set_budget_guard(ctx, parse(params)?).await,
        "session/close" => session::close(ctx, parse(params)?).await,
        "session/tool" => tools::call(ctx, parse(params)?).await,
        "session/artifact" => tools::artifact(ctx, parse(params)?).await,
        "session/runs" => tools::runs(ctx, parse(params)?).await,
        "session/resumeRun" => cluster::resume_run(ctx, parse(params)?).await,
        "session/passivate" => cluster::passivate(ctx, parse(params)?).await,
        "session/injectEvent" => cluster::inject_event(ctx, parse(params)?).await,
        "session/save" => cluster::save(ctx, parse(params)?).await,
        other => Err(ErrorObject::method_not_found(other)),
    }
}

/// Decodes params; absent params decode as `{}`.
pub fn parse<T: DeserializeOwned>(params: Option<Value>) -> Result<T, ErrorObject> {
    let params = params.unwrap_or_else(|| Value::Object(Default::default()));
    serde_json::from_value(params)
        .map_err(|e| ErrorObject::invalid_params(format!("invalid params: {e}")))
}

pub fn to_result<T: Serialize>(value: T) -> HandlerResult {
    serde_json::to_value(value)
        .map_err(|e| ErrorObject::internal(format!("cannot encode result: {e}")))
}
