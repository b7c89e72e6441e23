//! Target `dispatch`: the real `serve` over an in-memory pipe, fed a case's
//! lines by an in-process host that also acknowledges stream events and
//! answers reverse requests (as the case's policy byte says), then closes
//! the input. Checked: no panic anywhere, `serve` returns within 10 s
//! (virtual time) of the input closing, every output line is a well-formed
//! JSON-RPC 2.0 object or batch, every valid request gets a response with
//! its id and no id is answered more often than it was sent, streams count
//! without gaps.
//!
//! The runtime's clock is paused: when every task waits for a timer, time
//! jumps to it, so grace periods, deadlines and the hang guard cost no wall
//! time, and a case that is idle for `QUIET` has nothing left to do.

use std::time::Duration;

use a3s_code_bridge::{serve, BridgeConfig, Exit};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, ReadHalf};
use tokio::sync::mpsc;
use tokio::time::timeout;

use crate::check::{expect, Observed};
use crate::corpus::{self, policy};
use crate::rng::Rng;
use crate::{mutate, Target};

pub const MAX_LINE: usize = 4096;
const QUIET: Duration = Duration::from_millis(100);
const STEP: Duration = Duration::from_millis(1);
const HANG: Duration = Duration::from_secs(10);
const MAX_LINES: usize = 40;

pub fn config() -> BridgeConfig {
    BridgeConfig {
        max_line_bytes: MAX_LINE,
        max_in_flight: 8,
        stream_window: 4,
        shutdown_grace: Duration::from_millis(200),
    }
}

pub struct Dispatch {
    workspace: String,
}

impl Default for Dispatch {
    fn default() -> Self {
        Self::new()
    }
}

impl Dispatch {
    pub fn new() -> Self {
        Self {
            workspace: corpus::workspace().display().to_string(),
        }
    }

    /// Runs one case (`[policy, input...]`) on a fresh runtime.
    pub fn check(case: &[u8]) -> Result<Vec<u64>, String> {
        let policy = case.first().copied().unwrap_or_default();
        let input = case.get(1..).unwrap_or_default();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .map_err(|e| format!("harness: no runtime: {e}"))?;
        runtime.block_on(drive(policy, input))
    }
}

async fn drive(policy: u8, input: &[u8]) -> Result<Vec<u64>, String> {
    let (host, bridge) = tokio::io::duplex(1 << 16);
    let (bridge_read, bridge_write) = tokio::io::split(bridge);
    let server = tokio::spawn(serve(bridge_read, bridge_write, config()));
    let (host_read, mut host_write) = tokio::io::split(host);
    let (react_tx, mut react_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let reader = tokio::spawn(observe(host_read, react_tx, policy));

    let feed = async {
        let mut reactions = 0;
        for (n, piece) in input.split_inclusive(|b| *b == b'\n').enumerate() {
            if host_write.write_all(piece).await.is_err() {
                return;
            }
            if !piece.ends_with(b"\n") {
                return; // a reaction would extend the unterminated line
            }
            // Wait until the bridge is idle (the paused clock moves only
            // then), answering what it asks meanwhile.
            let quiet = if n < 3 || policy & policy::PIPELINE == 0 {
                STEP
            } else {
                Duration::ZERO
            };
            loop {
                tokio::select! {
                    biased;
                    reaction = react_rx.recv() => match reaction {
                        Some(r) if reactions < 10_000 && host_write.write_all(&r).await.is_ok() => reactions += 1,
                        _ => return,
                    },
                    _ = tokio::time::sleep(quiet) => break,
                }
            }
        }
        // Then until the bridge has been idle for QUIET.
        loop {
            tokio::select! {
                reaction = react_rx.recv() => match reaction {
                    Some(r) if reactions < 10_000 && host_write.write_all(&r).await.is_ok() => reactions += 1,
                    _ => return,
                },
                _ = tokio::time::sleep(QUIET) => return,
            }
        }
    };
    if timeout(HANG, feed).await.is_err() {
        return Err(format!(
            "hang: feeding the input took over {HANG:?} (the bridge stopped reading, or never went idle)"
        ));
    }
    let _ = host_write.shutdown().await;
    let exit = match timeout(HANG, server).await {
        Err(_) => {
            return Err(format!(
                "hang: serve still running {HANG:?} after input closed"
            ))
        }
        Ok(Err(e)) => return Err(format!("panic: serve: {e}")),
        Ok(Ok(exit)) => exit,
    };
    let mut observed = match timeout(HANG, reader).await {
        Err(_) => return Err("hang: output still open after serve returned".into()),
        Ok(Err(e)) => return Err(format!("panic: harness reader: {e}")),
        Ok(Ok(observed)) => observed?,
    };
    let mut expected = expect(input, MAX_LINE);
    for reaction in &observed.reactions {
        expected.add(reaction);
    }
    observed.finish(&expected, exit == Exit::Shutdown)?;
    let mut features = observed.features;
    features.push(exit as u64);
    Ok(features)
}

/// Reads and checks the bridge's output, queueing the host's reactions.
/// Keeps reading after a bad line so the bridge never blocks on output.
async fn observe(
    output: ReadHalf<tokio::io::DuplexStream>,
    react: mpsc::UnboundedSender<Vec<u8>>,
    policy: u8,
) -> Result<Observed, String> {
    let mut output = BufReader::new(output);
    let mut observed = Observed::default();
    let mut failure = None;
    let mut line = Vec::new();
    let mut answers = (policy >> 3) as usize;
    loop {
        line.clear();
        match output.read_until(b'\n', &mut line).await {
            Ok(0) => break,
            Ok(_) if failure.is_some() => continue,
            Ok(_) => {}
            Err(e) => return Err(format!("harness: reading output: {e}")),
        }
        let Some(text) = line.strip_suffix(b"\n") else {
            failure = Some("output ends in an unterminated line".to_string());
            continue;
        };
        let messages = match observed.line(text) {
            Ok(messages) => messages,
            Err(e) => {
                failure = Some(e);
                continue;
            }
        };
        for message in messages {
            let reaction = if message["method"] == "session/event" {
                let seq = message["params"]["seq"].as_u64().unwrap_or_default();
                let ack =
                    policy & policy::ACK != 0 && (policy & policy::ACK_LAZILY == 0 || seq % 3 == 2);
                ack.then(|| {
                    let params = json!({"requestId": message["params"]["requestId"], "seq": seq});
                    corpus::notification("$/streamAck", params)
                })
            } else if message.get("method").is_some() && message.get("id").is_some() {
                answers += 1;
                let permission = message["method"] == "host/permission/request";
                (policy & policy::ANSWER != 0).then(|| answer(&message["id"], permission, answers))
            } else {
                None
            };
            if let Some(reaction) = reaction {
                let _ = react.send(format!("{reaction}\n").into_bytes());
                observed.reactions.push(reaction);
            }
        }
    }
    match failure {
        Some(failure) => Err(failure),
        None => Ok(observed),
    }
}

/// The host's answer to a reverse request: decisions, errors, malformed.
fn answer(id: &Value, permission: bool, n: usize) -> Value {
    let mut rng = Rng::new(n as u64);
    let result = if permission {
        corpus::approval(&mut rng)
    } else {
        corpus::decision(&mut rng)
    };
    match n % 8 {
        0 => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": "no"}}),
        1 => json!({"jsonrpc": "2.0", "id": id}),
        2 => json!({"jsonrpc": "2.0", "id": "bridge-999", "result": null}),
        _ => json!({"jsonrpc": "2.0", "id": id, "result": result}),
    }
}

/// Ids of every type, for the id-swapping mutation.
fn odd_id(rng: &mut Rng) -> Value {
    match rng.below(8) {
        0 => Value::Null,
        1 => json!(1.0),
        2 => json!(-0.0),
        3 => json!(u64::MAX),
        4 => json!(i64::MIN),
        5 => json!(true),
        6 => json!([1]),
        _ => json!(rng.range(1, 7).to_string()),
    }
}

fn lines_of(stream: &[u8]) -> Vec<Vec<u8>> {
    let mut lines: Vec<Vec<u8>> = stream.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
    if lines.last().is_some_and(Vec::is_empty) {
        lines.pop();
    }
    lines
}

impl Target for Dispatch {
    fn name(&self) -> &'static str {
        "dispatch"
    }

    fn header_len(&self) -> usize {
        1
    }

    fn seeds(&self, rng: &mut Rng) -> Vec<Vec<u8>> {
        (0..32)
            .map(|_| corpus::dispatch_case(rng, &self.workspace))
            .collect()
    }

    fn mutate(&self, rng: &mut Rng, base: &[u8], other: &[u8]) -> Vec<u8> {
        let mut policy = base.first().copied().unwrap_or_default();
        let mut lines = lines_of(base.get(1..).unwrap_or_default());
        let others = lines_of(other.get(1..).unwrap_or_default());
        if lines.is_empty() {
            lines.push(corpus::initialize().to_string().into_bytes());
        }
        for _ in 0..rng.range(1, 3) {
            let n = lines.len();
            // Line 0, the initialize, stays valid.
            let at = rng.range(1, n.max(2) - 1);
            let parsed = lines
                .get(at)
                .and_then(|l| serde_json::from_slice::<Value>(l).ok());
            match (rng.below(12), parsed) {
                (0, _) => policy ^= 1 << rng.below(8),
                (1, _) if n > 1 => drop(lines.remove(at)),
                (2, _) if n > 1 => lines.insert(at, lines[at].clone()),
                (3, _) if n > 2 => {
                    let to = rng.range(1, n - 1);
                    lines.swap(at, to);
                }
                (4, _) if others.len() > 1 => {
                    let line = others[rng.range(1, others.len() - 1)].clone();
                    lines.insert(at.min(n), line);
                }
                (5, Some(mut v)) if v.is_object() => {
                    let from = lines[rng.below(n)].clone();
                    let id = match serde_json::from_slice::<Value>(&from) {
                        Ok(f) if rng.one_in(2) && f.get("id").is_some() => f["id"].clone(),
                        _ => odd_id(rng),
                    };
                    let notification = v.get("id").is_none();
                    match v.get_mut("params") {
                        Some(p @ Value::Object(_)) if notification => {
                            let key = if p.get("id").is_some() {
                                "id"
                            } else {
                                "requestId"
                            };
                            p[key] = id;
                        }
                        _ => v["id"] = id,
                    }
                    lines[at] = mutate::to_text(rng, &v);
                }
                (6..=7, Some(mut v)) => {
                    for _ in 0..rng.range(1, 2) {
                        mutate::mutate_value(rng, &mut v);
                    }
                    lines[at] = mutate::to_text(rng, &v);
                }
                (8, Some(mut v)) => {
                    mutate::pad_to(&mut v, MAX_LINE - 1 + rng.below(3));
                    lines[at] = v.to_string().into_bytes();
                }
                (9..=10, _) if n > 1 => {
                    mutate::mutate_bytes(rng, &mut lines[at], other, MAX_LINE, 2 * MAX_LINE);
                }
                _ => {
                    let message = corpus::message(rng, &self.workspace);
                    lines.insert(at.min(n), message.to_string().into_bytes());
                }
            }
        }
        lines.truncate(MAX_LINES);
        let mut case = vec![policy];
        for line in lines {
            case.extend(line);
            case.push(b'\n');
        }
        if rng.one_in(16) {
            case.pop();
        }
        case
    }

    fn run(&mut self, case: &[u8]) -> Result<Vec<u64>, String> {
        Dispatch::check(case)
    }
}
