//! `ls`: the entries of one workspace directory.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{parse_arguments, Tool, ToolContext, ToolError, ToolOutput};

/// Entries listed before the output is cut, so huge directories stay cheap.
pub const MAX_LS_ENTRIES: usize = 1000;

#[derive(Debug)]
pub struct LsTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LsArgs {
    #[serde(default = "dot")]
    path: String,
}

fn dot() -> String {
    ".".to_string()
}

#[async_trait::async_trait]
impl Tool for LsTool {
    fn name(&self) -> &str {
        "ls"
    }

    fn description(&self) -> &str {
        "List the entries of a workspace directory, sorted by name; directories end with '/'."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory relative to the workspace root (default '.')"}
            },
            "additionalProperties": false
        })
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: LsArgs = parse_arguments("ls", arguments)?;
        let dir = ctx.workspace.resolve(&args.path)?;
        let mut reader = tokio::fs::read_dir(&dir)
            .await
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => {
                    ToolError::NotFound(format!("directory not found: {}", args.path))
                }
                _ => ToolError::Failed(format!("cannot list {}: {e}", args.path)),
            })?;
        let mut names = Vec::new();
        while let Some(entry) = reader
            .next_entry()
            .await
            .map_err(|e| ToolError::Failed(format!("cannot list {}: {e}", args.path)))?
        {
            let mut name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().await.map(|t| t.is_dir()).unwrap_or(false) {
                name.push('/');
            }
            names.push(name);
        }
        names.sort();
        let total = names.len();
        let mut out: String = names
            .iter()
            .take(MAX_LS_ENTRIES)
            .map(|n| format!("{n}\n"))
            .collect();
        if total > MAX_LS_ENTRIES {
            out.push_str(&format!("... {} more entries\n", total - MAX_LS_ENTRIES));
        }
        if total == 0 {
            out.push_str("(empty directory)\n");
        }
        Ok(ToolOutput::text(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lists_sorted_entries_and_refuses_escapes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("b.txt"), "").unwrap();
        std::fs::write(dir.path().join("a.txt"), "").unwrap();
        let ctx = ToolContext::for_dir(dir.path());
        let out = LsTool.execute(json!({}), &ctx).await.unwrap();
        assert_eq!(out.content, "a.txt\nb.txt\nsrc/\n");
        let err = LsTool
            .execute(json!({"path": "/"}), &ctx)
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::OutsideWorkspace { .. }));
        let err = LsTool
            .execute(json!({"path": "nope"}), &ctx)
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "directory not found: nope");
    }
}
