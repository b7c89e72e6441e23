//! A core `ConfirmationHandler` answered by the host through
//! `host/permission/request`. Only an explicit `{"approved": true}` approves:
//! an error, no handler or a malformed answer rejects, a timeout times out.

use std::sync::Arc;
use std::time::Duration;

use a3s_code_core::permissions::{ConfirmationHandler, ConfirmationOutcome, ConfirmationRequest};
use a3s_code_protocol::types::{PermissionRequestParams, PermissionRequestResult};

use crate::reverse::{ReverseClient, ReverseError};

pub const METHOD: &str = "host/permission/request";

#[derive(Debug)]
pub struct HostConfirmation {
    reverse: Arc<ReverseClient>,
}

impl HostConfirmation {
    pub fn new(reverse: Arc<ReverseClient>) -> Self {
        Self { reverse }
    }
}

#[async_trait::async_trait]
impl ConfirmationHandler for HostConfirmation {
    async fn confirm(&self, request: &ConfirmationRequest) -> ConfirmationOutcome {
        let params = PermissionRequestParams {
            session_id: request.session_id.clone(),
            tool_call_id: request.tool_call_id.clone(),
            tool_name: request.tool_name.clone(),
            arguments: request.arguments.clone(),
            timeout_ms: request.timeout_ms,
        };
        let params = serde_json::to_value(params).unwrap_or_default();
        let timeout = Duration::from_millis(request.timeout_ms);
        match self.reverse.call(METHOD, params, timeout).await {
            Ok(value) => match serde_json::from_value::<PermissionRequestResult>(value) {
                Ok(PermissionRequestResult { approved: true, .. }) => ConfirmationOutcome::Approved,
                Ok(PermissionRequestResult { reason, .. }) => ConfirmationOutcome::Rejected {
                    reason: reason.unwrap_or_else(|| "rejected by the host".into()),
                },
                Err(e) => ConfirmationOutcome::Rejected {
                    reason: format!("malformed answer to {METHOD}: {e}"),
                },
            },
            Err(ReverseError::Timeout(_)) => ConfirmationOutcome::TimedOut,
            Err(error) => ConfirmationOutcome::Rejected {
                reason: format!("{METHOD} failed: {error}"),
            },
        }
    }
}
