//! Per-stream flow control: a window of events beyond the host's last ack.
//!
//! A stream may send event `seq` only while `seq <= acked + window` (with
//! nothing acked, while `seq < window`). When the window is used up the
//! stream's forwarder waits, its bounded channel from the run fills, and the
//! run itself waits: one slow consumer slows only its own run, and memory
//! stays bounded by the window on both sides.

use std::collections::HashMap;
use std::sync::Mutex;

use a3s_code_protocol::RequestId;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// The open streams' ack state, by request id.
#[derive(Debug, Default)]
pub struct StreamWindows {
    acks: Mutex<HashMap<RequestId, watch::Sender<Option<u64>>>>,
}

impl StreamWindows {
    /// Opens the window of a new stream.
    pub fn open(&self, id: RequestId, window: u64) -> WindowGate<'_> {
        let (tx, rx) = watch::channel(None);
        self.acks.lock().expect("acks").insert(id.clone(), tx);
        WindowGate {
            windows: self,
            id,
            rx,
            window,
        }
    }

    /// Records `$/streamAck`; acks never move backwards.
    pub fn ack(&self, id: &RequestId, seq: u64) {
        if let Some(tx) = self.acks.lock().expect("acks").get(id) {
            tx.send_if_modified(|acked| {
                if acked.is_none_or(|a| seq > a) {
                    *acked = Some(seq);
                    true
                } else {
                    false
                }
            });
        }
    }

    pub fn open_count(&self) -> usize {
        self.acks.lock().expect("acks").len()
    }
}

/// One stream's side of the window; closes the stream's entry when dropped.
pub struct WindowGate<'a> {
    windows: &'a StreamWindows,
    id: RequestId,
    rx: watch::Receiver<Option<u64>>,
    window: u64,
}

impl WindowGate<'_> {
    /// Waits until event `seq` may be sent. `false` if cancelled first.
    pub async fn admit(&mut self, seq: u64, cancel: &CancellationToken) -> bool {
        loop {
            let limit = match *self.rx.borrow() {
                Some(acked) => acked.saturating_add(1).saturating_add(self.window),
                None => self.window,
            };
            if seq < limit {
                return true;
            }
            tokio::select! {
                changed = self.rx.changed() => if changed.is_err() { return false },
                _ = cancel.cancelled() => return false,
            }
        }
    }
}

impl Drop for WindowGate<'_> {
    fn drop(&mut self) {
        self.windows.acks.lock().expect("acks").remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn admits_up_to_the_window_then_waits_for_acks() {
        let windows = StreamWindows::default();
        let cancel = CancellationToken::new();
        let id = RequestId::Number(1);
        let mut gate = windows.open(id.clone(), 2);
        assert!(gate.admit(0, &cancel).await);
        assert!(gate.admit(1, &cancel).await);
        let blocked = tokio::time::timeout(Duration::from_millis(50), gate.admit(2, &cancel)).await;
        assert!(blocked.is_err(), "event 2 must wait for an ack");
        windows.ack(&id, 0);
        assert!(gate.admit(2, &cancel).await);
        windows.ack(&id, 0); // stale acks change nothing
        cancel.cancel();
        assert!(!gate.admit(3, &cancel).await);
        drop(gate);
        assert_eq!(windows.open_count(), 0);
    }
}
