//! The fuzzing runner.
//!
//! ```text
//! a3s-code-bridge-fuzz <frames|classify|dispatch|all> [--seconds N] [--iterations N]
//!                      [--seed S] [--crash-dir DIR] [--trace] [--no-minimize]
//! a3s-code-bridge-fuzz repro <target> <file>
//! ```
//!
//! Defaults come from `FUZZ_SECONDS` (20 per target) and `FUZZ_SEED`
//! (otherwise a fresh seed, printed). A failing case is minimized, saved
//! under the crash directory and printed as base64 and hex; the exit code is 1.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use a3s_code_bridge_fuzz::{
    encode, fuzz, minimize, run_case, target, Budget, Current, Hooks, TARGETS,
};

/// A case running longer than this (wall clock) is a hang, even when the
/// virtual clock of the dispatch target cannot see it (a busy loop).
const WALL_HANG: Duration = Duration::from_secs(30);

struct Options {
    targets: Vec<String>,
    budget: Budget,
    seed: u64,
    crash_dir: PathBuf,
    trace: bool,
    minimize: bool,
}

fn usage() -> ! {
    eprintln!(
        "usage: a3s-code-bridge-fuzz <{}|all> [--seconds N] [--iterations N] [--seed S] \
         [--crash-dir DIR] [--trace] [--no-minimize]\n       a3s-code-bridge-fuzz repro <target> <file>",
        TARGETS.join("|")
    );
    std::process::exit(2)
}

fn parse_args(args: Vec<String>) -> Options {
    let env_number = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let fresh_seed = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ (std::process::id() as u64) << 32;
    let mut options = Options {
        targets: Vec::new(),
        budget: Budget::Time(Duration::from_secs(
            env_number("FUZZ_SECONDS").unwrap_or(20),
        )),
        seed: env_number("FUZZ_SEED").unwrap_or(fresh_seed),
        crash_dir: std::env::var_os("FUZZ_CRASH_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("crashes")),
        trace: false,
        minimize: true,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut number = || -> u64 {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| usage())
        };
        match arg.as_str() {
            "--seconds" => options.budget = Budget::Time(Duration::from_secs(number())),
            "--iterations" => options.budget = Budget::Iterations(number()),
            "--seed" => options.seed = number(),
            "--crash-dir" => options.crash_dir = args.next().unwrap_or_else(|| usage()).into(),
            "--trace" => options.trace = true,
            "--no-minimize" => options.minimize = false,
            "all" => options
                .targets
                .extend(TARGETS.iter().map(|t| t.to_string())),
            name if TARGETS.contains(&name) => options.targets.push(name.to_string()),
            _ => usage(),
        }
    }
    if options.targets.is_empty() {
        usage()
    }
    options
}

fn show(input: &[u8]) {
    const SHOWN: usize = 2048;
    let cut = &input[..input.len().min(SHOWN)];
    let more = if input.len() > SHOWN { " ..." } else { "" };
    println!(
        "input ({} bytes) as text: {}{more}",
        input.len(),
        cut.escape_ascii()
    );
    println!("input as hex: {}{more}", encode::hex(cut));
    println!("input as base64: {}", encode::base64(input));
}

fn save(dir: &Path, name: &str, input: &[u8]) -> PathBuf {
    let path = dir.join(name);
    if let Err(e) = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&path, input)) {
        eprintln!("cannot save {}: {e}", path.display());
    }
    path
}

/// Kills the process when one case runs past `WALL_HANG`, printing it first.
fn watchdog(name: String, current: Current, dir: PathBuf, seed: u64) {
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(500));
        let stuck = match &*current.lock().unwrap_or_else(|e| e.into_inner()) {
            Some((started, case)) if started.elapsed() > WALL_HANG => Some(case.clone()),
            _ => None,
        };
        if let Some(case) = stuck {
            println!("\nFAILURE in {name} (seed {seed}): hang: one case ran over {WALL_HANG:?} of wall time");
            show(&case);
            let path = save(&dir, &format!("{name}-{seed}-hang.bin"), &case);
            println!("saved: {}", path.display());
            std::process::exit(1);
        }
    });
}

fn run(options: &Options) -> bool {
    println!(
        "seed {} (reproduce with FUZZ_SEED={} or --seed {})",
        options.seed, options.seed, options.seed
    );
    for name in &options.targets {
        let mut t = target(name).expect("known target");
        let current: Current = Arc::new(Mutex::new(None));
        watchdog(
            name.clone(),
            current.clone(),
            options.crash_dir.clone(),
            options.seed,
        );
        let trace = options.trace.then(|| {
            let path = options.crash_dir.join(format!("inflight-{name}.bin"));
            let _ = std::fs::create_dir_all(&options.crash_dir);
            println!("tracing: every case is written to {} first", path.display());
            path
        });
        let hooks = Hooks {
            current: Some(current.clone()),
            trace,
        };
        let outcome = fuzz(&mut *t, options.seed, options.budget, &hooks);
        *current.lock().unwrap_or_else(|e| e.into_inner()) = None;
        match outcome {
            Ok(stats) => {
                println!(
                    "{name}: ok, {} executions in {:.1?} ({:.0}/s), corpus {}, features {}",
                    stats.executions,
                    stats.elapsed,
                    stats.per_second(),
                    stats.corpus,
                    stats.features
                );
            }
            Err(failure) => {
                println!(
                    "\nFAILURE in {name} (seed {}, case {}): {}",
                    options.seed, failure.iteration, failure.reason
                );
                show(&failure.input);
                let stem = format!("{name}-{}-{}", options.seed, failure.iteration);
                println!(
                    "saved: {}",
                    save(&options.crash_dir, &format!("{stem}.bin"), &failure.input).display()
                );
                if options.minimize {
                    let started = Instant::now();
                    let small = minimize(&mut *t, &failure.input, &failure.reason, 2000);
                    println!("\nminimized in {:.1?}:", started.elapsed());
                    if let Err(reason) = run_case(&mut *t, &small) {
                        println!("reason: {reason}");
                    }
                    show(&small);
                    let path = save(&options.crash_dir, &format!("{stem}-min.bin"), &small);
                    println!("saved: {}", path.display());
                    println!(
                        "replay: a3s-code-bridge-fuzz repro {name} {}",
                        path.display()
                    );
                }
                return false;
            }
        }
    }
    true
}

fn repro(name: &str, file: &str) -> bool {
    let Some(mut t) = target(name) else { usage() };
    let input = std::fs::read(file).unwrap_or_else(|e| {
        eprintln!("cannot read {file}: {e}");
        std::process::exit(2)
    });
    match run_case(&mut *t, &input) {
        Ok(_) => {
            println!("{name}: the case passes");
            true
        }
        Err(reason) => {
            println!("{name}: FAILURE: {reason}");
            show(&input);
            false
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ok = match args.first().map(String::as_str) {
        Some("repro") if args.len() == 3 => repro(&args[1], &args[2]),
        Some("repro") => usage(),
        _ => run(&parse_args(args)),
    };
    std::process::exit(if ok { 0 } else { 1 });
}
