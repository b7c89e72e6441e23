//! The connection: reads frames, classifies them, runs requests concurrently,
//! routes answers to reverse requests, and shuts down cleanly.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a3s_code_protocol::catalog;
use a3s_code_protocol::errors::{DataCode, ErrorObject, INVALID_PARAMS, NOT_INITIALIZED};
use a3s_code_protocol::types::{
    CancelRequestParams, InitializeParams, InitializeResult, Limits, PeerInfo, ServerCapabilities,
    StreamAckParams,
};
use a3s_code_protocol::{
    Incoming, Notification, Request, RequestId, Response, SUPPORTED_PROTOCOL_VERSIONS,
};
use futures::future::{self, BoxFuture, FutureExt};
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::BridgeConfig;
use crate::errors;
use crate::flow::StreamWindows;
use crate::handlers::{self, Ctx};
use crate::reverse::ReverseClient;
use crate::state::State;
use crate::transport::{read_frame, spawn_writer, Frame, Outbound};

/// What every request handler shares.
pub struct Shared {
    pub config: BridgeConfig,
    pub state: State,
    pub out: Outbound,
    pub reverse: Arc<ReverseClient>,
    pub windows: StreamWindows,
}

/// Why [`serve`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The host closed our input.
    EndOfInput,
    /// The host sent `shutdown`.
    Shutdown,
}

type Reply = BoxFuture<'static, Response>;

struct Connection {
    shared: Arc<Shared>,
    initialized: bool,
    shutting_down: Arc<AtomicBool>,
    in_flight: Arc<Mutex<HashMap<RequestId, CancellationToken>>>,
    permits: Arc<Semaphore>,
    tracker: TaskTracker,
    exit: CancellationToken,
    /// The running `shutdown` sequence, whose answer must still go out if
    /// the input ends while it drains.
    shutdown: Option<tokio::task::JoinHandle<()>>,
}

/// Serves one host over `input`/`output` until end of input or `shutdown`.
pub async fn serve<R, W>(input: R, output: W, config: BridgeConfig) -> Exit
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let finish = CancellationToken::new();
    let (out, writer) = spawn_writer(output, finish.clone());
    let shared = Arc::new(Shared {
        reverse: Arc::new(ReverseClient::new(out.clone())),
        config,
        state: State::default(),
        out,
        windows: StreamWindows::default(),
    });
    let mut conn = Connection {
        permits: Arc::new(Semaphore::new(shared.config.max_in_flight)),
        shared,
        initialized: false,
        shutting_down: Arc::new(AtomicBool::new(false)),
        in_flight: Arc::default(),
        tracker: TaskTracker::new(),
        exit: CancellationToken::new(),
        shutdown: None,
    };
    let mut reader = BufReader::new(input);
    let max = conn.shared.config.max_line_bytes;
    let mut exit = loop {
        tokio::select! {
            frame = read_frame(&mut reader, max) => match frame {
                Ok(Some(frame)) => conn.handle_frame(frame).await,
                Ok(None) => break Exit::EndOfInput,
                Err(e) => {
                    tracing::warn!("reading stdin failed: {e}");
                    break Exit::EndOfInput;
                }
            },
            _ = conn.exit.cancelled() => break Exit::Shutdown,
        }
    };
    if exit == Exit::EndOfInput {
        // The host is gone: cancel in-flight work at once (cancelled runs
        // keep their loop checkpoints, so another bridge can resume them),
        // then fail what still waits on the host.
        for token in conn.in_flight.lock().expect("in flight").values() {
            token.cancel();
        }
        conn.shared.reverse.close();
        match conn.shutdown.take() {
            // A shutdown was already draining: let it finish and answer.
            Some(shutdown) => {
                let _ = shutdown.await;
                exit = Exit::Shutdown;
            }
            None => {
                drain(
                    &conn.shared,
                    &conn.shutting_down,
                    &conn.tracker,
                    &conn.in_flight,
                )
                .await
            }
        }
    }
    finish.cancel();
    let _ = writer.await;
    exit
}

/// Stops new work, lets in-flight requests finish within the grace period,
/// cancels the rest, and closes every session.
async fn drain(
    shared: &Shared,
    shutting_down: &AtomicBool,
    tracker: &TaskTracker,
    in_flight: &Mutex<HashMap<RequestId, CancellationToken>>,
) {
    shutting_down.store(true, Ordering::Release);
    tracker.close();
    if tokio::time::timeout(shared.config.shutdown_grace, tracker.wait())
        .await
        .is_err()
    {
        tracing::warn!("in-flight requests outlived the shutdown grace period; cancelling them");
        for token in in_flight.lock().expect("in flight").values() {
            token.cancel();
        }
        let _ = tokio::time::timeout(Duration::from_secs(5), tracker.wait()).await;
    }
    shared.state.close_all().await;
}

impl Connection {
    async fn handle_frame(&mut self, frame: Frame) {
        let bytes = match frame {
            Frame::TooLong => {
                let error = ErrorObject::line_too_long(self.shared.config.max_line_bytes);
                return self.shared.out.send(&Response::failure(None, error)).await;
            }
            Frame::Line(bytes) => bytes,
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let value = match std::str::from_utf8(&bytes) {
            Err(e) => Err(format!("invalid UTF-8: {e}")),
            Ok(text) => {
                serde_json::from_str::<Value>(text).map_err(|e| format!("invalid JSON: {e}"))
            }
        };
        let value = match value {
            Ok(value) => value,
            Err(message) => {
                let error = ErrorObject::parse_error(message);
                return self.shared.out.send(&Response::failure(None, error)).await;
            }
        };
        match value {
            Value::Array(items) if items.is_empty() => {
                let error = ErrorObject::invalid_request("empty batch");
                self.shared.out.send(&Response::failure(None, error)).await;
            }
            Value::Array(items) => {
                let mut replies = Vec::new();
                for item in items {
                    if let Some(reply) = self.handle_message(item) {
                        replies.push(reply);
                    }
                }
                // A batch of only notifications gets no reply at all.
                if !replies.is_empty() {
                    let out = self.shared.out.clone();
                    self.tracker.spawn(async move {
                        let responses = future::join_all(replies).await;
                        out.send(&responses).await;
                    });
                }
            }
            single => {
                if let Some(reply) = self.handle_message(single) {
                    let out = self.shared.out.clone();
                    self.tracker
                        .spawn(async move { out.send(&reply.await).await });
                }
            }
        }
    }

    /// Handles one message; returns the future of its response, if it gets one.
    fn handle_message(&mut self, value: Value) -> Option<Reply> {
        match Incoming::classify(value) {
            Err((id, error)) => Some(ready(Response::failure(id, error))),
            Ok(Incoming::Response(response)) => {
                self.shared.reverse.complete(response);
                None
            }
            Ok(Incoming::Notification(note)) => {
                self.handle_notification(note);
                None
            }
            Ok(Incoming::Request(request)) => self.handle_request(request),
        }
    }

    fn handle_notification(&self, note: Notification) {
        match note.method.as_str() {
            "$/cancelRequest" => {
                if let Ok(params) = handlers::parse::<CancelRequestParams>(note.params) {
                    if let Some(token) = self.in_flight.lock().expect("in flight").get(&params.id) {
                        token.cancel();
                    }
                }
            }
            "$/streamAck" => {
                if let Ok(params) = handlers::parse::<StreamAckParams>(note.params) {
                    self.shared.windows.ack(&params.request_id, params.seq);
                }
            }
            other => tracing::debug!("ignoring notification {other}"),
        }
    }

    /// Starts a request; `None` when its response is sent elsewhere (`shutdown`).
    fn handle_request(&mut self, request: Request) -> Option<Reply> {
        let Request {
            id, method, params, ..
        } = request;
        let fail = |error: ErrorObject| Some(ready(Response::failure(Some(id.clone()), error)));
        if method == "initialize" {
            return Some(ready(match self.initialize(params) {
                Ok(result) => Response::success(id, result),
                Err(error) => Response::failure(Some(id), error),
            }));
        }
        if !self.initialized {
            return fail(ErrorObject::not_initialized());
        }
        if self.shutting_down.load(Ordering::Acquire) {
            return fail(errors::shutting_down());
        }
        if method == "shutdown" {
            self.start_shutdown(id);
            return None;
        }
        if !handlers::DISPATCHED.contains(&method.as_str()) {
            return fail(ErrorObject::method_not_found(&method));
        }
        let Ok(permit) = self.permits.clone().try_acquire_owned() else {
            return fail(ErrorObject::overloaded(self.shared.config.max_in_flight));
        };
        let cancel = CancellationToken::new();
        {
            let mut in_flight = self.in_flight.lock().expect("in flight");
            if in_flight.contains_key(&id) {
                return fail(ErrorObject::invalid_request(format!(
                    "request id {id} is already in flight"
                )));
            }
            in_flight.insert(id.clone(), cancel.clone());
        }
        let ctx = Ctx {
            shared: self.shared.clone(),
            request_id: id.clone(),
            cancel,
        };
        let in_flight = self.in_flight.clone();
        let reply = async move {
            let _permit = permit;
            let result = handlers::dispatch(ctx, &method, params).await;
            in_flight.lock().expect("in flight").remove(&id);
            match result {
                Ok(value) => Response::success(id, value),
                Err(error) => Response::failure(Some(id), error),
            }
        };
        Some(reply.boxed())
    }

    fn initialize(&mut self, params: Option<Value>) -> Result<Value, ErrorObject> {
        if self.initialized {
            return Err(ErrorObject::new(
                NOT_INITIALIZED,
                DataCode::AlreadyInitialized,
                "initialize was already called on this connection",
            ));
        }
        let params: InitializeParams = handlers::parse(params)?;
        if !SUPPORTED_PROTOCOL_VERSIONS.contains(&params.protocol_version) {
            return Err(ErrorObject::new(
                INVALID_PARAMS,
                DataCode::UnsupportedProtocolVersion,
                format!(
                    "protocol version {} is not supported; this bridge speaks {:?}",
                    params.protocol_version, SUPPORTED_PROTOCOL_VERSIONS
                ),
            )
            .with_detail("supported", json!(SUPPORTED_PROTOCOL_VERSIONS)));
        }
        self.shared
            .reverse
            .set_host_methods(params.capabilities.reverse_requests);
        self.initialized = true;
        tracing::info!(
            "initialized by {} {}",
            params.client_info.name,
            params.client_info.version
        );
        let config = &self.shared.config;
        handlers::to_result(InitializeResult {
            protocol_version: params.protocol_version,
            server_info: PeerInfo {
                name: env!("CARGO_PKG_NAME").into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            capabilities: ServerCapabilities {
                methods: catalog::host_request_names(),
                events: a3s_code_core::AgentEvent::TAGS
                    .iter()
                    .map(|t| t.to_string())
                    .collect(),
                reverse_requests: catalog::bridge_request_names(),
            },
            limits: Limits {
                max_line_bytes: config.max_line_bytes,
                max_in_flight_requests: config.max_in_flight,
                stream_window: config.stream_window,
            },
        })
    }

    /// Runs the shutdown sequence in the background (reading goes on, so
    /// answers to reverse requests of in-flight work still arrive), answers
    /// the request, then ends the connection.
    fn start_shutdown(&mut self, id: RequestId) {
        let shared = self.shared.clone();
        let shutting_down = self.shutting_down.clone();
        let tracker = self.tracker.clone();
        let in_flight = self.in_flight.clone();
        let exit = self.exit.clone();
        self.shutting_down.store(true, Ordering::Release);
        self.shutdown = Some(tokio::spawn(async move {
            drain(&shared, &shutting_down, &tracker, &in_flight).await;
            shared.out.send(&Response::success(id, json!({}))).await;
            exit.cancel();
        }));
    }
}

fn ready(response: Response) -> Reply {
    future::ready(response).boxed()
}
