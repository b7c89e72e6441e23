//! `patch`: apply a unified diff to one or more workspace files, all or nothing.
//!
//! Parsing and hunk matching are diffy's; this file adds what an agent needs
//! around it: paths confined to the workspace, every hunk of every file
//! verified against the current contents before anything is written, and the
//! new contents staged in temp files so a failure anywhere changes nothing.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use diffy::patch_set::{FileOperation, ParseOptions, PatchSet};
use serde::Deserialize;
use serde_json::{json, Value};

use super::write::Staged;
use super::{parse_arguments, Tool, ToolContext, ToolError, ToolOutput, Workspace};

#[derive(Debug)]
pub struct PatchTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PatchArgs {
    patch: String,
}

/// One file's fate once the whole patch has been applied in memory.
struct Planned {
    name: String,
    path: PathBuf,
    existed: bool,
    /// `None` when the file is deleted.
    content: Option<String>,
}

#[async_trait::async_trait]
impl Tool for PatchTool {
    fn name(&self) -> &str {
        "patch"
    }

    fn description(&self) -> &str {
        "Apply a unified diff (as produced by `diff -u` or `git diff`) to workspace files. Supports several files per patch, `--- /dev/null` to create and `+++ /dev/null` to delete; `a/` and `b/` prefixes are stripped. Every hunk is checked first: if any does not apply, no file is changed."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "patch": {"type": "string", "description": "Unified diff text with ---/+++ headers and @@ hunks"}
            },
            "required": ["patch"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: PatchArgs = parse_arguments("patch", arguments)?;
        let workspace = Arc::clone(&ctx.workspace);
        tokio::task::spawn_blocking(move || {
            let planned = plan(&workspace, &args.patch)?;
            commit(&planned)
        })
        .await
        .map_err(|e| ToolError::Failed(format!("patch task failed: {e}")))?
        .map(ToolOutput::text)
    }
}

/// Applies every file patch in memory, in order (a file may appear twice).
fn plan(workspace: &Workspace, text: &str) -> Result<Vec<Planned>, ToolError> {
    let failed = |message: String| {
        ToolError::Failed(format!("patch not applied, no file changed: {message}"))
    };
    let mut planned: Vec<Planned> = Vec::new();
    let mut index: HashMap<PathBuf, usize> = HashMap::new();
    for file_patch in PatchSet::parse(text, ParseOptions::unidiff()) {
        let file_patch = file_patch.map_err(|e| ToolError::InvalidArguments {
            tool: "patch".into(),
            message: format!("cannot parse the diff: {e}"),
        })?;
        let patch = file_patch
            .patch()
            .as_text()
            .ok_or_else(|| failed("binary patches are not supported".into()))?;
        let (name, create, delete) = match file_patch.operation() {
            FileOperation::Create(path) => (strip(path, "b/"), true, false),
            FileOperation::Delete(path) => (strip(path, "a/"), false, true),
            FileOperation::Modify { original, modified } => {
                let git_style = original.starts_with("a/") && modified.starts_with("b/");
                let (old, new) = if git_style {
                    (&original[2..], &modified[2..])
                } else {
                    (original.as_ref(), modified.as_ref())
                };
                if old != new {
                    return Err(failed(format!(
                        "renames are not supported ({old} -> {new}); delete and create instead"
                    )));
                }
                (new.to_string(), false, false)
            }
            other => return Err(failed(format!("unsupported operation {other:?}"))),
        };
        let path = workspace.resolve(&name)?;
        if path.is_dir() {
            return Err(failed(format!("{name} is a directory")));
        }

        let slot = match index.get(&path) {
            Some(&slot) => slot,
            None => {
                let content = match std::fs::read(&path) {
                    Ok(bytes) => Some(
                        String::from_utf8(bytes)
                            .map_err(|_| failed(format!("{name} is not valid UTF-8 text")))?,
                    ),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                    Err(e) => return Err(failed(format!("cannot read {name}: {e}"))),
                };
                planned.push(Planned {
                    name: name.clone(),
                    path: path.clone(),
                    existed: content.is_some(),
                    content,
                });
                index.insert(path, planned.len() - 1);
                planned.len() - 1
            }
        };
        let entry = &mut planned[slot];
        let base = match (&entry.content, create) {
            (Some(_), true) => {
                return Err(failed(format!("cannot create {name}: it already exists")))
            }
            (None, false) => return Err(failed(format!("{name} does not exist"))),
            (Some(content), false) => content.as_str(),
            (None, true) => "",
        };
        let result = diffy::apply(base, patch).map_err(|e| {
            // diffy reports "error applying hunk #N"; name the hunk's header too.
            let header = e
                .to_string()
                .rsplit('#')
                .next()
                .and_then(|n| n.parse::<usize>().ok())
                .and_then(|n| patch.hunks().get(n.wrapping_sub(1)))
                .map(|h| format!(" (@@ -{} +{} @@)", h.old_range(), h.new_range()))
                .unwrap_or_default();
            failed(format!(
                "{name}: {e}{header}: its context or removed lines do not match the current file"
            ))
        })?;
        if delete && !result.is_empty() {
            return Err(failed(format!(
                "{name}: deletion hunks do not remove the whole file"
            )));
        }
        entry.content = if delete { None } else { Some(result) };
    }
    Ok(planned)
}

/// Strips a git-style `a/` or `b/` prefix.
fn strip(path: &str, prefix: &str) -> String {
    path.strip_prefix(prefix).unwrap_or(path).to_string()
}

/// Stages every new file first (any failure drops the stages, removing their
/// temp files), then renames them into place and removes deleted files.
fn commit(planned: &[Planned]) -> Result<String, ToolError> {
    let mut staged = Vec::new();
    for file in planned {
        if let Some(content) = &file.content {
            let stage = Staged::new(&file.path, content.as_bytes()).map_err(|e| {
                ToolError::Failed(format!(
                    "patch not applied, no file changed: cannot write {}: {e}",
                    file.name
                ))
            })?;
            staged.push(stage);
        }
    }
    for stage in staged {
        stage
            .commit()
            .map_err(|e| ToolError::Failed(format!("patch partially applied: {e}")))?;
    }
    let mut summary = String::from("Applied patch:\n");
    for file in planned {
        let mark = match (file.existed, &file.content) {
            (true, None) => {
                std::fs::remove_file(&file.path).map_err(|e| {
                    ToolError::Failed(format!(
                        "patch applied but cannot delete {}: {e}",
                        file.name
                    ))
                })?;
                'D'
            }
            (false, None) => continue,
            (true, Some(_)) => 'M',
            (false, Some(_)) => 'A',
        };
        summary.push_str(&format!("{mark} {}\n", file.name));
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    async fn run(dir: &Path, patch: &str) -> Result<String, ToolError> {
        let ctx = ToolContext::for_dir(dir);
        let out = PatchTool.execute(json!({"patch": patch}), &ctx).await?;
        Ok(out.content)
    }

    fn setup() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.txt"), "one\ntwo\nthree\nfour\n").unwrap();
        std::fs::write(dir.path().join("old.txt"), "bye\n").unwrap();
        dir
    }

    fn read(dir: &Path, name: &str) -> String {
        std::fs::read_to_string(dir.join(name)).unwrap()
    }

    const MULTI: &str = "\
diff --git a/src/a.txt b/src/a.txt
--- a/src/a.txt
+++ b/src/a.txt
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
--- /dev/null
+++ b/new/b.txt
@@ -0,0 +1,2 @@
+hello
+world
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
";

    #[tokio::test]
    async fn modifies_creates_and_deletes_files() {
        let dir = setup();
        let out = run(dir.path(), MULTI).await.unwrap();
        assert_eq!(out, "Applied patch:\nM src/a.txt\nA new/b.txt\nD old.txt\n");
        assert_eq!(read(dir.path(), "src/a.txt"), "one\nTWO\nthree\nfour\n");
        assert_eq!(read(dir.path(), "new/b.txt"), "hello\nworld\n");
        assert!(!dir.path().join("old.txt").exists());
    }

    #[tokio::test]
    async fn one_failing_hunk_changes_nothing() {
        let dir = setup();
        let bad = MULTI.replace("-bye", "-not bye");
        let err = run(dir.path(), &bad).await.unwrap_err().to_string();
        assert!(
            err.starts_with("patch not applied, no file changed: old.txt"),
            "{err}"
        );
        let wrong = MULTI.replace(" three\n--- /dev/null", " 3\n--- /dev/null");
        let err = run(dir.path(), &wrong).await.unwrap_err().to_string();
        assert_eq!(
            err,
            "patch not applied, no file changed: src/a.txt: error applying hunk #1 (@@ -1,3 +1,3 @@): its context or removed lines do not match the current file"
        );
        assert_eq!(read(dir.path(), "src/a.txt"), "one\ntwo\nthree\nfour\n");
        assert_eq!(read(dir.path(), "old.txt"), "bye\n");
        assert!(!dir.path().join("new").exists());
        let names: Vec<_> = std::fs::read_dir(dir.path().join("src")).unwrap().collect();
        assert_eq!(names.len(), 1, "no temp files left behind");
    }

    #[tokio::test]
    async fn later_hunks_for_the_same_file_see_earlier_ones() {
        let dir = setup();
        let patch = "--- src/a.txt\n+++ src/a.txt\n@@ -1 +1 @@\n-one\n+1\n\
                     --- src/a.txt\n+++ src/a.txt\n@@ -1,2 +1,2 @@\n 1\n-two\n+2\n";
        run(dir.path(), patch).await.unwrap();
        assert_eq!(read(dir.path(), "src/a.txt"), "1\n2\nthree\nfour\n");
    }

    #[tokio::test]
    async fn refuses_escapes_existing_creations_and_garbage() {
        let dir = setup();
        let escape = "--- /dev/null\n+++ b/../evil.txt\n@@ -0,0 +1 @@\n+x\n";
        let err = run(dir.path(), escape).await.unwrap_err();
        assert!(matches!(err, ToolError::OutsideWorkspace { .. }), "{err}");
        let exists = "--- /dev/null\n+++ b/old.txt\n@@ -0,0 +1 @@\n+x\n";
        let err = run(dir.path(), exists).await.unwrap_err().to_string();
        assert!(
            err.ends_with("cannot create old.txt: it already exists"),
            "{err}"
        );
        let missing = "--- a/nope.txt\n+++ b/nope.txt\n@@ -1 +1 @@\n-a\n+b\n";
        let err = run(dir.path(), missing).await.unwrap_err().to_string();
        assert!(err.ends_with("nope.txt does not exist"), "{err}");
        let err = run(dir.path(), "just some text").await.unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");
        assert_eq!(read(dir.path(), "old.txt"), "bye\n");
    }
}
