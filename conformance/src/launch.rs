//! Starting the scenario's bridge, and starting it again: `restartBridge`
//! stops the process (SIGKILL, or stdin closed and a clean exit) and spawns a
//! fresh one with the same executable, arguments, workspace and environment.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::bridge::Bridge;
use crate::host::{Host, Pumped};

/// How to start (and restart) the scenario's bridge.
pub struct Launch<'a> {
    pub program: &'a Path,
    pub args: Vec<String>,
    /// The working directory: the scenario's workspace.
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
}

impl Launch<'_> {
    pub fn spawn(&self) -> anyhow::Result<Bridge> {
        Bridge::spawn(self.program, &self.args, &self.cwd, &self.env)
    }
}

/// Stops the current bridge (SIGKILL, or stdin closed and a clean exit
/// within `timeout`) and starts a fresh one the same way. Returns the old
/// process's stderr.
pub fn restart(
    host: &mut Host,
    launch: &Launch,
    kill: bool,
    timeout: Duration,
) -> Result<String, String> {
    if kill {
        host.bridge.kill();
    } else {
        host.writer().close();
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(status) = host.bridge.try_exit() {
                break status;
            }
            if Instant::now() >= deadline {
                host.bridge.kill();
                return Err(format!(
                    "restartBridge: the bridge did not exit within {} ms of its stdin closing",
                    timeout.as_millis()
                ));
            }
            // Keep reading (acks, reverse answers) so it is never blocked writing.
            let slice = (Instant::now() + Duration::from_millis(20)).min(deadline);
            if host.pump(slice)? == Pumped::Closed {
                std::thread::sleep(slice.saturating_duration_since(Instant::now()));
            }
        };
        if !status.success() {
            return Err(format!(
                "restartBridge: the bridge exited with {status} after its stdin closed"
            ));
        }
    }
    let bridge = launch
        .spawn()
        .map_err(|e| format!("restartBridge: {e:#}"))?;
    let old = host.replace_bridge(bridge);
    Ok(old.stderr_tail())
}
