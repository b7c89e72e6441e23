//! Tools the model may call, each confined to the session's workspace.
//!
//! A tool declares its name, a description and the JSON Schema of its
//! arguments; the agent loop offers the registered tools to the model and
//! runs the calls it makes. Tool failures are values ([`ToolError`]) that are
//! fed back to the model, never panics or run failures.

mod bash;
mod edit;
mod git;
mod glob;
mod grep;
mod ls;
mod patch;
mod read;
mod web_fetch;
mod workspace;
mod write;

pub use bash::BashTool;
pub use edit::EditTool;
pub use git::GitTool;
pub use glob::GlobTool;
pub use grep::GrepTool;
pub use ls::LsTool;
pub use patch::PatchTool;
pub use read::ReadTool;
pub use web_fetch::WebFetchTool;
pub use workspace::Workspace;
pub use write::WriteTool;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;
use thiserror::Error;
use tokio_util::sync::CancellationToken;

use crate::llm::ToolDefinition;

/// What a tool call produced, as text for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub content: String,
}

impl ToolOutput {
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
        }
    }
}

/// Why a tool call failed. The message is shown to the model as is.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum ToolError {
    #[error("invalid arguments for {tool}: {message}")]
    InvalidArguments { tool: String, message: String },
    #[error("path '{path}' is outside the workspace")]
    OutsideWorkspace { path: String },
    #[error("{0}")]
    NotFound(String),
    #[error("unknown tool '{0}'")]
    UnknownTool(String),
    #[error("{0}")]
    Failed(String),
    #[error("tool call cancelled")]
    Cancelled,
}

/// What a tool sees of the session while it runs.
#[derive(Debug, Clone)]
pub struct ToolContext {
    pub workspace: Arc<Workspace>,
    pub cancel: CancellationToken,
}

#[cfg(test)]
impl ToolContext {
    /// A never-cancelled context on a workspace rooted at `root`.
    pub(crate) fn for_dir(root: &std::path::Path) -> Self {
        Self {
            workspace: Arc::new(Workspace::new(root).expect("test workspace")),
            cancel: CancellationToken::new(),
        }
    }
}

/// A capability the model can invoke.
#[async_trait::async_trait]
pub trait Tool: Send + Sync + Debug {
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    /// JSON Schema of the arguments object.
    fn parameters(&self) -> Value;
    /// Whether this workspace can support the tool (e.g. the program it
    /// runs exists). Unsupported tools are not offered to the model.
    fn available(&self, _workspace: &Workspace) -> bool {
        true
    }
    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
}

/// Whether `program` is an executable file on `PATH`.
pub fn program_on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(dir.join(program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// Decodes a tool's arguments into its typed form, with an error that names the tool.
pub fn parse_arguments<T: DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, ToolError> {
    serde_json::from_value(arguments).map_err(|e| ToolError::InvalidArguments {
        tool: tool.to_string(),
        message: e.to_string(),
    })
}

/// The tools of one session, by name, in a stable order.
#[derive(Debug, Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
}

impl ToolRegistry {
    /// The built-in tool set.
    pub fn builtin() -> Self {
        let mut registry = Self::default();
        registry.register(Arc::new(ReadTool));
        registry.register(Arc::new(LsTool));
        registry.register(Arc::new(WriteTool));
        registry.register(Arc::new(EditTool));
        registry.register(Arc::new(PatchTool));
        registry.register(Arc::new(GlobTool));
        registry.register(Arc::new(GrepTool));
        registry.register(Arc::new(BashTool));
        registry.register(Arc::new(GitTool));
        registry.register(Arc::new(WebFetchTool));
        registry
    }

    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.name().to_string(), tool);
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// Definitions of the tools this workspace supports.
    pub fn definitions_for(&self, workspace: &Workspace) -> Vec<ToolDefinition> {
        self.tools
            .values()
            .filter(|tool| tool.available(workspace))
            .map(|tool| ToolDefinition {
                name: tool.name().to_string(),
                description: tool.description().to_string(),
                parameters: tool.parameters(),
            })
            .collect()
    }

    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .values()
            .map(|tool| ToolDefinition {
                name: tool.name().to_string(),
                description: tool.description().to_string(),
                parameters: tool.parameters(),
            })
            .collect()
    }

    /// Runs one call, turning an unknown tool into a tool error.
    pub async fn execute(
        &self,
        name: &str,
        arguments: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let tool = self
            .get(name)
            .ok_or_else(|| ToolError::UnknownTool(name.to_string()))?;
        tokio::select! {
            // Cancellation wins when both are ready.
            biased;
            _ = ctx.cancel.cancelled() => Err(ToolError::Cancelled),
            result = tool.execute(arguments, ctx) => result,
        }
    }
}

#[cfg(test)]
mod availability_tests {
    use super::*;

    #[derive(Debug)]
    struct NeedsMissingProgram;

    #[async_trait::async_trait]
    impl Tool for NeedsMissingProgram {
        fn name(&self) -> &str {
            "needs_missing"
        }
        fn description(&self) -> &str {
            "runs a program this machine lacks"
        }
        fn parameters(&self) -> Value {
            serde_json::json!({"type": "object"})
        }
        fn available(&self, _workspace: &Workspace) -> bool {
            program_on_path("a3s-definitely-not-installed")
        }
        async fn execute(&self, _: Value, _: &ToolContext) -> Result<ToolOutput, ToolError> {
            unreachable!("never offered")
        }
    }

    #[test]
    fn tools_the_workspace_cannot_support_are_not_offered() {
        assert!(program_on_path("sh"));
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let mut registry = ToolRegistry::builtin();
        registry.register(Arc::new(NeedsMissingProgram));
        let offered: Vec<String> = registry
            .definitions_for(&workspace)
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert!(!offered.contains(&"needs_missing".to_string()));
        assert!(offered.contains(&"read".to_string()) && offered.contains(&"bash".to_string()));
        assert_eq!(registry.definitions().len(), offered.len() + 1);
    }
}
