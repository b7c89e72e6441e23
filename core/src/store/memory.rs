//! An in-process [`SessionStore`]: for tests, and for embedders that persist
//! elsewhere (or not at all) but want the runtime's checkpointing semantics.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use serde_json::Value;

use super::{DocKind, SessionStore, StoreError};

/// Documents in a `HashMap` behind a mutex. Values are cloned in and out, so
/// a caller mutating its copy never changes what is stored, as with files.
#[derive(Debug, Default)]
pub struct MemorySessionStore {
    docs: Mutex<HashMap<(DocKind, String), Value>>,
}

impl MemorySessionStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn docs(&self) -> MutexGuard<'_, HashMap<(DocKind, String), Value>> {
        // A panic while holding the lock cannot leave a half-written entry
        // (each operation is a single map call), so poisoning is ignored.
        self.docs.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait::async_trait]
impl SessionStore for MemorySessionStore {
    async fn put(&self, kind: DocKind, key: &str, doc: &Value) -> Result<(), StoreError> {
        self.docs().insert((kind, key.to_string()), doc.clone());
        Ok(())
    }

    async fn get(&self, kind: DocKind, key: &str) -> Result<Option<Value>, StoreError> {
        Ok(self.docs().get(&(kind, key.to_string())).cloned())
    }

    async fn delete(&self, kind: DocKind, key: &str) -> Result<(), StoreError> {
        self.docs().remove(&(kind, key.to_string()));
        Ok(())
    }

    async fn list(&self, kind: DocKind) -> Result<Vec<String>, StoreError> {
        let mut keys: Vec<String> = self
            .docs()
            .keys()
            .filter(|(k, _)| *k == kind)
            .map(|(_, key)| key.clone())
            .collect();
        keys.sort();
        Ok(keys)
    }

    fn location(&self, kind: DocKind, key: &str) -> String {
        format!("memory:{}/{}", kind.dir_name(), key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::contract_tests;

    #[tokio::test]
    async fn meets_the_store_contract() {
        contract_tests::run_all(&MemorySessionStore::new()).await;
    }

    #[tokio::test]
    async fn location_says_memory() {
        let store = MemorySessionStore::new();
        assert_eq!(
            store.location(DocKind::WorkflowCheckpoint, "w1"),
            "memory:workflows/w1"
        );
    }
}
