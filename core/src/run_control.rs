//! Controlling runs from outside the loop: saving, resuming a checkpointed
//! run, passivating at a safe point, and host-injected cluster events.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::agent_loop::LoopStart;
use crate::emitter::emit_to;
use crate::error::{CodeError, Result};
use crate::events::AgentEvent;
use crate::persist;
use crate::session::{RunResult, SendOptions, Session};

impl Session {
    /// Writes the session snapshot to its store now (runs also save it
    /// when they end). Without a store this does nothing.
    pub async fn save(&self) -> Result<()> {
        persist::save_snapshot(&self.inner).await
    }

    /// Continues run `run_id` from its loop checkpoint as a new run; the
    /// checkpointed run's record is left unchanged (seed 000).
    ///
    /// # Errors
    /// `resume_run requires a session_store on this session` without a
    /// store; `no loop checkpoint found for run 'X'` without a checkpoint; a
    /// store error for a future-version checkpoint or one of another session.
    pub async fn resume_run(&self, run_id: &str) -> Result<RunResult> {
        self.resume_run_with(run_id, SendOptions::default()).await
    }

    /// [`Session::resume_run`] with per-call options.
    pub async fn resume_run_with(&self, run_id: &str, options: SendOptions) -> Result<RunResult> {
        let checkpoint = persist::load_checkpoint(&self.inner, run_id).await?;
        let _busy = self.acquire()?;
        let cancel = options.cancel.unwrap_or_default();
        self.run(LoopStart::Resume(Box::new(checkpoint)), None, cancel)
            .await
    }

    /// Asks the running prompt to stop at its next safe point (after its
    /// current tool round settles and is checkpointed), emitting
    /// `passivation_requested`. Returns the id of the run to resume
    /// elsewhere, or `None` when nothing runs. Past `deadline_ms` (Unix epoch
    /// milliseconds, wall clock) the run is cancelled and its last
    /// checkpoint stands.
    pub async fn passivate(
        &self,
        reason: &str,
        deadline_ms: Option<u64>,
    ) -> Result<Option<String>> {
        let (run_id, cancel, mut ended, sink) = {
            let mut state = self.inner.state.lock().expect("session state");
            let Some(active) = state.active.as_mut() else {
                return Ok(None);
            };
            active.passivation = Some((reason.to_string(), deadline_ms));
            (
                active.run_id.clone(),
                active.cancel.clone(),
                active.ended.subscribe(),
                active.sink.clone(),
            )
        };
        let event = AgentEvent::PassivationRequested {
            reason: reason.to_string(),
            deadline_ms,
        };
        emit_to(&self.inner, &run_id, &sink, &cancel, event).await;
        let wait = ended.wait_for(|done| *done);
        let reached = match deadline_ms {
            Some(deadline) => {
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as u64);
                let remaining = Duration::from_millis(deadline.saturating_sub(now));
                tokio::time::timeout(remaining, wait).await.is_ok()
            }
            None => wait.await.is_ok(),
        };
        if !reached {
            tracing::warn!("run {run_id} missed its passivation deadline; cancelling it");
            cancel.cancel();
            let _ = ended.wait_for(|done| *done).await;
        }
        Ok(Some(run_id))
    }

    /// Delivers a host-produced cluster event (`passivation_requested`,
    /// `peer_invocation`) to the running prompt's event stream. Returns
    /// whether a run was there to receive it. Such events are never hook
    /// events: only stream consumers see them.
    pub async fn inject_event(&self, event: AgentEvent) -> Result<bool> {
        if !event.is_host_injectable() {
            return Err(CodeError::InvalidArgument(format!(
                "only passivation_requested and peer_invocation may be injected, not {}",
                event.tag()
            )));
        }
        let target = {
            let state = self.inner.state.lock().expect("session state");
            state
                .active
                .as_ref()
                .map(|a| (a.run_id.clone(), a.sink.clone(), a.cancel.clone()))
        };
        let Some((run_id, sink, cancel)) = target else {
            return Ok(false);
        };
        emit_to(&self.inner, &run_id, &sink, &cancel, event).await;
        Ok(true)
    }
}
