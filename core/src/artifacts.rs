//! Artifact store: large tool output kept out of the model's context.
//!
//! Tool output over [`ArtifactLimits::inline_threshold_bytes`] is stored as an
//! artifact; the model sees a preview, the size, a sha256 and the artifact's
//! URI (`artifact://<session_id>/<id>`); the host reads it back by byte range.
//!
//! The store is per session and bounded by count and total bytes. After each
//! insert the oldest artifacts (insertion order) are evicted until both limits
//! hold again, but the one just inserted is never evicted: an artifact alone
//! larger than `max_total_bytes` is still stored, evicting every older one, so
//! the URI the model was just given always resolves. Eviction is soft: it is
//! never an error; reading an evicted artifact reports `NotFound`.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Largest slice one [`ArtifactStore::read`] returns, in bytes.
pub const MAX_READ_BYTES: usize = 1024 * 1024;

/// URI scheme prefix of artifacts.
pub const URI_PREFIX: &str = "artifact://";

/// Size limits of an [`ArtifactStore`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArtifactLimits {
    /// Output up to this many bytes stays inline (default 32 KiB).
    pub inline_threshold_bytes: usize,
    /// Bytes of preview shown to the model (default 2 KiB).
    pub preview_bytes: usize,
    /// Most artifacts kept (default 256).
    pub max_artifacts: usize,
    /// Most bytes kept across all artifacts (default 64 MiB).
    pub max_total_bytes: usize,
}

impl Default for ArtifactLimits {
    fn default() -> Self {
        Self {
            inline_threshold_bytes: 32 * 1024,
            preview_bytes: 2 * 1024,
            max_artifacts: 256,
            max_total_bytes: 64 * 1024 * 1024,
        }
    }
}

/// What is known about a stored artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ArtifactRef {
    pub id: String,
    /// `artifact://<session_id>/<id>`.
    pub uri: String,
    /// Size in bytes.
    pub size: usize,
    /// Lowercase hex sha256 of the content.
    pub sha256: String,
    pub tool_name: String,
    pub tool_call_id: String,
    pub created_ms: u64,
}

/// A byte range of an artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ArtifactSlice {
    pub artifact: ArtifactRef,
    /// Byte offset of `data` in the artifact.
    pub offset: usize,
    pub data: String,
    /// True when `data` reaches the end of the artifact.
    pub eof: bool,
    /// Artifact size in bytes.
    pub total: usize,
}

/// Errors of [`ArtifactStore::read`].
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    #[error("artifact '{0}' not found (it may have been evicted)")]
    NotFound(String),
    #[error("bad offset {offset} for artifact '{id}' of {size} bytes: {reason}")]
    BadOffset {
        id: String,
        offset: usize,
        size: usize,
        reason: &'static str,
    },
}

#[derive(Debug)]
struct Entry {
    meta: ArtifactRef,
    content: String,
}

#[derive(Debug, Default)]
struct Inner {
    /// Oldest first.
    entries: VecDeque<Entry>,
    total_bytes: usize,
}

/// Per-session artifact store; internally synchronized, share it via `Arc`.
#[derive(Debug)]
pub struct ArtifactStore {
    session_id: String,
    limits: ArtifactLimits,
    inner: Mutex<Inner>,
}

impl ArtifactStore {
    pub fn new(session_id: impl Into<String>, limits: ArtifactLimits) -> Self {
        Self {
            session_id: session_id.into(),
            limits,
            inner: Mutex::new(Inner::default()),
        }
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    pub fn limits(&self) -> ArtifactLimits {
        self.limits
    }

    /// The URI of artifact `id` in this store.
    pub fn uri_for(&self, id: &str) -> String {
        format!("{URI_PREFIX}{}/{id}", self.session_id)
    }

    /// Output within the inline threshold comes back unchanged (`None`);
    /// larger output is stored under `id` and the text for the model
    /// (preview plus footer) is returned. The caller supplies `id` and
    /// `now_ms` (from its `HostEnv`) so replay is deterministic. Storing an
    /// `id` that already exists replaces the older artifact.
    pub fn capture(
        &self,
        id: String,
        tool_name: &str,
        tool_call_id: &str,
        output: String,
        now_ms: u64,
    ) -> Option<(ArtifactRef, String)> {
        if output.len() <= self.limits.inline_threshold_bytes {
            return None;
        }
        let meta = ArtifactRef {
            uri: self.uri_for(&id),
            id,
            size: output.len(),
            sha256: sha256_hex(output.as_bytes()),
            tool_name: tool_name.to_string(),
            tool_call_id: tool_call_id.to_string(),
            created_ms: now_ms,
        };
        let preview = &output[..floor_char_boundary(&output, self.limits.preview_bytes)];
        let text = format!(
            "{preview}\n\n[output truncated: showing first {} of {} bytes, sha256 {}; \
             full output stored as {} — read it by range]",
            preview.len(),
            meta.size,
            meta.sha256,
            meta.uri
        );

        let mut inner = self.lock();
        if let Some(pos) = inner.entries.iter().position(|e| e.meta.id == meta.id) {
            if let Some(old) = inner.entries.remove(pos) {
                inner.total_bytes -= old.content.len();
            }
        }
        inner.total_bytes += output.len();
        inner.entries.push_back(Entry {
            meta: meta.clone(),
            content: output,
        });
        while inner.entries.len() > 1
            && (inner.entries.len() > self.limits.max_artifacts
                || inner.total_bytes > self.limits.max_total_bytes)
        {
            if let Some(old) = inner.entries.pop_front() {
                inner.total_bytes -= old.content.len();
            }
        }
        Some((meta, text))
    }

    /// Reads up to `limit` bytes (capped at [`MAX_READ_BYTES`]) from byte
    /// `offset` of the artifact named by id or by `artifact://` URI.
    ///
    /// `offset` must lie on a UTF-8 char boundary (`offset == size` gives an
    /// empty slice with `eof`). The end is moved back to a char boundary so
    /// no char is split; if that would leave an empty slice while `limit > 0`,
    /// the one char at `offset` is returned whole (at most 4 bytes) so a
    /// reader always makes progress. Continue at `offset + data.len()`.
    pub fn read(
        &self,
        id_or_uri: &str,
        offset: usize,
        limit: usize,
    ) -> Result<ArtifactSlice, ArtifactError> {
        let id = match id_or_uri.strip_prefix(URI_PREFIX) {
            Some(rest) => match rest.split_once('/') {
                Some((session, id)) if session == self.session_id => id,
                _ => return Err(ArtifactError::NotFound(id_or_uri.to_string())),
            },
            None => id_or_uri,
        };
        let inner = self.lock();
        let entry = inner
            .entries
            .iter()
            .find(|e| e.meta.id == id)
            .ok_or_else(|| ArtifactError::NotFound(id_or_uri.to_string()))?;
        let content = &entry.content;
        let size = content.len();
        let bad = |reason| ArtifactError::BadOffset {
            id: id.to_string(),
            offset,
            size,
            reason,
        };
        if offset > size {
            return Err(bad("offset is past the end"));
        }
        if !content.is_char_boundary(offset) {
            return Err(bad("offset is inside a UTF-8 character"));
        }
        let want = offset.saturating_add(limit.min(MAX_READ_BYTES)).min(size);
        let mut end = floor_char_boundary(content, want);
        if end == offset && limit > 0 && offset < size {
            end = offset + content[offset..].chars().next().map_or(0, char::len_utf8);
        }
        Ok(ArtifactSlice {
            artifact: entry.meta.clone(),
            offset,
            data: content[offset..end].to_string(),
            eof: end == size,
            total: size,
        })
    }

    /// The stored artifacts, oldest first.
    pub fn list(&self) -> Vec<ArtifactRef> {
        self.lock().entries.iter().map(|e| e.meta.clone()).collect()
    }

    /// Bytes stored across all artifacts.
    pub fn total_bytes(&self) -> usize {
        self.lock().total_bytes
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Largest char boundary of `s` that is `<= index` (clamped to `s.len()`).
fn floor_char_boundary(s: &str, index: usize) -> usize {
    let mut i = index.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn sha256_hex(data: &[u8]) -> String {
    use std::fmt::Write;
    Sha256::digest(data)
        .iter()
        .fold(String::with_capacity(64), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FIPS 180-2 test vectors.
    const SHA_ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    const SHA_MILLION_A: &str = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

    fn limits(threshold: usize, preview: usize, count: usize, bytes: usize) -> ArtifactLimits {
        ArtifactLimits {
            inline_threshold_bytes: threshold,
            preview_bytes: preview,
            max_artifacts: count,
            max_total_bytes: bytes,
        }
    }

    fn ids(store: &ArtifactStore) -> Vec<String> {
        store.list().into_iter().map(|a| a.id).collect()
    }

    #[test]
    fn small_output_passes_through() {
        let store = ArtifactStore::new("s", ArtifactLimits::default());
        let out = "x".repeat(32 * 1024);
        assert!(store.capture("a1".into(), "bash", "c1", out, 1).is_none());
        assert!(store.list().is_empty());
        assert_eq!(store.total_bytes(), 0);
    }

    #[test]
    fn large_output_captured_with_size_sha_and_uri() {
        let store = ArtifactStore::new("s", ArtifactLimits::default());
        let out = "a".repeat(1_000_000);
        let (r, _) = store
            .capture("a1".into(), "bash", "c1", out, 42)
            .expect("captured");
        assert_eq!(r.size, 1_000_000);
        assert_eq!(r.sha256, SHA_MILLION_A);
        assert_eq!(r.uri, "artifact://s/a1");
        assert_eq!(
            (r.tool_name.as_str(), r.tool_call_id.as_str()),
            ("bash", "c1")
        );
        assert_eq!(r.created_ms, 42);
        assert_eq!(store.total_bytes(), 1_000_000);
        assert_eq!(store.list(), vec![r.clone()]);
        let by_uri = store.read(&r.uri, 0, 10).unwrap();
        assert_eq!(by_uri.data, "aaaaaaaaaa");
        assert!(matches!(
            store.read("artifact://other/a1", 0, 10),
            Err(ArtifactError::NotFound(_))
        ));

        let small = ArtifactStore::new("s", limits(2, 1, 8, 1 << 20));
        let (r, _) = small
            .capture("a2".into(), "t", "c", "abc".into(), 0)
            .unwrap();
        assert_eq!(r.sha256, SHA_ABC);
    }

    #[test]
    fn preview_and_footer() {
        let store = ArtifactStore::new("sess", limits(10, 5, 8, 1 << 20));
        // "é" is 2 bytes: a 5-byte preview of "abcdé…" must stop before it.
        let out = format!("abcdé{}", "z".repeat(100));
        let (r, text) = store
            .capture("a1".into(), "read", "c1", out.clone(), 0)
            .unwrap();
        assert!(text.starts_with("abcd\n\n[output truncated:"), "{text}");
        assert!(!text.contains('é'));
        assert!(text.contains(&format!("{} bytes", out.len())));
        assert!(text.contains(&format!("sha256 {}", r.sha256)));
        assert!(text.contains("artifact://sess/a1"));
        assert!(text.contains("read it by range"));
    }

    #[test]
    fn ranged_reads_reassemble_multibyte_content() {
        let store = ArtifactStore::new("s", limits(4, 4, 8, 1 << 20));
        let out: String = (0..500)
            .map(|i| ["a", "é", "€", "😀", "\n"][i % 5])
            .collect();
        store
            .capture("a1".into(), "t", "c", out.clone(), 0)
            .unwrap();
        for limit in [1, 2, 3, 5, 7, 64, 100_000] {
            let (mut offset, mut rebuilt) = (0, String::new());
            loop {
                let s = store.read("a1", offset, limit).unwrap();
                assert_eq!(s.offset, offset);
                assert_eq!(s.total, out.len());
                assert!(!s.data.is_empty());
                assert!(s.data.len() <= limit.max(4));
                offset += s.data.len();
                rebuilt.push_str(&s.data);
                if s.eof {
                    break;
                }
            }
            assert_eq!(rebuilt, out, "limit {limit}");
        }
        let end = store.read("a1", out.len(), 10).unwrap();
        assert!(end.eof && end.data.is_empty());
        // Offset 2 falls inside "é" (bytes 1..3).
        assert!(matches!(
            store.read("a1", 2, 10),
            Err(ArtifactError::BadOffset { .. })
        ));
        assert!(matches!(
            store.read("a1", out.len() + 1, 10),
            Err(ArtifactError::BadOffset { .. })
        ));
    }

    #[test]
    fn read_limit_is_capped() {
        let store = ArtifactStore::new("s", ArtifactLimits::default());
        store
            .capture("a1".into(), "t", "c", "q".repeat(3 * MAX_READ_BYTES), 0)
            .unwrap();
        let s = store.read("a1", 0, usize::MAX).unwrap();
        assert_eq!(s.data.len(), MAX_READ_BYTES);
        assert!(!s.eof);
    }

    #[test]
    fn unknown_id_errors() {
        let store = ArtifactStore::new("s", ArtifactLimits::default());
        let err = store.read("nope", 0, 10).unwrap_err();
        assert!(matches!(err, ArtifactError::NotFound(ref id) if id == "nope"));
        assert!(err.to_string().contains("evicted"));
    }

    #[test]
    fn evicts_oldest_by_count() {
        let store = ArtifactStore::new("s", limits(1, 1, 2, 1 << 20));
        for (i, id) in ["a1", "a2", "a3"].into_iter().enumerate() {
            store
                .capture(id.into(), "t", "c", "xyz".into(), i as u64)
                .unwrap();
        }
        assert_eq!(ids(&store), ["a2", "a3"]);
        assert_eq!(store.total_bytes(), 6);
        assert!(matches!(
            store.read("a1", 0, 1),
            Err(ArtifactError::NotFound(_))
        ));
        assert_eq!(store.read("a2", 0, 3).unwrap().data, "xyz");
    }

    #[test]
    fn evicts_oldest_by_bytes() {
        let store = ArtifactStore::new("s", limits(1, 1, 100, 10));
        store.capture("a1".into(), "t", "c", "1111".into(), 0);
        store.capture("a2".into(), "t", "c", "2222".into(), 1);
        assert_eq!(ids(&store), ["a1", "a2"]);
        store.capture("a3".into(), "t", "c", "3333".into(), 2);
        assert_eq!(ids(&store), ["a2", "a3"]);
        assert_eq!(store.total_bytes(), 8);
        // Alone over the byte limit: still stored, every older one evicted.
        let (r, _) = store
            .capture("big".into(), "t", "c", "b".repeat(25), 3)
            .unwrap();
        assert_eq!(ids(&store), ["big"]);
        assert_eq!(store.total_bytes(), 25);
        assert_eq!(store.read(&r.uri, 0, 100).unwrap().data.len(), 25);
    }
}
