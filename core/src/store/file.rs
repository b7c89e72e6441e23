//! [`FileSessionStore`]: one JSON file per document, written atomically.
//!
//! Layout: `<root>/<kind dir>/<encoded key>.json` (see `key.rs` for the
//! encoding). A document is written to a uniquely named temp file in the same
//! directory, synced, renamed over the target and the directory synced, so a
//! crash or a concurrent writer leaves the old document or a new one, never a
//! torn file. Temp files start with `.` and do not end in `.json`, so `list`
//! never sees them.
//!
//! Keys too long for a file name get a hashed name (`key.rs`); their file
//! then holds `{"__key": <key>, "doc": <document>}` so `list` can give the
//! key back and `get` can tell a (64-bit) hash collision from a match.
//!
//! All file I/O runs on tokio's blocking pool, so a slow disk stalls no
//! runtime worker.

use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{key, DocKind, SessionStore, StoreError};

/// Stores documents as files under a root directory, created on first write.
#[derive(Debug, Clone)]
pub struct FileSessionStore {
    root: PathBuf,
}

/// What a hashed (long-key) file holds, as written.
#[derive(Serialize)]
struct Envelope<'a> {
    #[serde(rename = "__key")]
    key: &'a str,
    doc: &'a Value,
}

/// What a hashed (long-key) file holds, as read.
#[derive(Deserialize)]
struct StoredEnvelope {
    #[serde(rename = "__key")]
    key: String,
    doc: Value,
}

impl FileSessionStore {
    /// A store rooted at `root`. Nothing is touched until the first `put`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file holding the document under `key`; always directly inside
    /// `<root>/<kind dir>`, whatever the key.
    pub fn path_for(&self, kind: DocKind, key: &str) -> PathBuf {
        let (stem, _) = key::file_stem(key);
        self.kind_dir(kind).join(format!("{stem}.json"))
    }

    fn kind_dir(&self, kind: DocKind) -> PathBuf {
        self.root.join(kind.dir_name())
    }
}

#[async_trait::async_trait]
impl SessionStore for FileSessionStore {
    async fn put(&self, kind: DocKind, key: &str, doc: &Value) -> Result<(), StoreError> {
        let (_, hashed) = key::file_stem(key);
        let bytes = if hashed {
            serde_json::to_vec(&Envelope { key, doc })
        } else {
            serde_json::to_vec(doc)
        }
        .map_err(|e| StoreError::Encode(e.to_string()))?;
        let (root, dir, target) = (
            self.root.clone(),
            self.kind_dir(kind),
            self.path_for(kind, key),
        );
        blocking(&target.clone(), move || {
            write_atomic(&root, &dir, &target, &bytes)
        })
        .await
    }

    async fn get(&self, kind: DocKind, key: &str) -> Result<Option<Value>, StoreError> {
        let path = self.path_for(kind, key);
        let (key, hashed) = (key.to_string(), key::file_stem(key).1);
        blocking(&path.clone(), move || read_doc(&path, &key, hashed)).await
    }

    async fn delete(&self, kind: DocKind, key: &str) -> Result<(), StoreError> {
        let (dir, path) = (self.kind_dir(kind), self.path_for(kind, key));
        blocking(&path.clone(), move || match fs::remove_file(&path) {
            Ok(()) => sync_dir(&dir),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_error(&path, e)),
        })
        .await
    }

    async fn list(&self, kind: DocKind) -> Result<Vec<String>, StoreError> {
        let dir = self.kind_dir(kind);
        blocking(&dir.clone(), move || list_dir(&dir)).await
    }

    fn location(&self, kind: DocKind, key: &str) -> String {
        self.path_for(kind, key).display().to_string()
    }
}

/// Runs `f` on the blocking pool; a panic there becomes an `Io` error on `path`.
async fn blocking<T: Send + 'static>(
    path: &Path,
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| io_error(path, format!("store task failed: {e}")))?
}

fn io_error(path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn write_atomic(root: &Path, dir: &Path, target: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    if !dir.is_dir() {
        fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
        // Make the new directory's own entry durable too.
        sync_dir(root)?;
    }
    // A uuid, not pid + counter: processes in different containers sharing a
    // volume can have the same pid.
    let temp = dir.join(format!(".tmp-{}", uuid::Uuid::new_v4().simple()));
    let written = (|| -> io::Result<()> {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(io_error(&temp, e));
    }
    if let Err(e) = fs::rename(&temp, target) {
        let _ = fs::remove_file(&temp);
        return Err(io_error(target, e));
    }
    sync_dir(dir)
}

/// Makes renames and removals in `dir` durable.
#[cfg(unix)]
fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_error(dir, e))
}

/// Windows cannot open a directory for syncing; the rename itself is atomic
/// there, only its durability across power loss is weaker.
#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> Result<(), StoreError> {
    Ok(())
}

/// Reads one document. A file that does not parse is reported, never
/// removed or rewritten: it may be the only copy of someone's session.
fn read_doc(path: &Path, key: &str, hashed: bool) -> Result<Option<Value>, StoreError> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(path, e)),
    };
    let corrupt = |reason: String| StoreError::Corrupt {
        path: path.display().to_string(),
        reason,
    };
    if !hashed {
        return serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| corrupt(format!("not valid JSON: {e}")));
    }
    let stored: StoredEnvelope = serde_json::from_slice(&bytes)
        .map_err(|e| corrupt(format!("not a long-key envelope: {e}")))?;
    if stored.key != key {
        return Err(corrupt(format!(
            "holds key {:?}, not {key:?} (file name hash collision)",
            stored.key
        )));
    }
    Ok(Some(stored.doc))
}

/// The keys of the `.json` files in `dir`. Files the store did not write
/// (temp files, stray or renamed files) are skipped, so `list` only returns
/// keys `get` can find.
fn list_dir(dir: &Path) -> Result<Vec<String>, StoreError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_error(dir, e)),
    };
    let mut keys = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_error(dir, e))?;
        let name = entry.file_name();
        let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".json")) else {
            continue;
        };
        let key = if key::is_hashed(stem) {
            let path = entry.path();
            read_doc_key(&path).filter(|k| key::file_stem(k).0 == stem)
        } else {
            key::decode(stem)
        };
        match key {
            Some(key) => keys.push(key),
            None => {
                tracing::warn!(path = %entry.path().display(), "store: skipping unreadable or foreign file")
            }
        }
    }
    keys.sort();
    Ok(keys)
}

/// The key stored inside a hashed file, if it is readable.
fn read_doc_key(path: &Path) -> Option<String> {
    let bytes = fs::read(path).ok()?;
    serde_json::from_slice::<StoredEnvelope>(&bytes)
        .ok()
        .map(|s| s.key)
}

#[cfg(test)]
#[path = "file_tests.rs"]
mod tests;
