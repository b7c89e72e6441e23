//! Permission policy and human confirmation over the wire (seed 004).

mod support;

use a3s_code_bridge::BridgeConfig;
use serde_json::{json, Value};
use support::*;

const WRITE_THEN_ANSWER: &str = r#"
    turn {
      tool_call {
        name = "write"
        arguments = { file_path = "out.txt", content = "data" }
      }
    }
    turn { text = "Done." }
"#;

async fn session_with_policy(
    host: &mut TestHost,
    turns: &str,
    policy: Value,
    extra: Value,
) -> String {
    let agent = host
        .call("agent/create", json!({"config": scripted_acl(turns)}))
        .await;
    let mut options = json!({"permissionPolicy": policy});
    if let (Some(options), Some(extra)) = (options.as_object_mut(), extra.as_object()) {
        options.extend(extra.clone());
    }
    let workspace = host.workspace.path().display().to_string();
    let session = host
        .call(
            "session/create",
            json!({"agentId": agent["agentId"], "workspace": workspace, "options": options}),
        )
        .await;
    session["sessionId"].as_str().unwrap().to_string()
}

/// Runs a stream to its end; returns the events' payloads by type and the response.
async fn run_stream(host: &mut TestHost, session: &str) -> (Vec<(String, Value)>, Value) {
    let id = host
        .start_request(
            "session/stream",
            json!({"sessionId": session, "prompt": "go"}),
        )
        .await;
    let mut events = Vec::new();
    loop {
        let message = host
            .recv_matching(|m| {
                m["method"] == "session/event" || m.get("id").is_some() && m.get("method").is_none()
            })
            .await;
        if message.get("id") == Some(&id) {
            return (events, message);
        }
        let event = &message["params"]["event"];
        events.push((
            event["type"].as_str().unwrap().to_string(),
            event["payload"].clone(),
        ));
    }
}

#[tokio::test]
async fn the_seed_004_policy_offers_only_read_tools_and_denies_writes() {
    let mut host = TestHost::start(BridgeConfig::default());
    host.initialize(&[]).await;
    let policy = json!({
        "allow": ["read*", "ls*", "glob*", "grep*", "code_*"],
        "deny": ["write*", "edit*", "patch*", "bash*", "git*"],
        "defaultDecision": "deny"
    });
    let session = session_with_policy(&mut host, WRITE_THEN_ANSWER, policy, json!({})).await;
    let info = host
        .call("session/info", json!({"sessionId": session}))
        .await;
    assert_eq!(info["tools"], json!(["glob", "grep", "ls", "read"]));

    let (events, response) = run_stream(&mut host, &session).await;
    assert_eq!(response["result"]["text"], "Done.");
    let denied = events
        .iter()
        .find(|(t, _)| t == "permission_denied")
        .expect("permission_denied");
    assert_eq!(denied.1["tool_name"], "write");
    let tool_end = events.iter().find(|(t, _)| t == "tool_end").unwrap();
    assert_eq!(tool_end.1["is_error"], true);
    assert!(tool_end.1["output"]
        .as_str()
        .unwrap()
        .starts_with("permission denied"));
    assert!(
        !host.workspace.path().join("out.txt").exists(),
        "the write never ran"
    );
}

#[tokio::test]
async fn ask_sends_a_confirmation_request_and_runs_the_call_when_approved() {
    let mut host = TestHost::start(BridgeConfig::default());
    host.initialize(&["host/permission/request"]).await;
    let policy = json!({"ask": ["write"], "defaultDecision": "deny"});
    let session = session_with_policy(&mut host, WRITE_THEN_ANSWER, policy, json!({})).await;
    let id = host
        .start_request(
            "session/stream",
            json!({"sessionId": session, "prompt": "go"}),
        )
        .await;
    let ask = host.reverse_request("host/permission/request").await;
    assert_eq!(ask["params"]["toolName"], "write");
    assert_eq!(ask["params"]["arguments"]["file_path"], "out.txt");
    assert_eq!(ask["params"]["timeoutMs"], 60000);
    host.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"approved": true}}))
        .await;
    let response = host.response(&id).await;
    assert_eq!(response["result"]["text"], "Done.");
    assert_eq!(
        std::fs::read_to_string(host.workspace.path().join("out.txt")).unwrap(),
        "data"
    );
}

#[tokio::test]
async fn a_rejected_a_failed_and_an_unanswered_confirmation_all_deny() {
    for case in ["reject", "error", "malformed", "timeout", "no-handler"] {
        let mut host = TestHost::start(BridgeConfig::default());
        let methods: &[&str] = if case == "no-handler" {
            &[]
        } else {
            &["host/permission/request"]
        };
        host.initialize(methods).await;
        let policy = json!({"ask": ["write"]});
        let session = session_with_policy(
            &mut host,
            WRITE_THEN_ANSWER,
            policy,
            json!({"confirmationTimeoutMs": 200}),
        )
        .await;
        let id = host
            .start_request(
                "session/stream",
                json!({"sessionId": session, "prompt": "go"}),
            )
            .await;
        if case != "no-handler" {
            let ask = host.reverse_request("host/permission/request").await;
            let reply = match case {
                "reject" => json!({"result": {"approved": false, "reason": "not today"}}),
                "error" => json!({"error": {"code": -1, "message": "ui crashed"}}),
                "malformed" => json!({"result": {"ok": true}}),
                _ => Value::Null,
            };
            if let Value::Object(mut reply) = reply {
                reply.insert("jsonrpc".into(), json!("2.0"));
                reply.insert("id".into(), ask["id"].clone());
                host.send(Value::Object(reply)).await;
            }
        }
        let mut seen = Vec::new();
        loop {
            let message = host.recv().await;
            if message.get("id") == Some(&id) {
                assert_eq!(message["result"]["text"], "Done.", "{case}");
                break;
            }
            if message["method"] == "session/event" {
                seen.push(message["params"]["event"].clone());
            }
        }
        let kinds: Vec<&str> = seen.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert!(kinds.contains(&"permission_denied"), "{case}: {kinds:?}");
        assert!(!host.workspace.path().join("out.txt").exists(), "{case}");
        match case {
            "timeout" => assert!(kinds.contains(&"confirmation_timeout"), "{kinds:?}"),
            "no-handler" => {}
            _ => {
                let received = seen
                    .iter()
                    .find(|e| e["type"] == "confirmation_received")
                    .unwrap();
                assert_eq!(received["payload"]["approved"], false, "{case}");
            }
        }
    }
}

#[tokio::test]
async fn bad_rules_are_refused_when_the_session_is_created() {
    let mut host = TestHost::start(BridgeConfig::default());
    host.initialize(&[]).await;
    let agent = host
        .call("agent/create", json!({"config": scripted_acl(ANSWER_ONLY)}))
        .await;
    let workspace = host.workspace.path().display().to_string();
    let response = host
        .request(
            "session/create",
            json!({"agentId": agent["agentId"], "workspace": workspace,
                   "options": {"permissionPolicy": {"allow": ["read("]}}}),
        )
        .await;
    assert_eq!(error_code(&response).0, -32602);
    assert!(response["error"]["message"]
        .as_str()
        .unwrap()
        .contains("read("));
}
