//! Emits a run's events: numbered, timestamped, retained, and streamed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::events::AgentEvent;
use crate::session::{EventRecord, SessionInner};

/// Emits events with run metadata, in order, waiting when the consumer is slow.
///
/// The loop and host-injected events share one `EventSink`, so both draw
/// sequence numbers from one counter and reach the consumer in that order.
#[derive(Clone)]
pub(crate) struct Emitter {
    pub session: Arc<SessionInner>,
    pub run_id: String,
    pub sink: EventSink,
    pub cancel: CancellationToken,
}

/// The shared half of an emitter: counter, ordering lock, consumer channel.
#[derive(Clone, Debug, Default)]
pub(crate) struct EventSink {
    pub seq: Arc<AtomicU64>,
    pub order: Arc<tokio::sync::Mutex<()>>,
    pub tx: Option<mpsc::Sender<EventRecord>>,
}

impl Emitter {
    pub fn new(
        session: Arc<SessionInner>,
        run_id: String,
        tx: Option<mpsc::Sender<EventRecord>>,
        cancel: CancellationToken,
    ) -> Self {
        Self {
            session,
            run_id,
            sink: EventSink {
                tx,
                ..EventSink::default()
            },
            cancel,
        }
    }

    pub async fn emit(&mut self, event: AgentEvent) {
        emit_to(&self.session, &self.run_id, &self.sink, &self.cancel, event).await;
    }
}

/// Numbers, records and delivers one event of run `run_id`.
pub(crate) async fn emit_to(
    session: &SessionInner,
    run_id: &str,
    sink: &EventSink,
    cancel: &CancellationToken,
    event: AgentEvent,
) {
    let _order = sink.order.lock().await;
    let record = EventRecord {
        event,
        run_id: run_id.to_string(),
        session_id: session.id.clone(),
        seq: sink.seq.fetch_add(1, Ordering::Relaxed),
        timestamp_ms: session.host_env.now_ms(),
    };
    session
        .state
        .lock()
        .expect("session state")
        .record_event(&record);
    if let Some(tx) = &sink.tx {
        // A dropped receiver means nobody listens any more; the run goes
        // on. A cancelled run stops waiting for a stalled consumer.
        tokio::select! {
            _ = tx.send(record) => {}
            _ = cancel.cancelled() => {}
        }
    }
}
