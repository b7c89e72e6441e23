//! Plays one scenario against a fresh bridge process: makes the temp
//! workspace (and the `${store}` directory when asked), spawns the bridge in
//! it, runs the steps in order and stops the child. `restartBridge` replaces
//! the child with a fresh one started the same way. The first failing step
//! ends the scenario; its check id is `<scenario id>/<step index>` (0-based,
//! as in the `steps` array).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::events::{self, EventsCheck};
use crate::host::{Host, Pumped};
use crate::launch::{self, Launch};
use crate::pattern::{self, brief};
use crate::scenario::Scenario;
use crate::step::Action;
use crate::vars::Vars;
use crate::workspace::{self, Workspace};

/// The bridge command line given to the runner.
#[derive(Debug, Clone)]
pub struct BridgeCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
}

/// Why a scenario failed: the check id, the reason (may span lines) and the
/// tail of the bridge's stderr.
#[derive(Debug)]
pub struct Failure {
    pub check: String,
    pub reason: String,
    pub stderr: String,
}

/// How long the bridge gets to exit after stdin closes at the end.
const STOP_GRACE: Duration = Duration::from_millis(500);

/// What `restartBridge` prints between the stderr of two processes.
const RESTARTED: &str = "--- the bridge was restarted ---\n";

pub fn run(scenario: &Scenario, command: &BridgeCommand) -> Result<(), Failure> {
    let setup = |reason: String| Failure {
        check: format!("{}/setup", scenario.id),
        reason,
        stderr: String::new(),
    };
    let mut vars = Vars::default();
    let workspace = Workspace::create(scenario, &mut vars).map_err(setup)?;
    let mut args = command.args.clone();
    args.extend(scenario.bridge_args.iter().cloned());
    let launch = Launch {
        program: &command.program,
        args,
        cwd: workspace.root.clone(),
        env: scenario.env.clone().into_iter().collect(),
    };
    let bridge = launch.spawn().map_err(|e| setup(format!("{e:#}")))?;

    let mut host = Host::new(bridge, scenario.reverse.clone(), vars);
    let mut earlier_stderr = String::new();
    let mut outcome = Ok(());
    for (index, step) in scenario.steps.iter().enumerate() {
        let timeout = step.timeout.unwrap_or(scenario.step_timeout);
        let played = match &step.action {
            Action::RestartBridge { kill } => launch::restart(&mut host, &launch, *kill, timeout)
                .map(|old| {
                    earlier_stderr.push_str(&old);
                    earlier_stderr.push_str(RESTARTED);
                }),
            Action::ReadFile(check) => workspace::read_file(&mut host, &workspace.root, check),
            action => play_step(&mut host, action, timeout),
        };
        if let Err(reason) = played {
            outcome = Err(Failure {
                check: format!("{}/{index}", scenario.id),
                reason: with_process_state(&mut host, reason),
                stderr: format!("{earlier_stderr}{}", host.bridge.stderr_tail()),
            });
            break;
        }
    }
    host.bridge.stop(STOP_GRACE);
    outcome
}

fn with_process_state(host: &mut Host, mut reason: String) -> String {
    if let Some(status) = host.bridge.try_exit() {
        reason.push_str(&format!("\nthe bridge has exited: {status}"));
    }
    if let Some(error) = host.writer().error() {
        reason.push_str(&format!("\n{error}"));
    }
    reason
}

fn play_step(host: &mut Host, action: &Action, timeout: Duration) -> Result<(), String> {
    match action {
        Action::Send(value) => {
            let value = host.vars.substitute(value)?;
            host.writer().line(value.to_string().into_bytes());
        }
        Action::SendRaw(text) => host.writer().line(text.clone().into_bytes()),
        Action::SendBytes(bytes) => host.writer().line(bytes.clone()),
        Action::SendOversized(spec) => host.writer().line(spec.line()?),
        Action::Expect(pattern) => {
            let pattern = host.vars.substitute(pattern)?;
            expect(host, &pattern, timeout)?;
        }
        Action::ExpectEvents(check) => expect_events(host, check, timeout)?,
        Action::ExpectNothing { ms, matching } => {
            let matching = host.vars.substitute(matching)?;
            host.drain_until(Instant::now() + Duration::from_millis(*ms))?;
            if let Some(found) = host
                .queue
                .iter()
                .find(|m| !m.consumed && pattern::matches(&matching, &m.value).is_ok())
            {
                return Err(format!(
                    "expected no message matching {} but got {}",
                    brief(&matching, 200),
                    brief(&found.value, 400)
                ));
            }
        }
        Action::CloseStdin => host.writer().close(),
        Action::ExpectExit { code, within_ms } => {
            expect_exit(host, *code, Duration::from_millis(*within_ms))?
        }
        Action::Sleep(ms) => host.drain_until(Instant::now() + Duration::from_millis(*ms))?,
        Action::Stall(id) => {
            let id = host.vars.substitute(id)?;
            host.stall(&id);
        }
        Action::Resume(id) => {
            let id = host.vars.substitute(id)?;
            host.resume(&id);
        }
        Action::RestartBridge { .. } | Action::ReadFile(_) => {
            unreachable!("handled by run, which knows how to launch and where")
        }
    }
    Ok(())
}

/// Takes the first unconsumed message matching `pattern`, waiting for it.
fn expect(host: &mut Host, pattern: &Value, timeout: Duration) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    let mut scanned = 0;
    loop {
        for index in scanned..host.queue.len() {
            let message = &mut host.queue[index];
            if message.consumed {
                continue;
            }
            if let Ok(captures) = pattern::matches(pattern, &message.value) {
                message.consumed = true;
                for (name, value) in captures {
                    host.vars.set(name, value);
                }
                return Ok(());
            }
        }
        scanned = host.queue.len();
        if let Some(id) = answered_id(host, pattern) {
            return Err(format!(
                "the response to request {id} does not match\npattern: {}{}",
                brief(pattern, 400),
                near_misses(host, pattern)
            ));
        }
        let why = match host.pump(deadline)? {
            Pumped::Message => continue,
            Pumped::Timeout => format!(
                "no message matching the pattern within {} ms",
                timeout.as_millis()
            ),
            Pumped::Closed => {
                "the bridge closed its stdout before a matching message arrived".to_string()
            }
        };
        return Err(format!(
            "{why}\npattern: {}{}",
            brief(pattern, 400),
            near_misses(host, pattern)
        ));
    }
}

/// When `pattern` describes the response to a literal request id and that
/// response is already queued (unconsumed, not matching), waiting longer is
/// pointless: a request is answered once.
fn answered_id<'a>(host: &Host, pattern: &'a Value) -> Option<&'a Value> {
    let id = pattern.get("id")?;
    let literal = match id {
        Value::Number(_) => true,
        Value::String(s) => !s.starts_with('$'),
        _ => false,
    };
    let is_response_pattern = literal && pattern.get("method").is_none();
    (is_response_pattern
        && host
            .queue
            .iter()
            .any(|m| !m.consumed && is_response_to(&m.value, id)))
    .then_some(id)
}

/// The unconsumed messages most likely meant by `pattern`, with the reason
/// each one does not match: those with the pattern's `id` if it has one,
/// else the latest non-event messages.
fn near_misses(host: &Host, pattern: &Value) -> String {
    let wants_events = pattern.get("method").and_then(Value::as_str) == Some("session/event");
    let same_id = |m: &Value| pattern.get("id").is_some_and(|id| m.get("id") == Some(id));
    let open: Vec<&Value> = host
        .queue
        .iter()
        .filter(|m| !m.consumed)
        .map(|m| &m.value)
        .collect();
    let mut shown: Vec<&Value> = open.iter().copied().filter(|m| same_id(m)).collect();
    if shown.is_empty() {
        shown = open
            .iter()
            .copied()
            .filter(|m| {
                wants_events || m.get("method").and_then(Value::as_str) != Some("session/event")
            })
            .collect();
    }
    let skip = shown.len().saturating_sub(5);
    let mut out = format!("\nunconsumed messages: {}", open.len());
    for message in &shown[skip..] {
        let why = pattern::matches(pattern, message)
            .err()
            .map(|m| m.to_string())
            .unwrap_or_default();
        out.push_str(&format!("\n  {}\n    {why}", brief(message, 400)));
    }
    out
}

fn is_response_to(message: &Value, id: &Value) -> bool {
    message.get("method").is_none() && message.get("id") == Some(id)
}

fn event_request_id(message: &Value) -> Option<&Value> {
    (message.get("method").and_then(Value::as_str) == Some("session/event"))
        .then(|| message.get("params")?.get("requestId"))
        .flatten()
}

/// Waits for the response to the stream request, then checks its events.
fn expect_events(host: &mut Host, check: &EventsCheck, timeout: Duration) -> Result<(), String> {
    let check = EventsCheck {
        request_id: host.vars.substitute(&check.request_id)?,
        each: check
            .each
            .as_ref()
            .map(|p| host.vars.substitute(p))
            .transpose()?,
        ..check.clone()
    };
    let id = &check.request_id;
    let deadline = Instant::now() + timeout;
    let response_at = loop {
        if let Some(at) = host.queue.iter().position(|m| is_response_to(&m.value, id)) {
            break at;
        }
        let why = match host.pump(deadline)? {
            Pumped::Message => continue,
            Pumped::Timeout => format!(
                "no response to request {id} within {} ms",
                timeout.as_millis()
            ),
            Pumped::Closed => format!("the bridge closed its stdout before answering request {id}"),
        };
        let types: Vec<String> = host
            .queue
            .iter()
            .filter(|m| event_request_id(&m.value) == Some(id))
            .map(|m| {
                m.value["params"]["event"]["type"]
                    .as_str()
                    .unwrap_or("?")
                    .to_string()
            })
            .collect();
        return Err(format!("{why}; events so far: [{}]", types.join(", ")));
    };
    let positions: Vec<usize> = (0..host.queue.len())
        .filter(|&i| event_request_id(&host.queue[i].value) == Some(id))
        .collect();
    if let Some(&late) = positions.iter().find(|&&i| i > response_at) {
        return Err(format!(
            "an event arrived after the response to request {id}: {}",
            brief(&host.queue[late].value, 300)
        ));
    }
    let params: Vec<&Value> = positions
        .iter()
        .map(|&i| &host.queue[i].value["params"])
        .collect();
    let captures = events::check_stream(&check, &params)?;
    for &i in &positions {
        host.queue[i].consumed = true;
    }
    for (name, value) in captures {
        host.vars.set(name, value);
    }
    Ok(())
}

fn expect_exit(host: &mut Host, code: Option<i32>, within: Duration) -> Result<(), String> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = host.bridge.try_exit() {
            return match (code, status.code()) {
                (None, _) => Ok(()),
                (Some(want), Some(got)) if want == got => Ok(()),
                (Some(want), _) => Err(format!(
                    "expected exit code {want}, the bridge exited with {status}"
                )),
            };
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "the bridge is still running {} ms later",
                within.as_millis()
            ));
        }
        let slice = (Instant::now() + Duration::from_millis(20)).min(deadline);
        if host.pump(slice)? == Pumped::Closed {
            std::thread::sleep(slice.saturating_duration_since(Instant::now()));
        }
    }
}

#[cfg(test)]
#[path = "play_tests.rs"]
mod tests;
