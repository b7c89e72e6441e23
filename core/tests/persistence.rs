//! Sessions saved through a store and restored by id; refused documents.

use a3s_code_core::store::{DocKind, FileSessionStore, SessionStore};
use a3s_code_core::{Agent, RunStatus, SessionOptions};
use serde_json::json;

fn agent(turns: &str) -> Agent {
    let acl = format!(
        "default_model = \"offline/demo\"\nproviders \"offline\" {{\n kind = \"scripted\"\n models \"demo\" {{\n{turns}\n }}\n}}\n"
    );
    Agent::from_config(
        a3s_code_core::config::AgentConfig::parse(&acl, std::path::Path::new(".")).unwrap(),
    )
}

const TWO_ANSWERS: &str = r#"
    turn { text = "First answer." }
    turn { text = "Second answer." }
"#;

#[tokio::test]
async fn a_session_is_restored_by_id_with_history_usage_runs_and_tags() {
    let store_dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let options = || {
        SessionOptions::new()
            .with_file_session_store(store_dir.path())
            .with_session_id("s-1")
    };
    let first = agent(TWO_ANSWERS)
        .session_builder(workspace.path())
        .options(options().with_tenant_id("tenant-a").with_principal("alice"))
        .build()
        .await
        .unwrap();
    let result = first.send("one", None).await.unwrap();
    assert_eq!(result.text, "First answer.");
    first.close().await;

    // A new agent and session, as another process would build them; the
    // host relabels the principal while moving the session.
    let second = agent(TWO_ANSWERS)
        .session_builder(workspace.path())
        .options(options().with_principal("bob"))
        .build()
        .await
        .unwrap();
    assert_eq!(second.history().len(), 2);
    assert_eq!(second.usage(), first.usage());
    let runs = second.runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].id, result.run_id);
    assert_eq!(runs[0].status, RunStatus::Completed);
    assert_eq!(second.tenant_id(), Some("tenant-a"));
    assert_eq!(
        second.principal(),
        Some("bob"),
        "options at resume take precedence"
    );
    // The conversation goes on where it stopped: the script's second turn.
    assert_eq!(
        second.send("two", None).await.unwrap().text,
        "Second answer."
    );
}

#[tokio::test]
async fn corrupt_and_future_documents_are_refused_and_left_alone() {
    let store_dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let store = FileSessionStore::new(store_dir.path());
    let path = store.path_for(DocKind::Session, "broken");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "{ not json").unwrap();
    let err = agent(TWO_ANSWERS)
        .session_builder(workspace.path())
        .options(
            SessionOptions::new()
                .with_file_session_store(store_dir.path())
                .with_session_id("broken"),
        )
        .build()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("corrupt document at"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{ not json",
        "never overwritten"
    );

    store
        .put(
            DocKind::Session,
            "future",
            &json!({"schema_version": 99, "session_id": "future"}),
        )
        .await
        .unwrap();
    let err = agent(TWO_ANSWERS)
        .session_builder(workspace.path())
        .options(
            SessionOptions::new()
                .with_file_session_store(store_dir.path())
                .with_session_id("future"),
        )
        .build()
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("has schema_version 99; this build reads up to 1"),
        "{err}"
    );
    let kept = store
        .get(DocKind::Session, "future")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(kept["schema_version"], 99);
}

#[tokio::test]
async fn api_keys_never_reach_persisted_documents() {
    std::env::set_var("A3S_PERSIST_TEST_KEY", "sk-secret-value-123");
    let acl = r#"
default_model = "offline/demo"
providers "openai" { api_key = env("A3S_PERSIST_TEST_KEY") }
providers "offline" {
  kind = "scripted"
  models "demo" { turn { text = "ok" } }
}
"#;
    let agent = Agent::from_config(
        a3s_code_core::config::AgentConfig::parse(acl, std::path::Path::new(".")).unwrap(),
    );
    let store_dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let session = agent
        .session_builder(workspace.path())
        .options(SessionOptions::new().with_file_session_store(store_dir.path()))
        .build()
        .await
        .unwrap();
    session.send("hi", None).await.unwrap();
    for entry in walk(store_dir.path()) {
        let text = std::fs::read_to_string(&entry).unwrap();
        assert!(!text.contains("sk-secret-value-123"), "{}", entry.display());
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
