//! A real bridge child process, driven line by line.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::process::Stdio;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::WAIT;

pub struct BridgeProcess {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    /// Every line the bridge wrote, verbatim, in order.
    pub raw: Vec<String>,
    backlog: VecDeque<Value>,
    next_id: i64,
}

impl BridgeProcess {
    pub async fn spawn() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_a3s-code-bridge"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the bridge");
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut bridge = Self {
            child,
            stdin,
            lines,
            raw: Vec::new(),
            backlog: VecDeque::new(),
            next_id: 0,
        };
        bridge
            .call(
                "initialize",
                json!({"protocolVersion": 1, "clientInfo": {"name": "test", "version": "0"},
                       "capabilities": {"reverseRequests": ["host/budget/checkBeforeLlm"]}}),
            )
            .await;
        bridge
    }

    pub async fn send(&mut self, value: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(format!("{value}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
    }

    pub async fn recv(&mut self) -> Value {
        if let Some(value) = self.backlog.pop_front() {
            return value;
        }
        self.read_one().await
    }

    async fn read_one(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.lines.next_line())
            .await
            .expect("timed out waiting for the bridge")
            .unwrap()
            .expect("bridge closed stdout");
        self.raw.push(line.clone());
        serde_json::from_str(&line).unwrap()
    }

    pub async fn recv_matching(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(pos) = self.backlog.iter().position(&pred) {
            return self.backlog.remove(pos).unwrap();
        }
        loop {
            let value = self.read_one().await;
            if pred(&value) {
                return value;
            }
            self.backlog.push_back(value);
        }
    }

    pub async fn start(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    pub async fn response(&mut self, id: &Value) -> Value {
        let id = id.clone();
        self.recv_matching(move |m| m.get("id") == Some(&id) && m.get("method").is_none())
            .await
    }

    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.start(method, params).await;
        let response = self.response(&id).await;
        assert!(
            response.get("error").is_none(),
            "{method} failed: {response}"
        );
        response["result"].clone()
    }

    /// Kills the process outright, as a crash would.
    pub async fn kill(&mut self) {
        self.child.kill().await.unwrap();
    }

    /// Closes stdin and waits for a clean exit.
    pub async fn finish(mut self) -> std::process::ExitStatus {
        self.stdin.take();
        tokio::time::timeout(WAIT, self.child.wait())
            .await
            .unwrap()
            .unwrap()
    }
}
