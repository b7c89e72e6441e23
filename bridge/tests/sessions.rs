//! Sessions over the wire: send, stream (order, envelope, numbering), busy, close.

mod support;

use a3s_code_bridge::BridgeConfig;
use serde_json::{json, Value};
use support::*;

#[tokio::test]
async fn send_runs_the_tool_loop_and_returns_text_usage_and_tool_count() {
    let mut host = TestHost::start(BridgeConfig::default());
    host.initialize(&[]).await;
    let session = host.scripted_session(READ_THEN_ANSWER).await;
    let result = host
        .call(
            "session/send",
            json!({"sessionId": session, "prompt": "What does the README say?"}),
        )
        .await;
    assert_eq!(result["text"], "The README says hello.");
    assert_eq!(result["toolCallsCount"], 1);
    assert!(result["usage"]["totalTokens"].as_u64().unwrap() > 0);
    assert!(result["runId"].is_string());
}

#[tokio::test]
async fn stream_sends_enveloped_events_in_order_then_the_response() {
    let mut host = TestHost::start(BridgeConfig::default());
    host.initialize(&[]).await;
    let session = host.scripted_session(READ_THEN_ANSWER).await;
    let id = host
        .start_request(
            "session/stream",
            json!({"sessionId": session, "prompt": "read it"}),
        )
        .await;
    let mut events = Vec::new();
    let response = loop {
        let message = host.recv().await;
        if message["method"] == "session/event" {
            events.push(message["params"].clone());
        } else {
            break message;
        }
    };
    assert_eq!(
        response["id"], id,
        "the response comes after the last event"
    );
    assert_eq!(response["result"]["text"], "The README says hello.");

    let types: Vec<&str> = events
        .iter()
        .map(|e| e["event"]["type"].as_str().unwrap())
        .collect();
    let mut collapsed: Vec<&str> = types.clone();
    collapsed.dedup();
    assert_eq!(
        collapsed,
        [
            "agent_start",
            "turn_start",
            "tool_start",
            "tool_end",
            "turn_end",
            "turn_start",
            "text_delta",
            "turn_end",
            "agent_end"
        ]
    );
    assert!(
        types.iter().filter(|t| **t == "text_delta").count() > 1,
        "text arrives in deltas"
    );
    for (n, event) in events.iter().enumerate() {
        assert_eq!(event["requestId"], id);
        assert_eq!(event["seq"], n as u64, "stream seq has no gaps");
        assert_eq!(event["event"]["version"], 1);
        let meta = &event["event"]["metadata"];
        assert_eq!(meta["sessionId"], session.as_str());
        assert_eq!(meta["runId"], response["result"]["runId"]);
        assert_eq!(meta["seq"], n as u64);
        assert!(meta["timestampMs"].as_u64().unwrap() > 0);
        assert!(event["event"]["payload"].get("type").is_none());
    }
    let tool_end = events
        .iter()
        .find(|e| e["event"]["type"] == "tool_end")
        .unwrap();
    let output = tool_end["event"]["payload"]["output"].as_str().unwrap();
    assert!(output.contains("hello from the workspace"), "{output}");
    assert_eq!(tool_end["event"]["payload"]["is_error"], false);
}

#[tokio::test]
async fn a_tool_error_goes_back_to_the_model_and_workspace_escapes_are_refused() {
    let mut host = TestHost::start(BridgeConfig::default());
    host.initialize(&[]).await;
    let turns = r#"
    turn {
      tool_call {
        name = "read"
        arguments = { file_path = "../../etc/passwd" }
      }
    }
    turn { text = "Refused." }
"#;
    let session = host.scripted_session(turns).await;
    let id = host
        .start_request(
            "session/stream",
            json!({"sessionId": session, "prompt": "escape"}),
        )
        .await;
    let tool_end = host
        .recv_matching(|m| m["params"]["event"]["type"] == "tool_end")
        .await;
    let payload = &tool_end["params"]["event"]["payload"];
    assert_eq!(payload["is_error"], true);
    assert_eq!(
        payload["output"],
        "path '../../etc/passwd' is outside the workspace"
    );
    assert_eq!(host.response(&id).await["result"]["text"], "Refused.");
}

#[tokio::test]
async fn a_session_runs_one_prompt_at_a_time_and_closed_sessions_are_gone() {
    let mut host = TestHost::start(BridgeConfig::default());
    host.initialize(&["host/budget/checkBeforeLlm"]).await;
    let HeldSend {
        session,
        run: first,
        check,
    } = host.held_send(5000).await;
    let busy = host
        .request(
            "session/send",
            json!({"sessionId": session, "prompt": "two"}),
        )
        .await;
    assert_eq!(error_code(&busy).1, "SESSION_BUSY");
    host.send(json!({"jsonrpc": "2.0", "id": check["id"], "result": null}))
        .await;
    assert_eq!(host.response(&first).await["result"]["text"], "Hi there.");

    host.call("session/close", json!({"sessionId": session}))
        .await;
    let gone = host
        .request("session/send", json!({"sessionId": session, "prompt": "x"}))
        .await;
    assert_eq!(error_code(&gone).1, "SESSION_NOT_FOUND");
}

#[tokio::test]
async fn bad_configs_and_unknown_agents_are_typed_errors() {
    let mut host = TestHost::start(BridgeConfig::default());
    host.initialize(&[]).await;
    let missing = host
        .request("agent/create", json!({"config": "/no/such/agent.acl"}))
        .await;
    assert_eq!(error_code(&missing), (-32000, "CONFIG_ERROR".into()));
    let no_agent = host
        .request(
            "session/create",
            json!({"agentId": "agent-9", "workspace": "/tmp"}),
        )
        .await;
    assert_eq!(error_code(&no_agent).1, "AGENT_NOT_FOUND");
    let config = scripted_acl(ANSWER_ONLY);
    let agent = host.call("agent/create", json!({"config": config})).await;
    let no_dir = host
        .request(
            "session/create",
            json!({"agentId": agent["agentId"], "workspace": "/no/such/dir"}),
        )
        .await;
    assert_eq!(error_code(&no_dir).0, -32602);
    let unknown_option = host
        .request(
            "session/create",
            json!({"agentId": agent["agentId"], "workspace": "/tmp", "options": {"colour": "red"}}),
        )
        .await;
    assert_eq!(error_code(&unknown_option).0, -32602);
    host.call("agent/close", json!({"agentId": agent["agentId"]}))
        .await;
    let closed = host
        .request("agent/close", json!({"agentId": agent["agentId"]}))
        .await;
    assert_eq!(error_code(&closed).1, "AGENT_NOT_FOUND");
}

#[tokio::test]
async fn identity_tags_and_host_env_reach_the_session() {
    let mut host = TestHost::start(BridgeConfig::default());
    host.initialize(&[]).await;
    let config = scripted_acl(ANSWER_ONLY);
    let agent = host.call("agent/create", json!({"config": config})).await;
    let workspace = host.workspace.path().display().to_string();
    let options = json!({"tenantId": "t1", "principal": "p1", "agentTemplateId": "a1",
                         "correlationId": "c1", "hostEnv": {"sequentialIdPrefix": "replay", "fixedTimeMs": 1700000000000u64}});
    let created = host
        .call(
            "session/create",
            json!({"agentId": agent["agentId"], "workspace": workspace, "options": options}),
        )
        .await;
    assert_eq!(created["sessionId"], "replay-session-1");
    let info = host
        .call("session/info", json!({"sessionId": "replay-session-1"}))
        .await;
    assert_eq!(info["tenantId"], "t1");
    assert_eq!(info["principal"], "p1");
    assert_eq!(info["agentTemplateId"], "a1");
    assert_eq!(info["correlationId"], "c1");
    assert!(info["tools"].as_array().unwrap().contains(&json!("read")));
    let id = host
        .start_request(
            "session/stream",
            json!({"sessionId": "replay-session-1", "prompt": "hi"}),
        )
        .await;
    let event = host.recv_matching(|m| m["method"] == "session/event").await;
    assert_eq!(
        event["params"]["event"]["metadata"]["timestampMs"],
        1700000000000u64
    );
    assert_eq!(
        event["params"]["event"]["metadata"]["runId"],
        "replay-run-2"
    );
    let response = host.response(&id).await;
    assert_eq!(response["result"]["runId"], "replay-run-2");
    let _: Value = response;
}
