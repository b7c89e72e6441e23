//! The bridge child process and its three pipes, each served by a thread so
//! the runner never blocks on the child:
//!
//! - a writer thread owns stdin and writes queued lines in order (a huge
//!   line cannot stall the runner; `close` is queued behind pending lines);
//! - a reader thread splits stdout into lines of at most [`MAX_LINE_BYTES`]
//!   (the host applies the protocol's limit too) and sends them on a channel;
//! - a stderr thread keeps the last [`STDERR_TAIL`] bytes for failure reports.

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// The protocol's default `limits.maxLineBytes` (16 MiB).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// How much of the child's stderr is kept.
pub const STDERR_TAIL: usize = 16 * 1024;

/// What the stdout reader reports.
#[derive(Debug)]
pub enum Incoming {
    Line(Vec<u8>),
    /// A line longer than [`MAX_LINE_BYTES`]; its length so far.
    TooLong(usize),
    Eof,
    ReadError(String),
}

enum WriteCmd {
    Line(Vec<u8>),
    Close,
}

/// A cloneable handle that queues writes to the child's stdin.
#[derive(Clone)]
pub struct Writer {
    tx: Sender<WriteCmd>,
    error: Arc<Mutex<Option<String>>>,
}

impl Writer {
    /// Queues `bytes` followed by a newline.
    pub fn line(&self, mut bytes: Vec<u8>) {
        bytes.push(b'\n');
        let _ = self.tx.send(WriteCmd::Line(bytes));
    }

    /// Closes stdin once every queued line is written.
    pub fn close(&self) {
        let _ = self.tx.send(WriteCmd::Close);
    }

    /// The first write error, if any (e.g. the child closed its stdin).
    pub fn error(&self) -> Option<String> {
        self.error.lock().ok()?.clone()
    }
}

pub struct Bridge {
    child: Child,
    pub writer: Writer,
    pub incoming: Receiver<Incoming>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
}

impl Bridge {
    /// Starts `program args...` in `cwd` with extra `env`.
    pub fn spawn(
        program: &Path,
        args: &[String],
        cwd: &Path,
        env: &[(String, String)],
    ) -> Result<Bridge> {
        let mut child = Command::new(program)
            .args(args)
            .current_dir(cwd)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("spawning {}", program.display()))?;
        let stdin = child.stdin.take().context("no stdin pipe")?;
        let stdout = child.stdout.take().context("no stdout pipe")?;
        let stderr_pipe = child.stderr.take().context("no stderr pipe")?;

        let (write_tx, write_rx) = mpsc::channel();
        let error = Arc::new(Mutex::new(None));
        let writer_error = Arc::clone(&error);
        thread::Builder::new()
            .name("bridge-stdin".into())
            .spawn(move || write_loop(stdin, write_rx, writer_error))?;

        let (read_tx, incoming) = mpsc::channel();
        thread::Builder::new()
            .name("bridge-stdout".into())
            .spawn(move || read_loop(BufReader::with_capacity(64 * 1024, stdout), read_tx))?;

        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let tail = Arc::clone(&stderr);
        thread::Builder::new()
            .name("bridge-stderr".into())
            .spawn(move || stderr_loop(stderr_pipe, tail))?;

        Ok(Bridge {
            child,
            writer: Writer {
                tx: write_tx,
                error,
            },
            incoming,
            stderr,
        })
    }

    /// The exit status, if the child has exited.
    pub fn try_exit(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The last [`STDERR_TAIL`] bytes the child wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        match self.stderr.lock() {
            Ok(buf) => {
                String::from_utf8_lossy(&buf.iter().copied().collect::<Vec<u8>>()).into_owned()
            }
            Err(_) => String::new(),
        }
    }

    /// Kills the child at once (SIGKILL on Unix) and reaps it.
    pub fn kill(&mut self) {
        if self.try_exit().is_none() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }

    /// Closes stdin, gives the child a short grace period, then kills it.
    pub fn stop(&mut self, grace: Duration) {
        self.writer.close();
        let deadline = Instant::now() + grace;
        while self.try_exit().is_none() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        if self.try_exit().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        if self.try_exit().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn write_loop(mut stdin: ChildStdin, rx: Receiver<WriteCmd>, error: Arc<Mutex<Option<String>>>) {
    for cmd in rx {
        match cmd {
            WriteCmd::Line(bytes) => {
                if let Err(e) = stdin.write_all(&bytes).and_then(|()| stdin.flush()) {
                    if let Ok(mut slot) = error.lock() {
                        slot.get_or_insert_with(|| format!("writing to the bridge's stdin: {e}"));
                    }
                    return;
                }
            }
            WriteCmd::Close => return,
        }
    }
}

fn read_loop(mut reader: impl BufRead, tx: Sender<Incoming>) {
    loop {
        let message = match read_line(&mut reader, MAX_LINE_BYTES) {
            Ok(Some(Ok(line))) => Incoming::Line(line),
            Ok(Some(Err(len))) => Incoming::TooLong(len),
            Ok(None) => {
                let _ = tx.send(Incoming::Eof);
                return;
            }
            Err(e) => {
                let _ = tx.send(Incoming::ReadError(e.to_string()));
                return;
            }
        };
        if tx.send(message).is_err() {
            return;
        }
    }
}

/// Reads one line without its newline: `Ok(None)` at EOF, `Err(len)` inside
/// when the line exceeds `max` bytes (it is consumed up to its newline). A
/// last line without a newline still counts as a line.
pub fn read_line(
    reader: &mut impl BufRead,
    max: usize,
) -> io::Result<Option<Result<Vec<u8>, usize>>> {
    let mut line = Vec::new();
    let mut len = 0usize;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(match len {
                0 => None,
                _ if len > max => Some(Err(len)),
                _ => Some(Ok(line)),
            });
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        len += chunk.len();
        if len <= max {
            line.extend_from_slice(chunk);
        } else {
            line = Vec::new();
        }
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(Some(if len > max { Err(len) } else { Ok(line) }));
        }
    }
}

fn stderr_loop(mut pipe: impl Read, tail: Arc<Mutex<VecDeque<u8>>>) {
    let mut buf = [0u8; 4096];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let Ok(mut tail) = tail.lock() else { return };
                tail.extend(&buf[..n]);
                let excess = tail.len().saturating_sub(STDERR_TAIL);
                tail.drain(..excess);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<Result<Vec<u8>, usize>> {
        let mut reader = BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        while let Some(line) = read_line(&mut reader, max).unwrap() {
            out.push(line);
        }
        out
    }

    #[test]
    fn splits_lines_across_buffer_boundaries() {
        assert_eq!(
            lines(b"{\"a\":1}\n\nxyz", 100),
            vec![Ok(b"{\"a\":1}".to_vec()), Ok(vec![]), Ok(b"xyz".to_vec())]
        );
    }

    #[test]
    fn over_long_lines_are_skipped_and_reported() {
        assert_eq!(
            lines(b"0123456789\nok\n", 5),
            vec![Err(10), Ok(b"ok".to_vec())]
        );
        assert_eq!(lines(b"12345\n", 5), vec![Ok(b"12345".to_vec())]);
    }
}
