//! Saving and loading a session's documents through its store.
//!
//! Snapshot and checkpoint writes that fail are logged, not raised: a run
//! in progress is worth more than its bookkeeping (seed 002 takes the same
//! line for workflow checkpoints). Loads that fail are raised: restoring
//! from a corrupt or future document must never silently start afresh.

use crate::error::{CodeError, Result};
use crate::session::SessionInner;
use crate::snapshot::{
    LoopCheckpoint, SessionSnapshot, CHECKPOINT_SCHEMA_VERSION, SESSION_SCHEMA_VERSION,
};
use crate::store::{load_doc, save_doc, DocKind, SessionStore};

/// The session as a snapshot document.
pub(crate) fn snapshot(session: &SessionInner) -> SessionSnapshot {
    let state = session.state.lock().expect("session state");
    SessionSnapshot {
        schema_version: SESSION_SCHEMA_VERSION,
        session_id: session.id.clone(),
        tenant_id: session.identity.tenant_id.clone(),
        principal: session.identity.principal.clone(),
        agent_template_id: session.identity.agent_template_id.clone(),
        correlation_id: session.identity.correlation_id.clone(),
        history: state.history.clone(),
        usage: state.usage,
        runs: state.runs.iter().map(|r| r.record.clone()).collect(),
        created_ms: session.created_ms,
        updated_ms: session.host_env.now_ms(),
    }
}

/// Writes the session snapshot; `Ok` without a store.
pub(crate) async fn save_snapshot(session: &SessionInner) -> Result<()> {
    let Some(store) = &session.store else {
        return Ok(());
    };
    let doc = snapshot(session);
    save_doc(store.as_ref(), DocKind::Session, &session.id, &doc).await?;
    Ok(())
}

/// Like [`save_snapshot`], for the end of a run: failures are logged.
pub(crate) async fn save_snapshot_logged(session: &SessionInner) {
    if let Err(error) = save_snapshot(session).await {
        tracing::warn!("saving session {} failed: {error}", session.id);
    }
}

pub(crate) async fn load_snapshot(
    store: &dyn SessionStore,
    session_id: &str,
) -> Result<Option<SessionSnapshot>> {
    Ok(load_doc(store, DocKind::Session, session_id, SESSION_SCHEMA_VERSION).await?)
}

pub(crate) async fn write_checkpoint(session: &SessionInner, checkpoint: &LoopCheckpoint) {
    let Some(store) = &session.store else { return };
    if let Err(error) = save_doc(
        store.as_ref(),
        DocKind::LoopCheckpoint,
        &checkpoint.run_id,
        checkpoint,
    )
    .await
    {
        tracing::warn!(
            "saving the loop checkpoint of run {} failed: {error}",
            checkpoint.run_id
        );
    }
}

pub(crate) async fn delete_checkpoint(session: &SessionInner, run_id: &str) {
    let Some(store) = &session.store else { return };
    if let Err(error) = store.delete(DocKind::LoopCheckpoint, run_id).await {
        tracing::warn!("deleting the loop checkpoint of run {run_id} failed: {error}");
    }
}

/// The checkpoint `resume_run` continues from, with the seed's error texts.
pub(crate) async fn load_checkpoint(
    session: &SessionInner,
    run_id: &str,
) -> Result<LoopCheckpoint> {
    let store = session.store.as_ref().ok_or(CodeError::NoSessionStore)?;
    let checkpoint: LoopCheckpoint = load_doc(
        store.as_ref(),
        DocKind::LoopCheckpoint,
        run_id,
        CHECKPOINT_SCHEMA_VERSION,
    )
    .await?
    .ok_or_else(|| CodeError::CheckpointNotFound(run_id.to_string()))?;
    if checkpoint.session_id != session.id {
        return Err(CodeError::Store(format!(
            "loop checkpoint of run '{run_id}' belongs to session '{}', not '{}'",
            checkpoint.session_id, session.id
        )));
    }
    if checkpoint.run_id != run_id {
        return Err(CodeError::Store(format!(
            "loop checkpoint stored under run '{run_id}' names run '{}'",
            checkpoint.run_id
        )));
    }
    Ok(checkpoint)
}
