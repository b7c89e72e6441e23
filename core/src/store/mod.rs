//! Persistence: a small document store for sessions and checkpoints.
//!
//! The runtime persists a handful of JSON documents (a session's
//! conversation, the tool loop's checkpoint, later workflow checkpoints) and
//! never queries inside them, so the store is a key-value map of JSON values
//! per [`DocKind`]. Two implementations ship: [`FileSessionStore`] (one
//! atomically written file per document) and [`MemorySessionStore`] (tests
//! and embedders that persist elsewhere). Hosts may implement
//! [`SessionStore`] over their own database.
//!
//! Documents outlive the build that wrote them, so [`save_doc`] and
//! [`load_doc`] insist on a `schema_version` integer in every document: an
//! older build refuses a newer document ([`StoreError::FutureVersion`])
//! instead of misreading it, and a document without one is
//! [`StoreError::Corrupt`].

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

mod file;
mod key;
mod memory;

pub use file::FileSessionStore;
pub use memory::MemorySessionStore;

/// Namespaces of stored documents. Each kind is its own key space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DocKind {
    /// A session: its options and conversation.
    Session,
    /// The tool-calling loop's state between rounds, to resume a run.
    LoopCheckpoint,
    /// A workflow's state between steps.
    WorkflowCheckpoint,
}

impl DocKind {
    /// Every kind, for stores that need to walk them all.
    pub const ALL: [DocKind; 3] = [
        DocKind::Session,
        DocKind::LoopCheckpoint,
        DocKind::WorkflowCheckpoint,
    ];

    /// The directory (or prefix) holding this kind's documents. Part of the
    /// on-disk format: do not rename.
    pub fn dir_name(self) -> &'static str {
        match self {
            DocKind::Session => "sessions",
            DocKind::LoopCheckpoint => "checkpoints",
            DocKind::WorkflowCheckpoint => "workflows",
        }
    }
}

/// Why a store operation failed. Every variant about a stored document names
/// where it lives, so an operator can go and look at it.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Reading or writing the backing storage failed.
    #[error("store I/O error at {path}: {message}")]
    Io { path: String, message: String },
    /// A stored document cannot be read back. It is left in place, untouched,
    /// for inspection.
    #[error("corrupt document at {path}: {reason}")]
    Corrupt { path: String, reason: String },
    /// A stored document was written by a newer build.
    #[error("document at {path} has schema_version {found}; this build reads up to {supported}")]
    FutureVersion {
        path: String,
        found: u32,
        supported: u32,
    },
    /// A document could not be turned into storable JSON.
    #[error("cannot store document: {0}")]
    Encode(String),
}

/// A map of JSON documents per [`DocKind`], keyed by arbitrary strings.
///
/// Implementations must accept any key (empty, `..`, `/`, NUL, unicode, very
/// long) without it escaping its namespace, and must make `put` atomic: a
/// reader sees the old document or the new one, never a mix.
#[async_trait::async_trait]
pub trait SessionStore: Send + Sync + std::fmt::Debug {
    /// Stores `doc` under `key`, replacing any previous document.
    async fn put(&self, kind: DocKind, key: &str, doc: &Value) -> Result<(), StoreError>;

    /// The document under `key`, or `None` if there is none.
    async fn get(&self, kind: DocKind, key: &str) -> Result<Option<Value>, StoreError>;

    /// Removes the document under `key`. Removing a missing document is `Ok`,
    /// so cleanup can be retried.
    async fn delete(&self, kind: DocKind, key: &str) -> Result<(), StoreError>;

    /// The keys of all documents of `kind`, as given to `put`, sorted.
    async fn list(&self, kind: DocKind) -> Result<Vec<String>, StoreError>;

    /// Where the document under `key` lives, for error messages.
    fn location(&self, kind: DocKind, key: &str) -> String {
        format!("{}/{}", kind.dir_name(), key)
    }
}

/// Serializes `doc` and stores it. The JSON must be an object with an integer
/// `schema_version`, so that [`load_doc`] can later tell which build wrote it.
pub async fn save_doc<T: Serialize + ?Sized>(
    store: &dyn SessionStore,
    kind: DocKind,
    key: &str,
    doc: &T,
) -> Result<(), StoreError> {
    let value = serde_json::to_value(doc).map_err(|e| StoreError::Encode(e.to_string()))?;
    if !value.get("schema_version").is_some_and(Value::is_u64) {
        return Err(StoreError::Encode(format!(
            "document for {} is not a JSON object with an integer schema_version",
            store.location(kind, key)
        )));
    }
    store.put(kind, key, &value).await
}

/// Loads and deserializes the document under `key`, refusing documents with a
/// `schema_version` above `supported_version` rather than misreading them.
pub async fn load_doc<T: DeserializeOwned>(
    store: &dyn SessionStore,
    kind: DocKind,
    key: &str,
    supported_version: u32,
) -> Result<Option<T>, StoreError> {
    let Some(value) = store.get(kind, key).await? else {
        return Ok(None);
    };
    let corrupt = |reason: String| StoreError::Corrupt {
        path: store.location(kind, key),
        reason,
    };
    let Some(version) = value.get("schema_version").and_then(Value::as_u64) else {
        return Err(corrupt("missing integer schema_version".to_string()));
    };
    if version > u64::from(supported_version) {
        return Err(StoreError::FutureVersion {
            path: store.location(kind, key),
            found: u32::try_from(version).unwrap_or(u32::MAX),
            supported: supported_version,
        });
    }
    serde_json::from_value(value).map(Some).map_err(|e| {
        corrupt(format!(
            "schema_version {version} document does not match: {e}"
        ))
    })
}

#[cfg(test)]
mod contract_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Doc {
        schema_version: u32,
        name: String,
    }

    fn doc(name: &str) -> Doc {
        Doc {
            schema_version: 1,
            name: name.to_string(),
        }
    }

    #[tokio::test]
    async fn typed_round_trip() {
        let store = MemorySessionStore::new();
        save_doc(&store, DocKind::Session, "s1", &doc("a"))
            .await
            .unwrap();
        let back: Option<Doc> = load_doc(&store, DocKind::Session, "s1", 1).await.unwrap();
        assert_eq!(back, Some(doc("a")));
        let missing: Option<Doc> = load_doc(&store, DocKind::Session, "nope", 1).await.unwrap();
        assert_eq!(missing, None);
    }

    #[tokio::test]
    async fn save_requires_schema_version() {
        let store = MemorySessionStore::new();
        for bad in [
            json!({"name": "x"}),
            json!({"schema_version": "1"}),
            json!([1]),
        ] {
            let err = save_doc(&store, DocKind::Session, "s1", &bad)
                .await
                .unwrap_err();
            assert!(matches!(err, StoreError::Encode(_)), "{err:?}");
            assert_eq!(
                err.to_string(),
                "cannot store document: document for memory:sessions/s1 is not a JSON object \
                 with an integer schema_version"
            );
        }
        assert!(store.list(DocKind::Session).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn future_version_is_refused_with_a_clear_message() {
        let store = MemorySessionStore::new();
        let newer = json!({"schema_version": 3, "name": "x", "new_field": true});
        store.put(DocKind::Session, "s1", &newer).await.unwrap();
        let err = load_doc::<Doc>(&store, DocKind::Session, "s1", 2)
            .await
            .unwrap_err();
        assert!(matches!(
            err,
            StoreError::FutureVersion {
                found: 3,
                supported: 2,
                ..
            }
        ));
        assert_eq!(
            err.to_string(),
            "document at memory:sessions/s1 has schema_version 3; this build reads up to 2"
        );
        // Equal or older versions load.
        let ok: Option<Doc> = load_doc(&store, DocKind::Session, "s1", 3).await.unwrap();
        assert_eq!(ok.unwrap().name, "x");
    }

    #[tokio::test]
    async fn huge_version_is_future_not_a_panic() {
        let store = MemorySessionStore::new();
        let doc = json!({"schema_version": u64::MAX, "name": "x"});
        store.put(DocKind::Session, "s", &doc).await.unwrap();
        let err = load_doc::<Doc>(&store, DocKind::Session, "s", 1)
            .await
            .unwrap_err();
        assert!(matches!(
            err,
            StoreError::FutureVersion {
                found: u32::MAX,
                ..
            }
        ));
    }

    #[tokio::test]
    async fn missing_version_or_wrong_shape_is_corrupt() {
        let store = MemorySessionStore::new();
        let kind = DocKind::LoopCheckpoint;
        store.put(kind, "a", &json!({"name": "x"})).await.unwrap();
        let err = load_doc::<Doc>(&store, kind, "a", 1).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "corrupt document at memory:checkpoints/a: missing integer schema_version"
        );

        store
            .put(kind, "b", &json!({"schema_version": 1, "name": 7}))
            .await
            .unwrap();
        let err = load_doc::<Doc>(&store, kind, "b", 1).await.unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
        let text = err.to_string();
        assert!(
            text.starts_with("corrupt document at memory:checkpoints/b: schema_version 1 document"),
            "{text}"
        );
        assert!(text.contains("invalid type"), "{text}");
    }

    #[test]
    fn kinds_have_distinct_dirs() {
        let dirs: std::collections::HashSet<_> =
            DocKind::ALL.iter().map(|k| k.dir_name()).collect();
        assert_eq!(dirs.len(), DocKind::ALL.len());
        assert_eq!(DocKind::Session.dir_name(), "sessions");
        assert_eq!(DocKind::LoopCheckpoint.dir_name(), "checkpoints");
        assert_eq!(DocKind::WorkflowCheckpoint.dir_name(), "workflows");
    }

    #[test]
    fn io_error_names_the_path() {
        let err = StoreError::Io {
            path: "/data/sessions/x.json".into(),
            message: "permission denied".into(),
        };
        assert_eq!(
            err.to_string(),
            "store I/O error at /data/sessions/x.json: permission denied"
        );
    }
}
