//! Emits a run's events: numbered, timestamped, retained, and streamed.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::events::AgentEvent;
use crate::session::{EventRecord, SessionInner};

/// Emits events with run metadata, in order, waiting when the consumer is slow.
pub(crate) struct Emitter {
    pub session: Arc<SessionInner>,
    pub run_id: String,
    pub seq: u64,
    pub sink: Option<mpsc::Sender<EventRecord>>,
    pub cancel: CancellationToken,
}

impl Emitter {
    pub async fn emit(&mut self, event: AgentEvent) {
        let record = EventRecord {
            event,
            run_id: self.run_id.clone(),
            session_id: self.session.id.clone(),
            seq: self.seq,
            timestamp_ms: self.session.host_env.now_ms(),
        };
        self.seq += 1;
        self.session
            .state
            .lock()
            .expect("session state")
            .record_event(&record);
        if let Some(sink) = &self.sink {
            // A dropped receiver means nobody listens any more; the run goes
            // on. A cancelled run stops waiting for a stalled consumer.
            tokio::select! {
                _ = sink.send(record) => {}
                _ = self.cancel.cancelled() => {}
            }
        }
    }
}
