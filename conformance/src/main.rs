//! `a3s-code-conformance`: a language-neutral conformance suite for bridges
//! speaking the A3S Code protocol (see `protocol/README.md`).
//!
//! # Layout
//!
//! - `cli`: the command line.
//! - `scenario`, `step`: scenario files (data, see `conformance/README.md`)
//!   parsed and validated before anything runs; `embedded` holds the files
//!   compiled in by `build.rs`.
//! - `pattern`, `regex`, `vars`, `events`: matching received JSON (with a
//!   small regex engine for `$regex`), `${name}` variables and `expectEvents`
//!   sequences.
//! - `bridge`: the child process and its pipe threads.
//! - `host`: plays the host: receives, checks framing, acks streams,
//!   answers reverse requests.
//! - `play`: runs one scenario's steps, with `workspace` (its directories,
//!   `readFile`) and `launch` (spawning and `restartBridge`); `baseline`:
//!   expected failures.
//!
//! Exit status: 0 when every scenario passed (or failed as expected), 1 when
//! any failed, 2 when the suite itself could not run (bad arguments or an
//! invalid scenario).

mod base64;
mod baseline;
mod bridge;
mod cli;
mod events;
mod host;
mod launch;
mod pattern;
mod play;
mod regex;
mod scenario;
mod step;
mod vars;
mod workspace;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};

use baseline::{Baseline, Verdict};
use play::{BridgeCommand, Failure};
use scenario::Scenario;

/// Lines of the bridge's stderr shown under a failure.
const STDERR_LINES: usize = 30;

fn main() -> ExitCode {
    let cli = match cli::parse(std::env::args().skip(1)) {
        Ok(Some(cli)) => cli,
        Ok(None) => {
            println!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    match run(cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// Runs the selected scenarios; `Ok(false)` when any failed.
fn run(cli: cli::Cli) -> Result<bool> {
    let scenarios = match &cli.scenarios {
        Some(dir) => scenario::load_dir(dir)?,
        None => scenario::parse_all(embedded::SCENARIOS.iter().copied())?,
    };
    let baseline = match &cli.baseline {
        Some(path) => Baseline::parse(
            &std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?,
        ),
        None => embedded::BASELINE.map(Baseline::parse).unwrap_or_default(),
    };
    for id in baseline.ids() {
        if !scenarios.iter().any(|s| s.id == id) {
            eprintln!("warning: the baseline lists {id}, which is not a scenario");
        }
    }
    let command = BridgeCommand {
        program: resolve_program(&cli.program)?,
        args: cli.args,
    };
    let selected: Vec<&Scenario> = scenarios
        .iter()
        .filter(|s| cli.filter.as_deref().is_none_or(|f| s.id.contains(f)))
        .collect();
    if selected.is_empty() {
        eprintln!("warning: no scenario selected");
    }

    let (mut passed, mut failed) = (0, 0);
    for scenario in selected {
        let outcome = play::run(scenario, &command);
        let verdict = Verdict::judge(baseline.lists(&scenario.id), outcome.is_ok());
        match (&verdict, outcome) {
            (Verdict::Pass, _) => println!("PASS {}", scenario.id),
            (Verdict::ExpectedFailure, _) => println!("XFAIL {}", scenario.id),
            (Verdict::UnexpectedPass, _) => {
                println!(
                    "FAIL {}: unexpectedly passed: remove it from the baseline",
                    scenario.id
                )
            }
            (Verdict::Fail, Err(failure)) => print_failure(scenario, &failure),
            (Verdict::Fail, Ok(())) => unreachable!("a passing scenario is never judged a failure"),
        }
        if verdict.counts_as_passed() {
            passed += 1;
        } else {
            failed += 1;
        }
    }
    println!("{passed} passed, {failed} failed");
    Ok(failed == 0)
}

/// A path with a directory part is made absolute, since the bridge runs in
/// the scenario's workspace; a bare name is looked up in `PATH`.
fn resolve_program(program: &Path) -> Result<PathBuf> {
    if program.components().count() > 1 {
        program
            .canonicalize()
            .with_context(|| format!("bridge executable {}", program.display()))
    } else {
        Ok(program.to_path_buf())
    }
}

fn print_failure(scenario: &Scenario, failure: &Failure) {
    let mut lines = failure.reason.lines();
    println!(
        "FAIL {}: {}: {}",
        scenario.id,
        failure.check,
        lines.next().unwrap_or("")
    );
    for line in lines {
        println!("    {line}");
    }
    println!("    scenario: {}", first_sentence(&scenario.description));
    let stderr: Vec<&str> = failure.stderr.lines().collect();
    if !stderr.is_empty() {
        let skip = stderr.len().saturating_sub(STDERR_LINES);
        println!("    bridge stderr (last {} lines):", stderr.len() - skip);
        for line in &stderr[skip..] {
            println!("    | {line}");
        }
    }
}

/// The description's first sentence, as a reminder of what the check pins.
fn first_sentence(text: &str) -> String {
    let end = text.find(". ").map_or(text.len(), |i| i + 1);
    text[..end].split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    /// Every scenario shipped with the suite parses and validates.
    #[test]
    fn embedded_scenarios_are_valid() {
        let scenarios =
            crate::scenario::parse_all(crate::embedded::SCENARIOS.iter().copied()).unwrap();
        assert_eq!(scenarios.len(), crate::embedded::SCENARIOS.len());
    }
}
