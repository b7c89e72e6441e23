//! Reverse requests: the bridge asking the host, always with a deadline.
//!
//! Ids are `bridge-<n>` strings, so they can never collide with the host's
//! ids. A call that times out, or whose caller stops waiting (its run was
//! cancelled), is withdrawn: its pending entry is removed and the host gets
//! `$/cancelRequest`. A late answer finds no entry and is ignored.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use a3s_code_protocol::types::CancelRequestParams;
use a3s_code_protocol::{ErrorObject, Notification, Request, RequestId, Response};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::transport::Outbound;

/// Why a reverse request produced no usable result.
#[derive(Debug, Clone, PartialEq)]
pub enum ReverseError {
    /// The host did not declare a handler for this method in `initialize`.
    NoHandler,
    /// The deadline passed.
    Timeout(Duration),
    /// The host answered with an error.
    Failed(ErrorObject),
    /// The connection to the host is gone.
    Closed,
}

impl std::fmt::Display for ReverseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReverseError::NoHandler => f.write_str("the host has no handler"),
            ReverseError::Timeout(d) => write!(f, "timed out after {}ms", d.as_millis()),
            ReverseError::Failed(e) => write!(f, "the host answered with an error: {}", e.message),
            ReverseError::Closed => f.write_str("the host connection is closed"),
        }
    }
}

type Reply = Result<Value, ErrorObject>;

/// Sends reverse requests and routes the host's answers back to them.
#[derive(Debug)]
pub struct ReverseClient {
    out: Outbound,
    next_id: AtomicU64,
    pending: Mutex<HashMap<String, oneshot::Sender<Reply>>>,
    host_methods: Mutex<HashSet<String>>,
    closed: std::sync::atomic::AtomicBool,
}

impl ReverseClient {
    pub fn new(out: Outbound) -> Self {
        Self {
            out,
            next_id: AtomicU64::new(1),
            pending: Mutex::default(),
            host_methods: Mutex::default(),
            closed: Default::default(),
        }
    }

    /// Records the reverse requests the host said it answers.
    pub fn set_host_methods(&self, methods: impl IntoIterator<Item = String>) {
        *self.host_methods.lock().expect("host methods") = methods.into_iter().collect();
    }

    pub fn host_handles(&self, method: &str) -> bool {
        self.host_methods
            .lock()
            .expect("host methods")
            .contains(method)
    }

    /// Asks the host; resolves within `timeout` whatever the host does.
    pub async fn call(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, ReverseError> {
        if !self.host_handles(method) {
            return Err(ReverseError::NoHandler);
        }
        if self.closed.load(Ordering::Acquire) {
            return Err(ReverseError::Closed);
        }
        let id = format!("bridge-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        self.pending.lock().expect("pending").insert(id.clone(), tx);
        let mut withdraw = Withdraw {
            client: self,
            id: id.clone(),
            armed: true,
        };
        self.out
            .send(&Request::new(RequestId::String(id), method, params))
            .await;
        let outcome = tokio::time::timeout(timeout, rx).await;
        match outcome {
            Ok(Ok(reply)) => {
                withdraw.armed = false;
                reply.map_err(ReverseError::Failed)
            }
            Ok(Err(_)) => {
                withdraw.armed = false;
                Err(ReverseError::Closed)
            }
            // `withdraw` drops armed: entry removed, host told.
            Err(_) => Err(ReverseError::Timeout(timeout)),
        }
    }

    /// Routes a response from the host. Unknown or late ids are ignored.
    pub fn complete(&self, response: Response) {
        let Some(RequestId::String(id)) = &response.id else {
            tracing::warn!("ignoring a response without a bridge id: {:?}", response.id);
            return;
        };
        let Some(tx) = self.pending.lock().expect("pending").remove(id) else {
            tracing::debug!("ignoring a late or unknown response to {id}");
            return;
        };
        let reply = match (response.error, response.result) {
            (Some(error), _) => Err(error),
            (None, Some(result)) => Ok(result),
            (None, None) => Err(ErrorObject::invalid_request(
                "response has neither result nor error",
            )),
        };
        let _ = tx.send(reply);
    }

    /// Fails every pending call: the host can no longer answer.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.pending.lock().expect("pending").clear();
    }

    pub fn pending_count(&self) -> usize {
        self.pending.lock().expect("pending").len()
    }
}

/// Withdraws a reverse request its caller stopped waiting for.
struct Withdraw<'a> {
    client: &'a ReverseClient,
    id: String,
    armed: bool,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        if self
            .client
            .pending
            .lock()
            .expect("pending")
            .remove(&self.id)
            .is_some()
        {
            let params = CancelRequestParams {
                id: RequestId::String(self.id.clone()),
            };
            let note = Notification::new(
                "$/cancelRequest",
                serde_json::to_value(params).unwrap_or(Value::Null),
            );
            self.client.out.try_send(&note);
        }
    }
}
