//! Server-sent-events decoding over a raw byte stream.
//!
//! Both providers stream their answers as SSE (`text/event-stream`). Network
//! chunks do not respect line boundaries: a `data:` line, a CRLF pair or even
//! a multi-byte UTF-8 character can be split between two reads. The decoder
//! therefore buffers bytes until a whole line is available and only then
//! interprets it, following the WHATWG event-stream rules: `data` lines are
//! joined with `\n`, `event` names the event, lines starting with `:` are
//! comments (keep-alives), and a blank line dispatches the event.

use std::collections::VecDeque;

use bytes::Bytes;
use futures::{Stream, StreamExt};

/// One dispatched server-sent event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field; `None` means the default type (`message`).
    pub event: Option<String>,
    /// All `data:` lines of the event, joined with `\n`.
    pub data: String,
}

/// Incremental decoder: feed it bytes as they arrive, collect whole events.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    /// Bytes of the current, not yet terminated line.
    line: Vec<u8>,
    /// The previous chunk ended in `\r`; a leading `\n` of the next chunk
    /// belongs to the same line terminator.
    skip_lf: bool,
    event: Option<String>,
    data: String,
    /// At least one `data` field was seen for the pending event (an event
    /// whose data is the empty string is still dispatched).
    has_data: bool,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Consumes the next bytes of the stream and returns the events they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut rest = bytes;
        if self.skip_lf {
            self.skip_lf = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(pos) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&rest[..pos]);
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, &mut out);
            let terminator = rest[pos];
            rest = &rest[pos + 1..];
            if terminator == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
        }
        self.line.extend_from_slice(rest);
        out
    }

    /// Ends the stream. An event whose lines were all complete is dispatched
    /// even without the closing blank line (some servers omit it before
    /// closing); an unterminated last line may be truncated and is dropped.
    pub fn finish(&mut self) -> Option<SseEvent> {
        self.line.clear();
        self.take_event()
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            out.extend(self.take_event());
            return;
        }
        if line[0] == b':' {
            return; // comment / keep-alive
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_string()),
            // `id` and `retry` only matter for browser reconnection.
            _ => {}
        }
    }

    fn take_event(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        if !std::mem::take(&mut self.has_data) {
            return None;
        }
        Some(SseEvent {
            event: event.filter(|e| !e.is_empty()),
            data: std::mem::take(&mut self.data),
        })
    }
}

/// Turns a byte stream into a stream of events. A transport error is passed
/// through and ends the stream.
pub(crate) fn decode<S, E>(bytes: S) -> impl Stream<Item = Result<SseEvent, E>> + Send
where
    S: Stream<Item = Result<Bytes, E>> + Send + Unpin,
    E: Send,
{
    struct State<S> {
        bytes: S,
        decoder: SseDecoder,
        ready: VecDeque<SseEvent>,
        ended: bool,
    }
    let state = State {
        bytes,
        decoder: SseDecoder::new(),
        ready: VecDeque::new(),
        ended: false,
    };
    futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.ready.pop_front() {
                return Some((Ok(event), state));
            }
            if state.ended {
                return None;
            }
            match state.bytes.next().await {
                Some(Ok(chunk)) => state.ready.extend(state.decoder.feed(&chunk)),
                Some(Err(err)) => {
                    state.ended = true;
                    return Some((Err(err), state));
                }
                None => {
                    state.ended = true;
                    state.ready.extend(state.decoder.finish());
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_string),
            data: data.to_string(),
        }
    }

    /// Feeds `input` split at every possible position and checks that the
    /// result never depends on where the network cut the bytes.
    fn decode_all_splits(input: &[u8]) -> Vec<SseEvent> {
        let mut whole = SseDecoder::new();
        let mut expected = whole.feed(input);
        expected.extend(whole.finish());
        for cut in 0..=input.len() {
            let mut decoder = SseDecoder::new();
            let mut events = decoder.feed(&input[..cut]);
            events.extend(decoder.feed(&input[cut..]));
            events.extend(decoder.finish());
            assert_eq!(events, expected, "split at {cut}");
        }
        // Byte by byte, the worst case.
        let mut decoder = SseDecoder::new();
        let mut events: Vec<_> = input.iter().flat_map(|b| decoder.feed(&[*b])).collect();
        events.extend(decoder.finish());
        assert_eq!(events, expected, "byte by byte");
        expected
    }

    #[test]
    fn decodes_data_events_split_anywhere() {
        let events = decode_all_splits(b"data: {\"a\":1}\n\ndata: [DONE]\n\n");
        assert_eq!(events, vec![data(None, "{\"a\":1}"), data(None, "[DONE]")]);
    }

    #[test]
    fn handles_event_names_comments_crlf_and_multiline_data() {
        let input = ": keep-alive\r\nevent: ping\r\ndata: {}\r\n\r\n\
                     event:message_start\rdata:x\r\rdata: line1\ndata: line2\nid: 7\nretry: 10\n\n";
        let events = decode_all_splits(input.as_bytes());
        assert_eq!(
            events,
            vec![
                data(Some("ping"), "{}"),
                data(Some("message_start"), "x"),
                data(None, "line1\nline2"),
            ]
        );
    }

    #[test]
    fn keeps_multibyte_characters_split_between_chunks() {
        let events = decode_all_splits("data: héllo — 世界\n\n".as_bytes());
        assert_eq!(events, vec![data(None, "héllo — 世界")]);
    }

    #[test]
    fn blank_lines_without_data_dispatch_nothing() {
        let events = decode_all_splits(b"\n\nevent: lonely\n\ndata\n\n");
        assert_eq!(events, vec![data(None, "")]);
    }

    #[test]
    fn end_of_stream_keeps_complete_lines_and_drops_a_cut_line() {
        let mut decoder = SseDecoder::new();
        assert!(decoder.feed(b"data: complete\n").is_empty());
        assert_eq!(decoder.finish(), Some(data(None, "complete")));
        let mut decoder = SseDecoder::new();
        assert!(decoder.feed(b"data: {\"trunc").is_empty());
        assert_eq!(decoder.finish(), None);
    }

    #[tokio::test]
    async fn decodes_a_byte_stream_and_passes_errors_through() {
        let chunks: Vec<Result<Bytes, &str>> = vec![
            Ok(Bytes::from_static(b"da")),
            Ok(Bytes::from_static(b"ta: one\n\ndata: t")),
            Ok(Bytes::from_static(b"wo\n\n")),
            Err("reset"),
            Ok(Bytes::from_static(b"data: never\n\n")),
        ];
        let events: Vec<_> = decode(futures::stream::iter(chunks)).collect().await;
        assert_eq!(
            events,
            vec![Ok(data(None, "one")), Ok(data(None, "two")), Err("reset")]
        );
    }
}
