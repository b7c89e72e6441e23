//! `glob`: workspace files whose paths match a glob pattern.
//!
//! Also home of the file walk that `grep` shares: `.gitignore`/`.ignore`
//! rules apply (even outside a git repository), hidden files are included but
//! `.git` is skipped, and symlinks are not followed, so a link pointing out of
//! the workspace is never read through.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use globset::{GlobBuilder, GlobMatcher};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::{parse_arguments, Tool, ToolContext, ToolError, ToolOutput};

/// Paths listed before the output is cut.
pub const MAX_GLOB_RESULTS: usize = 1000;

#[derive(Debug)]
pub struct GlobTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GlobArgs {
    pattern: String,
    path: Option<String>,
}

/// A glob over paths relative to the search root. Like `.gitignore`, a
/// pattern without `/` matches file names at any depth (`*.rs`); with a `/`
/// it matches the whole relative path (`src/**/*.rs`), `*` never crossing `/`.
pub(crate) struct FileFilter {
    matcher: GlobMatcher,
    name_only: bool,
}

impl FileFilter {
    pub(crate) fn new(pattern: &str) -> Result<Self, String> {
        let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
        if pattern.is_empty() {
            return Err("the glob pattern is empty".into());
        }
        if pattern.starts_with('/') {
            return Err("the glob pattern must be relative; use path to pick a directory".into());
        }
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| format!("invalid glob pattern: {e}"))?;
        Ok(Self {
            matcher: glob.compile_matcher(),
            name_only: !pattern.contains('/'),
        })
    }

    pub(crate) fn matches(&self, relative: &Path) -> bool {
        if self.name_only {
            relative
                .file_name()
                .is_some_and(|name| self.matcher.is_match(name))
        } else {
            self.matcher.is_match(relative)
        }
    }
}

/// Calls `visit` with every regular file under `root` (or `root` itself when
/// it is a file) and its path relative to `root`, until `visit` returns false.
pub(crate) fn walk_files(
    root: &Path,
    cancel: &CancellationToken,
    mut visit: impl FnMut(&Path, &Path) -> bool,
) -> Result<(), ToolError> {
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    for entry in walker {
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        // Unreadable directories and broken ignore files are skipped, not fatal.
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let relative = path.strip_prefix(root).unwrap_or(path);
        let relative = if relative.as_os_str().is_empty() {
            Path::new(path.file_name().unwrap_or_default())
        } else {
            relative
        };
        if !visit(path, relative) {
            break;
        }
    }
    Ok(())
}

#[async_trait::async_trait]
impl Tool for GlobTool {
    fn name(&self) -> &str {
        "glob"
    }

    fn description(&self) -> &str {
        "Find workspace files by glob pattern, e.g. '*.rs' (file names at any depth) or 'src/**/test_*.py' (paths relative to path). Honors .gitignore; results are sorted paths relative to the workspace root."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Glob; without '/' it matches file names at any depth"},
                "path": {"type": "string", "description": "Directory to search, relative to the workspace root (default '.')"}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: GlobArgs = parse_arguments("glob", arguments)?;
        let filter =
            FileFilter::new(&args.pattern).map_err(|message| ToolError::InvalidArguments {
                tool: "glob".into(),
                message,
            })?;
        let name = args.path.unwrap_or_else(|| ".".into());
        let root = ctx.workspace.resolve(&name)?;
        if !root.is_dir() {
            return Err(ToolError::NotFound(format!("directory not found: {name}")));
        }
        let workspace = Arc::clone(&ctx.workspace);
        let cancel = ctx.cancel.clone();
        let found = tokio::task::spawn_blocking(move || {
            let mut found: Vec<PathBuf> = Vec::new();
            walk_files(&root, &cancel, |path, relative| {
                if filter.matches(relative) {
                    found.push(path.to_path_buf());
                }
                true
            })?;
            Ok::<_, ToolError>(found)
        })
        .await
        .map_err(|e| ToolError::Failed(format!("glob task failed: {e}")))??;

        let mut paths: Vec<String> = found.iter().map(|p| workspace.display(p)).collect();
        paths.sort();
        let total = paths.len();
        let mut out: String = paths
            .iter()
            .take(MAX_GLOB_RESULTS)
            .map(|p| format!("{p}\n"))
            .collect();
        if total > MAX_GLOB_RESULTS {
            out.push_str(&format!(
                "... {} more files (narrow the pattern or path)\n",
                total - MAX_GLOB_RESULTS
            ));
        }
        if total == 0 {
            out.push_str("No files found\n");
        }
        Ok(ToolOutput::text(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for file in [
            "b.rs",
            "a.rs",
            "notes.md",
            "src/lib.rs",
            "src/deep/mod.rs",
            "target/gen.rs",
            ".github/ci.yml",
            ".git/config.rs",
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        let ctx = ToolContext::for_dir(root);
        (dir, ctx)
    }

    async fn glob(ctx: &ToolContext, args: Value) -> Result<String, ToolError> {
        GlobTool.execute(args, ctx).await.map(|o| o.content)
    }

    #[tokio::test]
    async fn matches_sorted_and_honors_gitignore() {
        let (_dir, ctx) = setup();
        let out = glob(&ctx, json!({"pattern": "*.rs"})).await.unwrap();
        assert_eq!(out, "a.rs\nb.rs\nsrc/deep/mod.rs\nsrc/lib.rs\n");
        let out = glob(&ctx, json!({"pattern": "src/*.rs"})).await.unwrap();
        assert_eq!(out, "src/lib.rs\n");
        let out = glob(&ctx, json!({"pattern": "**/*.rs", "path": "src"}))
            .await
            .unwrap();
        assert_eq!(out, "src/deep/mod.rs\nsrc/lib.rs\n");
        let out = glob(&ctx, json!({"pattern": "*.yml"})).await.unwrap();
        assert_eq!(out, ".github/ci.yml\n");
        let out = glob(&ctx, json!({"pattern": "*.none"})).await.unwrap();
        assert_eq!(out, "No files found\n");
    }

    #[tokio::test]
    async fn caps_results_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..MAX_GLOB_RESULTS + 5 {
            std::fs::write(dir.path().join(format!("f{i:05}.txt")), "").unwrap();
        }
        let ctx = ToolContext::for_dir(dir.path());
        let out = glob(&ctx, json!({"pattern": "*.txt"})).await.unwrap();
        assert_eq!(out.lines().count(), MAX_GLOB_RESULTS + 1);
        assert!(out.starts_with("f00000.txt\n"));
        assert!(out.ends_with("... 5 more files (narrow the pattern or path)\n"));
    }

    #[tokio::test]
    async fn does_not_follow_symlinks_out_and_rejects_bad_input() {
        let (dir, ctx) = setup();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.rs"), "").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        let out = glob(&ctx, json!({"pattern": "secret.rs"})).await.unwrap();
        assert_eq!(out, "No files found\n");
        let err = glob(&ctx, json!({"pattern": "*", "path": ".."}))
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::OutsideWorkspace { .. }));
        let err = glob(&ctx, json!({"pattern": "a["})).await.unwrap_err();
        assert!(err.to_string().contains("invalid glob pattern"), "{err}");
        let err = glob(&ctx, json!({"pattern": "*", "path": "nope"}))
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "directory not found: nope");
    }
}
