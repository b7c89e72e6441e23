//! `read`: a file's lines, numbered, with paging for large files.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{parse_arguments, Tool, ToolContext, ToolError, ToolOutput};

/// Lines returned when the model gives no `limit`.
pub const DEFAULT_READ_LIMIT: usize = 2000;
/// Characters kept of a single line; the rest is replaced by a marker.
pub const MAX_LINE_CHARS: usize = 2000;

#[derive(Debug)]
pub struct ReadTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    file_path: String,
    /// 1-based line to start at.
    offset: Option<usize>,
    limit: Option<usize>,
}

#[async_trait::async_trait]
impl Tool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }

    fn description(&self) -> &str {
        "Read a text file from the workspace. Lines are numbered from 1; use offset and limit to page through large files."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path relative to the workspace root"},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to return (1-based)"},
                "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines to return"}
            },
            "required": ["file_path"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: ReadArgs = parse_arguments("read", arguments)?;
        let path = ctx.workspace.resolve(&args.file_path)?;
        let bytes = tokio::fs::read(&path).await.map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                ToolError::NotFound(format!("file not found: {}", args.file_path))
            }
            _ => ToolError::Failed(format!("cannot read {}: {e}", args.file_path)),
        })?;
        if path.is_dir() {
            return Err(ToolError::Failed(format!(
                "{} is a directory; use ls",
                args.file_path
            )));
        }
        let text = String::from_utf8_lossy(&bytes);
        let offset = args.offset.unwrap_or(1).max(1);
        let limit = args.limit.unwrap_or(DEFAULT_READ_LIMIT).max(1);
        let total = text.lines().count();
        let mut out = String::new();
        for (index, line) in text.lines().enumerate().skip(offset - 1).take(limit) {
            out.push_str(&format!("{:>6}\t{}\n", index + 1, cut_line(line)));
        }
        let last = (offset - 1 + limit).min(total);
        if last < total {
            out.push_str(&format!(
                "... {} more lines (use offset={} to continue)\n",
                total - last,
                last + 1
            ));
        }
        if total == 0 {
            out.push_str("(empty file)\n");
        }
        Ok(ToolOutput::text(out))
    }
}

fn cut_line(line: &str) -> String {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => format!(
            "{}... [line truncated, {} chars]",
            &line[..cut],
            line.chars().count()
        ),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn run(dir: &std::path::Path, args: Value) -> Result<ToolOutput, ToolError> {
        let ctx = ToolContext::for_dir(dir);
        ReadTool.execute(args, &ctx).await
    }

    #[tokio::test]
    async fn numbers_lines_pages_and_cuts_long_lines() {
        let dir = tempfile::tempdir().unwrap();
        let long = "x".repeat(MAX_LINE_CHARS + 10);
        std::fs::write(
            dir.path().join("a.txt"),
            format!("one\ntwo\nthree\n{long}\n"),
        )
        .unwrap();
        let all = run(dir.path(), json!({"file_path": "a.txt"}))
            .await
            .unwrap();
        assert!(all.content.starts_with("     1\tone\n     2\ttwo\n"));
        assert!(all.content.contains("[line truncated, 2010 chars]"));
        let page = run(
            dir.path(),
            json!({"file_path": "a.txt", "offset": 2, "limit": 1}),
        )
        .await
        .unwrap();
        assert_eq!(
            page.content,
            "     2\ttwo\n... 2 more lines (use offset=3 to continue)\n"
        );
    }

    #[tokio::test]
    async fn clear_errors_for_bad_arguments_missing_files_and_escapes() {
        let dir = tempfile::tempdir().unwrap();
        let bad = run(dir.path(), json!({"path": "a"})).await.unwrap_err();
        assert!(matches!(bad, ToolError::InvalidArguments { .. }), "{bad}");
        let missing = run(dir.path(), json!({"file_path": "nope.txt"}))
            .await
            .unwrap_err();
        assert_eq!(missing.to_string(), "file not found: nope.txt");
        let escape = run(dir.path(), json!({"file_path": "../x"}))
            .await
            .unwrap_err();
        assert_eq!(escape.to_string(), "path '../x' is outside the workspace");
    }
}
