//! `agent/create`, `agent/close`.

use a3s_code_core::Agent;
use a3s_code_protocol::types::{
    AgentCloseParams, AgentCreateParams, AgentCreateResult, EmptyResult,
};

use super::{to_result, Ctx, HandlerResult};
use crate::errors;

pub async fn create(ctx: Ctx, params: AgentCreateParams) -> HandlerResult {
    let agent = Agent::new(&params.config)
        .await
        .map_err(|e| errors::from_core(&e))?;
    let agent_id = ctx.shared.state.add_agent(agent);
    to_result(AgentCreateResult { agent_id })
}

pub async fn close(ctx: Ctx, params: AgentCloseParams) -> HandlerResult {
    let (agent, sessions) = ctx.shared.state.remove_agent(&params.agent_id)?;
    for session in sessions {
        session.close().await;
    }
    agent.close().await;
    to_result(EmptyResult {})
}
