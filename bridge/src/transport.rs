//! Framing: newline-delimited lines in, whole lines out.
//!
//! The reader enforces the line limit itself (a codec that ends the stream
//! on its first error would kill the connection on one oversized line). The
//! writer is one task fed by a bounded channel, so each message is written
//! whole and a host that stops reading slows the bridge down instead of
//! growing its memory.

use serde::Serialize;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// One unit read from the host.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A line without its newline.
    Line(Vec<u8>),
    /// A line longer than the limit; it was discarded up to its newline.
    TooLong,
}

/// Reads the next frame; `Ok(None)` at end of input.
pub async fn read_frame<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max_line_bytes: usize,
) -> std::io::Result<Option<Frame>> {
    let mut line = Vec::new();
    let mut discarding = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match (discarding, line.is_empty()) {
                (true, _) => Some(Frame::TooLong),
                (false, true) => None,
                (false, false) => Some(Frame::Line(line)),
            });
        }
        let (chunk, consumed, complete) = match available.iter().position(|b| *b == b'\n') {
            Some(newline) => (&available[..newline], newline + 1, true),
            None => (available, available.len(), false),
        };
        if !discarding {
            if line.len() + chunk.len() > max_line_bytes {
                discarding = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        reader.consume(consumed);
        if complete {
            return Ok(Some(if discarding {
                Frame::TooLong
            } else {
                Frame::Line(line)
            }));
        }
    }
}

/// Messages queued for stdout before senders wait.
pub const WRITE_QUEUE: usize = 256;

/// A cloneable handle that queues messages for the writer task.
#[derive(Debug, Clone)]
pub struct Outbound {
    tx: mpsc::Sender<String>,
}

impl Outbound {
    /// Serializes and queues one message; waits while the queue is full.
    /// A closed writer (stdout gone) drops the message: nobody can read it.
    pub async fn send<T: Serialize>(&self, message: &T) {
        match serde_json::to_string(message) {
            Ok(line) => {
                let _ = self.tx.send(line).await;
            }
            Err(e) => tracing::error!("cannot serialize an outgoing message: {e}"),
        }
    }

    /// Queues without waiting, for places that cannot await (drop guards).
    pub fn try_send<T: Serialize>(&self, message: &T) {
        if let Ok(line) = serde_json::to_string(message) {
            let _ = self.tx.try_send(line);
        }
    }
}

/// Starts the writer task. It ends when `finish` is cancelled, after writing
/// what is already queued, or when every [`Outbound`] is dropped.
pub fn spawn_writer<W: AsyncWrite + Unpin + Send + 'static>(
    mut output: W,
    finish: CancellationToken,
) -> (Outbound, tokio::task::JoinHandle<()>) {
    let (tx, mut rx) = mpsc::channel::<String>(WRITE_QUEUE);
    let handle = tokio::spawn(async move {
        loop {
            let line = tokio::select! {
                biased;
                line = rx.recv() => line,
                _ = finish.cancelled() => rx.try_recv().ok(),
            };
            let Some(mut line) = line else { break };
            line.push('\n');
            if output.write_all(line.as_bytes()).await.is_err() {
                break;
            }
            // Flush when nothing else is queued: batches writes under load
            // without delaying a lone reply.
            if rx.is_empty() && output.flush().await.is_err() {
                break;
            }
        }
        let _ = output.flush().await;
    });
    (Outbound { tx }, handle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    async fn frames(input: &[u8], max: usize) -> Vec<Frame> {
        let mut reader = BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        while let Some(frame) = read_frame(&mut reader, max).await.unwrap() {
            out.push(frame);
        }
        out
    }

    #[tokio::test]
    async fn splits_lines_across_small_buffers_and_keeps_the_last_unterminated_one() {
        let got = frames(b"{\"a\":1}\n\nxyz", 100).await;
        assert_eq!(
            got,
            vec![
                Frame::Line(b"{\"a\":1}".to_vec()),
                Frame::Line(vec![]),
                Frame::Line(b"xyz".to_vec())
            ]
        );
    }

    #[tokio::test]
    async fn discards_an_oversized_line_up_to_its_newline_and_goes_on() {
        let mut input = vec![b'x'; 50];
        input.extend_from_slice(b"\nok\n");
        input.extend_from_slice(&[b'y'; 20]);
        let got = frames(&input, 10).await;
        assert_eq!(
            got,
            vec![Frame::TooLong, Frame::Line(b"ok".to_vec()), Frame::TooLong]
        );
        // Exactly at the limit is fine.
        assert_eq!(
            frames(b"0123456789\n", 10).await,
            vec![Frame::Line(b"0123456789".to_vec())]
        );
    }
}
