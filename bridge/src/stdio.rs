//! Stdin and stdout moved by two dedicated threads.
//!
//! tokio's own stdin/stdout hand every read and write to the blocking pool,
//! a thread hop per line that dominated the bridge's per-message cost. Here
//! one thread blocks in read(2) and one in write(2), each connected to the
//! async side by a bounded channel, so a line costs a channel send and one
//! syscall, and a host that stops reading still slows the bridge down.

use std::io::{Read, Write};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;
use tokio_util::sync::PollSender;

/// Chunks in flight between a thread and the async side.
const CHANNEL_CHUNKS: usize = 64;
const READ_CHUNK: usize = 64 * 1024;

/// The read half: bytes from a reader thread.
pub struct ThreadReader {
    rx: mpsc::Receiver<std::io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    pos: usize,
}

/// Starts a thread reading `input` until end of input or an error.
pub fn thread_reader<R: Read + Send + 'static>(mut input: R) -> ThreadReader {
    let (tx, rx) = mpsc::channel(CHANNEL_CHUNKS);
    std::thread::Builder::new()
        .name("a3s-stdin".into())
        .spawn(move || loop {
            let mut buf = vec![0u8; READ_CHUNK];
            match input.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    buf.truncate(n);
                    if tx.blocking_send(Ok(buf)).is_err() {
                        break;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.blocking_send(Err(e));
                    break;
                }
            }
        })
        .expect("spawn the stdin thread");
    ThreadReader {
        rx,
        chunk: Vec::new(),
        pos: 0,
    }
}

impl AsyncRead for ThreadReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if this.pos == this.chunk.len() {
            match ready!(this.rx.poll_recv(cx)) {
                Some(Ok(chunk)) => {
                    this.chunk = chunk;
                    this.pos = 0;
                }
                Some(Err(e)) => return Poll::Ready(Err(e)),
                None => return Poll::Ready(Ok(())), // end of input
            }
        }
        let n = (this.chunk.len() - this.pos).min(buf.remaining());
        buf.put_slice(&this.chunk[this.pos..this.pos + n]);
        this.pos += n;
        Poll::Ready(Ok(()))
    }
}

/// The write half: bytes to a writer thread.
pub struct ThreadWriter {
    tx: PollSender<Vec<u8>>,
}

/// Joins the writer thread once every byte has been written.
pub struct WriterThread(std::thread::JoinHandle<()>);

impl WriterThread {
    /// Waits until the thread has written and flushed everything queued.
    pub fn join(self) {
        let _ = self.0.join();
    }
}

/// Starts a thread writing to `output`; it ends when the [`ThreadWriter`]
/// is shut down or dropped, after writing what was queued.
pub fn thread_writer<W: Write + Send + 'static>(mut output: W) -> (ThreadWriter, WriterThread) {
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(CHANNEL_CHUNKS);
    let handle = std::thread::Builder::new()
        .name("a3s-stdout".into())
        .spawn(move || {
            while let Some(bytes) = rx.blocking_recv() {
                if output.write_all(&bytes).is_err() {
                    return;
                }
                // Flush when caught up: bursts share one flush, a lone
                // reply is not delayed.
                if rx.is_empty() && output.flush().is_err() {
                    return;
                }
            }
            let _ = output.flush();
        })
        .expect("spawn the stdout thread");
    (
        ThreadWriter {
            tx: PollSender::new(tx),
        },
        WriterThread(handle),
    )
}

impl AsyncWrite for ThreadWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let closed = || std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout thread ended");
        ready!(self.tx.poll_reserve(cx)).map_err(|_| closed())?;
        self.tx.send_item(buf.to_vec()).map_err(|_| closed())?;
        Poll::Ready(Ok(buf.len()))
    }

    /// The thread flushes whenever it catches up; nothing to wait for here.
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.tx.close();
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn bytes_cross_both_threads_in_order_and_end_cleanly() {
        let input: Vec<u8> = (0..200_000u32).flat_map(|n| n.to_le_bytes()).collect();
        let mut reader = thread_reader(std::io::Cursor::new(input.clone()));
        let mut read = Vec::new();
        reader.read_to_end(&mut read).await.unwrap();
        assert_eq!(read, input);

        let sink = Shared::default();
        let (mut writer, thread) = thread_writer(sink.clone());
        for n in 0..1000 {
            writer
                .write_all(format!("line {n}\n").as_bytes())
                .await
                .unwrap();
        }
        writer.shutdown().await.unwrap();
        drop(writer);
        thread.join();
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 1000);
        assert!(text.ends_with("line 999\n"));
    }
}
