//! A scripted HTTP/1.1 server on 127.0.0.1 for exercising real HTTP clients.
//!
//! Hand-written on tokio's `TcpListener` so tests need no extra dependency
//! and control the bytes on the wire: an SSE body is sent as several writes,
//! each flushed and followed by a short pause, so the client really receives
//! it in fragments (with `Transfer-Encoding: chunked` or close-delimited
//! framing). Every request is recorded (method, path, headers, body) before
//! it is answered, so a test can inspect what the client sent.
//!
//! ```ignore
//! let server = TestServer::start([ScriptedResponse::sse(["data: {}\n\n", "data: [DONE]\n\n"])]).await;
//! call_client(format!("{}/v1", server.url())).await;
//! assert_eq!(server.requests()[0].path, "/v1/chat/completions");
//! ```
//!
//! Limits: request bodies must carry `Content-Length` (no chunked uploads);
//! responses are served in order from one queue shared by all connections.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// Pause after each streamed part, so parts do not merge in the client's reads.
const DEFAULT_PAUSE: Duration = Duration::from_millis(2);

/// How a streamed body is delimited on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `Transfer-Encoding: chunked`, one HTTP chunk per part; keeps the
    /// connection alive afterwards.
    Chunked,
    /// No length: the body ends when the server closes the connection.
    Close,
}

#[derive(Debug, Clone)]
enum Body {
    Full(Vec<u8>),
    Streamed {
        parts: Vec<Vec<u8>>,
        framing: Framing,
        truncated: bool,
    },
    /// Never answer; the connection stays open until the server is dropped.
    Stall,
}

/// One scripted answer: status, headers and body.
#[derive(Debug, Clone)]
pub struct ScriptedResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body: Body,
    pause: Duration,
}

impl ScriptedResponse {
    /// A response with this status and an empty body.
    pub fn new(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Body::Full(Vec::new()),
            pause: DEFAULT_PAUSE,
        }
    }

    /// A JSON body, e.g. a provider's error object.
    pub fn json(status: u16, body: &Value) -> Self {
        Self::text(status, &body.to_string()).header("content-type", "application/json")
    }

    /// A plain-text body sent in one write with `Content-Length`.
    pub fn text(status: u16, body: &str) -> Self {
        Self {
            body: Body::Full(body.as_bytes().to_vec()),
            ..Self::new(status)
        }
    }

    /// A 200 `text/event-stream` whose body is sent as `parts`, one flushed
    /// write each, with chunked framing (see [`ScriptedResponse::framing`]).
    pub fn sse<I, S>(parts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            body: Body::Streamed {
                parts: parts.into_iter().map(|p| p.into().into_bytes()).collect(),
                framing: Framing::Chunked,
                truncated: false,
            },
            ..Self::new(200)
        }
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
    }

    /// A response that never comes (for timeout tests).
    pub fn stall() -> Self {
        Self {
            body: Body::Stall,
            ..Self::new(200)
        }
    }

    /// Adds a response header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Chooses how a streamed body is delimited (no effect on other bodies).
    pub fn framing(mut self, framing: Framing) -> Self {
        if let Body::Streamed { framing: f, .. } = &mut self.body {
            *f = framing;
        }
        self
    }

    /// Cuts a chunked stream: the terminating zero-length chunk is never sent
    /// and the connection is closed, which the client sees as a broken body.
    pub fn truncated(mut self) -> Self {
        if let Body::Streamed { truncated, .. } = &mut self.body {
            *truncated = true;
        }
        self
    }

    /// Sets the pause after each streamed part (default 2 ms; zero for benchmarks).
    pub fn pause(mut self, pause: Duration) -> Self {
        self.pause = pause;
        self
    }
}

/// A request as the server received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Header names are lowercased; order and duplicates are kept.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RecordedRequest {
    /// The first value of a header (name matched case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON; panics with the raw body when it is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("request body is not JSON ({e}): {}", self.body_text()))
    }

    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

#[derive(Default)]
struct Shared {
    responses: Mutex<VecDeque<ScriptedResponse>>,
    requests: Mutex<Vec<RecordedRequest>>,
}

/// The running server; dropping it stops it and closes its connections.
pub struct TestServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl TestServer {
    /// Binds 127.0.0.1 on a free port and serves `responses` in order. When
    /// the queue is empty it answers 418 with an explanatory JSON error (418
    /// so that clients do not retry it).
    pub async fn start(responses: impl IntoIterator<Item = ScriptedResponse>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let shared = Arc::new(Shared::default());
        shared.responses.lock().unwrap().extend(responses);
        let task = tokio::spawn(accept_loop(listener, shared.clone()));
        Self { addr, shared, task }
    }

    /// `http://127.0.0.1:<port>`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queues another response after the current ones.
    pub fn push(&self, response: ScriptedResponse) {
        self.shared.responses.lock().unwrap().push_back(response);
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests.lock().unwrap().clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    // Owning the connection tasks here means aborting this task ends them too.
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                connections.spawn(serve(stream, shared.clone()));
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// Serves requests on one connection until either side closes it.
async fn serve(stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    while let Some(request) = read_request(&mut reader).await {
        shared.requests.lock().unwrap().push(request);
        let next = shared.responses.lock().unwrap().pop_front();
        let response = next.unwrap_or_else(|| {
            let error =
                serde_json::json!({"error": {"message": "test server: no scripted response left"}});
            ScriptedResponse::json(418, &error)
        });
        match write_response(&mut write, response).await {
            Ok(true) => {}
            _ => return,
        }
    }
}

/// Reads one request; `None` when the client closed the connection or sent
/// something that is not HTTP/1.1.
async fn read_request(
    reader: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
) -> Option<RecordedRequest> {
    let mut line = String::new();
    if reader.read_line(&mut line).await.ok()? == 0 {
        return None;
    }
    let mut words = line.split_whitespace();
    let (method, path) = (words.next()?.to_string(), words.next()?.to_string());
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let length = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await.ok()?;
    Some(RecordedRequest {
        method,
        path,
        headers,
        body,
    })
}

/// Writes one response; returns whether the connection may be reused.
async fn write_response(
    write: &mut OwnedWriteHalf,
    response: ScriptedResponse,
) -> std::io::Result<bool> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason(response.status)
    );
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    match response.body {
        Body::Stall => std::future::pending().await,
        Body::Full(body) => {
            head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
            write.write_all(head.as_bytes()).await?;
            write.write_all(&body).await?;
            write.flush().await?;
            Ok(true)
        }
        Body::Streamed {
            parts,
            framing,
            truncated,
        } => {
            head.push_str(match framing {
                Framing::Chunked => "transfer-encoding: chunked\r\n\r\n",
                Framing::Close => "connection: close\r\n\r\n",
            });
            write.write_all(head.as_bytes()).await?;
            write.flush().await?;
            for part in parts.iter().filter(|p| !p.is_empty()) {
                if framing == Framing::Chunked {
                    write
                        .write_all(format!("{:x}\r\n", part.len()).as_bytes())
                        .await?;
                    write.write_all(part).await?;
                    write.write_all(b"\r\n").await?;
                } else {
                    write.write_all(part).await?;
                }
                write.flush().await?;
                if !response.pause.is_zero() {
                    tokio::time::sleep(response.pause).await;
                }
            }
            if framing == Framing::Chunked && !truncated {
                write.write_all(b"0\r\n\r\n").await?;
                write.flush().await?;
                return Ok(true);
            }
            write.shutdown().await?;
            Ok(false)
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        413 => "Payload Too Large",
        418 => "I'm a teapot",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}
