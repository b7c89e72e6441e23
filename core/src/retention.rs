//! Retention limits for long-running sessions (seed 000).
//!
//! A session that runs for days accumulates run records, per-run event
//! buffers, trace events and terminal sub-agent task snapshots. These limits
//! cap each store. They are soft: inserting past a limit drops the oldest
//! entries and never fails. Running entries are never dropped.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

/// Caps on a session's in-memory stores; `unbounded` lifts them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRetentionLimits {
    pub max_runs_retained: usize,
    pub max_events_per_run: usize,
    pub max_event_bytes_per_run: usize,
    pub max_trace_events: usize,
    /// Not applicable until sub-agent tasks exist; kept so hosts can set it.
    pub max_terminal_subagent_tasks: usize,
    pub unbounded: bool,
}

impl Default for SessionRetentionLimits {
    fn default() -> Self {
        Self {
            max_runs_retained: 64,
            max_events_per_run: 2_048,
            max_event_bytes_per_run: 8 * 1024 * 1024,
            max_trace_events: 8_192,
            max_terminal_subagent_tasks: 512,
            unbounded: false,
        }
    }
}

impl SessionRetentionLimits {
    /// No caps at all: only for sessions known to be short.
    pub fn unbounded() -> Self {
        Self {
            unbounded: true,
            ..Self::default()
        }
    }

    fn cap(&self, limit: usize) -> usize {
        if self.unbounded {
            usize::MAX
        } else {
            limit
        }
    }

    pub fn runs(&self) -> usize {
        self.cap(self.max_runs_retained)
    }
    pub fn events_per_run(&self) -> usize {
        self.cap(self.max_events_per_run)
    }
    pub fn event_bytes_per_run(&self) -> usize {
        self.cap(self.max_event_bytes_per_run)
    }
    pub fn trace_events(&self) -> usize {
        self.cap(self.max_trace_events)
    }
}

/// A FIFO that keeps at most `max_len` items and `max_bytes` bytes, dropping
/// the oldest first. The newest item is always kept, even when it alone is
/// larger than `max_bytes`.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundedLog<T> {
    items: VecDeque<(T, usize)>,
    bytes: usize,
    dropped: u64,
}

impl<T> Default for BoundedLog<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> BoundedLog<T> {
    pub fn new() -> Self {
        Self {
            items: VecDeque::new(),
            bytes: 0,
            dropped: 0,
        }
    }

    pub fn push(&mut self, item: T, size: usize, max_len: usize, max_bytes: usize) {
        self.items.push_back((item, size));
        self.bytes += size;
        while self.items.len() > 1 && (self.items.len() > max_len || self.bytes > max_bytes) {
            if let Some((_, size)) = self.items.pop_front() {
                self.bytes -= size;
                self.dropped += 1;
            }
        }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn bytes(&self) -> usize {
        self.bytes
    }
    /// How many items were evicted so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter().map(|(item, _)| item)
    }
}

/// Drops the oldest entries for which `evictable` holds until at most `max`
/// remain; entries that are not evictable (running) are always kept.
pub fn evict_oldest<T>(items: &mut Vec<T>, max: usize, evictable: impl Fn(&T) -> bool) -> usize {
    let mut excess = items.len().saturating_sub(max);
    let before = items.len();
    items.retain(|item| {
        if excess > 0 && evictable(item) {
            excess -= 1;
            false
        } else {
            true
        }
    });
    before - items.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_seed_000() {
        let limits = SessionRetentionLimits::default();
        assert_eq!(limits.max_runs_retained, 64);
        assert_eq!(limits.max_events_per_run, 2_048);
        assert_eq!(limits.max_event_bytes_per_run, 8 * 1024 * 1024);
        assert_eq!(limits.max_trace_events, 8_192);
        assert_eq!(limits.max_terminal_subagent_tasks, 512);
        assert!(!limits.unbounded);
        assert_eq!(SessionRetentionLimits::unbounded().runs(), usize::MAX);
    }

    #[test]
    fn the_log_drops_oldest_by_count_and_bytes_but_keeps_the_newest() {
        let mut log = BoundedLog::new();
        for n in 0..10 {
            log.push(n, 10, 3, 1000);
        }
        assert_eq!(log.iter().copied().collect::<Vec<_>>(), vec![7, 8, 9]);
        assert_eq!(log.dropped(), 7);
        let mut log = BoundedLog::new();
        log.push("a", 40, 100, 100);
        log.push("b", 40, 100, 100);
        log.push("c", 40, 100, 100);
        assert_eq!(log.iter().copied().collect::<Vec<_>>(), vec!["b", "c"]);
        log.push("huge", 500, 100, 100);
        assert_eq!(log.iter().copied().collect::<Vec<_>>(), vec!["huge"]);
        assert_eq!(log.bytes(), 500);
    }

    #[test]
    fn eviction_skips_running_entries() {
        let mut runs = vec![("r1", true), ("r2", false), ("r3", true), ("r4", true)];
        let evicted = evict_oldest(&mut runs, 2, |(_, done)| *done);
        assert_eq!(evicted, 2);
        assert_eq!(runs, vec![("r2", false), ("r4", true)]);
    }
}
