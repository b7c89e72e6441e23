//! What a session keeps in memory: conversation, usage, runs with their
//! retained events, the trace, and the run in progress.

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::emitter::EventSink;
use crate::llm::{Message, TokenUsage};
use crate::retention::{evict_oldest, BoundedLog, SessionRetentionLimits};
use crate::session::{EventRecord, RunRecord, RunStatus};

/// One model or tool call, for audits; kept within `max_trace_events`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TraceEvent {
    pub run_id: String,
    /// `llm` or `tool`.
    pub kind: String,
    pub name: String,
    pub started_ms: u64,
    pub ended_ms: u64,
    pub ok: bool,
}

/// A run and its retained events.
#[derive(Debug, Clone)]
pub(crate) struct RunEntry {
    pub record: RunRecord,
    pub events: BoundedLog<EventRecord>,
}

#[derive(Debug, Default)]
pub(crate) struct SessionState {
    pub history: Vec<Message>,
    pub usage: TokenUsage,
    pub runs: Vec<RunEntry>,
    pub trace: BoundedLog<TraceEvent>,
    pub retention: SessionRetentionLimits,
    pub active: Option<ActiveRun>,
}

/// The run in progress: how to stop it, passivate it, or add events to it.
#[derive(Debug)]
pub(crate) struct ActiveRun {
    pub run_id: String,
    pub cancel: CancellationToken,
    /// Set by `passivate`: the loop stops at its next safe point.
    pub passivation: Option<(String, Option<u64>)>,
    /// Turns `true` when the run has ended.
    pub ended: watch::Sender<bool>,
    /// The run's event sink, for host-injected events.
    pub sink: EventSink,
}

impl SessionState {
    /// Starts a run record, evicting the oldest finished runs past the limit.
    pub fn start_run(&mut self, record: RunRecord) {
        self.runs.push(RunEntry {
            record,
            events: BoundedLog::new(),
        });
        let max = self.retention.runs();
        evict_oldest(&mut self.runs, max, |run| {
            run.record.status != RunStatus::Running
        });
    }

    pub fn finish_run(&mut self, run_id: &str, status: RunStatus, ended_ms: u64) {
        if let Some(run) = self.runs.iter_mut().rev().find(|r| r.record.id == run_id) {
            run.record.status = status;
            run.record.ended_ms = Some(ended_ms);
        }
    }

    pub fn record_event(&mut self, record: &EventRecord) {
        let (max_len, max_bytes) = (
            self.retention.events_per_run(),
            self.retention.event_bytes_per_run(),
        );
        if let Some(run) = self
            .runs
            .iter_mut()
            .rev()
            .find(|r| r.record.id == record.run_id)
        {
            let size = encoded_len(&record.event);
            run.events.push(record.clone(), size, max_len, max_bytes);
        }
    }

    pub fn record_trace(&mut self, trace: TraceEvent) {
        let max = self.retention.trace_events();
        self.trace.push(trace, 1, max, usize::MAX);
    }
}

/// The JSON size of `value`, counted without building the string.
fn encoded_len<T: serde::Serialize>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}
