//! Where ids and timestamps come from.
//!
//! Every id and every timestamp the runtime produces is taken from a
//! [`HostEnv`], so that a replay tool can swap in [`SequentialIdGenerator`] and
//! [`FixedClock`] and get byte-identical output on any node (seed 000,
//! "deterministic ids and time").

use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// Produces identifiers for sessions, runs, tool calls and events.
pub trait IdGenerator: Send + Sync + Debug {
    /// Returns a fresh id. `kind` names what the id is for (`session`, `run`, ...)
    /// so generators may embed it; ids must be unique per generator.
    fn next_id(&self, kind: &str) -> String;
}

/// Tells the time in Unix epoch milliseconds.
pub trait Clock: Send + Sync + Debug {
    fn now_ms(&self) -> u64;
}

/// Random UUID v4 ids: the default.
#[derive(Debug, Default)]
pub struct UuidIdGenerator;

impl IdGenerator for UuidIdGenerator {
    fn next_id(&self, _kind: &str) -> String {
        uuid::Uuid::new_v4().to_string()
    }
}

/// `<prefix>-<kind>-<n>` ids, `n` counting from 1: for replay and tests.
#[derive(Debug)]
pub struct SequentialIdGenerator {
    prefix: String,
    next: AtomicU64,
}

impl SequentialIdGenerator {
    pub fn new(prefix: impl Into<String>) -> Self {
        Self {
            prefix: prefix.into(),
            next: AtomicU64::new(1),
        }
    }
}

impl IdGenerator for SequentialIdGenerator {
    fn next_id(&self, kind: &str) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        format!("{}-{}-{}", self.prefix, kind, n)
    }
}

/// The wall clock: the default.
#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
    }
}

/// A clock that always answers the same instant: for replay and tests.
#[derive(Debug)]
pub struct FixedClock {
    ms: u64,
}

impl FixedClock {
    pub fn new(ms: u64) -> Self {
        Self { ms }
    }
}

impl Clock for FixedClock {
    fn now_ms(&self) -> u64 {
        self.ms
    }
}

/// The pair of nondeterministic sources a session uses.
#[derive(Debug, Clone)]
pub struct HostEnv {
    pub id_generator: Arc<dyn IdGenerator>,
    pub clock: Arc<dyn Clock>,
}

impl HostEnv {
    pub fn new(id_generator: Arc<dyn IdGenerator>, clock: Arc<dyn Clock>) -> Self {
        Self {
            id_generator,
            clock,
        }
    }

    pub fn next_id(&self, kind: &str) -> String {
        self.id_generator.next_id(kind)
    }

    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }
}

impl Default for HostEnv {
    fn default() -> Self {
        Self::new(Arc::new(UuidIdGenerator), Arc::new(SystemClock))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_ids_count_per_generator_and_carry_prefix_and_kind() {
        let ids = SequentialIdGenerator::new("replay");
        assert_eq!(ids.next_id("session"), "replay-session-1");
        assert_eq!(ids.next_id("run"), "replay-run-2");
    }

    #[test]
    fn fixed_clock_never_moves() {
        let clock = FixedClock::new(1_700_000_000_000);
        assert_eq!(clock.now_ms(), 1_700_000_000_000);
        assert_eq!(clock.now_ms(), 1_700_000_000_000);
    }

    #[test]
    fn default_env_gives_distinct_ids_and_a_current_time() {
        let env = HostEnv::default();
        assert_ne!(env.next_id("x"), env.next_id("x"));
        assert!(env.now_ms() > 1_600_000_000_000);
    }
}
