//! Loop checkpoints, resume_run, passivation and retention (seed 000).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use a3s_code_core::budget::{BudgetDecision, BudgetGuard};
use a3s_code_core::host_env::{FixedClock, HostEnv, SequentialIdGenerator};
use a3s_code_core::llm::{Message, TokenUsage, ToolCall};
use a3s_code_core::retention::SessionRetentionLimits;
use a3s_code_core::snapshot::{LoopCheckpoint, PendingRound};
use a3s_code_core::store::{save_doc, DocKind, FileSessionStore};
use a3s_code_core::{Agent, AgentEvent, CodeError, SendOptions, Session, SessionOptions};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn agent(turns: &str) -> Agent {
    let acl = format!(
        "default_model = \"offline/demo\"\nproviders \"offline\" {{\n kind = \"scripted\"\n models \"demo\" {{\n{turns}\n }}\n}}\n"
    );
    Agent::from_config(
        a3s_code_core::config::AgentConfig::parse(&acl, std::path::Path::new(".")).unwrap(),
    )
}

fn bash_turn(command: &str) -> String {
    format!("turn {{\n tool_call {{\n name = \"bash\"\n arguments = {{ command = \"{command}\" }}\n }}\n}}\n")
}

fn three_rounds() -> String {
    let mut turns = String::new();
    for n in 1..=3 {
        turns.push_str(&bash_turn(&format!("echo r{n} >> tools.log")));
    }
    turns.push_str("turn { text = \"All three rounds done.\" }\n");
    turns
}

struct Setup {
    store: tempfile::TempDir,
    workspace: tempfile::TempDir,
}

impl Setup {
    fn new() -> Self {
        Self {
            store: tempfile::tempdir().unwrap(),
            workspace: tempfile::tempdir().unwrap(),
        }
    }

    async fn session(&self, turns: &str, id: &str) -> Session {
        agent(turns)
            .session_builder(self.workspace.path())
            .options(
                SessionOptions::new()
                    .with_file_session_store(self.store.path())
                    .with_session_id(id),
            )
            .build()
            .await
            .unwrap()
    }

    fn log(&self) -> Vec<String> {
        std::fs::read_to_string(self.workspace.path().join("tools.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// Cancels the run when the model is about to be asked for round `n`.
#[derive(Debug)]
struct InterruptAt {
    n: usize,
    calls: AtomicUsize,
    cancel: CancellationToken,
}

#[async_trait::async_trait]
impl BudgetGuard for InterruptAt {
    async fn check_before_llm(&self, _: &str, _: usize) -> BudgetDecision {
        if self.calls.fetch_add(1, Ordering::SeqCst) + 1 == self.n {
            self.cancel.cancel();
        }
        BudgetDecision::Allow
    }
}

#[tokio::test]
async fn an_interrupted_run_resumes_from_its_checkpoint_without_repeating_tools() {
    let setup = Setup::new();
    let first = setup.session(&three_rounds(), "s").await;
    let cancel = CancellationToken::new();
    first.set_budget_guard(Some(Arc::new(InterruptAt {
        n: 3,
        calls: AtomicUsize::new(0),
        cancel: cancel.clone(),
    })));
    let err = first
        .send(
            "go",
            Some(SendOptions {
                cancel: Some(cancel),
            }),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, CodeError::Cancelled));
    assert_eq!(setup.log(), ["r1", "r2"]);
    let interrupted = first.runs()[0].id.clone();

    let second = setup.session(&three_rounds(), "s").await;
    let result = second.resume_run(&interrupted).await.unwrap();
    assert_eq!(result.text, "All three rounds done.");
    assert_eq!(result.tool_calls_count, 3);
    assert_eq!(
        setup.log(),
        ["r1", "r2", "r3"],
        "every tool ran exactly once"
    );
    assert_ne!(result.run_id, interrupted, "resumed work is a new run");
    let runs = second.runs();
    let old = runs.iter().find(|r| r.id == interrupted).unwrap();
    assert_eq!(
        old.status,
        a3s_code_core::RunStatus::Cancelled,
        "the old record is unchanged"
    );
    // The resumed run ended in-process, so its own checkpoint is gone.
    let store = FileSessionStore::new(setup.store.path());
    assert!(!store
        .path_for(DocKind::LoopCheckpoint, &result.run_id)
        .exists());
    // The resumed run superseded the old checkpoint: no second resume.
    let again = second.resume_run(&interrupted).await.unwrap_err();
    assert_eq!(
        again.to_string(),
        format!("no loop checkpoint found for run '{interrupted}'")
    );
    assert_eq!(setup.log(), ["r1", "r2", "r3"]);
}

#[tokio::test]
async fn a_restored_session_never_reuses_the_run_ids_of_its_earlier_runs() {
    let setup = Setup::new();
    let turns = "turn { text = \"one\" }\nturn { text = \"two\" }\n";
    let options = || {
        let env = Arc::new(HostEnv::new(
            Arc::new(SequentialIdGenerator::new("replay")),
            Arc::new(FixedClock::new(1_700_000_000_000)),
        ));
        SessionOptions::new()
            .with_file_session_store(setup.store.path())
            .with_session_id("s")
            .with_host_env(env)
    };
    let first = agent(turns)
        .session_builder(setup.workspace.path())
        .options(options())
        .build()
        .await
        .unwrap();
    let a = first.send("1", None).await.unwrap().run_id;
    let second = agent(turns)
        .session_builder(setup.workspace.path())
        .options(options())
        .build()
        .await
        .unwrap();
    let b = second.send("2", None).await.unwrap().run_id;
    assert_ne!(a, b);
    assert_eq!(second.runs().len(), 2);
}

#[tokio::test]
async fn a_call_without_a_recorded_result_runs_once_on_resume() {
    let setup = Setup::new();
    let turns = "turn { text = \"unused\" }\nturn { text = \"Finished.\" }\n";
    let session = setup.session(turns, "s").await;
    let call = |id: &str, word: &str| ToolCall {
        id: id.into(),
        name: "bash".into(),
        arguments: json!({"command": format!("echo {word} >> tools.log")}),
    };
    let checkpoint = LoopCheckpoint {
        schema_version: 1,
        session_id: "s".into(),
        run_id: "run-x".into(),
        prompt: "go".into(),
        turn: 0,
        history: vec![Message::User {
            content: "go".into(),
        }],
        usage: TokenUsage::default(),
        tool_calls_count: 1,
        pending: Some(PendingRound {
            assistant: Message::Assistant {
                content: String::new(),
                tool_calls: vec![call("c1", "done-before"), call("c2", "missing")],
            },
            results: vec![Message::Tool {
                tool_call_id: "c1".into(),
                name: "bash".into(),
                content: "exit code: 0".into(),
                is_error: false,
            }],
        }),
        created_ms: 0,
    };
    let store = FileSessionStore::new(setup.store.path());
    save_doc(&store, DocKind::LoopCheckpoint, "run-x", &checkpoint)
        .await
        .unwrap();
    let result = session.resume_run("run-x").await.unwrap();
    assert_eq!(result.text, "Finished.");
    assert_eq!(
        setup.log(),
        ["missing"],
        "only the call without a result ran"
    );
    assert_eq!(result.tool_calls_count, 2);
}

#[tokio::test]
async fn resume_errors_use_the_seed_texts_and_refuse_foreign_or_future_checkpoints() {
    let setup = Setup::new();
    let no_store = agent("turn { text = \"x\" }")
        .session_builder(setup.workspace.path())
        .build()
        .await
        .unwrap();
    let err = no_store.resume_run("r1").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "resume_run requires a session_store on this session"
    );

    let session = setup.session("turn { text = \"x\" }", "mine").await;
    let err = session.resume_run("never-ran").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "no loop checkpoint found for run 'never-ran'"
    );

    let store = FileSessionStore::new(setup.store.path());
    let foreign = json!({"schema_version": 1, "session_id": "theirs", "run_id": "r-f", "prompt": "p",
        "turn": 1, "history": [], "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        "tool_calls_count": 0, "created_ms": 0});
    save_doc(&store, DocKind::LoopCheckpoint, "r-f", &foreign)
        .await
        .unwrap();
    let err = session.resume_run("r-f").await.unwrap_err();
    assert!(
        err.to_string().contains("belongs to session 'theirs'"),
        "{err}"
    );

    let mut future = foreign.clone();
    future["schema_version"] = json!(2);
    future["session_id"] = json!("mine");
    save_doc(&store, DocKind::LoopCheckpoint, "r-future", &future)
        .await
        .unwrap();
    let err = session.resume_run("r-future").await.unwrap_err();
    assert!(err.to_string().contains("has schema_version 2"), "{err}");
}

#[tokio::test]
async fn passivation_stops_at_the_safe_point_and_the_run_resumes_elsewhere() {
    let setup = Setup::new();
    let turns = format!(
        "{}{}turn {{ text = \"Moved and finished.\" }}\n",
        bash_turn("sleep 0.3; echo p1 >> tools.log"),
        bash_turn("echo p2 >> tools.log")
    );
    let session = setup.session(&turns, "s").await;
    let mut stream = session.stream("go").unwrap();
    // Wait until the first tool is running, then ask to passivate.
    loop {
        let record = stream.next().await.expect("events");
        if matches!(record.event, AgentEvent::ToolStart { .. }) {
            break;
        }
    }
    let passivator = session.clone();
    let request = tokio::spawn(async move { passivator.passivate("node drain", None).await });
    let mut saw_passivation = false;
    while let Some(record) = stream.next().await {
        if let AgentEvent::PassivationRequested { reason, .. } = &record.event {
            assert_eq!(reason, "node drain");
            saw_passivation = true;
        }
    }
    assert!(saw_passivation);
    let err = stream.result().await.unwrap_err();
    let CodeError::Passivated { run_id, .. } = err else {
        panic!("{err}")
    };
    assert_eq!(request.await.unwrap().unwrap(), Some(run_id.clone()));
    assert_eq!(setup.log(), ["p1"], "the round settled before stopping");

    let elsewhere = setup.session(&turns, "s").await;
    let result = elsewhere.resume_run(&run_id).await.unwrap();
    assert_eq!(result.text, "Moved and finished.");
    assert_eq!(setup.log(), ["p1", "p2"]);
}

#[tokio::test]
async fn past_the_deadline_the_run_is_cancelled_and_the_last_checkpoint_stands() {
    let setup = Setup::new();
    let turns = format!(
        "{}turn {{ text = \"Done late.\" }}\n",
        bash_turn("sleep 30; echo slow >> tools.log")
    );
    let session = setup.session(&turns, "s").await;
    let runner = session.clone();
    let run = tokio::spawn(async move { runner.send("go", None).await });
    while !tool_running(&session) {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let run_id = session
        .passivate("evict", Some(now + 200))
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(
        run.await.unwrap().unwrap_err(),
        CodeError::Cancelled
    ));
    assert!(setup.log().is_empty(), "the slow tool was killed");

    // The pending-round checkpoint stands: on resume the call runs once.
    let store = FileSessionStore::new(setup.store.path());
    assert!(store.path_for(DocKind::LoopCheckpoint, &run_id).exists());
}

fn tool_running(session: &Session) -> bool {
    let runs = session.runs();
    let Some(run) = runs.first() else {
        return false;
    };
    session
        .run_events(&run.id)
        .iter()
        .any(|e| matches!(e.event, AgentEvent::ToolStart { .. }))
}

#[tokio::test]
async fn retention_limits_keep_memory_bounded_over_many_runs() {
    let workspace = tempfile::tempdir().unwrap();
    let turns: String = (0..40)
        .map(|n| format!("turn {{ text = \"answer {n} with several words in it\" }}\n"))
        .collect();
    let limits = SessionRetentionLimits {
        max_runs_retained: 4,
        max_events_per_run: 5,
        max_trace_events: 6,
        ..SessionRetentionLimits::default()
    };
    let session = agent(&turns)
        .session_builder(workspace.path())
        .options(SessionOptions::new().with_retention_limits(limits))
        .build()
        .await
        .unwrap();
    let mut last = String::new();
    for n in 0..40 {
        last = session.send(&format!("q{n}"), None).await.unwrap().run_id;
    }
    let runs = session.runs();
    assert_eq!(runs.len(), 4, "oldest runs evicted");
    assert_eq!(runs.last().unwrap().id, last);
    for run in &runs {
        let events = session.run_events(&run.id);
        assert_eq!(events.len(), 5, "oldest events of a run evicted");
        assert!(matches!(
            events.last().unwrap().event,
            AgentEvent::AgentEnd { .. }
        ));
    }
    assert_eq!(session.trace().len(), 6);

    let unbounded = agent(&turns)
        .session_builder(workspace.path())
        .options(SessionOptions::new().with_retention_limits(SessionRetentionLimits::unbounded()))
        .build()
        .await
        .unwrap();
    for n in 0..10 {
        unbounded.send(&format!("q{n}"), None).await.unwrap();
    }
    assert_eq!(unbounded.runs().len(), 10);
}

#[tokio::test]
async fn the_same_host_env_replays_byte_identical_events_and_documents() {
    let turns = "turn {\n tool_call {\n name = \"ls\"\n arguments = { path = \".\" }\n }\n}\nturn { text = \"Listed.\" }\n";
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("a.txt"), "a").unwrap();
    let mut outputs = Vec::new();
    for _ in 0..2 {
        let store = tempfile::tempdir().unwrap();
        let env = Arc::new(HostEnv::new(
            Arc::new(SequentialIdGenerator::new("replay")),
            Arc::new(FixedClock::new(1_700_000_000_000)),
        ));
        let session = agent(turns)
            .session_builder(workspace.path())
            .options(
                SessionOptions::new()
                    .with_host_env(env)
                    .with_file_session_store(store.path()),
            )
            .build()
            .await
            .unwrap();
        let mut stream = session.stream("list").unwrap();
        let mut events = Vec::new();
        while let Some(record) = stream.next().await {
            events.push(format!(
                "{}|{}|{}|{}",
                record.run_id,
                record.seq,
                record.timestamp_ms,
                serde_json::to_string(&record.event).unwrap()
            ));
        }
        stream.result().await.unwrap();
        let doc = std::fs::read(
            FileSessionStore::new(store.path()).path_for(DocKind::Session, session.session_id()),
        )
        .unwrap();
        outputs.push((session.session_id().to_string(), events, doc));
    }
    assert_eq!(outputs[0].0, "replay-session-1");
    assert_eq!(outputs[0], outputs[1]);
}
