//! What survives a bridge process: restore by id, crash and resume, replay.

mod support;

use serde_json::{json, Value};
use support::process::BridgeProcess;
use support::scripted_acl;

fn bash_turn(command: &str) -> String {
    format!("turn {{\n tool_call {{\n name = \"bash\"\n arguments = {{ command = \"{command}\" }}\n }}\n}}\n")
}

fn three_rounds() -> String {
    let mut turns: String = (1..=3)
        .map(|n| bash_turn(&format!("echo r{n} >> tools.log")))
        .collect();
    turns.push_str("turn { text = \"All three rounds done.\" }\n");
    turns
}

async fn open_session(
    bridge: &mut BridgeProcess,
    turns: &str,
    workspace: &str,
    options: Value,
) -> String {
    let agent = bridge
        .call("agent/create", json!({"config": scripted_acl(turns)}))
        .await;
    let session = bridge
        .call(
            "session/create",
            json!({"agentId": agent["agentId"], "workspace": workspace, "options": options}),
        )
        .await;
    session["sessionId"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_session_saved_by_one_bridge_is_restored_by_another() {
    let store = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().display().to_string();
    let options =
        json!({"sessionId": "moving", "fileSessionStoreDir": store.path(), "tenantId": "t1"});
    let turns = "turn { text = \"First.\" }\nturn { text = \"Second.\" }\n";

    let mut a = BridgeProcess::spawn().await;
    let session = open_session(&mut a, turns, &ws, options.clone()).await;
    let first = a
        .call(
            "session/send",
            json!({"sessionId": session, "prompt": "one"}),
        )
        .await;
    assert!(a.finish().await.success());

    let mut b = BridgeProcess::spawn().await;
    let session = open_session(
        &mut b,
        turns,
        &ws,
        json!({"sessionId": "moving", "fileSessionStoreDir": store.path()}),
    )
    .await;
    let runs = b.call("session/runs", json!({"sessionId": session})).await;
    assert_eq!(runs["runs"][0]["id"], first["runId"]);
    assert_eq!(runs["runs"][0]["status"], "completed");
    let info = b.call("session/info", json!({"sessionId": session})).await;
    assert_eq!(info["tenantId"], "t1", "identity tags are persisted");
    let second = b
        .call(
            "session/send",
            json!({"sessionId": session, "prompt": "two"}),
        )
        .await;
    assert_eq!(second["text"], "Second.", "the history came along");
}

#[tokio::test]
async fn a_run_killed_with_its_bridge_resumes_in_another_with_no_tool_run_twice() {
    let store = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().display().to_string();
    let options = json!({"sessionId": "crashy", "fileSessionStoreDir": store.path()});

    // The uninterrupted answer, for comparison.
    let control_ws = tempfile::tempdir().unwrap();
    let mut control = BridgeProcess::spawn().await;
    let control_session = open_session(
        &mut control,
        &three_rounds(),
        &control_ws.path().display().to_string(),
        json!({}),
    )
    .await;
    let expected = control
        .call(
            "session/send",
            json!({"sessionId": control_session, "prompt": "go"}),
        )
        .await;

    let mut a = BridgeProcess::spawn().await;
    let session = open_session(&mut a, &three_rounds(), &ws, options.clone()).await;
    a.call(
        "session/setBudgetGuard",
        json!({"sessionId": session, "guard": {"checkBeforeLlm": true, "timeoutMs": 60000}}),
    )
    .await;
    let stream = a
        .start(
            "session/stream",
            json!({"sessionId": session, "prompt": "go"}),
        )
        .await;
    let first_event = a.recv_matching(|m| m["method"] == "session/event").await;
    let run_id = first_event["params"]["event"]["metadata"]["runId"].clone();
    // Allow two model calls; hold the third and kill the bridge meanwhile.
    for _ in 0..2 {
        let check = a
            .recv_matching(|m| m["method"] == "host/budget/checkBeforeLlm")
            .await;
        a.send(json!({"jsonrpc": "2.0", "id": check["id"], "result": {"decision": "allow"}}))
            .await;
    }
    a.recv_matching(|m| m["method"] == "host/budget/checkBeforeLlm")
        .await;
    a.kill().await;
    let _ = stream;
    let log = || std::fs::read_to_string(workspace.path().join("tools.log")).unwrap_or_default();
    assert_eq!(log(), "r1\nr2\n");

    let mut b = BridgeProcess::spawn().await;
    let session = open_session(&mut b, &three_rounds(), &ws, options).await;
    let resumed = b
        .call(
            "session/resumeRun",
            json!({"sessionId": session, "runId": run_id}),
        )
        .await;
    assert_eq!(resumed["text"], expected["text"]);
    assert_eq!(resumed["toolCallsCount"], expected["toolCallsCount"]);
    assert_eq!(log(), "r1\nr2\nr3\n", "no tool call executed twice");

    let missing = b
        .start(
            "session/resumeRun",
            json!({"sessionId": session, "runId": "nope"}),
        )
        .await;
    let missing = b.response(&missing).await;
    assert_eq!(missing["error"]["data"]["code"], "CHECKPOINT_NOT_FOUND");
    assert_eq!(
        missing["error"]["message"],
        "no loop checkpoint found for run 'nope'"
    );
}

#[tokio::test]
async fn two_bridges_with_the_same_host_env_replay_byte_identically() {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("notes.txt"), "replay me\n").unwrap();
    let ws = workspace.path().display().to_string();
    let turns = "turn {\n tool_call {\n name = \"read\"\n arguments = { file_path = \"notes.txt\" }\n }\n}\nturn { text = \"Replayed.\" }\n";
    let mut streams = Vec::new();
    let mut documents = Vec::new();
    for _ in 0..2 {
        let store = tempfile::tempdir().unwrap();
        let options = json!({"fileSessionStoreDir": store.path(),
            "hostEnv": {"sequentialIdPrefix": "replay", "fixedTimeMs": 1_700_000_000_000u64}});
        let mut bridge = BridgeProcess::spawn().await;
        let session = open_session(&mut bridge, turns, &ws, options).await;
        let start = bridge.raw.len();
        let id = bridge
            .start(
                "session/stream",
                json!({"sessionId": session, "prompt": "replay"}),
            )
            .await;
        bridge.response(&id).await;
        streams.push(bridge.raw[start..].to_vec());
        assert!(bridge.finish().await.success());
        let doc = store.path().join("sessions").join("replay-session-1.json");
        documents.push(std::fs::read(&doc).unwrap_or_else(|e| panic!("{}: {e}", doc.display())));
    }
    assert!(streams[0].len() > 8);
    assert_eq!(streams[0], streams[1], "event streams differ");
    assert_eq!(documents[0], documents[1], "persisted documents differ");
}
