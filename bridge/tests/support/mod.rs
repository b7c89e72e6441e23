//! An in-process host for bridge tests: the real server over an in-memory pipe.
#![allow(dead_code)]

pub mod process;

use std::collections::VecDeque;
use std::time::Duration;

use a3s_code_bridge::{serve, BridgeConfig, Exit};
use serde_json::{json, Value};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::task::JoinHandle;

/// How long a test waits for a message before failing (never a timing assertion:
/// only a guard against hanging forever).
pub const WAIT: Duration = Duration::from_secs(20);

pub const ALL_BUDGET_METHODS: &[&str] = &[
    "host/budget/checkBeforeLlm",
    "host/budget/recordAfterLlm",
    "host/budget/checkBeforeTool",
];

pub struct TestHost {
    writer: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    backlog: VecDeque<Value>,
    pub bridge: JoinHandle<Exit>,
    next_id: i64,
    pub workspace: tempfile::TempDir,
}

impl TestHost {
    pub fn start(config: BridgeConfig) -> Self {
        let (host_side, bridge_side) = tokio::io::duplex(1 << 16);
        let (bridge_read, bridge_write) = tokio::io::split(bridge_side);
        let bridge = tokio::spawn(serve(bridge_read, bridge_write, config));
        let (read, writer) = tokio::io::split(host_side);
        let workspace = tempfile::tempdir().unwrap();
        std::fs::write(
            workspace.path().join("README.md"),
            "hello from the workspace\n",
        )
        .unwrap();
        Self {
            writer,
            lines: BufReader::new(read).lines(),
            backlog: VecDeque::new(),
            bridge,
            next_id: 1000,
            workspace,
        }
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.unwrap();
        self.writer.write_all(b"\n").await.unwrap();
        self.writer.flush().await.unwrap();
    }

    pub async fn send(&mut self, value: Value) {
        self.send_raw(value.to_string().as_bytes()).await;
    }

    pub async fn close_input(&mut self) {
        self.writer.shutdown().await.unwrap();
    }

    async fn read_one(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(WAIT, self.lines.next_line())
            .await
            .expect("timed out waiting for the bridge")
            .unwrap()?;
        Some(
            serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("bridge wrote non-JSON {line:?}: {e}")),
        )
    }

    /// The next message, in order.
    pub async fn recv(&mut self) -> Value {
        if let Some(value) = self.backlog.pop_front() {
            return value;
        }
        self.read_one().await.expect("bridge closed its output")
    }

    /// The first message matching `pred`; others are kept for later.
    pub async fn recv_matching(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(pos) = self.backlog.iter().position(&pred) {
            return self.backlog.remove(pos).unwrap();
        }
        loop {
            let value = self.read_one().await.expect("bridge closed its output");
            if pred(&value) {
                return value;
            }
            self.backlog.push_back(value);
        }
    }

    /// The response to request `id`.
    pub async fn response(&mut self, id: &Value) -> Value {
        let id = id.clone();
        self.recv_matching(move |m| m.get("id") == Some(&id) && m.get("method").is_none())
            .await
    }

    /// The next reverse request for `method`.
    pub async fn reverse_request(&mut self, method: &str) -> Value {
        let method = method.to_string();
        self.recv_matching(move |m| m["method"] == method.as_str() && m.get("id").is_some())
            .await
    }

    /// Whether the bridge closed its output (end of stream) before any other message.
    pub async fn output_closed(&mut self) -> bool {
        self.backlog.is_empty() && self.read_one().await.is_none()
    }

    /// Sends a request and returns its id.
    pub async fn start_request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Sends a request and waits for its response.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start_request(method, params).await;
        self.response(&id).await
    }

    /// `result` of a request that must succeed.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        assert!(
            response.get("error").is_none(),
            "{method} failed: {response}"
        );
        response["result"].clone()
    }

    pub async fn initialize(&mut self, reverse_requests: &[&str]) -> Value {
        self.call(
            "initialize",
            json!({"protocolVersion": 1, "clientInfo": {"name": "test", "version": "0"},
                   "capabilities": {"reverseRequests": reverse_requests}}),
        )
        .await
    }

    /// Creates an agent from scripted turns (ACL `turn` blocks) and one session on it.
    pub async fn scripted_session(&mut self, turns: &str) -> String {
        let config = scripted_acl(turns);
        let agent = self.call("agent/create", json!({"config": config})).await;
        let workspace = self.workspace.path().display().to_string();
        let session = self
            .call(
                "session/create",
                json!({"agentId": agent["agentId"], "workspace": workspace}),
            )
            .await;
        session["sessionId"].as_str().unwrap().to_string()
    }
}

/// A `session/send` held on a budget check nobody has answered yet.
pub struct HeldSend {
    pub session: String,
    /// The id of the held `session/send`.
    pub run: Value,
    /// The unanswered `host/budget/checkBeforeLlm` request.
    pub check: Value,
}

impl TestHost {
    /// Starts a scripted session (answering "Hi there.") whose `send` waits
    /// on a budget check with the given deadline. The host must have
    /// declared `host/budget/checkBeforeLlm` in `initialize`.
    pub async fn held_send(&mut self, timeout_ms: u64) -> HeldSend {
        let session = self.scripted_session(ANSWER_ONLY).await;
        self.call(
            "session/setBudgetGuard",
            json!({"sessionId": session, "guard": {"checkBeforeLlm": true, "timeoutMs": timeout_ms}}),
        )
        .await;
        let run = self
            .start_request(
                "session/send",
                json!({"sessionId": session, "prompt": "hi"}),
            )
            .await;
        let check = self.reverse_request("host/budget/checkBeforeLlm").await;
        HeldSend {
            session,
            run,
            check,
        }
    }
}

pub fn scripted_acl(turns: &str) -> String {
    format!(
        "default_model = \"offline/demo\"\nproviders \"offline\" {{\n  kind = \"scripted\"\n  models \"demo\" {{\n{turns}\n  }}\n}}\n"
    )
}

/// A tool round reading README.md, then a final answer.
pub const READ_THEN_ANSWER: &str = r#"
    turn {
      tool_call {
        name = "read"
        arguments = { file_path = "README.md" }
      }
    }
    turn { text = "The README says hello." }
"#;

pub const ANSWER_ONLY: &str = r#"turn { text = "Hi there." }"#;

pub fn error_code(response: &Value) -> (i64, String) {
    (
        response["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not an error: {response}")),
        response["error"]["data"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}
