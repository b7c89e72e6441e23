//! Runtime overhead of the agent loop, measured against a local zero-latency
//! OpenAI-compatible server (run by hand, not in CI):
//!
//! ```text
//! cargo bench -p a3s-code-core --bench runtime_overhead
//! ```
//!
//! Sessions built from an ACL configuration (an OpenAI-kind provider whose
//! `base_url` is the local server) share one workspace of 200 small files and
//! run many tool rounds; each round the "model" asks for `read` on a
//! different file, and after the last round it answers with a final text.
//! The model costs nothing here, so what is measured is the runtime: request
//! building, HTTP, SSE decoding, tool dispatch, history and events.
//!
//! Three scenarios each print a summary: tool rounds, wall time, tool rounds
//! per second, CPU per tool round (process CPU from `getrusage`, minus a
//! floor: the same server answers replayed by a bare HTTP client without the
//! runtime), per-session latency (p50/p95/max of a whole `send`), and memory
//! (VmHWM and VmRSS from /proc/self/status; the RSS growth with 100 sessions
//! alive divided by 100 is the memory per concurrent session). Nothing is
//! asserted about time; correctness is: every `send` succeeds with the
//! expected final text and tool call count, and the server saw every read
//! result it asked for.
//!
//! Then criterion measures the same three shapes as micro-benchmarks, with
//! throughput in tool rounds (elements) per second.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use a3s_code_core::config::AgentConfig;
use a3s_code_core::{Agent, Session, SessionOptions};
use criterion::{BatchSize, Criterion, SamplingMode, Throughput};
use tokio::runtime::Runtime;
use tokio::sync::Semaphore;

mod support;

use support::{BenchServer, Record};

/// One shape of load.
#[derive(Debug, Clone, Copy)]
struct Scenario {
    name: &'static str,
    sessions: usize,
    rounds: usize,
    /// Sessions running at once.
    concurrency: usize,
}

const SCENARIOS: [Scenario; 3] = [
    Scenario {
        name: "1 session x 50 rounds",
        sessions: 1,
        rounds: 50,
        concurrency: 1,
    },
    Scenario {
        name: "20 sessions x 10 rounds, concurrency 4",
        sessions: 20,
        rounds: 10,
        concurrency: 4,
    },
    Scenario {
        name: "100 concurrent sessions x 2 rounds",
        sessions: 100,
        rounds: 2,
        concurrency: 100,
    },
];

/// The server, the agent and the shared workspace.
struct Bench {
    server: BenchServer,
    agent: Agent,
    workspace: tempfile::TempDir,
    /// Session numbers are never reused, so the server's checks and the
    /// files read differ between runs.
    next_session: AtomicUsize,
}

impl Bench {
    fn new() -> Self {
        let server = BenchServer::start();
        let workspace = tempfile::tempdir().expect("workspace");
        std::fs::create_dir(workspace.path().join("src")).expect("src dir");
        for index in 0..support::FILE_COUNT {
            std::fs::write(
                workspace.path().join(support::file_path(index)),
                support::file_contents(index),
            )
            .expect("workspace file");
        }
        let acl = format!(
            r#"
default_model = "bench/gpt-bench"
providers "bench" {{
  kind        = "openai"
  api_key     = "bench"
  base_url    = "http://{}/v1"
  timeout_ms  = 30000
  max_retries = 0
}}
"#,
            server.addr()
        );
        let config = AgentConfig::parse(&acl, workspace.path()).expect("bench ACL");
        Self {
            server,
            agent: Agent::from_config(config),
            workspace,
            next_session: AtomicUsize::new(0),
        }
    }

    /// Builds `count` sessions on the shared workspace, each allowed `rounds`
    /// tool rounds and the final answer.
    async fn sessions(&self, count: usize, rounds: usize) -> Vec<(usize, Session)> {
        let mut out = Vec::with_capacity(count);
        for _ in 0..count {
            let number = self.next_session.fetch_add(1, Ordering::Relaxed);
            let session = self
                .agent
                .session_builder(self.workspace.path())
                .options(SessionOptions::new().with_max_tool_rounds(rounds + 1))
                .build()
                .await
                .expect("build session");
            out.push((number, session));
        }
        out
    }
}

/// One session's run: its number, what `send` returned, and how long it took.
struct SessionRun {
    number: usize,
    outcome: Result<(String, usize), String>,
    latency: Duration,
}

/// Runs one `send` per session, at most `concurrency` at a time, each on its
/// own task (so the runtime's worker threads share them).
async fn drive(
    sessions: &[(usize, Session)],
    rounds: usize,
    concurrency: usize,
) -> Vec<SessionRun> {
    let permits = Arc::new(Semaphore::new(concurrency));
    let mut tasks = Vec::with_capacity(sessions.len());
    for (number, session) in sessions {
        let (number, session, permits) = (*number, session.clone(), permits.clone());
        tasks.push(tokio::spawn(async move {
            let _permit = permits.acquire_owned().await.expect("semaphore");
            let started = Instant::now();
            let result = session.send(&support::prompt(number, rounds), None).await;
            SessionRun {
                number,
                latency: started.elapsed(),
                outcome: result
                    .map(|r| (r.text, r.tool_calls_count))
                    .map_err(|e| e.to_string()),
            }
        }));
    }
    let mut runs = Vec::with_capacity(tasks.len());
    for task in tasks {
        runs.push(task.await.expect("session task"));
    }
    runs
}

/// Describes every run that did not end as expected.
fn failures(runs: &[SessionRun], rounds: usize) -> Vec<String> {
    runs.iter()
        .filter_map(|run| {
            let expected = support::expected_answer(run.number, rounds);
            match &run.outcome {
                Ok((text, calls)) if *text == expected && *calls == rounds => None,
                Ok((text, calls)) => Some(format!(
                    "session {}: {calls} tool calls, final text {text:?} (expected {rounds}, {expected:?})",
                    run.number
                )),
                Err(e) => Some(format!("session {}: send failed: {e}", run.number)),
            }
        })
        .collect()
}

/// Replays the recorded requests with a bare HTTP client (one keep-alive
/// connection per session, the scenario's concurrency); returns wall time,
/// process CPU, and failed answers.
async fn raw_floor(
    addr: std::net::SocketAddr,
    mut records: Vec<Record>,
    concurrency: usize,
) -> (Duration, Duration, usize) {
    records.sort_by_key(|r| (r.session, r.round));
    let mut plans: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut last = None;
    for record in &records {
        if last != Some(record.session) {
            plans.push(Vec::new());
            last = Some(record.session);
        }
        plans
            .last_mut()
            .expect("plan")
            .push(support::raw_request(addr, record));
    }
    let permits = Arc::new(Semaphore::new(concurrency));
    let cpu_before = process_cpu();
    let started = Instant::now();
    let tasks: Vec<_> = plans
        .into_iter()
        .map(|plan| {
            let permits = permits.clone();
            tokio::spawn(async move {
                let _permit = permits.acquire_owned().await.expect("semaphore");
                support::raw_exchange(addr, &plan).await
            })
        })
        .collect();
    let mut bad = 0;
    for task in tasks {
        bad += task.await.expect("raw client task");
    }
    (started.elapsed(), process_cpu() - cpu_before, bad)
}

/// Repetitions of each scenario in the summary: times are the median
/// repetition's, latencies are pooled, memory is the first repetition's (later
/// ones reuse memory the allocator kept).
const REPETITIONS: usize = 5;

/// What one repetition of a scenario measured.
struct Measured {
    requests: u64,
    wall: Duration,
    cpu: Duration,
    server_cpu: Duration,
    floor_wall: Duration,
    floor_cpu: Duration,
    latencies: Vec<Duration>,
}

/// Memory of the first repetition, in KiB.
struct Memory {
    rss_before: u64,
    rss_built: u64,
    rss_alive: u64,
    /// `rss_alive` after `malloc_trim(0)` returned freed heap to the system.
    rss_alive_trimmed: Option<u64>,
    rss_dropped: u64,
    hwm_before: u64,
    hwm_after: u64,
    hwm_reset: bool,
}

/// What a scenario measured over its repetitions.
struct Report {
    scenario: Scenario,
    reps: Vec<Measured>,
    memory: Memory,
}

fn run_scenario(rt: &Runtime, bench: &Bench, scenario: Scenario) -> Report {
    let mut memory = None;
    let reps = (0..REPETITIONS)
        .map(|rep| {
            let (measured, mem) = run_once(rt, bench, scenario, rep == 0);
            if mem.is_some() {
                memory = mem;
            }
            measured
        })
        .collect();
    Report {
        scenario,
        reps,
        memory: memory.expect("first repetition measures memory"),
    }
}

/// One repetition; measures memory too when `with_memory`.
fn run_once(
    rt: &Runtime,
    bench: &Bench,
    scenario: Scenario,
    with_memory: bool,
) -> (Measured, Option<Memory>) {
    let Scenario {
        sessions: count,
        rounds,
        concurrency,
        ..
    } = scenario;
    bench.server.take_records();
    let hwm_before = proc_status_kib("VmHWM");
    // Resets VmHWM to the current RSS, so the peak is this scenario's.
    let hwm_reset = with_memory && std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let rss_before = proc_status_kib("VmRSS");

    let sessions = rt.block_on(bench.sessions(count, rounds));
    let rss_built = proc_status_kib("VmRSS");

    let requests_before = bench.server.requests();
    let mismatches_before = bench.server.mismatches();
    let server_before = bench.server.cpu();
    let cpu_before = process_cpu();
    let started = Instant::now();
    let runs = rt.block_on(drive(&sessions, rounds, concurrency));
    let wall = started.elapsed();
    let cpu = process_cpu() - cpu_before;
    let server_cpu = bench.server.cpu() - server_before;
    let requests = bench.server.requests() - requests_before;
    let rss_alive = proc_status_kib("VmRSS");
    let hwm_after = proc_status_kib("VmHWM");
    let rss_alive_trimmed = with_memory.then(trim_heap).flatten();

    let failed = failures(&runs, rounds);
    let mismatches = bench.server.mismatches() - mismatches_before;
    assert!(
        failed.is_empty() && mismatches == 0,
        "{}: {} of {count} sessions failed, {mismatches} reads the server did not see:\n{}",
        scenario.name,
        failed.len(),
        failed.join("\n")
    );
    assert_eq!(requests as usize, count * (rounds + 1), "model requests");

    rt.block_on(async {
        for (_, session) in &sessions {
            session.close().await;
        }
    });
    drop(sessions);
    let rss_dropped = proc_status_kib("VmRSS");

    let records = bench.server.take_records();
    let (floor_wall, floor_cpu, bad) =
        rt.block_on(raw_floor(bench.server.addr(), records, concurrency));
    assert_eq!(bad, 0, "{}: raw replay got bad answers", scenario.name);

    let measured = Measured {
        requests,
        wall,
        cpu,
        server_cpu,
        floor_wall,
        floor_cpu,
        latencies: runs.iter().map(|r| r.latency).collect(),
    };
    let memory = with_memory.then_some(Memory {
        rss_before,
        rss_built,
        rss_alive,
        rss_alive_trimmed,
        rss_dropped,
        hwm_before,
        hwm_after,
        hwm_reset,
    });
    (measured, memory)
}

/// Returns freed heap to the system and reads VmRSS again (glibc only).
fn trim_heap() -> Option<u64> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim only releases free memory of the allocator.
        unsafe { libc::malloc_trim(0) };
        Some(proc_status_kib("VmRSS"))
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    None
}

/// The median of one measure over the repetitions.
fn median(reps: &[Measured], measure: impl Fn(&Measured) -> Duration) -> Duration {
    let mut values: Vec<Duration> = reps.iter().map(measure).collect();
    values.sort();
    values[values.len() / 2]
}

fn print_report(r: &Report) {
    let s = &r.scenario;
    let tool_rounds = s.sessions * s.rounds;
    let rounds = tool_rounds as f64;
    let per_round = |d: Duration| d.as_secs_f64() * 1e6 / rounds;
    let wall = median(&r.reps, |m| m.wall);
    let cpu = median(&r.reps, |m| m.cpu);
    let server_cpu = median(&r.reps, |m| m.server_cpu);
    let floor_cpu = median(&r.reps, |m| m.floor_cpu);
    let floor_wall = median(&r.reps, |m| m.floor_wall);
    let runtime_cpu = median(&r.reps, |m| m.cpu.saturating_sub(m.floor_cpu));
    let mut latencies: Vec<Duration> = r.reps.iter().flat_map(|m| m.latencies.clone()).collect();
    latencies.sort();
    let (min_wall, max_wall) = (
        r.reps.iter().map(|m| m.wall).min().unwrap_or_default(),
        r.reps.iter().map(|m| m.wall).max().unwrap_or_default(),
    );
    println!("[{}]", s.name);
    println!(
        "  tool rounds            {tool_rounds} per repetition ({} sessions x {} rounds; {} model requests incl. final answers); {} repetitions, all sessions correct",
        s.sessions, s.rounds, r.reps[0].requests, r.reps.len()
    );
    println!(
        "  wall time              {:9.2} ms  -> {:.0} tool rounds/s (median; repetitions {:.2}..{:.2} ms)",
        ms(wall),
        rounds / wall.as_secs_f64(),
        ms(min_wall),
        ms(max_wall)
    );
    println!(
        "  process CPU            {:9.2} ms  -> {:7.1} us per tool round (runtime + server + client, getrusage)",
        ms(cpu),
        per_round(cpu)
    );
    println!(
        "  server thread CPU      {:9.2} ms  -> {:7.1} us per tool round",
        ms(server_cpu),
        per_round(server_cpu)
    );
    println!(
        "  floor: raw client CPU  {:9.2} ms  -> {:7.1} us per tool round (server + bare HTTP client, same answers, no runtime; wall {:.2} ms)",
        ms(floor_cpu),
        per_round(floor_cpu),
        ms(floor_wall)
    );
    println!(
        "  runtime CPU            {:9.2} ms  -> {:7.1} us per tool round (process CPU - floor)",
        ms(runtime_cpu),
        per_round(runtime_cpu)
    );
    println!(
        "  session latency (send) p50 {:.2} ms  p95 {:.2} ms  max {:.2} ms  ({} sends)",
        ms(percentile(&latencies, 0.50)),
        ms(percentile(&latencies, 0.95)),
        ms(percentile(&latencies, 1.0)),
        latencies.len()
    );
    let m = &r.memory;
    let peak = if m.hwm_reset {
        "peak during the first repetition"
    } else {
        "process peak (VmHWM not reset)"
    };
    println!(
        "  memory                 VmHWM {:.1} MiB before, {peak} {:.1} MiB (+{:.1} MiB over the RSS at start)",
        mib(m.hwm_before),
        mib(m.hwm_after),
        mib(m.hwm_after.saturating_sub(m.rss_before))
    );
    println!(
        "                         VmRSS {:.1} MiB at start, {:.1} built, {:.1} after the runs with {} sessions alive{}, {:.1} after dropping them",
        mib(m.rss_before),
        mib(m.rss_built),
        mib(m.rss_alive),
        s.sessions,
        m.rss_alive_trimmed
            .map(|t| format!(" ({:.1} after malloc_trim)", mib(t)))
            .unwrap_or_default(),
        mib(m.rss_dropped)
    );
    let per_session = |kib: u64| kib as f64 / s.sessions as f64;
    println!(
        "                         per session: {:.1} KiB built, {:.1} KiB alive after its run{}, {:.1} KiB at peak",
        per_session(m.rss_built.saturating_sub(m.rss_before)),
        per_session(m.rss_alive.saturating_sub(m.rss_before)),
        m.rss_alive_trimmed
            .map(|t| format!(" ({:.1} KiB after malloc_trim)", per_session(t.saturating_sub(m.rss_before))))
            .unwrap_or_default(),
        per_session(m.hwm_after.saturating_sub(m.rss_before)),
    );
}

fn criterion_benches(c: &mut Criterion, rt: &Runtime, bench: &Bench) {
    let mut group = c.benchmark_group("runtime_overhead");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sampling_mode(SamplingMode::Flat);
    for scenario in SCENARIOS {
        group.throughput(Throughput::Elements(
            (scenario.sessions * scenario.rounds) as u64,
        ));
        group.bench_function(scenario.name, |b| {
            b.iter_batched(
                || rt.block_on(bench.sessions(scenario.sessions, scenario.rounds)),
                |sessions| {
                    let runs = rt.block_on(drive(&sessions, scenario.rounds, scenario.concurrency));
                    let failed = failures(&runs, scenario.rounds);
                    assert!(failed.is_empty(), "{}", failed.join("\n"));
                    sessions
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let bench = Bench::new();

    // Warm-up: first connections, lazy statics, the page cache.
    let warm = rt.block_on(bench.sessions(4, 3));
    let runs = rt.block_on(drive(&warm, 3, 4));
    assert!(failures(&runs, 3).is_empty(), "warm-up failed");
    drop(warm);
    bench.server.take_records();

    println!();
    println!(
        "== runtime overhead: {} files in one shared workspace, local zero-latency OpenAI-compatible server, {} tokio workers ==",
        support::FILE_COUNT,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    for scenario in SCENARIOS {
        let report = run_scenario(&rt, &bench, scenario);
        print_report(&report);
    }
    println!(
        "targets: runtime CPU well under 1 ms (1000 us) per tool round; under 1 MiB (1024 KiB) per concurrent session; no send failed or blocked another (checked)"
    );
    println!();

    let mut criterion = Criterion::default().configure_from_args();
    criterion_benches(&mut criterion, &rt, &bench);
    criterion.final_summary();
}

/// User + system CPU time of the whole process (all threads).
fn process_cpu() -> Duration {
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage for the duration of the call.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    assert_eq!(rc, 0, "getrusage");
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    Duration::from_micros(micros(usage.ru_utime) + micros(usage.ru_stime))
}

/// A `kB` field of /proc/self/status (0 when unavailable).
fn proc_status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                let value = line.strip_prefix(field)?.strip_prefix(':')?;
                value.trim().trim_end_matches("kB").trim().parse().ok()
            })
        })
        .unwrap_or(0)
}

/// Nearest-rank percentile of sorted durations.
fn percentile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}
