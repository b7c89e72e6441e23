//! A stalled stream holding back a million events keeps the bridge's memory
//! flat while other sessions are served.

mod support;

use serde_json::json;
use support::process::BridgeProcess;

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

#[tokio::test]
async fn a_million_held_back_events_cost_no_memory_and_block_no_one() {
    let dir = tempfile::tempdir().unwrap();
    // One model turn of a million words: a million text_delta events.
    let script = json!([{"text": "w ".repeat(1_000_000)}]);
    std::fs::write(dir.path().join("script.json"), script.to_string()).unwrap();
    std::fs::write(
        dir.path().join("agent.acl"),
        "default_model = \"offline/long\"\nproviders \"offline\" {\n kind = \"scripted\"\n models \"long\" { script_file = \"script.json\" }\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("short.acl"),
        "default_model = \"offline/short\"\nproviders \"offline\" {\n kind = \"scripted\"\n models \"short\" {\n turn { text = \"ok\" }\n }\n}\n",
    )
    .unwrap();
    let ws = dir.path().display().to_string();
    let mut bridge = BridgeProcess::spawn().await;
    let pid = bridge.child.id().unwrap();
    let long = bridge
        .call(
            "agent/create",
            json!({"config": dir.path().join("agent.acl")}),
        )
        .await;
    let short = bridge
        .call(
            "agent/create",
            json!({"config": dir.path().join("short.acl")}),
        )
        .await;
    let stalled = bridge
        .call(
            "session/create",
            json!({"agentId": long["agentId"], "workspace": ws}),
        )
        .await;
    let stream = bridge
        .start(
            "session/stream",
            json!({"sessionId": stalled["sessionId"], "prompt": "talk"}),
        )
        .await;
    // The window (256 events) arrives; nothing is acknowledged.
    for _ in 0..256 {
        bridge
            .recv_matching(|m| m["method"] == "session/event")
            .await;
    }
    let before = rss_kib(pid);

    // Meanwhile other sessions are served, again and again.
    for n in 0..100 {
        let other = bridge
            .call(
                "session/create",
                json!({"agentId": short["agentId"], "workspace": ws}),
            )
            .await;
        let answer = bridge
            .call(
                "session/send",
                json!({"sessionId": other["sessionId"], "prompt": format!("q{n}")}),
            )
            .await;
        assert_eq!(answer["text"], "ok");
        bridge
            .call("session/close", json!({"sessionId": other["sessionId"]}))
            .await;
    }
    let after = rss_kib(pid);
    // Nothing beyond the window was sent while the stream stalled.
    assert!(
        bridge
            .raw
            .iter()
            .filter(|l| l.contains("\"session/event\""))
            .count()
            == 256,
        "the stalled stream kept sending"
    );
    let growth = after.saturating_sub(before);
    println!("bridge RSS with 999,744 events held back: {before} KiB before, {after} KiB after serving 100 sessions");
    assert!(growth < 8 * 1024, "RSS grew by {growth} KiB");

    bridge
        .send(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": stream}}))
        .await;
    let cancelled = bridge.response(&stream).await;
    assert_eq!(cancelled["error"]["code"], -32800);
    assert!(bridge.finish().await.success());
}
