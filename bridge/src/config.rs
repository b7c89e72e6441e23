//! Bridge settings, from the command line.

use std::time::Duration;

/// Limits and timeouts of one bridge process.
#[derive(Debug, Clone)]
pub struct BridgeConfig {
    /// Longest accepted input line, newline excluded.
    pub max_line_bytes: usize,
    /// Requests run at once; more are answered `OVERLOADED`.
    pub max_in_flight: usize,
    /// Events a stream sends beyond the host's last ack.
    pub stream_window: u64,
    /// How long `shutdown` / end of input waits for in-flight requests.
    pub shutdown_grace: Duration,
}

impl Default for BridgeConfig {
    fn default() -> Self {
        Self {
            max_line_bytes: 16 * 1024 * 1024,
            max_in_flight: 256,
            stream_window: 256,
            shutdown_grace: Duration::from_secs(5),
        }
    }
}

pub const USAGE: &str = "\
a3s-code-bridge: serves the A3S Code agent runtime over line-delimited JSON-RPC 2.0 on stdin/stdout.

usage: a3s-code-bridge [options]
  --max-line-bytes N      longest accepted line (default 16777216)
  --max-in-flight N       requests run at once before OVERLOADED (default 256)
  --stream-window N       events per stream beyond the last $/streamAck (default 256)
  --shutdown-grace-ms N   wait for in-flight work on shutdown (default 5000)
  --version               print the version
Logs go to stderr; set A3S_LOG (or RUST_LOG), e.g. A3S_LOG=debug.";

impl BridgeConfig {
    /// Parses the options; `Err` carries the message to print.
    pub fn from_args(args: impl IntoIterator<Item = String>) -> Result<Self, String> {
        let mut config = Self::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let mut number = |name: &str| -> Result<u64, String> {
                args.next()
                    .ok_or_else(|| format!("{name} needs a value"))?
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("{name} needs a positive integer"))
            };
            match arg.as_str() {
                "--max-line-bytes" => config.max_line_bytes = number(&arg)? as usize,
                "--max-in-flight" => config.max_in_flight = number(&arg)? as usize,
                "--stream-window" => config.stream_window = number(&arg)?,
                "--shutdown-grace-ms" => {
                    config.shutdown_grace = Duration::from_millis(number(&arg)?)
                }
                "--version" => {
                    return Err(format!("a3s-code-bridge {}", env!("CARGO_PKG_VERSION")))
                }
                "-h" | "--help" => return Err(USAGE.to_string()),
                other => return Err(format!("unknown option {other}\n\n{USAGE}")),
            }
        }
        Ok(config)
    }
}
