//! `$/cancelRequest` from the host stops exactly the request it names.

mod support;

use a3s_code_bridge::BridgeConfig;
use serde_json::json;
use support::*;

#[tokio::test]
async fn cancelling_a_send_stops_its_run_and_leaves_everything_else_alone() {
    let mut host = TestHost::start(BridgeConfig::default());
    host.initialize(&["host/budget/checkBeforeLlm"]).await;
    let HeldSend {
        session: held,
        run: id,
        check,
    } = host.held_send(600000).await;
    let other = host.scripted_session(ANSWER_ONLY).await;

    host.send(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": id}}))
        .await;
    let cancelled = host.response(&id).await;
    assert_eq!(error_code(&cancelled), (-32800, "CANCELLED".into()));
    // The reverse request the run was waiting on is withdrawn too.
    let withdrawn = host
        .recv_matching(|m| m["method"] == "$/cancelRequest")
        .await;
    assert_eq!(withdrawn["params"]["id"], check["id"]);

    // The other session never noticed; the cancelled one is usable again.
    let ok = host
        .call("session/send", json!({"sessionId": other, "prompt": "hi"}))
        .await;
    assert_eq!(ok["text"], "Hi there.");
    host.call(
        "session/setBudgetGuard",
        json!({"sessionId": held, "guard": null}),
    )
    .await;
    let again = host
        .call("session/send", json!({"sessionId": held, "prompt": "hi"}))
        .await;
    assert_eq!(again["text"], "Hi there.");
}

#[tokio::test]
async fn cancelling_a_stalled_stream_answers_it_cancelled() {
    let mut host = TestHost::start(BridgeConfig {
        stream_window: 2,
        ..BridgeConfig::default()
    });
    host.initialize(&[]).await;
    let session = host.scripted_session(READ_THEN_ANSWER).await;
    let id = host
        .start_request(
            "session/stream",
            json!({"sessionId": session, "prompt": "go"}),
        )
        .await;
    // Read the two events of the window and never acknowledge them.
    for _ in 0..2 {
        host.recv_matching(|m| m["method"] == "session/event").await;
    }
    host.send(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": id}}))
        .await;
    let response = host.response(&id).await;
    assert_eq!(error_code(&response).0, -32800);
}
