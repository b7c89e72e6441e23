//! Shutdown and end of input: in-flight work finishes, sessions close, exit is clean.

mod support;

use std::time::Duration;

use a3s_code_bridge::{BridgeConfig, Exit};
use serde_json::json;
use support::*;

#[tokio::test]
async fn shutdown_lets_in_flight_work_finish_then_answers_and_ends() {
    let mut host = TestHost::start(BridgeConfig::default());
    host.initialize(&["host/budget/checkBeforeLlm"]).await;
    let HeldSend {
        session,
        run,
        check,
    } = host.held_send(60000).await;
    let shutdown = host.start_request("shutdown", json!({})).await;
    // New work is refused while shutting down...
    let refused = host
        .request("session/info", json!({"sessionId": session}))
        .await;
    assert_eq!(error_code(&refused).1, "SHUTTING_DOWN");
    // ...but answers to reverse requests of in-flight work are still read.
    host.send(json!({"jsonrpc": "2.0", "id": check["id"], "result": {"decision": "allow"}}))
        .await;
    assert_eq!(host.response(&run).await["result"]["text"], "Hi there.");
    assert_eq!(host.response(&shutdown).await["result"], json!({}));
    let exit = tokio::time::timeout(WAIT, &mut host.bridge)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(exit, Exit::Shutdown);
}

#[tokio::test]
async fn shutdown_cancels_work_that_outlives_the_grace_period() {
    let mut host = TestHost::start(BridgeConfig {
        shutdown_grace: Duration::from_millis(100),
        ..BridgeConfig::default()
    });
    host.initialize(&["host/budget/checkBeforeLlm"]).await;
    let HeldSend { run, .. } = host.held_send(600000).await;
    let shutdown = host.start_request("shutdown", json!({})).await;
    assert_eq!(error_code(&host.response(&run).await).0, -32800);
    assert_eq!(host.response(&shutdown).await["result"], json!({}));
}

#[tokio::test]
async fn end_of_input_closes_sessions_and_ends_cleanly() {
    let mut host = TestHost::start(BridgeConfig::default());
    host.initialize(&["host/budget/checkBeforeLlm"]).await;
    let HeldSend { run, .. } = host.held_send(600000).await;
    host.close_input().await;
    // The host is gone: in-flight work is cancelled at once (its checkpoint,
    // if any, stands for another bridge).
    let response = host.response(&run).await;
    assert_eq!(error_code(&response), (-32800, "CANCELLED".into()));
    assert!(host.output_closed().await);
    let exit = tokio::time::timeout(WAIT, &mut host.bridge)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(exit, Exit::EndOfInput);
}

/// Found by the fuzzer: the answer to `shutdown` was lost when the input
/// ended while the shutdown was still draining.
#[tokio::test]
async fn a_shutdown_followed_at_once_by_end_of_input_is_still_answered() {
    for held in [false, true] {
        for _ in 0..10 {
            let mut host = TestHost::start(BridgeConfig::default());
            host.initialize(&["host/budget/checkBeforeLlm"]).await;
            let mut run = None;
            if held {
                // In-flight work keeps the shutdown draining when EOF comes.
                run = Some(host.held_send(600000).await.run);
            }
            let shutdown = host.start_request("shutdown", json!({})).await;
            host.close_input().await;
            if let Some(run) = run {
                assert_eq!(error_code(&host.response(&run).await).0, -32800);
            }
            assert_eq!(host.response(&shutdown).await["result"], json!({}));
            let exit = tokio::time::timeout(WAIT, &mut host.bridge)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(exit, Exit::Shutdown);
        }
    }
}
