//! `Agent`: a loaded configuration that builds sessions.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::AgentConfig;
use crate::error::{CodeError, Result};
use crate::llm::client_for;
use crate::options::{SessionOptions, DEFAULT_MAX_TOOL_ROUNDS};
use crate::persist;
use crate::session::{IdentityTags, Session, SessionSetup};
use crate::snapshot::SessionSnapshot;
use crate::tools::{ToolRegistry, Workspace};

/// An agent configuration, ready to build sessions.
#[derive(Debug, Clone)]
pub struct Agent {
    config: Arc<AgentConfig>,
}

impl Agent {
    /// Loads the configuration from an ACL file path or inline ACL text.
    pub async fn new(path_or_inline_acl: &str) -> Result<Self> {
        let source = path_or_inline_acl.to_string();
        let config = tokio::task::spawn_blocking(move || AgentConfig::load(&source))
            .await
            .map_err(|e| CodeError::Config(format!("config loader failed: {e}")))??;
        Ok(Self::from_config(config))
    }

    pub fn from_config(config: AgentConfig) -> Self {
        Self {
            config: Arc::new(config),
        }
    }

    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// Starts building a session that works in `workspace`.
    pub fn session_builder(&self, workspace: impl AsRef<Path>) -> SessionBuilder {
        SessionBuilder {
            config: self.config.clone(),
            workspace: workspace.as_ref().to_path_buf(),
            options: SessionOptions::default(),
        }
    }

    /// Releases the agent. Sessions hold what they need and stay usable until
    /// closed themselves.
    pub async fn close(&self) {}
}

/// Builds a [`Session`].
#[derive(Debug)]
pub struct SessionBuilder {
    config: Arc<AgentConfig>,
    workspace: PathBuf,
    options: SessionOptions,
}

impl SessionBuilder {
    pub fn options(mut self, options: SessionOptions) -> Self {
        self.options = options;
        self
    }

    pub async fn build(self) -> Result<Session> {
        let SessionBuilder {
            config,
            workspace,
            options,
        } = self;
        if let Some(policy) = &options.permission_policy {
            let invalid = policy.invalid_rules();
            if !invalid.is_empty() {
                return Err(CodeError::InvalidArgument(format!(
                    "invalid permission rules: {}",
                    invalid.join(", ")
                )));
            }
        }
        let workspace = Workspace::new(&workspace).map_err(|e| {
            CodeError::InvalidArgument(format!("workspace {}: {e}", workspace.display()))
        })?;
        let llm = match &options.llm_client {
            Some(client) => client.clone(),
            None => {
                let model = options
                    .model
                    .clone()
                    .or_else(|| config.default_model.clone())
                    .ok_or_else(|| {
                        CodeError::Config(
                            "no model: set default_model or SessionOptions::with_model".into(),
                        )
                    })?;
                let (provider, model_config) = config.resolve_model(&model)?;
                client_for(provider, &model_config)?
            }
        };
        let model_id = options
            .model
            .clone()
            .or_else(|| config.default_model.clone())
            .and_then(|m| m.split_once('/').map(|(_, id)| id.to_string()))
            .unwrap_or_default();
        let host_env = options.host_env.clone().unwrap_or_default();
        let id = options
            .session_id
            .clone()
            .unwrap_or_else(|| host_env.next_id("session"));
        // A stored session with this id is continued; a corrupt or future
        // document is refused here, before anything could overwrite it.
        let restored = match &options.session_store {
            Some(store) => persist::load_snapshot(store.as_ref(), &id).await?,
            None => None,
        };
        let stored = restored
            .as_ref()
            .map(SessionSnapshot::identity)
            .unwrap_or_default();
        // Options given now take precedence, so a host can relabel a session it moves.
        let identity = IdentityTags {
            tenant_id: options.tenant_id.clone().or(stored.tenant_id),
            principal: options.principal.clone().or(stored.principal),
            agent_template_id: options
                .agent_template_id
                .clone()
                .or(stored.agent_template_id),
            correlation_id: options.correlation_id.clone().or(stored.correlation_id),
        };
        let session = Session::new(SessionSetup {
            id,
            identity,
            store: options.session_store.clone(),
            compaction: match (options.auto_compact, options.max_context_tokens) {
                (true, Some(max_context_tokens)) => Some(crate::compaction::CompactionPolicy {
                    max_context_tokens,
                    threshold: options.auto_compact_threshold.unwrap_or(0.8),
                }),
                _ => None,
            },
            restored,
            workspace: Arc::new(workspace),
            llm,
            model_id,
            system_prompt: options
                .system_prompt
                .clone()
                .or_else(|| config.system_prompt.clone()),
            max_tool_rounds: options
                .max_tool_rounds
                .or(config.max_tool_rounds)
                .unwrap_or(DEFAULT_MAX_TOOL_ROUNDS),
            tools: ToolRegistry::builtin(),
            host_env,
            budget_guard: options.budget_guard.clone(),
            permission_policy: options.permission_policy.clone(),
            confirmation: options.confirmation_handler.clone(),
            retention: options.retention_limits.unwrap_or_default(),
            artifact_limits: options.artifact_limits.unwrap_or_default(),
            confirmation_timeout_ms: options
                .confirmation_timeout_ms
                .unwrap_or(crate::permissions::DEFAULT_CONFIRMATION_TIMEOUT_MS),
        });
        persist::save_snapshot(&session.inner).await?;
        Ok(session)
    }
}
