//! `session/setBudgetGuard`.

use std::sync::Arc;

use a3s_code_protocol::types::{EmptyResult, SetBudgetGuardParams};

use super::{to_result, Ctx, HandlerResult};
use crate::host_budget::HostBudgetGuard;

pub async fn set_budget_guard(ctx: Ctx, params: SetBudgetGuardParams) -> HandlerResult {
    let session = ctx.shared.state.session(&params.session_id)?;
    let guard = params.guard.map(|spec| {
        Arc::new(HostBudgetGuard::new(ctx.shared.reverse.clone(), spec))
            as Arc<dyn a3s_code_core::budget::BudgetGuard>
    });
    session.set_budget_guard(guard);
    to_result(EmptyResult {})
}
