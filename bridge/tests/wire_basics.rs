//! JSON-RPC 2.0 to the letter: handshake, errors, batches, limits.

mod support;

use a3s_code_bridge::BridgeConfig;
use a3s_code_protocol::catalog::HOST_REQUESTS;
use serde_json::{json, Value};
use support::*;

#[tokio::test]
async fn handshake_declares_what_this_build_serves() {
    let mut host = TestHost::start(BridgeConfig::default());
    let result = host.initialize(&[]).await;
    assert_eq!(result["protocolVersion"], 1);
    assert_eq!(result["serverInfo"]["name"], "a3s-code-bridge");
    assert_eq!(result["limits"]["maxLineBytes"], 16 * 1024 * 1024);
    assert_eq!(result["limits"]["maxInFlightRequests"], 256);
    let methods: Vec<&str> = result["capabilities"]["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(methods.contains(&"session/stream"));
    assert!(result["capabilities"]["events"]
        .as_array()
        .unwrap()
        .contains(&json!("agent_end")));

    // Nothing advertised is missing: every method gets past dispatch.
    for method in methods
        .iter()
        .filter(|m| **m != "initialize" && **m != "shutdown")
    {
        let response = host.request(method, json!({})).await;
        let (code, _) = error_code(&response);
        assert_ne!(code, -32601, "{method} is advertised but not served");
    }
    assert_eq!(methods.len(), HOST_REQUESTS.len());
}

#[tokio::test]
async fn handshake_order_and_versions_are_enforced() {
    let mut host = TestHost::start(BridgeConfig::default());
    let early = host
        .request("agent/create", json!({"config": "x = 1"}))
        .await;
    assert_eq!(error_code(&early), (-32002, "NOT_INITIALIZED".into()));

    let bad = host
        .request(
            "initialize",
            json!({"protocolVersion": 99, "clientInfo": {"name": "t", "version": "0"}}),
        )
        .await;
    assert_eq!(
        error_code(&bad),
        (-32602, "UNSUPPORTED_PROTOCOL_VERSION".into())
    );
    assert_eq!(bad["error"]["data"]["supported"], json!([1]));

    host.initialize(&[]).await;
    let again = host
        .request(
            "initialize",
            json!({"protocolVersion": 1, "clientInfo": {"name": "t", "version": "0"}}),
        )
        .await;
    assert_eq!(error_code(&again), (-32002, "ALREADY_INITIALIZED".into()));
}

#[tokio::test]
async fn malformed_input_gets_errors_and_the_connection_goes_on() {
    let mut host = TestHost::start(BridgeConfig {
        max_line_bytes: 1024,
        ..BridgeConfig::default()
    });
    host.initialize(&[]).await;

    host.send_raw(b"{not json").await;
    let parse = host.recv().await;
    assert_eq!(parse["id"], Value::Null);
    assert_eq!(error_code(&parse), (-32700, "PARSE_ERROR".into()));

    host.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}")
        .await;
    let utf8 = host.recv().await;
    assert_eq!(error_code(&utf8).0, -32700);
    assert!(utf8["error"]["message"].as_str().unwrap().contains("UTF-8"));

    let long = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"{}\"}}",
        "x".repeat(5000)
    );
    host.send_raw(long.as_bytes()).await;
    let too_long = host.recv().await;
    assert_eq!(error_code(&too_long), (-32600, "LINE_TOO_LONG".into()));
    assert_eq!(too_long["id"], Value::Null);

    let unknown = host.request("no/such", json!({})).await;
    assert_eq!(error_code(&unknown), (-32601, "METHOD_NOT_FOUND".into()));

    let bad_params = host
        .request("session/send", json!({"sessionId": "s", "prompt": 5}))
        .await;
    assert_eq!(error_code(&bad_params), (-32602, "INVALID_PARAMS".into()));

    let invalid = json!({"jsonrpc": "1.0", "id": 7, "method": "x"});
    host.send(invalid).await;
    let invalid = host.recv().await;
    assert_eq!(invalid["id"], 7);
    assert_eq!(error_code(&invalid).0, -32600);

    // Still alive, and string ids keep their type.
    host.send(json!({"jsonrpc": "2.0", "id": "abc", "method": "session/info", "params": {"sessionId": "none"}}))
        .await;
    let alive = host.recv().await;
    assert_eq!(alive["id"], "abc");
    assert_eq!(error_code(&alive).1, "SESSION_NOT_FOUND");
}

#[tokio::test]
async fn batches_are_answered_as_the_specification_prescribes() {
    let mut host = TestHost::start(BridgeConfig::default());
    host.initialize(&[]).await;

    host.send_raw(b"[]").await;
    let empty = host.recv().await;
    assert!(
        empty.is_object(),
        "an empty batch gets a single error: {empty}"
    );
    assert_eq!(error_code(&empty).0, -32600);

    host.send_raw(b"[1,2]").await;
    let invalid = host.recv().await;
    let invalid = invalid.as_array().expect("an array of errors");
    assert_eq!(invalid.len(), 2);
    assert!(invalid
        .iter()
        .all(|r| r["error"]["code"] == -32600 && r["id"].is_null()));

    host.send_raw(br#"[{"jsonrpc":"2.0","method":"x"},{"jsonrpc":"2.0","id":5,"method":"no/such"},{"jsonrpc":"2.0","id":6,"method":"session/info","params":{"sessionId":"s"}}]"#)
        .await;
    let mixed = host.recv().await;
    let mixed = mixed.as_array().expect("an array");
    assert_eq!(mixed.len(), 2, "the notification gets no response");
    let ids: Vec<&Value> = mixed.iter().map(|r| &r["id"]).collect();
    assert!(ids.contains(&&json!(5)) && ids.contains(&&json!(6)));

    // A batch of notifications gets nothing at all: the next message is the
    // answer to the request sent after it.
    host.send_raw(br#"[{"jsonrpc":"2.0","method":"x"},{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}]"#)
        .await;
    host.send(json!({"jsonrpc": "2.0", "id": "after", "method": "no/such"}))
        .await;
    assert_eq!(host.recv().await["id"], "after");
}

#[tokio::test]
async fn notifications_never_get_a_response() {
    let mut host = TestHost::start(BridgeConfig::default());
    host.initialize(&[]).await;
    host.send(json!({"jsonrpc": "2.0", "method": "no/such"}))
        .await;
    host.send(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 99}}))
        .await;
    host.send(json!({"jsonrpc": "2.0", "id": 1, "method": "no/such"}))
        .await;
    assert_eq!(host.recv().await["id"], 1);
}

#[tokio::test]
async fn requests_over_the_in_flight_limit_are_refused_as_overloaded() {
    let mut host = TestHost::start(BridgeConfig {
        max_in_flight: 1,
        ..BridgeConfig::default()
    });
    host.initialize(&["host/budget/checkBeforeLlm"]).await;
    // This run waits on a budget check we do not answer yet.
    let HeldSend {
        session,
        run: held,
        check,
    } = host.held_send(60000).await;
    let refused = host
        .request("session/info", json!({"sessionId": session}))
        .await;
    assert_eq!(error_code(&refused), (-32001, "OVERLOADED".into()));
    assert_eq!(refused["error"]["data"]["retryable"], true);

    host.send(json!({"jsonrpc": "2.0", "id": check["id"], "result": {"decision": "allow"}}))
        .await;
    let done = host.response(&held).await;
    assert_eq!(done["result"]["text"], "Hi there.");
    host.call("session/info", json!({"sessionId": session}))
        .await;
}
