//! Enforcing a budget guard's decisions inside a run (seed 000): `soft`
//! emits a `budget_threshold_hit` of kind `soft` and goes on, `deny` emits
//! one of kind `hard` and fails the guarded call.

use std::sync::Arc;

use crate::budget::{BudgetDecision, BudgetGuard};
use crate::emitter::Emitter;
use crate::error::{CodeError, Result};
use crate::events::{AgentEvent, BudgetThresholdKind};
use crate::session::SessionInner;

pub(crate) fn current_guard(session: &SessionInner) -> Option<Arc<dyn BudgetGuard>> {
    session.budget_guard.lock().expect("budget guard").clone()
}

/// Applies a budget decision: `Ok` to go on, `Err` when denied.
pub(crate) async fn enforce(decision: BudgetDecision, emitter: &mut Emitter) -> Result<()> {
    match decision {
        BudgetDecision::Allow => Ok(()),
        BudgetDecision::Soft {
            resource,
            consumed,
            limit,
            message,
        } => {
            emitter
                .emit(AgentEvent::BudgetThresholdHit {
                    resource,
                    kind: BudgetThresholdKind::Soft,
                    consumed,
                    limit,
                    message,
                })
                .await;
            Ok(())
        }
        BudgetDecision::Deny { resource, reason } => {
            emitter
                .emit(AgentEvent::BudgetThresholdHit {
                    resource: resource.clone(),
                    kind: BudgetThresholdKind::Hard,
                    consumed: 0.0,
                    limit: 0.0,
                    message: Some(reason.clone()),
                })
                .await;
            Err(CodeError::BudgetExhausted { resource, reason })
        }
    }
}
