//! Fails when the checked-in `protocol/schema/` differs from the Rust types.

use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn checked_in_schema_matches_the_rust_types() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema");
    let expected = a3s_code_protocol::schema::render();
    let mut problems = Vec::new();
    for (name, text) in &expected {
        match std::fs::read_to_string(dir.join(name)) {
            Ok(actual) if &actual == text => {}
            Ok(_) => problems.push(format!("{name} differs")),
            Err(_) => problems.push(format!("{name} is missing")),
        }
    }
    let on_disk: BTreeSet<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.ends_with(".json"))
                .collect()
        })
        .unwrap_or_default();
    for stale in on_disk.iter().filter(|n| !expected.contains_key(*n)) {
        problems.push(format!("{stale} is stale"));
    }
    assert!(
        problems.is_empty(),
        "protocol/schema drifted from the Rust types:\n  {}\nrefresh it with:\n  {}",
        problems.join("\n  "),
        a3s_code_protocol::schema::REFRESH_COMMAND
    );
}

#[test]
fn every_method_has_a_schema_file_and_an_openrpc_entry() {
    let files = a3s_code_protocol::schema::render();
    let openrpc: serde_json::Value = serde_json::from_str(&files["openrpc.json"]).unwrap();
    let names: BTreeSet<&str> = openrpc["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    for method in [
        "initialize",
        "session/stream",
        "host/budget/checkBeforeLlm",
        "$/cancelRequest",
    ] {
        assert!(names.contains(method), "{method} missing from openrpc.json");
    }
    assert!(files.contains_key("session_send.params.json"));
    assert!(files.contains_key("host_budget_checkBeforeTool.result.json"));
    assert!(!files["openrpc.json"].contains("#/definitions/"));
}
