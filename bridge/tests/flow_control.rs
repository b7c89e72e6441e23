//! One stalled stream pauses only itself.

mod support;

use a3s_code_bridge::BridgeConfig;
use serde_json::json;
use support::*;

#[tokio::test]
async fn a_stalled_stream_pauses_alone_and_resumes_on_ack() {
    let mut host = TestHost::start(BridgeConfig {
        stream_window: 3,
        ..BridgeConfig::default()
    });
    host.initialize(&[]).await;
    let long_text = "word ".repeat(200);
    let stalled = host
        .scripted_session(&format!("turn {{ text = \"{long_text}\" }}"))
        .await;
    let other = host.scripted_session(ANSWER_ONLY).await;
    let id = host
        .start_request(
            "session/stream",
            json!({"sessionId": stalled, "prompt": "talk"}),
        )
        .await;
    for expected in 0..3u64 {
        let event = host.recv_matching(|m| m["method"] == "session/event").await;
        assert_eq!(event["params"]["seq"], expected);
    }
    // The window is used up. Other work is still answered, and the stalled
    // stream sends nothing in the meantime: the next message is the reply.
    let ok = host
        .call("session/send", json!({"sessionId": other, "prompt": "hi"}))
        .await;
    assert_eq!(ok["text"], "Hi there.");
    let info = host
        .request("session/info", json!({"sessionId": other}))
        .await;
    assert!(info.get("result").is_some());

    // Acknowledge and the stream finishes, in order, without gaps.
    let mut next = 3u64;
    host.send(
        json!({"jsonrpc": "2.0", "method": "$/streamAck", "params": {"requestId": id, "seq": 2}}),
    )
    .await;
    loop {
        let message = host.recv().await;
        if message.get("id") == Some(&id) {
            assert_eq!(message["result"]["text"], long_text.as_str());
            break;
        }
        assert_eq!(message["params"]["seq"], next);
        host.send(json!({"jsonrpc": "2.0", "method": "$/streamAck", "params": {"requestId": id, "seq": next}}))
            .await;
        next += 1;
    }
    assert!(next > 200);
}
