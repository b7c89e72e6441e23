//! `edit`: exact string replacement in one file.
//!
//! The model names the text it wants to change instead of line numbers, so an
//! edit cannot land on the wrong line after the file moved under it. The match
//! count is checked against what the model expects (one, unless it says
//! otherwise) so an ambiguous `old_string` fails instead of editing the wrong
//! occurrence.

use serde::Deserialize;
use serde_json::{json, Value};

use super::write::write_atomic;
use super::{parse_arguments, Tool, ToolContext, ToolError, ToolOutput};

#[derive(Debug)]
pub struct EditTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    file_path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
    expected_replacements: Option<usize>,
}

#[async_trait::async_trait]
impl Tool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }

    fn description(&self) -> &str {
        "Replace exact text in a workspace file. old_string must match the file exactly (including whitespace) and, unless replace_all or expected_replacements is given, occur exactly once; include surrounding lines to make it unique. Use write to create files."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path relative to the workspace root"},
                "old_string": {"type": "string", "description": "Exact text to replace"},
                "new_string": {"type": "string", "description": "Replacement text (must differ from old_string)"},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)"},
                "expected_replacements": {"type": "integer", "minimum": 1, "description": "Number of occurrences that must be found (default 1, or any number with replace_all)"}
            },
            "required": ["file_path", "old_string", "new_string"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: EditArgs = parse_arguments("edit", arguments)?;
        let invalid = |message: &str| ToolError::InvalidArguments {
            tool: "edit".into(),
            message: message.into(),
        };
        if args.old_string.is_empty() {
            return Err(invalid(
                "old_string must not be empty (use write to create a file)",
            ));
        }
        if args.old_string == args.new_string {
            return Err(invalid("old_string and new_string are identical"));
        }
        if args.expected_replacements == Some(0) {
            return Err(invalid("expected_replacements must be at least 1"));
        }
        let name = &args.file_path;
        let path = ctx.workspace.resolve(name)?;
        if path.is_dir() {
            return Err(ToolError::Failed(format!("{name} is a directory")));
        }
        let bytes = tokio::fs::read(&path).await.map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ToolError::NotFound(format!("file not found: {name}")),
            _ => ToolError::Failed(format!("cannot read {name}: {e}")),
        })?;
        let text = String::from_utf8(bytes)
            .map_err(|_| ToolError::Failed(format!("{name} is not valid UTF-8 text")))?;

        let found = text.matches(args.old_string.as_str()).count();
        if found == 0 {
            return Err(ToolError::Failed(format!(
                "old_string not found in {name}; it must match exactly, including whitespace and indentation (read the file first)"
            )));
        }
        let expected = args
            .expected_replacements
            .or(if args.replace_all { None } else { Some(1) });
        if let Some(expected) = expected.filter(|&n| n != found) {
            let hint = if expected == 1 {
                "; include more surrounding context to make it unique, or set replace_all"
            } else {
                ""
            };
            return Err(ToolError::Failed(format!(
                "old_string occurs {found} times in {name} but {expected} replacement(s) were expected{hint}"
            )));
        }

        let updated = text.replace(args.old_string.as_str(), &args.new_string);
        write_atomic(path, updated.into_bytes())
            .await
            .map_err(|e| ToolError::Failed(format!("cannot write {name}: {e}")))?;
        let plural = if found == 1 { "" } else { "s" };
        Ok(ToolOutput::text(format!(
            "Replaced {found} occurrence{plural} in {name}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixture {
        dir: tempfile::TempDir,
        ctx: ToolContext,
    }

    impl Fixture {
        fn new(content: &str) -> Self {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("f.txt"), content).unwrap();
            let ctx = ToolContext::for_dir(dir.path());
            Self { dir, ctx }
        }

        async fn edit(&self, mut args: Value) -> Result<String, String> {
            args["file_path"] = json!("f.txt");
            EditTool
                .execute(args, &self.ctx)
                .await
                .map(|o| o.content)
                .map_err(|e| e.to_string())
        }

        fn content(&self) -> String {
            std::fs::read_to_string(self.dir.path().join("f.txt")).unwrap()
        }
    }

    #[tokio::test]
    async fn replaces_a_unique_match() {
        let fx = Fixture::new("fn a() {}\nfn b() {}\n");
        let out = fx
            .edit(json!({"old_string": "fn b", "new_string": "fn c"}))
            .await
            .unwrap();
        assert_eq!(out, "Replaced 1 occurrence in f.txt");
        assert_eq!(fx.content(), "fn a() {}\nfn c() {}\n");
    }

    #[tokio::test]
    async fn ambiguous_or_missing_matches_fail_without_changing_the_file() {
        let fx = Fixture::new("x = 1\nx = 1\n");
        let err = fx
            .edit(json!({"old_string": "x = 1", "new_string": "x = 2"}))
            .await
            .unwrap_err();
        assert!(
            err.starts_with(
                "old_string occurs 2 times in f.txt but 1 replacement(s) were expected"
            ),
            "{err}"
        );
        let err = fx
            .edit(json!({"old_string": "y", "new_string": "z"}))
            .await
            .unwrap_err();
        assert!(err.starts_with("old_string not found in f.txt"), "{err}");
        let err = fx
            .edit(json!({"old_string": "x", "new_string": "y", "replace_all": true, "expected_replacements": 3}))
            .await
            .unwrap_err();
        assert_eq!(
            err,
            "old_string occurs 2 times in f.txt but 3 replacement(s) were expected"
        );
        assert_eq!(fx.content(), "x = 1\nx = 1\n");
    }

    #[tokio::test]
    async fn replace_all_and_expected_count() {
        let fx = Fixture::new("a a a");
        let out = fx
            .edit(json!({"old_string": "a", "new_string": "b", "expected_replacements": 3}))
            .await
            .unwrap();
        assert_eq!(out, "Replaced 3 occurrences in f.txt");
        assert_eq!(fx.content(), "b b b");
        fx.edit(json!({"old_string": "b", "new_string": "cc", "replace_all": true}))
            .await
            .unwrap();
        assert_eq!(fx.content(), "cc cc cc");
    }

    #[tokio::test]
    async fn rejects_bad_arguments_and_missing_files() {
        let fx = Fixture::new("same");
        let err = fx
            .edit(json!({"old_string": "same", "new_string": "same"}))
            .await
            .unwrap_err();
        assert_eq!(
            err,
            "invalid arguments for edit: old_string and new_string are identical"
        );
        let err = fx
            .edit(json!({"old_string": "", "new_string": "x"}))
            .await
            .unwrap_err();
        assert!(err.contains("old_string must not be empty"), "{err}");
        let err = fx
            .edit(json!({"old_string": "a", "new_string": "b", "count": 1}))
            .await
            .unwrap_err();
        assert!(err.contains("unknown field `count`"), "{err}");
        let args = json!({"file_path": "nope.txt", "old_string": "a", "new_string": "b"});
        let err = EditTool.execute(args, &fx.ctx).await.unwrap_err();
        assert_eq!(err.to_string(), "file not found: nope.txt");
        let args = json!({"file_path": "../f.txt", "old_string": "a", "new_string": "b"});
        let err = EditTool.execute(args, &fx.ctx).await.unwrap_err();
        assert!(matches!(err, ToolError::OutsideWorkspace { .. }));
    }
}
