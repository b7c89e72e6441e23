//! `$/cancelRequest`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::message::RequestId;

/// Cancels the request `id` that the sender sent earlier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CancelRequestParams {
    pub id: RequestId,
}
