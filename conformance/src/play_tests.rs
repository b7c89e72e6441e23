use super::*;
use serde_json::json;

/// Plays `steps` against a shell script standing in for the bridge: it
/// appends a line to `starts.log` in its directory, says `ready`, then
/// runs `after` once its stdin ends.
fn play(steps: Value, after: &str) -> Result<(), Failure> {
    let scenario = Scenario::parse(
        "fake.json",
        &json!({"id": "fake", "description": "d", "storeDir": true, "timeoutMs": 2000,
                "steps": steps})
        .to_string(),
    )
    .unwrap();
    let script = format!(
        "echo started >> starts.log; echo '{{\"jsonrpc\":\"2.0\",\"method\":\"ready\"}}'; cat > /dev/null; {after}"
    );
    let command = BridgeCommand {
        program: PathBuf::from("/bin/sh"),
        args: vec!["-c".into(), script],
    };
    run(&scenario, &command)
}

fn starts(n: usize) -> Value {
    json!({"readFile": {"path": "starts.log", "equals": "started\n".repeat(n)}})
}

#[test]
fn restart_bridge_starts_a_fresh_process_in_the_same_workspace() {
    let ready = json!({"expect": {"method": "ready"}});
    play(
        json!([ready, starts(1),
               {"restartBridge": {"kill": false}}, ready, starts(2),
               {"restartBridge": {"kill": true}}, ready, starts(3),
               {"readFile": {"path": "starts.log", "matches": {"$regex": "^(?P<first>\\w+)\n"}}},
               {"readFile": {"path": "${first}.txt", "absent": true}},
               {"send": {"store": "${store}"}}]),
        "exit 0",
    )
    .unwrap();
}

#[test]
fn a_restart_drops_the_old_processes_messages() {
    let failure = play(
        json!([{"sleep": 300},
               {"restartBridge": {"kill": true}},
               {"expect": {"method": "ready"}},
               {"expect": {"method": "ready"}, "timeoutMs": 200}]),
        "exit 0",
    )
    .unwrap_err();
    assert_eq!(failure.check, "fake/3", "{}", failure.reason);
}

#[test]
fn a_clean_restart_needs_a_clean_exit() {
    let failure = play(json!([{"restartBridge": {"kill": false}}]), "exit 3").unwrap_err();
    assert!(failure.reason.contains("exited with"), "{}", failure.reason);
    let failure = play(
        json!([{"restartBridge": {"kill": false}, "timeoutMs": 200}]),
        "sleep 5",
    )
    .unwrap_err();
    assert!(
        failure.reason.contains("did not exit within 200 ms"),
        "{}",
        failure.reason
    );
}

#[test]
fn read_file_reports_differences_and_missing_files() {
    let failure = play(
        json!([{"expect": {"method": "ready"}}, starts(2)]),
        "exit 0",
    )
    .unwrap_err();
    assert!(
        failure.reason.contains("contents differ"),
        "{}",
        failure.reason
    );
    for (step, needle) in [
        (
            json!({"readFile": {"path": "nope", "equals": ""}}),
            "no such file",
        ),
        (
            json!({"readFile": {"path": "starts.log", "absent": true}}),
            "expected no such file",
        ),
        (
            json!({"readFile": {"path": "starts.log", "matches": {"$contains": "stopped"}}}),
            "containing",
        ),
    ] {
        let failure = play(json!([{"expect": {"method": "ready"}}, step]), "exit 0").unwrap_err();
        assert!(failure.reason.contains(needle), "{}", failure.reason);
    }
}
