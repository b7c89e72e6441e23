//! Tests of [`FileSessionStore`]: layout, atomicity, corruption, errors.

use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::store::contract_tests::{self, awkward_keys};
use crate::store::load_doc;

fn store_in(dir: &tempfile::TempDir) -> FileSessionStore {
    FileSessionStore::new(dir.path().join("store"))
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[tokio::test]
async fn meets_the_store_contract() {
    let dir = tempfile::tempdir().unwrap();
    contract_tests::run_all(&store_in(&dir)).await;
}

#[tokio::test]
async fn documents_live_at_root_kind_key_json() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    let doc = json!({"schema_version": 1, "x": 1});
    store.put(DocKind::Session, "s1", &doc).await.unwrap();
    store
        .put(DocKind::LoopCheckpoint, "s1", &doc)
        .await
        .unwrap();
    store
        .put(DocKind::WorkflowCheckpoint, "W.1", &doc)
        .await
        .unwrap();

    let root = dir.path().join("store");
    let session = root.join("sessions/s1.json");
    assert_eq!(store.path_for(DocKind::Session, "s1"), session);
    let on_disk: Value = serde_json::from_slice(&fs::read(&session).unwrap()).unwrap();
    assert_eq!(on_disk, doc);
    assert!(root.join("checkpoints/s1.json").is_file());
    assert!(root.join("workflows/%57%2E1.json").is_file());
}

#[tokio::test]
async fn directories_are_created_on_first_write_only() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileSessionStore::new(dir.path().join("a/b/c"));
    assert_eq!(store.get(DocKind::Session, "x").await.unwrap(), None);
    assert!(store.list(DocKind::Session).await.unwrap().is_empty());
    store.delete(DocKind::Session, "x").await.unwrap();
    assert!(!dir.path().join("a").exists(), "reads must not create dirs");

    let doc = json!({"schema_version": 1});
    store.put(DocKind::Session, "x", &doc).await.unwrap();
    assert!(dir.path().join("a/b/c/sessions/x.json").is_file());
}

#[tokio::test]
async fn no_key_escapes_its_kind_directory() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    let kind_dir = dir.path().join("store").join("workflows");
    let doc = json!({"schema_version": 1});
    for key in awkward_keys() {
        let path = store.path_for(DocKind::WorkflowCheckpoint, &key);
        assert_eq!(path.parent(), Some(kind_dir.as_path()), "{key:?}");
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(!name.starts_with('.') && name.len() < 200, "{name}");
        store
            .put(DocKind::WorkflowCheckpoint, &key, &doc)
            .await
            .unwrap();
    }
    // Nothing outside `<root>/workflows`, and one file per key.
    let files = files_under(dir.path());
    assert!(
        files.iter().all(|f| f.parent() == Some(kind_dir.as_path())),
        "{files:?}"
    );
    assert_eq!(files.len(), awkward_keys().len());
}

#[tokio::test]
async fn long_keys_are_kept_inside_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    let key = "k/".repeat(500);
    let doc = json!({"schema_version": 1, "n": 1});
    store.put(DocKind::Session, &key, &doc).await.unwrap();
    let raw: Value =
        serde_json::from_slice(&fs::read(store.path_for(DocKind::Session, &key)).unwrap()).unwrap();
    assert_eq!(raw, json!({"__key": key, "doc": doc}));
    assert_eq!(
        store.list(DocKind::Session).await.unwrap(),
        std::slice::from_ref(&key)
    );
    assert_eq!(store.get(DocKind::Session, &key).await.unwrap(), Some(doc));
}

#[tokio::test]
async fn a_hash_collision_is_reported_not_served() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    let key = "a".repeat(300);
    let path = store.path_for(DocKind::Session, &key);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let other = json!({"__key": "someone else", "doc": {"schema_version": 1}});
    fs::write(&path, other.to_string()).unwrap();

    let err = store.get(DocKind::Session, &key).await.unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert!(err.to_string().contains("hash collision"), "{err}");
    // `list` only returns keys `get` can find.
    assert!(store.list(DocKind::Session).await.unwrap().is_empty());
}

#[tokio::test]
async fn corrupt_file_is_reported_with_its_path_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    let path = store.path_for(DocKind::Session, "bad");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let garbage = b"{\"schema_version\": 1, \"messages\": [trunc";
    fs::write(&path, garbage).unwrap();

    let err = store.get(DocKind::Session, "bad").await.unwrap_err();
    let text = err.to_string();
    let prefix = format!("corrupt document at {}: not valid JSON: ", path.display());
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert!(text.starts_with(&prefix), "{text}");
    assert_eq!(fs::read(&path).unwrap(), garbage, "file must be untouched");
    // Still listed, so an operator can find it.
    assert_eq!(store.list(DocKind::Session).await.unwrap(), ["bad"]);

    // A long-key file that is not an envelope is corrupt too.
    let long = "z".repeat(300);
    let long_path = store.path_for(DocKind::Session, &long);
    fs::write(&long_path, b"not json").unwrap();
    let err = store.get(DocKind::Session, &long).await.unwrap_err();
    assert!(err.to_string().contains("not a long-key envelope"), "{err}");
    assert_eq!(fs::read(&long_path).unwrap(), b"not json");
}

#[tokio::test]
async fn future_schema_version_names_the_file() {
    #[derive(Debug, serde::Deserialize)]
    struct Doc {
        #[allow(dead_code)]
        schema_version: u32,
    }
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    let doc = json!({"schema_version": 9});
    store
        .put(DocKind::LoopCheckpoint, "c1", &doc)
        .await
        .unwrap();
    let err = load_doc::<Doc>(&store, DocKind::LoopCheckpoint, "c1", 2)
        .await
        .unwrap_err();
    let path = store.path_for(DocKind::LoopCheckpoint, "c1");
    assert_eq!(
        err.to_string(),
        format!(
            "document at {} has schema_version 9; this build reads up to 2",
            path.display()
        )
    );
}

#[tokio::test]
async fn temp_and_foreign_files_are_not_listed() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    let doc = json!({"schema_version": 1});
    store.put(DocKind::Session, "real", &doc).await.unwrap();
    let sessions = dir.path().join("store/sessions");
    for stray in [
        ".tmp-leftover",
        ".tmp-x.json",
        "notes.txt",
        "Upper.json",
        "%zz.json",
    ] {
        fs::write(sessions.join(stray), b"{}").unwrap();
    }
    assert_eq!(store.list(DocKind::Session).await.unwrap(), ["real"]);
}

#[tokio::test]
async fn io_errors_name_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("not-a-dir");
    fs::write(&root, b"a file where the root should be").unwrap();
    let store = FileSessionStore::new(&root);
    let err = store
        .put(DocKind::Session, "s", &json!({"schema_version": 1}))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Io { .. }), "{err:?}");
    let prefix = format!("store I/O error at {}: ", root.join("sessions").display());
    assert!(err.to_string().starts_with(&prefix), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_never_tear_a_document() {
    const WRITERS: usize = 50;
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(store_in(&dir));
    // Large documents, each a different size, so a torn write would show as
    // invalid JSON or as a mix of two documents.
    let docs: Arc<Vec<Value>> = Arc::new(
        (0..WRITERS)
            .map(|i| {
                let items: Vec<String> = (0..2_000).map(|j| format!("w{i}-item{j}")).collect();
                json!({"schema_version": 1, "writer": i, "items": items, "pad": "p".repeat(i * 997)})
            })
            .collect(),
    );

    let mut tasks = Vec::new();
    for i in 0..WRITERS {
        let (store, docs) = (store.clone(), docs.clone());
        tasks.push(tokio::spawn(async move {
            store.put(DocKind::Session, "hot", &docs[i]).await.unwrap();
        }));
    }
    // Readers racing the writers only ever see nothing or a whole document.
    for _ in 0..4 {
        let (store, docs) = (store.clone(), docs.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..25 {
                if let Some(doc) = store.get(DocKind::Session, "hot").await.unwrap() {
                    assert!(docs.contains(&doc), "read a document no writer wrote");
                }
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }

    let path = store.path_for(DocKind::Session, "hot");
    let raw: Value = serde_json::from_slice(&fs::read(&path).unwrap()).expect("valid JSON");
    assert!(docs.contains(&raw));
    // No temp file is left behind.
    assert_eq!(files_under(dir.path()), [path]);
    assert_eq!(store.list(DocKind::Session).await.unwrap(), ["hot"]);
}
