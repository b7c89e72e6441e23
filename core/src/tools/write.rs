//! `write`: a whole file's contents, written atomically.
//!
//! Also home of the staged atomic write ([`Staged`]) that `edit` and `patch`
//! share: content goes to a temp file in the target's directory, is fsynced,
//! and only then renamed over the target, so a crash or a failed multi-file
//! patch never leaves a half-written file behind.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserialize;
use serde_json::{json, Value};

use super::{parse_arguments, Tool, ToolContext, ToolError, ToolOutput};

#[derive(Debug)]
pub struct WriteTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    file_path: String,
    content: String,
}

/// New contents fully on disk in a temp file beside `target`, not yet visible.
/// Dropping it without [`Staged::commit`] removes the temp file.
#[derive(Debug)]
pub(crate) struct Staged {
    temp: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl Staged {
    /// Creates missing parent directories, writes and fsyncs a temp file in
    /// the target's directory (same filesystem, so the rename is atomic), and
    /// carries over the permissions of an existing target.
    pub(crate) fn new(target: &Path, bytes: &[u8]) -> std::io::Result<Self> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        if target.is_dir() {
            return Err(std::io::Error::other("is a directory"));
        }
        let dir = target
            .parent()
            .ok_or_else(|| std::io::Error::other("no parent directory"))?;
        std::fs::create_dir_all(dir)?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temp = dir.join(format!(
            ".{name}.{}.{}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let staged = Self {
            temp,
            target: target.to_path_buf(),
            committed: false,
        };
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&staged.temp)?;
        file.write_all(bytes)?;
        if let Ok(meta) = std::fs::metadata(target) {
            file.set_permissions(meta.permissions())?;
        }
        file.sync_all()?;
        Ok(staged)
    }

    /// Renames the temp file over the target and fsyncs the directory so the
    /// rename itself survives a crash.
    pub(crate) fn commit(mut self) -> std::io::Result<()> {
        std::fs::rename(&self.temp, &self.target)?;
        self.committed = true;
        if let Some(dir) = self.target.parent() {
            // Best effort: some filesystems refuse fsync on directories.
            let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Stages and commits in one step, off the async runtime's worker threads.
pub(crate) async fn write_atomic(target: PathBuf, bytes: Vec<u8>) -> std::io::Result<()> {
    tokio::task::spawn_blocking(move || Staged::new(&target, &bytes)?.commit())
        .await
        .map_err(std::io::Error::other)?
}

#[async_trait::async_trait]
impl Tool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }

    fn description(&self) -> &str {
        "Write a file in the workspace, replacing it if it exists. Parent directories are created. The write is atomic: readers see the old or the new contents, never a mix."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path relative to the workspace root"},
                "content": {"type": "string", "description": "The complete new contents of the file"}
            },
            "required": ["file_path", "content"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: WriteArgs = parse_arguments("write", arguments)?;
        let path = ctx.workspace.resolve(&args.file_path)?;
        let existed = path.exists();
        let len = args.content.len();
        write_atomic(path, args.content.into_bytes())
            .await
            .map_err(|e| ToolError::Failed(format!("cannot write {}: {e}", args.file_path)))?;
        let verb = if existed { "Overwrote" } else { "Created" };
        Ok(ToolOutput::text(format!(
            "{verb} {} ({len} bytes written)",
            args.file_path
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    async fn run(dir: &Path, args: Value) -> Result<ToolOutput, ToolError> {
        let ctx = ToolContext::for_dir(dir);
        WriteTool.execute(args, &ctx).await
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[tokio::test]
    async fn creates_parents_overwrites_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            dir.path(),
            json!({"file_path": "a/b/c.txt", "content": "héllo"}),
        )
        .await
        .unwrap();
        assert_eq!(out.content, "Created a/b/c.txt (6 bytes written)");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(),
            "héllo"
        );

        let file = dir.path().join("a/b/c.txt");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o750)).unwrap();
        let out = run(
            dir.path(),
            json!({"file_path": "a/b/c.txt", "content": "x"}),
        )
        .await
        .unwrap();
        assert_eq!(out.content, "Overwrote a/b/c.txt (1 bytes written)");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o750, "permissions survive the rename");
        assert_eq!(entries(&dir.path().join("a/b")), ["c.txt"]);
    }

    #[test]
    fn dropped_stage_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("f.txt");
        std::fs::write(&target, "old").unwrap();
        let staged = Staged::new(&target, b"new").unwrap();
        assert_eq!(
            entries(dir.path()).len(),
            2,
            "temp file sits beside the target"
        );
        drop(staged);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
        assert_eq!(entries(dir.path()), ["f.txt"]);
    }

    #[tokio::test]
    async fn refuses_escapes_directories_and_bad_arguments() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        let err = run(dir.path(), json!({"file_path": "../x", "content": ""}))
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::OutsideWorkspace { .. }), "{err}");
        let err = run(dir.path(), json!({"file_path": "d", "content": ""}))
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "cannot write d: is a directory");
        let err = run(dir.path(), json!({"file_path": "x"}))
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");
    }
}
