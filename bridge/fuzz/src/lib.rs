//! # a3s-code-bridge-fuzz: a mutation fuzzer for the bridge, on stable Rust
//!
//! No coverage instrumentation (that needs nightly): cases come from a
//! corpus of valid protocol lines through byte-level and structure-aware
//! mutations, all drawn from one seeded generator, so a seed replays a run.
//! Cases that reach a behaviour not seen before (a new error code, event
//! type, frame shape...) join the corpus, a cheap stand-in for coverage.
//!
//! Targets: [`frames`] (`read_frame` against an oracle), [`classify`]
//! (`Incoming::classify` against the JSON-RPC rules) and [`dispatch`] (the
//! real `serve` over an in-memory pipe, its output checked line by line).

pub mod check;
pub mod classify;
pub mod corpus;
pub mod dispatch;
pub mod encode;
pub mod frames;
pub mod mutate;
pub mod rng;

use std::collections::HashSet;
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;

use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use rng::Rng;

pub const TARGETS: &[&str] = &["frames", "classify", "dispatch"];

/// One fuzz target: seeds, mutation, and the checked run of one case.
pub trait Target {
    fn name(&self) -> &'static str;
    /// Leading bytes of a case that are parameters, not input.
    fn header_len(&self) -> usize;
    fn seeds(&self, rng: &mut Rng) -> Vec<Vec<u8>>;
    fn mutate(&self, rng: &mut Rng, base: &[u8], other: &[u8]) -> Vec<u8>;
    /// Runs one case; `Ok` carries behaviour features, `Err` the broken invariant.
    fn run(&mut self, case: &[u8]) -> Result<Vec<u64>, String>;
}

pub fn target(name: &str) -> Option<Box<dyn Target>> {
    Some(match name {
        "frames" => Box::new(frames::Frames),
        "classify" => Box::new(classify::Classify),
        "dispatch" => Box::new(dispatch::Dispatch::new()),
        _ => return None,
    })
}

/// When to stop.
#[derive(Debug, Clone, Copy)]
pub enum Budget {
    Iterations(u64),
    Time(Duration),
}

/// The case being run, for a watchdog that outlives a stuck case.
pub type Current = Arc<Mutex<Option<(Instant, Vec<u8>)>>>;

/// Optional observers of a run.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    /// Updated before each case.
    pub current: Option<Current>,
    /// Each case is written here before it runs, so a crash that kills the
    /// process (stack overflow, abort) leaves its input behind. Slow.
    pub trace: Option<PathBuf>,
}

#[derive(Debug, Clone)]
pub struct Stats {
    pub executions: u64,
    pub elapsed: Duration,
    pub corpus: usize,
    pub features: usize,
}

impl Stats {
    pub fn per_second(&self) -> f64 {
        self.executions as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

#[derive(Debug, Clone)]
pub struct Failure {
    pub iteration: u64,
    pub input: Vec<u8>,
    pub reason: String,
}

const MAX_CORPUS: usize = 2048;

/// Fuzzes `target` from `seed` until `budget` runs out or a case fails.
pub fn fuzz(
    target: &mut dyn Target,
    seed: u64,
    budget: Budget,
    hooks: &Hooks,
) -> Result<Stats, Failure> {
    let start = Instant::now();
    let mut rng = Rng::new(seed);
    let mut corpus = target.seeds(&mut rng);
    let mut seen = HashSet::new();
    let seeds = corpus.len() as u64;
    let mut executions = 0u64;
    loop {
        let done = match budget {
            Budget::Iterations(n) => executions >= n,
            Budget::Time(t) => start.elapsed() >= t,
        };
        if done {
            break;
        }
        // Seeds first, as they are, then mutations of the corpus.
        let is_seed = executions < seeds;
        let case = if is_seed {
            corpus[executions as usize].clone()
        } else {
            let base = &corpus[rng.below(corpus.len())];
            let other = &corpus[rng.below(corpus.len())];
            target.mutate(&mut rng, base, other)
        };
        if let Some(current) = &hooks.current {
            *current.lock().unwrap_or_else(|e| e.into_inner()) =
                Some((Instant::now(), case.clone()));
        }
        if let Some(path) = &hooks.trace {
            let _ = std::fs::write(path, &case);
        }
        let outcome = run_case(target, &case);
        executions += 1;
        match outcome {
            Ok(features) => {
                let mut novel = false;
                for f in features {
                    novel |= seen.insert(f);
                }
                if novel && !is_seed {
                    if corpus.len() < MAX_CORPUS {
                        corpus.push(case);
                    } else {
                        let i = rng.below(corpus.len());
                        corpus[i] = case;
                    }
                }
            }
            Err(reason) => {
                return Err(Failure {
                    iteration: executions,
                    input: case,
                    reason,
                })
            }
        }
    }
    Ok(Stats {
        executions,
        elapsed: start.elapsed(),
        corpus: corpus.len(),
        features: seen.len(),
    })
}

static PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Records every panic, in any thread or task, then reports it as usual.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if let Ok(mut panics) = PANICS.lock() {
                panics.push(info.to_string());
            }
            previous(info);
        }));
    });
}

fn take_panics() -> Vec<String> {
    std::mem::take(&mut *PANICS.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Runs one case: a panic anywhere (the caller's thread, a task, a blocking
/// thread) fails it.
pub fn run_case(target: &mut dyn Target, case: &[u8]) -> Result<Vec<u64>, String> {
    install_panic_hook();
    take_panics();
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| target.run(case)));
    let panics = take_panics();
    match outcome {
        Err(_) => Err(format!("panic: {}", panics.join("\n"))),
        Ok(_) if !panics.is_empty() => Err(format!("panic in a task: {}", panics.join("\n"))),
        Ok(result) => result,
    }
}

/// The kind of a failure, to tell during minimization whether a smaller
/// case still fails the same way.
pub fn failure_kind(reason: &str) -> String {
    let first = reason.lines().next().unwrap_or_default();
    first
        .chars()
        .filter(|c| !c.is_ascii_digit())
        .take(60)
        .collect()
}

/// Shrinks a failing case by deleting ever smaller chunks while it still
/// fails the same way; stops after `attempts` runs.
pub fn minimize(target: &mut dyn Target, case: &[u8], reason: &str, attempts: usize) -> Vec<u8> {
    let kind = failure_kind(reason);
    let header = target.header_len().min(case.len());
    let mut best = case.to_vec();
    let mut tries = 0;
    let mut chunk = (best.len() - header).div_ceil(2).max(1);
    loop {
        let mut at = header;
        while at < best.len() && tries < attempts {
            let mut candidate = best.clone();
            candidate.drain(at..(at + chunk).min(best.len()));
            tries += 1;
            match run_case(target, &candidate) {
                Err(r) if failure_kind(&r) == kind => best = candidate,
                _ => at += chunk,
            }
        }
        if chunk == 1 || tries >= attempts {
            return best;
        }
        chunk = chunk.div_ceil(2);
    }
}
