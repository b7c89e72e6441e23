//! `bash`: run a shell command in the workspace root.
//!
//! Also home of [`run_in_group`], the process runner `git` shares. A command
//! runs in its own process group so that a timeout or a cancellation can kill
//! everything it started (pipelines, background jobs, grandchildren) with one
//! signal; killing only the direct child would leave orphans holding the
//! output pipe open and the tool call hanging.

use std::collections::VecDeque;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::AsyncReadExt;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::{parse_arguments, Tool, ToolContext, ToolError, ToolOutput};

pub const DEFAULT_BASH_TIMEOUT_MS: u64 = 120_000;
pub const MAX_BASH_TIMEOUT_MS: u64 = 600_000;
/// Bytes of combined output kept (half from the start, half from the end).
pub const MAX_OUTPUT_BYTES: usize = 30_000;

#[derive(Debug)]
pub struct BashTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BashArgs {
    command: String,
    timeout_ms: Option<u64>,
}

/// Output within a byte budget: the head and the tail are kept, since the
/// start gives context and the end usually holds the error or the summary.
struct CappedOutput {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: usize,
    cap: usize,
}

impl CappedOutput {
    fn new(cap: usize) -> Self {
        Self {
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
            cap,
        }
    }

    fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len();
        let room = (self.cap / 2).saturating_sub(self.head.len());
        let take = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..take]);
        bytes = &bytes[take..];
        let keep = self.cap - self.cap / 2;
        if bytes.len() >= keep {
            self.tail.clear();
            bytes = &bytes[bytes.len() - keep..];
        } else {
            let excess = (self.tail.len() + bytes.len()).saturating_sub(keep);
            self.tail.drain(..excess);
        }
        self.tail.extend(bytes);
    }

    fn into_string(mut self) -> String {
        let omitted = self.total - self.head.len() - self.tail.len();
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if omitted > 0 {
            text.push_str(&format!("\n... [{omitted} bytes of output omitted] ...\n"));
        }
        text.push_str(&String::from_utf8_lossy(self.tail.make_contiguous()));
        text
    }
}

/// How a command run ended.
#[derive(Debug)]
pub(crate) enum RunEnd {
    Exited(ExitStatus),
    TimedOut,
    Cancelled,
}

impl RunEnd {
    /// "exit code: N", or the signal that killed the process.
    pub(crate) fn describe(status: &ExitStatus) -> String {
        match (status.code(), status.signal()) {
            (Some(code), _) => format!("exit code: {code}"),
            (None, Some(signal)) => format!("killed by signal {signal}"),
            (None, None) => "exit status unknown".to_string(),
        }
    }
}

/// SIGKILLs a process group when dropped, so the group dies even when the
/// tool's future is dropped mid-run (the registry drops it on cancellation).
struct GroupKiller(Option<i32>);

impl GroupKiller {
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            // SAFETY: kill(2) takes plain integers and touches no memory; a
            // negative pid addresses the process group the child leads.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs `command` as the leader of a new process group with stdin closed and
/// stdout and stderr merged into one pipe (so their interleaving is kept).
/// When the leader exits, times out or `cancel` fires, the whole group is
/// killed; leftover background jobs do not outlive the call.
pub(crate) async fn run_in_group(
    mut command: Command,
    timeout: Duration,
    cancel: &CancellationToken,
    cap: usize,
) -> std::io::Result<(RunEnd, String)> {
    let (sender, mut receiver) = tokio::net::unix::pipe::pipe()?;
    let writer = sender.into_blocking_fd()?;
    command
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer.try_clone()?))
        .stderr(Stdio::from(writer))
        .process_group(0);
    let mut child = command.spawn()?;
    // Our copies of the pipe's write end must close, or reading never ends.
    drop(command);
    let mut killer = GroupKiller(child.id().and_then(|id| i32::try_from(id).ok()));

    let mut output = CappedOutput::new(cap);
    let mut buf = vec![0u8; 16 * 1024];
    let mut open = true;
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let end = loop {
        tokio::select! {
            status = child.wait() => break RunEnd::Exited(status?),
            read = receiver.read(&mut buf), if open => match read {
                Ok(0) | Err(_) => open = false,
                Ok(n) => output.push(&buf[..n]),
            },
            _ = &mut deadline => break RunEnd::TimedOut,
            _ = cancel.cancelled() => break RunEnd::Cancelled,
        }
    };
    killer.kill();
    if !matches!(end, RunEnd::Exited(_)) {
        let _ = child.wait().await;
    }
    // Collect what is still buffered; bounded in case a process escaped the
    // group (setsid) and still holds the pipe open.
    let _ = tokio::time::timeout(Duration::from_millis(500), async {
        while open {
            match receiver.read(&mut buf).await {
                Ok(0) | Err(_) => open = false,
                Ok(n) => output.push(&buf[..n]),
            }
        }
    })
    .await;
    Ok((end, output.into_string()))
}

#[async_trait::async_trait]
impl Tool for BashTool {
    fn available(&self, _workspace: &super::Workspace) -> bool {
        super::program_on_path("bash")
    }

    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> &str {
        "Run a command with `bash -c` in the workspace root. Returns combined stdout and stderr (long output keeps its start and end) and the exit code; a non-zero exit code is reported, not an error. The command and everything it started is killed on timeout (default 120000 ms, max 600000) and when it finishes, so background jobs do not outlive the call."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "Shell command to run"},
                "timeout_ms": {"type": "integer", "minimum": 1, "maximum": MAX_BASH_TIMEOUT_MS, "description": "Time limit in milliseconds (default 120000)"}
            },
            "required": ["command"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: BashArgs = parse_arguments("bash", arguments)?;
        let timeout_ms = args.timeout_ms.unwrap_or(DEFAULT_BASH_TIMEOUT_MS);
        if !(1..=MAX_BASH_TIMEOUT_MS).contains(&timeout_ms) {
            return Err(ToolError::InvalidArguments {
                tool: "bash".into(),
                message: format!("timeout_ms must be between 1 and {MAX_BASH_TIMEOUT_MS}"),
            });
        }
        let mut command = Command::new("bash");
        command
            .arg("-c")
            .arg(&args.command)
            .current_dir(ctx.workspace.root());
        let (end, output) = run_in_group(
            command,
            Duration::from_millis(timeout_ms),
            &ctx.cancel,
            MAX_OUTPUT_BYTES,
        )
        .await
        .map_err(|e| ToolError::Failed(format!("cannot run bash: {e}")))?;
        match end {
            RunEnd::Exited(status) => {
                let mut text = output;
                if text.is_empty() {
                    text.push_str("(no output)");
                }
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&RunEnd::describe(&status));
                Ok(ToolOutput::text(text))
            }
            RunEnd::TimedOut => Err(ToolError::Failed(format!(
                "command timed out after {timeout_ms} ms and was killed; output so far:\n{output}"
            ))),
            RunEnd::Cancelled => Err(ToolError::Cancelled),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::time::Instant;

    fn setup() -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::for_dir(dir.path());
        (dir, ctx)
    }

    /// Live means present in /proc and not a zombie awaiting its reaper.
    fn alive(pid: u32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => !matches!(
                stat.rsplit(") ").next().and_then(|s| s.chars().next()),
                Some('Z' | 'X')
            ),
            Err(_) => false,
        }
    }

    async fn wait_for_pid(file: &Path) -> u32 {
        for _ in 0..200 {
            if let Some(pid) = std::fs::read_to_string(file)
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                return pid;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("{} never written", file.display());
    }

    async fn assert_dies(pid: u32) {
        for _ in 0..200 {
            if !alive(pid) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("process {pid} survived");
    }

    const TREE: &str = "sleep 30 & echo $! > bg.pid; sleep 30";

    #[tokio::test]
    async fn merges_output_and_reports_exit_code_in_the_workspace() {
        let (dir, ctx) = setup();
        let args = json!({"command": "pwd; echo out; echo err >&2; exit 3"});
        let out = BashTool.execute(args, &ctx).await.unwrap().content;
        let root = ctx.workspace.root().display();
        assert_eq!(out, format!("{root}\nout\nerr\nexit code: 3"));
        let out = BashTool
            .execute(json!({"command": "true"}), &ctx)
            .await
            .unwrap();
        assert_eq!(out.content, "(no output)\nexit code: 0");
        drop(dir);
    }

    #[tokio::test]
    async fn caps_long_output_keeping_head_and_tail() {
        let (_dir, ctx) = setup();
        let args =
            json!({"command": "echo START; head -c 100000 /dev/zero | tr '\\0' x; echo; echo END"});
        let out = BashTool.execute(args, &ctx).await.unwrap().content;
        assert!(out.len() < MAX_OUTPUT_BYTES + 200, "{}", out.len());
        assert!(out.starts_with("START\n"));
        assert!(out.contains("bytes of output omitted"));
        assert!(
            out.ends_with("END\nexit code: 0"),
            "{}",
            &out[out.len() - 50..]
        );
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_process_group() {
        let (dir, ctx) = setup();
        let started = Instant::now();
        let args = json!({"command": TREE, "timeout_ms": 700});
        let err = BashTool.execute(args, &ctx).await.unwrap_err().to_string();
        assert!(err.starts_with("command timed out after 700 ms"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_dies(wait_for_pid(&dir.path().join("bg.pid")).await).await;
    }

    #[tokio::test]
    async fn cancellation_kills_the_whole_process_group() {
        let (dir, ctx) = setup();
        let task_ctx = ctx.clone();
        let task =
            tokio::spawn(
                async move { BashTool.execute(json!({"command": TREE}), &task_ctx).await },
            );
        let pid = wait_for_pid(&dir.path().join("bg.pid")).await;
        assert!(alive(pid));
        ctx.cancel.cancel();
        assert_eq!(task.await.unwrap(), Err(ToolError::Cancelled));
        assert_dies(pid).await;
    }

    #[tokio::test]
    async fn dropping_the_call_kills_the_group_and_finishing_reaps_background_jobs() {
        let (dir, ctx) = setup();
        let call = BashTool.execute(json!({"command": TREE}), &ctx);
        assert!(tokio::time::timeout(Duration::from_millis(700), call)
            .await
            .is_err());
        assert_dies(wait_for_pid(&dir.path().join("bg.pid")).await).await;

        let started = Instant::now();
        let args = json!({"command": "sleep 30 & echo $! > bg2.pid; echo done"});
        let out = BashTool.execute(args, &ctx).await.unwrap().content;
        assert_eq!(out, "done\nexit code: 0");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "did not wait for the job"
        );
        assert_dies(wait_for_pid(&dir.path().join("bg2.pid")).await).await;
    }

    #[tokio::test]
    async fn rejects_bad_timeouts() {
        let (_dir, ctx) = setup();
        for timeout in [0, MAX_BASH_TIMEOUT_MS + 1] {
            let args = json!({"command": "true", "timeout_ms": timeout});
            let err = BashTool.execute(args, &ctx).await.unwrap_err();
            assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");
        }
    }

    #[test]
    fn capped_output_keeps_both_ends() {
        let mut out = CappedOutput::new(10);
        out.push(b"abc");
        out.push(b"defghijklmnop");
        out.push(b"qr");
        assert_eq!(
            out.into_string(),
            "abcde\n... [8 bytes of output omitted] ...\nnopqr"
        );
    }
}
