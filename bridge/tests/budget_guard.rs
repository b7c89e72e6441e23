//! The budget guard of seed 000 over reverse requests: decisions, events,
//! fail-closed rules, withdrawal of timed-out requests.

mod support;

use a3s_code_bridge::BridgeConfig;
use serde_json::{json, Value};
use support::*;

async fn guarded(host: &mut TestHost, guard: Value) -> String {
    host.initialize(ALL_BUDGET_METHODS).await;
    let session = host.scripted_session(READ_THEN_ANSWER).await;
    host.call(
        "session/setBudgetGuard",
        json!({"sessionId": session, "guard": guard}),
    )
    .await;
    session
}

async fn answer(host: &mut TestHost, request: &Value, result: Value) {
    host.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
        .await;
}

#[tokio::test]
async fn deny_fails_the_run_with_the_seed_message_and_a_hard_event() {
    let mut host = TestHost::start(BridgeConfig::default());
    let session = guarded(
        &mut host,
        json!({"checkBeforeLlm": true, "recordAfterLlm": true}),
    )
    .await;
    let id = host
        .start_request(
            "session/stream",
            json!({"sessionId": session, "prompt": "go"}),
        )
        .await;
    let check = host.reverse_request("host/budget/checkBeforeLlm").await;
    assert!(check["id"].as_str().unwrap().starts_with("bridge-"));
    assert_eq!(check["params"]["sessionId"], session.as_str());
    assert_eq!(check["params"]["timeoutMs"], 5000);
    assert!(check["params"]["estimatedTokens"].as_u64().unwrap() > 0);
    answer(
        &mut host,
        &check,
        json!({"decision": "deny", "resource": "tokens", "reason": "monthly cap reached"}),
    )
    .await;

    let hit = host
        .recv_matching(|m| m["params"]["event"]["type"] == "budget_threshold_hit")
        .await;
    let payload = &hit["params"]["event"]["payload"];
    assert_eq!(payload["kind"], "hard");
    assert_eq!(payload["resource"], "tokens");
    assert_eq!(payload["message"], "monthly cap reached");
    let response = host.response(&id).await;
    assert_eq!(error_code(&response), (-32000, "BUDGET_EXHAUSTED".into()));
    assert_eq!(
        response["error"]["message"],
        "Budget exhausted on 'tokens': monthly cap reached"
    );

    // The session stays open: clear the guard and run again.
    host.call(
        "session/setBudgetGuard",
        json!({"sessionId": session, "guard": null}),
    )
    .await;
    let ok = host
        .call(
            "session/send",
            json!({"sessionId": session, "prompt": "again"}),
        )
        .await;
    assert_eq!(ok["text"], "The README says hello.");
}

#[tokio::test]
async fn soft_emits_a_soft_event_and_usage_is_recorded_after_each_call() {
    let mut host = TestHost::start(BridgeConfig::default());
    let session = guarded(
        &mut host,
        json!({"checkBeforeLlm": true, "recordAfterLlm": true}),
    )
    .await;
    let id = host
        .start_request(
            "session/stream",
            json!({"sessionId": session, "prompt": "go"}),
        )
        .await;
    let check = host.reverse_request("host/budget/checkBeforeLlm").await;
    answer(&mut host, &check, json!({"decision": "soft", "resource": "tokens", "consumed": 45000, "limit": 50000, "message": "90%"})).await;
    let record = host.reverse_request("host/budget/recordAfterLlm").await;
    assert!(record["params"]["usage"]["totalTokens"].as_u64().unwrap() > 0);
    answer(&mut host, &record, Value::Null).await;
    let check = host.reverse_request("host/budget/checkBeforeLlm").await;
    answer(&mut host, &check, json!({"decision": "allow"})).await;
    // A failing recordAfterLlm is ignored.
    let record = host.reverse_request("host/budget/recordAfterLlm").await;
    host.send(json!({"jsonrpc": "2.0", "id": record["id"], "error": {"code": -1, "message": "meter down"}}))
        .await;

    let hit = host
        .recv_matching(|m| m["params"]["event"]["type"] == "budget_threshold_hit")
        .await;
    let payload = &hit["params"]["event"]["payload"];
    assert_eq!(payload["kind"], "soft");
    assert_eq!(payload["consumed"], 45000.0);
    assert_eq!(payload["limit"], 50000.0);
    assert_eq!(
        host.response(&id).await["result"]["text"],
        "The README says hello."
    );
}

/// Each way a check can fail is a deny.
#[tokio::test]
async fn failing_malformed_and_unanswered_checks_fail_closed() {
    for (case, reply) in [
        (
            "error",
            Some(json!({"error": {"code": -32000, "message": "guard crashed"}})),
        ),
        ("malformed", Some(json!({"result": {"decision": "maybe"}}))),
        (
            "missing fields",
            Some(json!({"result": {"decision": "deny"}})),
        ),
        ("never", None),
    ] {
        let mut host = TestHost::start(BridgeConfig::default());
        let session = guarded(&mut host, json!({"checkBeforeLlm": true, "timeoutMs": 200})).await;
        let id = host
            .start_request(
                "session/send",
                json!({"sessionId": session, "prompt": "go"}),
            )
            .await;
        let check = host.reverse_request("host/budget/checkBeforeLlm").await;
        if let Some(mut reply) = reply {
            reply["jsonrpc"] = json!("2.0");
            reply["id"] = check["id"].clone();
            host.send(reply).await;
        }
        let response = host.response(&id).await;
        assert_eq!(
            error_code(&response).1,
            "BUDGET_EXHAUSTED",
            "{case}: {response}"
        );
        let message = response["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("Budget exhausted on 'budget_guard': "),
            "{case}: {message}"
        );
        if case == "never" {
            assert!(message.contains("timed out after 200ms"), "{message}");
            // The bridge withdraws the request it gave up on...
            let cancel = host
                .recv_matching(|m| m["method"] == "$/cancelRequest")
                .await;
            assert_eq!(cancel["params"]["id"], check["id"]);
            // ...and ignores a late answer.
            answer(&mut host, &check, json!({"decision": "allow"})).await;
            let next = host
                .request("session/info", json!({"sessionId": session}))
                .await;
            assert!(next.get("result").is_some());
        }
    }
}

#[tokio::test]
async fn a_host_without_a_handler_is_denied_and_missing_methods_are_permissive() {
    // The host declares no reverse requests but installs a guard that claims one.
    let mut host = TestHost::start(BridgeConfig::default());
    host.initialize(&[]).await;
    let session = host.scripted_session(READ_THEN_ANSWER).await;
    host.call(
        "session/setBudgetGuard",
        json!({"sessionId": session, "guard": {"checkBeforeLlm": true}}),
    )
    .await;
    let denied = host
        .request(
            "session/send",
            json!({"sessionId": session, "prompt": "go"}),
        )
        .await;
    assert!(denied["error"]["message"]
        .as_str()
        .unwrap()
        .contains("the host has no handler"));

    // A guard with no methods never asks and never blocks.
    host.call(
        "session/setBudgetGuard",
        json!({"sessionId": session, "guard": {}}),
    )
    .await;
    let ok = host
        .call(
            "session/send",
            json!({"sessionId": session, "prompt": "go"}),
        )
        .await;
    assert_eq!(ok["text"], "The README says hello.");
}

#[tokio::test]
async fn a_denied_tool_call_becomes_a_tool_error_and_the_run_goes_on() {
    let mut host = TestHost::start(BridgeConfig::default());
    let session = guarded(&mut host, json!({"checkBeforeTool": true})).await;
    let id = host
        .start_request(
            "session/stream",
            json!({"sessionId": session, "prompt": "go"}),
        )
        .await;
    let check = host.reverse_request("host/budget/checkBeforeTool").await;
    assert_eq!(check["params"]["toolName"], "read");
    answer(
        &mut host,
        &check,
        json!({"decision": "deny", "resource": "tool_calls", "reason": "no reads today"}),
    )
    .await;
    let tool_end = host
        .recv_matching(|m| m["params"]["event"]["type"] == "tool_end")
        .await;
    let payload = &tool_end["params"]["event"]["payload"];
    assert_eq!(payload["is_error"], true);
    assert_eq!(
        payload["output"],
        "Budget exhausted on 'tool_calls': no reads today"
    );
    assert_eq!(
        host.response(&id).await["result"]["text"],
        "The README says hello."
    );
}
