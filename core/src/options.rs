//! Per-session options, set with builder methods.

use std::sync::Arc;

use crate::artifacts::ArtifactLimits;
use crate::budget::BudgetGuard;
use crate::host_env::HostEnv;
use crate::llm::LlmClient;
use crate::permissions::{ConfirmationHandler, PermissionPolicy};
use crate::retention::SessionRetentionLimits;
use crate::store::{FileSessionStore, SessionStore};

/// Tool rounds a run may take before it stops without a final answer.
pub const DEFAULT_MAX_TOOL_ROUNDS: usize = 25;

/// How a session is built. Every field is optional; `None` means the
/// agent configuration's value or the runtime default.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    pub model: Option<String>,
    pub system_prompt: Option<String>,
    pub max_tool_rounds: Option<usize>,
    pub session_id: Option<String>,
    pub host_env: Option<Arc<HostEnv>>,
    pub budget_guard: Option<Arc<dyn BudgetGuard>>,
    pub llm_client: Option<Arc<dyn LlmClient>>,
    /// Opaque identity tags (seed 000); the runtime never interprets them.
    /// They are persisted with the session and restored with it; values
    /// given when a stored session is reopened win. Seed 000's one
    /// exception, tags defaulting to (and having to match) a durable-memory
    /// binding's namespace, does not apply: this runtime has no durable
    /// memory yet.
    pub tenant_id: Option<String>,
    pub principal: Option<String>,
    pub agent_template_id: Option<String>,
    pub correlation_id: Option<String>,
    /// Which tool calls may run; `None` lets every call run.
    pub permission_policy: Option<PermissionPolicy>,
    /// Answers the policy's `ask` decisions; without one, `ask` means deny.
    pub confirmation_handler: Option<Arc<dyn ConfirmationHandler>>,
    /// Deadline of each confirmation (default 60 s).
    pub confirmation_timeout_ms: Option<u64>,
    /// Caps on runs, events and traces kept in memory (seed 000 defaults).
    pub retention_limits: Option<SessionRetentionLimits>,
    /// When tool output becomes an artifact, and how many are kept.
    pub artifact_limits: Option<ArtifactLimits>,
    /// Where the session, its runs and its loop checkpoints are persisted.
    pub session_store: Option<Arc<dyn SessionStore>>,
    /// The model's context window in tokens; enables `auto_compact`.
    pub max_context_tokens: Option<usize>,
    /// Summarise older turns when a request would pass the threshold.
    pub auto_compact: bool,
    /// Fraction of `max_context_tokens` that triggers compaction (default 0.8).
    pub auto_compact_threshold: Option<f64>,
}

impl SessionOptions {
    pub fn new() -> Self {
        Self::default()
    }

    /// Uses `provider/model` instead of the configuration's `default_model`.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    pub fn with_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    pub fn with_max_tool_rounds(mut self, rounds: usize) -> Self {
        self.max_tool_rounds = Some(rounds);
        self
    }

    /// Uses this id instead of generating one (to restore a stored session).
    pub fn with_session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    pub fn with_host_env(mut self, host_env: Arc<HostEnv>) -> Self {
        self.host_env = Some(host_env);
        self
    }

    pub fn with_budget_guard(mut self, guard: Arc<dyn BudgetGuard>) -> Self {
        self.budget_guard = Some(guard);
        self
    }

    pub fn with_tenant_id(mut self, id: impl Into<String>) -> Self {
        self.tenant_id = Some(id.into());
        self
    }

    pub fn with_principal(mut self, principal: impl Into<String>) -> Self {
        self.principal = Some(principal.into());
        self
    }

    pub fn with_agent_template_id(mut self, id: impl Into<String>) -> Self {
        self.agent_template_id = Some(id.into());
        self
    }

    pub fn with_correlation_id(mut self, id: impl Into<String>) -> Self {
        self.correlation_id = Some(id.into());
        self
    }

    pub fn with_permission_policy(mut self, policy: PermissionPolicy) -> Self {
        self.permission_policy = Some(policy);
        self
    }

    pub fn with_confirmation_handler(mut self, handler: Arc<dyn ConfirmationHandler>) -> Self {
        self.confirmation_handler = Some(handler);
        self
    }

    /// Persists the session as files under `dir` (atomic writes).
    pub fn with_file_session_store(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.session_store = Some(Arc::new(FileSessionStore::new(dir)));
        self
    }

    pub fn with_session_store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.session_store = Some(store);
        self
    }

    pub fn with_max_context_tokens(mut self, tokens: usize) -> Self {
        self.max_context_tokens = Some(tokens);
        self
    }

    /// Turns automatic compaction on; `threshold` is a fraction of
    /// `max_context_tokens` (the seed's sample uses 0.8).
    pub fn with_auto_compact(mut self, threshold: f64) -> Self {
        self.auto_compact = true;
        self.auto_compact_threshold = Some(threshold);
        self
    }

    pub fn with_retention_limits(mut self, limits: SessionRetentionLimits) -> Self {
        self.retention_limits = Some(limits);
        self
    }

    pub fn with_artifact_limits(mut self, limits: ArtifactLimits) -> Self {
        self.artifact_limits = Some(limits);
        self
    }

    pub fn with_confirmation_timeout_ms(mut self, timeout_ms: u64) -> Self {
        self.confirmation_timeout_ms = Some(timeout_ms);
        self
    }

    /// Injects a model client, bypassing the configured providers.
    pub fn with_llm_client(mut self, client: Arc<dyn LlmClient>) -> Self {
        self.llm_client = Some(client);
        self
    }
}
