//! `grep`: regex search over workspace files, ripgrep-style.
//!
//! Uses ripgrep's own searcher and regex engine over the shared ignore-aware
//! walk (see `glob`), so results match what a developer gets from `rg`:
//! `.gitignore` honored, binary files skipped, output as `path:line:text`.

use std::sync::Arc;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use serde::Deserialize;
use serde_json::{json, Value};

use super::glob::{walk_files, FileFilter};
use super::{parse_arguments, Tool, ToolContext, ToolError, ToolOutput};

/// Matching lines returned when the model gives no `max_results`.
pub const DEFAULT_GREP_RESULTS: usize = 200;
/// Upper bound for `max_results`, to keep the output within a model's context.
pub const MAX_GREP_RESULTS: usize = 2000;
/// Upper bound for `context` lines around each match.
pub const MAX_GREP_CONTEXT: usize = 10;
/// Characters kept of a single output line.
pub const MAX_GREP_LINE_CHARS: usize = 500;

#[derive(Debug)]
pub struct GrepTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GrepArgs {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
    #[serde(default)]
    case_insensitive: bool,
    #[serde(default)]
    context: usize,
    max_results: Option<usize>,
}

/// Collects one file's output lines, stopping the search at the match budget.
struct Collect<'a> {
    name: &'a str,
    out: &'a mut String,
    matches: &'a mut usize,
    limit: usize,
}

impl Collect<'_> {
    fn line(&mut self, sep: char, number: Option<u64>, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches(['\n', '\r']);
        let text = match text.char_indices().nth(MAX_GREP_LINE_CHARS) {
            Some((cut, _)) => format!("{}... [line truncated]", &text[..cut]),
            None => text.to_string(),
        };
        let number = number.unwrap_or_default();
        self.out
            .push_str(&format!("{}{sep}{number}{sep}{text}\n", self.name));
    }
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.line(':', mat.line_number(), mat.bytes());
        *self.matches += 1;
        Ok(*self.matches < self.limit)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.line('-', ctx.line_number(), ctx.bytes());
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, Self::Error> {
        self.out.push_str("--\n");
        Ok(true)
    }
}

#[async_trait::async_trait]
impl Tool for GrepTool {
    fn name(&self) -> &str {
        "grep"
    }

    fn description(&self) -> &str {
        "Search workspace files for a regular expression (Rust regex syntax). Honors .gitignore and skips binary files. Output lines are 'path:line:text' (context lines use '-'). Narrow with path and glob (e.g. '*.rs')."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression to search for"},
                "path": {"type": "string", "description": "File or directory to search, relative to the workspace root (default '.')"},
                "glob": {"type": "string", "description": "Only search files matching this glob, e.g. '*.rs' or 'src/**/*.ts'"},
                "case_insensitive": {"type": "boolean", "description": "Ignore case (default false)"},
                "context": {"type": "integer", "minimum": 0, "maximum": MAX_GREP_CONTEXT, "description": "Lines of context before and after each match (default 0)"},
                "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_GREP_RESULTS, "description": "Maximum matching lines to return (default 200)"}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: GrepArgs = parse_arguments("grep", arguments)?;
        let invalid = |message: String| ToolError::InvalidArguments {
            tool: "grep".into(),
            message,
        };
        if args.context > MAX_GREP_CONTEXT {
            return Err(invalid(format!(
                "context must be at most {MAX_GREP_CONTEXT}"
            )));
        }
        let limit = args.max_results.unwrap_or(DEFAULT_GREP_RESULTS);
        if !(1..=MAX_GREP_RESULTS).contains(&limit) {
            return Err(invalid(format!(
                "max_results must be between 1 and {MAX_GREP_RESULTS}"
            )));
        }
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(args.case_insensitive)
            .build(&args.pattern)
            .map_err(|e| invalid(format!("invalid regex: {e}")))?;
        let filter = args
            .glob
            .as_deref()
            .map(FileFilter::new)
            .transpose()
            .map_err(invalid)?;
        let name = args.path.unwrap_or_else(|| ".".into());
        let root = ctx.workspace.resolve(&name)?;
        if !root.exists() {
            return Err(ToolError::NotFound(format!("path not found: {name}")));
        }
        let workspace = Arc::clone(&ctx.workspace);
        let cancel = ctx.cancel.clone();
        let context = args.context;

        let (mut out, matches) = tokio::task::spawn_blocking(move || {
            let mut searcher = SearcherBuilder::new()
                .line_number(true)
                .before_context(context)
                .after_context(context)
                .binary_detection(BinaryDetection::quit(0))
                .build();
            let mut files = Vec::new();
            walk_files(&root, &cancel, |path, relative| {
                if filter.as_ref().is_none_or(|f| f.matches(relative)) {
                    files.push(path.to_path_buf());
                }
                true
            })?;
            files.sort();
            let (mut out, mut matches) = (String::new(), 0);
            for path in files {
                if cancel.is_cancelled() {
                    return Err(ToolError::Cancelled);
                }
                let display = workspace.display(&path);
                let mut found = String::new();
                let sink = Collect {
                    name: &display,
                    out: &mut found,
                    matches: &mut matches,
                    limit,
                };
                // An unreadable file is skipped, like ripgrep does.
                let _ = searcher.search_path(&matcher, &path, sink);
                if !found.is_empty() {
                    if context > 0 && !out.is_empty() {
                        out.push_str("--\n");
                    }
                    out.push_str(&found);
                }
                if matches >= limit {
                    break;
                }
            }
            Ok((out, matches))
        })
        .await
        .map_err(|e| ToolError::Failed(format!("grep task failed: {e}")))??;

        if matches == 0 {
            out.push_str("No matches found\n");
        } else if matches >= limit {
            out.push_str(&format!(
                "... stopped at {limit} matches (narrow the pattern, path or glob, or raise max_results)\n"
            ));
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
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("build")).unwrap();
        std::fs::write(
            root.join("src/lib.rs"),
            "fn alpha() {}\nfn beta() {}\n// TODO fix\n",
        )
        .unwrap();
        std::fs::write(root.join("src/main.py"), "def alpha():\n    pass\n").unwrap();
        std::fs::write(root.join("build/out.rs"), "fn alpha() {}\n").unwrap();
        std::fs::write(root.join("blob.bin"), b"alpha\0\x01\x02").unwrap();
        std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
        let ctx = ToolContext::for_dir(root);
        (dir, ctx)
    }

    async fn grep(ctx: &ToolContext, args: Value) -> Result<String, ToolError> {
        GrepTool.execute(args, ctx).await.map(|o| o.content)
    }

    #[tokio::test]
    async fn finds_matches_skipping_ignored_and_binary_files() {
        let (_dir, ctx) = setup();
        let out = grep(&ctx, json!({"pattern": "alp+ha"})).await.unwrap();
        assert_eq!(
            out,
            "src/lib.rs:1:fn alpha() {}\nsrc/main.py:1:def alpha():\n"
        );
        let out = grep(
            &ctx,
            json!({"pattern": "ALPHA", "glob": "*.rs", "case_insensitive": true}),
        )
        .await
        .unwrap();
        assert_eq!(out, "src/lib.rs:1:fn alpha() {}\n");
        let out = grep(&ctx, json!({"pattern": "alpha", "path": "src/main.py"}))
            .await
            .unwrap();
        assert_eq!(out, "src/main.py:1:def alpha():\n");
        let out = grep(&ctx, json!({"pattern": "nothing here"}))
            .await
            .unwrap();
        assert_eq!(out, "No matches found\n");
    }

    #[tokio::test]
    async fn context_lines_and_result_cap() {
        let (_dir, ctx) = setup();
        let out = grep(&ctx, json!({"pattern": "TODO|pass", "context": 1}))
            .await
            .unwrap();
        assert_eq!(
            out,
            "src/lib.rs-2-fn beta() {}\nsrc/lib.rs:3:// TODO fix\n--\nsrc/main.py-1-def alpha():\nsrc/main.py:2:    pass\n"
        );
        let out = grep(&ctx, json!({"pattern": "fn", "max_results": 1}))
            .await
            .unwrap();
        assert_eq!(
            out,
            "src/lib.rs:1:fn alpha() {}\n... stopped at 1 matches (narrow the pattern, path or glob, or raise max_results)\n"
        );
    }

    #[tokio::test]
    async fn rejects_bad_regex_escapes_and_bad_limits() {
        let (_dir, ctx) = setup();
        let err = grep(&ctx, json!({"pattern": "(unclosed"}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("invalid regex"), "{err}");
        let err = grep(&ctx, json!({"pattern": "x", "path": "/etc"}))
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::OutsideWorkspace { .. }));
        let err = grep(&ctx, json!({"pattern": "x", "context": 99}))
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("context must be at most 10"),
            "{err}"
        );
        let err = grep(&ctx, json!({"pattern": "x", "max_results": 0}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("max_results"), "{err}");
    }
}
