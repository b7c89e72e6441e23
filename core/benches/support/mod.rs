//! A zero-latency OpenAI-compatible chat-completions server for the
//! runtime-overhead benchmark.
//!
//! It runs on its own OS thread with a current-thread tokio runtime, so its
//! CPU time can be measured apart from the runtime under test
//! ([`BenchServer::cpu`]). It speaks just enough HTTP/1.1 for keep-alive
//! clients: one task per connection, `Content-Length` request bodies, and
//! every answer written at once as one `Transfer-Encoding: chunked` SSE body
//! (no pauses).
//!
//! Every answer is computed from the request body, so any number of sessions
//! can talk to it concurrently:
//!
//! - the user prompt carries `bench session <S> rounds <N>`;
//! - the number of `"role":"tool"` messages tells the round `k`;
//! - for `k < N` it answers with a `read` tool call on [`file_for`]`(S, k)`,
//!   after checking that the previous round's tool result holds the marker of
//!   [`file_for`]`(S, k - 1)` (so a wrong or missing read is caught);
//! - for `k == N` it answers with [`expected_answer`]`(S, N)`.
//!
//! Each answer ends with a usage chunk and `data: [DONE]`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// Files in the benchmark workspace.
pub const FILE_COUNT: usize = 200;

/// The workspace-relative path of file `index`.
pub fn file_path(index: usize) -> String {
    format!("src/file_{index:03}.txt")
}

/// A line that only file `index` contains, and only tool results carry.
pub fn file_marker(index: usize) -> String {
    format!("bench-file-{index:03}")
}

/// The small text of file `index`.
pub fn file_contents(index: usize) -> String {
    format!(
        "// bench file {index:03}\n{}\npub fn value_{index:03}() -> u32 {{\n    {index}\n}}\n",
        file_marker(index)
    )
}

/// The file read by `session` in `round`: a different one every round of a
/// session (11 and 200 are coprime), spread over the workspace by session.
pub fn file_for(session: usize, round: usize) -> usize {
    (session * 37 + round * 11) % FILE_COUNT
}

/// The prompt that tells the server which session this is and how many
/// rounds it wants.
pub fn prompt(session: usize, rounds: usize) -> String {
    format!("bench session {session} rounds {rounds}: read each file you are given, then answer.")
}

/// The final text the server answers after the last round.
pub fn expected_answer(session: usize, rounds: usize) -> String {
    format!("session {session}: read {rounds} files")
}

/// One chat-completions request as the server saw it.
#[derive(Debug, Clone, Copy)]
pub struct Record {
    pub session: usize,
    /// Tool results in the request (0 for the first call of a run).
    pub round: usize,
    pub rounds: usize,
    pub body_len: usize,
}

#[derive(Default)]
struct Stats {
    /// CPU time (user + system) of the server thread, in nanoseconds, as of
    /// its last answer.
    cpu_ns: AtomicU64,
    requests: AtomicU64,
    /// Requests whose previous tool result lacked the expected file marker.
    mismatches: AtomicU64,
    records: Mutex<Vec<Record>>,
}

/// The running server; dropping it stops the thread and its connections.
pub struct BenchServer {
    addr: SocketAddr,
    stats: Arc<Stats>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl BenchServer {
    /// Binds 127.0.0.1 on a free port and serves on a new thread.
    pub fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().expect("local address");
        let stats = Arc::new(Stats::default());
        let (shutdown, stopped) = oneshot::channel();
        let thread_stats = stats.clone();
        let thread = std::thread::Builder::new()
            .name("bench-llm-server".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_io()
                    .build()
                    .expect("server runtime");
                runtime.block_on(async move {
                    let listener = TcpListener::from_std(listener).expect("tokio listener");
                    tokio::select! {
                        _ = accept_loop(listener, thread_stats) => {}
                        _ = stopped => {}
                    }
                });
            })
            .expect("spawn server thread");
        Self {
            addr,
            stats,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// CPU time the server thread had used when it sent its last answer.
    pub fn cpu(&self) -> Duration {
        Duration::from_nanos(self.stats.cpu_ns.load(Ordering::Acquire))
    }

    pub fn requests(&self) -> u64 {
        self.stats.requests.load(Ordering::Relaxed)
    }

    pub fn mismatches(&self) -> u64 {
        self.stats.mismatches.load(Ordering::Relaxed)
    }

    /// The requests recorded since the last call, in arrival order.
    pub fn take_records(&self) -> Vec<Record> {
        std::mem::take(&mut *self.stats.records.lock().unwrap())
    }
}

impl Drop for BenchServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn accept_loop(listener: TcpListener, stats: Arc<Stats>) {
    loop {
        if let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream, stats.clone()));
        }
    }
}

/// Serves keep-alive requests on one connection until the client closes it.
async fn serve(mut stream: TcpStream, stats: Arc<Stats>) {
    let _ = stream.set_nodelay(true);
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let head_end = loop {
            if let Some(pos) = find(&buf, b"\r\n\r\n") {
                break pos + 4;
            }
            if !read_more(&mut stream, &mut buf).await {
                return;
            }
        };
        let head = &buf[..head_end];
        let ok_path = head.starts_with(b"POST ") && find(head, b"/chat/completions ").is_some();
        let length = content_length(head);
        while buf.len() < head_end + length {
            if !read_more(&mut stream, &mut buf).await {
                return;
            }
        }
        let response = if ok_path {
            answer(&buf[head_end..head_end + length], &stats)
        } else {
            http_response(
                404,
                "application/json",
                br#"{"error":{"message":"not found"}}"#,
            )
        };
        buf.drain(..head_end + length);
        // Idle connections keep no large buffer (the memory figures of the
        // benchmark include this server).
        if buf.is_empty() && buf.capacity() > 16 * 1024 {
            buf = Vec::new();
        }
        let written = stream.write_all(&response).await;
        stats.cpu_ns.store(thread_cpu_ns(), Ordering::Release);
        if written.is_err() {
            return;
        }
    }
}

async fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    buf.reserve(8 * 1024);
    matches!(stream.read_buf(buf).await, Ok(n) if n > 0)
}

fn content_length(head: &[u8]) -> usize {
    String::from_utf8_lossy(head)
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse().ok())
        .unwrap_or(0)
}

/// The full HTTP response to one chat-completions request body.
fn answer(body: &[u8], stats: &Stats) -> Vec<u8> {
    stats.requests.fetch_add(1, Ordering::Relaxed);
    let Some((session, rounds)) = parse_prompt(body) else {
        return http_response(
            400,
            "application/json",
            br#"{"error":{"message":"no 'bench session S rounds N' in the prompt"}}"#,
        );
    };
    let round = count(body, br#""role":"tool""#);
    stats.records.lock().unwrap().push(Record {
        session,
        round,
        rounds,
        body_len: body.len(),
    });
    let verified =
        round == 0 || find(body, file_marker(file_for(session, round - 1)).as_bytes()).is_some();
    let id = format!("chatcmpl-{session}-{round}");
    let head = |delta: serde_json::Value, finish: Option<&str>| {
        json!({"id": id, "object": "chat.completion.chunk", "model": "gpt-bench",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let (first, finish) = if !verified {
        stats.mismatches.fetch_add(1, Ordering::Relaxed);
        let text =
            format!("MISMATCH: round {round} of session {session} lacks the file it asked for");
        (
            head(json!({"role": "assistant", "content": text}), None),
            "stop",
        )
    } else if round < rounds {
        let arguments = json!({"file_path": file_path(file_for(session, round))}).to_string();
        let call = json!({"index": 0, "id": format!("call_{session}_{round}"), "type": "function",
                          "function": {"name": "read", "arguments": arguments}});
        let delta = json!({"role": "assistant", "content": null, "tool_calls": [call]});
        (head(delta, None), "tool_calls")
    } else {
        let text = expected_answer(session, rounds);
        (
            head(json!({"role": "assistant", "content": text}), None),
            "stop",
        )
    };
    let prompt_tokens = body.len() / 4;
    let usage = json!({"id": id, "object": "chat.completion.chunk", "model": "gpt-bench", "choices": [],
                       "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 16,
                                 "total_tokens": prompt_tokens + 16}});
    let sse = format!(
        "data: {first}\n\ndata: {}\n\ndata: {usage}\n\ndata: [DONE]\n\n",
        head(json!({}), Some(finish))
    );
    http_response(200, "text/event-stream", sse.as_bytes())
}

/// `bench session <S> rounds <N>` from the first place it appears.
fn parse_prompt(body: &[u8]) -> Option<(usize, usize)> {
    let start = find(body, b"bench session ")? + b"bench session ".len();
    let (session, used) = number(&body[start..])?;
    let rest = body[start + used..].strip_prefix(b" rounds ")?;
    let (rounds, _) = number(rest)?;
    Some((session, rounds))
}

fn number(bytes: &[u8]) -> Option<(usize, usize)> {
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    let text = std::str::from_utf8(&bytes[..digits]).ok()?;
    Some((text.parse().ok()?, digits))
}

/// One chunked HTTP/1.1 response with the whole body in one chunk.
fn http_response(status: u16, content_type: &str, body: &[u8]) -> Vec<u8> {
    let reason = if status == 200 { "OK" } else { "Error" };
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out.extend_from_slice(b"\r\n0\r\n\r\n");
    out
}

/// The first position of `needle` in `haystack`.
pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Non-overlapping occurrences of `needle` in `haystack`.
fn count(haystack: &[u8], needle: &[u8]) -> usize {
    let mut n = 0;
    let mut rest = haystack;
    while let Some(pos) = find(rest, needle) {
        n += 1;
        rest = &rest[pos + needle.len()..];
    }
    n
}

/// CPU time (user + system) of the calling thread, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A raw HTTP/1.1 request for the server, for the floor measurement: a body
/// of exactly `record.body_len` bytes that the server answers exactly as it
/// answered the runtime's request (same prompt, same number of tool results,
/// the previous round's marker), without any runtime around it.
pub fn raw_request(addr: SocketAddr, record: &Record) -> Vec<u8> {
    let mut body = format!(
        r#"{{"messages":[{{"role":"user","content":"{}"}}"#,
        prompt(record.session, record.rounds)
    );
    for round in 0..record.round {
        body.push_str(&format!(
            r#",{{"role":"tool","content":"{}"}}"#,
            file_marker(file_for(record.session, round))
        ));
    }
    let mut body = body.into_bytes();
    if body.len() + 2 < record.body_len {
        body.resize(record.body_len - 2, b' ');
    }
    body.extend_from_slice(b"]}");
    let mut request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\nauthorization: Bearer bench\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    request
}

/// Sends `requests` one after another on one keep-alive connection, reading
/// each chunked response to its end; returns how many answers were not a
/// 200 ending in `[DONE]`.
pub async fn raw_exchange(addr: SocketAddr, requests: &[Vec<u8>]) -> usize {
    let mut stream = TcpStream::connect(addr)
        .await
        .expect("connect to bench server");
    let _ = stream.set_nodelay(true);
    let mut bad = 0;
    let mut buf = Vec::with_capacity(4096);
    for request in requests {
        stream.write_all(request).await.expect("send raw request");
        buf.clear();
        while !buf.ends_with(b"\r\n0\r\n\r\n") {
            buf.reserve(4096);
            let n = stream.read_buf(&mut buf).await.expect("read raw response");
            assert!(n > 0, "bench server closed the connection");
        }
        if !buf.starts_with(b"HTTP/1.1 200") || find(&buf, b"data: [DONE]").is_none() {
            bad += 1;
        }
    }
    bad
}
