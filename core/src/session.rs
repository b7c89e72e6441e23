//! `Session`: one conversation in one workspace, running one prompt at a time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent_loop::{run_loop, LoopInput, LoopStart};
use crate::artifacts::{ArtifactError, ArtifactLimits, ArtifactSlice, ArtifactStore};
use crate::budget::BudgetGuard;
use crate::error::{CodeError, Result};
use crate::events::AgentEvent;
use crate::host_env::HostEnv;
use crate::llm::{LlmClient, Message, TokenUsage};
use crate::permissions::{ConfirmationHandler, PermissionPolicy};
use crate::retention::SessionRetentionLimits;
use crate::session_state::SessionState;
pub use crate::session_state::TraceEvent;
use crate::snapshot::SessionSnapshot;
use crate::store::SessionStore;
use crate::tool_call::run_direct;
pub use crate::tool_call::DirectToolResult;
use crate::tools::{ToolRegistry, Workspace};

/// Events buffered between a running loop and a slow stream consumer; when
/// full, the loop waits (backpressure instead of unbounded memory).
pub const STREAM_BUFFER: usize = 64;

/// The outcome of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunResult {
    pub run_id: String,
    pub text: String,
    pub usage: TokenUsage,
    pub tool_calls_count: usize,
}

/// An event with the metadata of where and when it happened.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRecord {
    pub event: AgentEvent,
    pub run_id: String,
    pub session_id: String,
    /// Position of the event within its run, from 0.
    pub seq: u64,
    pub timestamp_ms: u64,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Completed,
    Failed,
    Cancelled,
    /// Stopped at a safe point on the host's request; its checkpoint stands.
    Passivated,
}

/// The record of one run of a session.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunRecord {
    pub id: String,
    pub status: RunStatus,
    pub prompt: String,
    pub started_ms: u64,
    pub ended_ms: Option<u64>,
}

/// Per-call options of [`Session::send`] and [`Session::stream_with`].
#[derive(Debug, Clone, Default)]
pub struct SendOptions {
    /// Cancelling this token stops the run: the model stream is dropped and
    /// running tools are cancelled.
    pub cancel: Option<CancellationToken>,
}

/// The four opaque identity tags of seed 000.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdentityTags {
    pub tenant_id: Option<String>,
    pub principal: Option<String>,
    pub agent_template_id: Option<String>,
    pub correlation_id: Option<String>,
}

pub(crate) struct SessionSetup {
    pub id: String,
    pub identity: IdentityTags,
    pub workspace: Arc<Workspace>,
    pub llm: Arc<dyn LlmClient>,
    pub model_id: String,
    pub system_prompt: Option<String>,
    pub max_tool_rounds: usize,
    pub tools: ToolRegistry,
    pub host_env: Arc<HostEnv>,
    pub budget_guard: Option<Arc<dyn BudgetGuard>>,
    pub permission_policy: Option<PermissionPolicy>,
    pub confirmation: Option<Arc<dyn ConfirmationHandler>>,
    pub confirmation_timeout_ms: u64,
    pub retention: SessionRetentionLimits,
    pub artifact_limits: ArtifactLimits,
    pub store: Option<Arc<dyn SessionStore>>,
    pub compaction: Option<crate::compaction::CompactionPolicy>,
    /// What a store held for this session id, to continue from.
    pub restored: Option<SessionSnapshot>,
}

pub(crate) struct SessionInner {
    pub id: String,
    pub identity: IdentityTags,
    pub workspace: Arc<Workspace>,
    pub llm: Arc<dyn LlmClient>,
    pub model_id: String,
    pub system_prompt: Option<String>,
    pub max_tool_rounds: usize,
    pub tools: ToolRegistry,
    pub host_env: Arc<HostEnv>,
    pub budget_guard: Mutex<Option<Arc<dyn BudgetGuard>>>,
    pub permission_policy: Option<PermissionPolicy>,
    pub confirmation: Option<Arc<dyn ConfirmationHandler>>,
    pub confirmation_timeout_ms: u64,
    pub artifacts: ArtifactStore,
    pub store: Option<Arc<dyn SessionStore>>,
    pub compaction: Option<crate::compaction::CompactionPolicy>,
    pub created_ms: u64,
    pub state: Mutex<SessionState>,
    busy: AtomicBool,
    closed: CancellationToken,
}

impl SessionInner {
    /// Definitions of the tools offered to the model.
    pub(crate) fn offered_tools(&self) -> Vec<crate::llm::ToolDefinition> {
        self.tools
            .definitions_for(&self.workspace)
            .into_iter()
            .filter(|d| {
                self.permission_policy
                    .as_ref()
                    .is_none_or(|p| !p.denies_outright(&d.name))
            })
            .collect()
    }
}

/// A handle to a session; clones share it.
#[derive(Clone)]
pub struct Session {
    pub(crate) inner: Arc<SessionInner>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.inner.id)
            .finish()
    }
}

impl Session {
    pub(crate) fn new(setup: SessionSetup) -> Self {
        let mut state = SessionState {
            retention: setup.retention,
            ..SessionState::default()
        };
        let mut created_ms = setup.host_env.now_ms();
        if let Some(snapshot) = setup.restored {
            created_ms = snapshot.created_ms;
            state.history = snapshot.history;
            state.usage = snapshot.usage;
            for record in snapshot.runs {
                state.start_run(record);
            }
        }
        Self {
            inner: Arc::new(SessionInner {
                id: setup.id.clone(),
                identity: setup.identity,
                workspace: setup.workspace,
                llm: setup.llm,
                model_id: setup.model_id,
                system_prompt: setup.system_prompt,
                max_tool_rounds: setup.max_tool_rounds,
                tools: setup.tools,
                host_env: setup.host_env,
                budget_guard: Mutex::new(setup.budget_guard),
                permission_policy: setup.permission_policy,
                confirmation: setup.confirmation,
                confirmation_timeout_ms: setup.confirmation_timeout_ms,
                artifacts: ArtifactStore::new(setup.id.clone(), setup.artifact_limits),
                store: setup.store,
                compaction: setup.compaction,
                created_ms,
                state: Mutex::new(state),
                busy: AtomicBool::new(false),
                closed: CancellationToken::new(),
            }),
        }
    }

    pub fn session_id(&self) -> &str {
        &self.inner.id
    }

    pub fn tenant_id(&self) -> Option<&str> {
        self.inner.identity.tenant_id.as_deref()
    }

    pub fn principal(&self) -> Option<&str> {
        self.inner.identity.principal.as_deref()
    }

    pub fn agent_template_id(&self) -> Option<&str> {
        self.inner.identity.agent_template_id.as_deref()
    }

    pub fn correlation_id(&self) -> Option<&str> {
        self.inner.identity.correlation_id.as_deref()
    }

    pub fn identity(&self) -> &IdentityTags {
        &self.inner.identity
    }

    pub fn workspace(&self) -> &Workspace {
        &self.inner.workspace
    }

    /// Names of the tools offered to the model: those the permission policy
    /// does not deny outright.
    pub fn tool_names(&self) -> Vec<String> {
        self.inner
            .offered_tools()
            .into_iter()
            .map(|d| d.name)
            .collect()
    }

    /// The conversation so far.
    pub fn history(&self) -> Vec<Message> {
        self.inner
            .state
            .lock()
            .expect("session state")
            .history
            .clone()
    }

    /// Token usage summed over every run.
    pub fn usage(&self) -> TokenUsage {
        self.inner.state.lock().expect("session state").usage
    }

    /// Every retained run of this session, oldest first.
    pub fn runs(&self) -> Vec<RunRecord> {
        let state = self.inner.state.lock().expect("session state");
        state.runs.iter().map(|r| r.record.clone()).collect()
    }

    /// The retained events of one run, oldest first.
    pub fn run_events(&self, run_id: &str) -> Vec<EventRecord> {
        let state = self.inner.state.lock().expect("session state");
        state
            .runs
            .iter()
            .find(|r| r.record.id == run_id)
            .map(|r| r.events.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The retained trace of model and tool calls, oldest first.
    pub fn trace(&self) -> Vec<TraceEvent> {
        let state = self.inner.state.lock().expect("session state");
        state.trace.iter().cloned().collect()
    }

    /// Reads a stored artifact by id or `artifact://` URI, by byte range.
    pub fn read_artifact(
        &self,
        id_or_uri: &str,
        offset: usize,
        limit: usize,
    ) -> Result<ArtifactSlice, ArtifactError> {
        self.inner.artifacts.read(id_or_uri, offset, limit)
    }

    /// Every retained artifact, oldest first.
    pub fn artifacts(&self) -> Vec<crate::artifacts::ArtifactRef> {
        self.inner.artifacts.list()
    }

    /// Installs (`Some`) or clears (`None`) the budget guard for later calls.
    pub fn set_budget_guard(&self, guard: Option<Arc<dyn BudgetGuard>>) {
        *self.inner.budget_guard.lock().expect("budget guard") = guard;
    }

    /// Runs `prompt` to completion and returns the final answer.
    pub async fn send(&self, prompt: &str, options: Option<SendOptions>) -> Result<RunResult> {
        let cancel = options.and_then(|o| o.cancel).unwrap_or_default();
        let _busy = self.acquire()?;
        self.run(LoopStart::Prompt(prompt.to_string()), None, cancel)
            .await
    }

    /// Runs `prompt`, yielding its events as they happen.
    pub fn stream(&self, prompt: &str) -> Result<RunStream> {
        self.stream_with(prompt, SendOptions::default())
    }

    /// [`Session::stream`] with per-call options.
    pub fn stream_with(&self, prompt: &str, options: SendOptions) -> Result<RunStream> {
        let busy = self.acquire()?;
        let (tx, rx) = mpsc::channel(STREAM_BUFFER);
        let session = self.clone();
        let prompt = prompt.to_string();
        let cancel = options.cancel.unwrap_or_default();
        let handle = tokio::spawn(async move {
            let _busy = busy;
            session
                .run(LoopStart::Prompt(prompt), Some(tx), cancel)
                .await
        });
        Ok(RunStream { rx, handle })
    }

    /// Runs one tool directly for the host (see [`DirectToolResult`]).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: serde_json::Value,
        cancel: Option<CancellationToken>,
    ) -> Result<DirectToolResult> {
        if self.is_closed() {
            return Err(CodeError::SessionClosed(self.inner.id.clone()));
        }
        if self.inner.tools.get(name).is_none() {
            return Err(CodeError::InvalidArgument(format!("unknown tool '{name}'")));
        }
        Ok(run_direct(
            self.inner.clone(),
            name,
            arguments,
            cancel.unwrap_or_default(),
        )
        .await)
    }

    /// Closes the session: a running prompt is cancelled, later calls fail.
    pub async fn close(&self) {
        self.inner.closed.cancel();
    }

    pub fn is_closed(&self) -> bool {
        self.inner.closed.is_cancelled()
    }

    pub(crate) fn acquire(&self) -> Result<BusyGuard> {
        if self.is_closed() {
            return Err(CodeError::SessionClosed(self.inner.id.clone()));
        }
        if self.inner.busy.swap(true, Ordering::AcqRel) {
            return Err(CodeError::SessionBusy(self.inner.id.clone()));
        }
        Ok(BusyGuard {
            inner: self.inner.clone(),
        })
    }

    pub(crate) async fn run(
        &self,
        start: LoopStart,
        sink: Option<mpsc::Sender<EventRecord>>,
        cancel: CancellationToken,
    ) -> Result<RunResult> {
        // Closing the session cancels its run as well.
        let cancel = {
            let linked = cancel.child_token();
            let closed = self.inner.closed.clone();
            let stop = linked.clone();
            tokio::spawn(async move {
                tokio::select! {
                    _ = closed.cancelled() => stop.cancel(),
                    _ = stop.cancelled() => {}
                }
            });
            linked
        };
        let result = run_loop(LoopInput {
            session: self.inner.clone(),
            start,
            sink,
            cancel: cancel.clone(),
        })
        .await;
        cancel.cancel();
        result
    }
}

/// Marks the session busy for as long as it lives.
pub(crate) struct BusyGuard {
    inner: Arc<SessionInner>,
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.inner.busy.store(false, Ordering::Release);
    }
}

/// The events of a streamed run, then its result.
#[derive(Debug)]
pub struct RunStream {
    rx: mpsc::Receiver<EventRecord>,
    handle: tokio::task::JoinHandle<Result<RunResult>>,
}

impl RunStream {
    /// The next event, or `None` once the run has emitted its last one.
    pub async fn next(&mut self) -> Option<EventRecord> {
        self.rx.recv().await
    }

    /// Waits for the run to end (draining unread events) and returns its result.
    pub async fn result(mut self) -> Result<RunResult> {
        while self.rx.recv().await.is_some() {}
        self.handle
            .await
            .map_err(|e| CodeError::Internal(format!("run task failed: {e}")))?
    }
}
