//! Behaviour every [`SessionStore`] must have, run against each
//! implementation so they cannot drift apart.

use serde_json::{json, Value};

use super::{DocKind, SessionStore};

/// Keys that break naive file naming; every store must keep them apart and
/// give them back from `list`.
pub(crate) fn awkward_keys() -> Vec<String> {
    vec![
        String::new(),
        ".".into(),
        "..".into(),
        "/".into(),
        "\\".into(),
        "../../escape".into(),
        "a/b/c".into(),
        "nul\0byte".into(),
        "Case".into(),
        "case".into(),
        "ünïcödé ✓ 日本".into(),
        "%2E".into(),
        "~".into(),
        "x".repeat(1000),
        format!("{}y", "x".repeat(999)),
        "/".repeat(1000),
        "é".repeat(600),
    ]
}

pub(crate) async fn run_all(store: &dyn SessionStore) {
    round_trip(store).await;
    delete_missing_is_ok(store).await;
    kinds_are_separate(store).await;
    awkward_keys_round_trip(store).await;
    concurrent_puts_leave_one_whole_document(store).await;
}

async fn round_trip(store: &dyn SessionStore) {
    let kind = DocKind::Session;
    assert_eq!(store.get(kind, "s1").await.unwrap(), None);
    assert!(store.list(kind).await.unwrap().is_empty());

    let v1 = json!({"schema_version": 1, "messages": ["hi"]});
    let v2 = json!({"schema_version": 1, "messages": ["hi", "there"]});
    store.put(kind, "s2", &v1).await.unwrap();
    store.put(kind, "s1", &v1).await.unwrap();
    store.put(kind, "s1", &v2).await.unwrap();
    assert_eq!(store.get(kind, "s1").await.unwrap(), Some(v2));
    assert_eq!(store.get(kind, "s2").await.unwrap(), Some(v1));
    assert_eq!(store.list(kind).await.unwrap(), ["s1", "s2"]);

    store.delete(kind, "s1").await.unwrap();
    assert_eq!(store.get(kind, "s1").await.unwrap(), None);
    assert_eq!(store.list(kind).await.unwrap(), ["s2"]);
    store.delete(kind, "s2").await.unwrap();
    assert!(store.list(kind).await.unwrap().is_empty());
}

async fn delete_missing_is_ok(store: &dyn SessionStore) {
    store
        .delete(DocKind::WorkflowCheckpoint, "never-was")
        .await
        .unwrap();
    store
        .delete(DocKind::WorkflowCheckpoint, "never-was")
        .await
        .unwrap();
}

async fn kinds_are_separate(store: &dyn SessionStore) {
    let doc = json!({"schema_version": 1});
    store
        .put(DocKind::LoopCheckpoint, "same", &doc)
        .await
        .unwrap();
    assert_eq!(store.get(DocKind::Session, "same").await.unwrap(), None);
    assert!(store.list(DocKind::Session).await.unwrap().is_empty());
    assert_eq!(store.list(DocKind::LoopCheckpoint).await.unwrap(), ["same"]);
    store.delete(DocKind::LoopCheckpoint, "same").await.unwrap();
}

async fn awkward_keys_round_trip(store: &dyn SessionStore) {
    let kind = DocKind::WorkflowCheckpoint;
    let keys = awkward_keys();
    for (i, key) in keys.iter().enumerate() {
        store
            .put(kind, key, &json!({"schema_version": 1, "i": i}))
            .await
            .unwrap();
    }
    for (i, key) in keys.iter().enumerate() {
        let doc = store.get(kind, key).await.unwrap();
        assert_eq!(doc, Some(json!({"schema_version": 1, "i": i})), "{key:?}");
    }
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(store.list(kind).await.unwrap(), sorted);
    for key in &keys {
        store.delete(kind, key).await.unwrap();
    }
    assert!(store.list(kind).await.unwrap().is_empty());
}

async fn concurrent_puts_leave_one_whole_document(store: &dyn SessionStore) {
    let kind = DocKind::LoopCheckpoint;
    let docs: Vec<Value> = (0..20)
        .map(|i| json!({"schema_version": 1, "writer": i, "pad": "z".repeat(10_000 + i)}))
        .collect();
    futures::future::join_all(docs.iter().map(|d| store.put(kind, "hot", d)))
        .await
        .into_iter()
        .for_each(|r| r.unwrap());
    let got = store.get(kind, "hot").await.unwrap().unwrap();
    assert!(docs.contains(&got));
    assert_eq!(store.list(kind).await.unwrap(), ["hot"]);
    store.delete(kind, "hot").await.unwrap();
}
