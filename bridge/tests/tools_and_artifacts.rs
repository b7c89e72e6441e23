//! Direct tool calls, large output kept as artifacts, run records.

mod support;

use a3s_code_bridge::BridgeConfig;
use serde_json::json;
use support::*;

#[tokio::test]
async fn the_host_calls_tools_directly_inside_the_workspace() {
    let mut host = TestHost::start(BridgeConfig::default());
    host.initialize(&[]).await;
    let session = host.scripted_session(ANSWER_ONLY).await;
    let read = host
        .call(
            "session/tool",
            json!({"sessionId": session, "name": "read", "arguments": {"file_path": "README.md"}}),
        )
        .await;
    assert_eq!(read["isError"], false);
    assert!(read["output"]
        .as_str()
        .unwrap()
        .contains("hello from the workspace"));

    let escape = host
        .call("session/tool", json!({"sessionId": session, "name": "read", "arguments": {"file_path": "../../etc/passwd"}}))
        .await;
    assert_eq!(escape["isError"], true);
    assert_eq!(
        escape["output"],
        "path '../../etc/passwd' is outside the workspace"
    );

    let bad = host
        .call(
            "session/tool",
            json!({"sessionId": session, "name": "ls", "arguments": {"dir": "."}}),
        )
        .await;
    assert_eq!(bad["isError"], true);
    assert!(bad["output"]
        .as_str()
        .unwrap()
        .starts_with("invalid arguments for ls"));

    let unknown = host
        .request("session/tool", json!({"sessionId": session, "name": "rm"}))
        .await;
    assert_eq!(error_code(&unknown).0, -32602);

    let runs = host
        .call("session/runs", json!({"sessionId": session}))
        .await;
    let statuses: Vec<&str> = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["completed", "failed", "failed"]);
    assert_eq!(runs["runs"][0]["prompt"], "tool:read");
}

#[tokio::test]
async fn large_output_becomes_an_artifact_the_host_reads_back_by_range() {
    let mut host = TestHost::start(BridgeConfig::default());
    host.initialize(&[]).await;
    let big: String = (0..5000).map(|n| format!("line {n} ünïcödé\n")).collect();
    std::fs::write(host.workspace.path().join("big.txt"), &big).unwrap();
    let turns = r#"
    turn {
      tool_call {
        name = "read"
        arguments = { file_path = "big.txt" }
      }
    }
    turn { text = "Big." }
"#;
    let session = host.scripted_session(turns).await;
    let id = host
        .start_request(
            "session/stream",
            json!({"sessionId": session, "prompt": "read big"}),
        )
        .await;
    let tool_end = host
        .recv_matching(|m| m["params"]["event"]["type"] == "tool_end")
        .await;
    let output = tool_end["params"]["event"]["payload"]["output"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        output.len() < 4096,
        "the model sees a preview, not {} bytes",
        output.len()
    );
    assert!(output.contains("sha256"), "{output}");
    let uri = output
        .split_whitespace()
        .find(|w| w.starts_with("artifact://"))
        .expect("an artifact uri")
        .to_string();
    assert_eq!(host.response(&id).await["result"]["text"], "Big.");

    let mut data = String::new();
    let mut offset = 0;
    let (total, sha) = loop {
        let slice = host
            .call(
                "session/artifact",
                json!({"sessionId": session, "artifact": uri, "offset": offset, "limit": 10007}),
            )
            .await;
        data.push_str(slice["data"].as_str().unwrap());
        offset = data.len();
        if slice["eof"] == true {
            break (
                slice["total"].as_u64().unwrap() as usize,
                slice["sha256"].as_str().unwrap().to_string(),
            );
        }
    };
    assert_eq!(data.len(), total);
    assert!(
        data.contains("line 1999 ünïcödé"),
        "the read tool pages at 2000 lines"
    );
    assert!(data.ends_with("... 3000 more lines (use offset=2001 to continue)\n"));
    assert!(data.starts_with("     1\tline 0 ünïcödé"));
    assert_eq!(sha.len(), 64);

    let missing = host
        .request(
            "session/artifact",
            json!({"sessionId": session, "artifact": "nope"}),
        )
        .await;
    assert_eq!(error_code(&missing).1, "ARTIFACT_NOT_FOUND");
}
