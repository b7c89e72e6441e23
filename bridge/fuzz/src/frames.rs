//! Target `frames`: arbitrary byte streams through `read_frame`, with small
//! line limits, small `BufReader` capacities and a reader that hands out
//! odd-sized chunks (and sometimes `Pending`), checked against an oracle.
//!
//! A case is `[limit, capacity, chunking seed, input...]`.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use a3s_code_bridge::transport::{read_frame, Frame};
use tokio::io::{AsyncRead, BufReader, ReadBuf};

use crate::mutate;
use crate::rng::Rng;
use crate::Target;

pub const HEADER: usize = 3;

/// What `read_frame` must return for `input`: `None` marks a too-long line.
pub fn oracle(input: &[u8], max: usize) -> Vec<Option<&[u8]>> {
    let mut pieces: Vec<&[u8]> = input.split(|b| *b == b'\n').collect();
    // After a final newline (or for empty input) `split` yields an empty
    // piece that is not a line.
    if pieces.last().is_some_and(|p| p.is_empty()) {
        pieces.pop();
    }
    pieces
        .into_iter()
        .map(|p| (p.len() <= max).then_some(p))
        .collect()
}

/// Hands out `data` in chunks of 1 to 17 bytes, sometimes returning `Pending`.
struct Chunked<'a> {
    data: &'a [u8],
    rng: Rng,
}

impl AsyncRead for Chunked<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.rng.one_in(5) {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let n = self
            .rng
            .range(1, 17)
            .min(self.data.len())
            .min(buf.remaining());
        let (chunk, rest) = self.data.split_at(n);
        buf.put_slice(chunk);
        self.data = rest;
        Poll::Ready(Ok(()))
    }
}

pub struct Frames;

impl Frames {
    pub fn check(case: &[u8]) -> Result<(), String> {
        let header: [u8; HEADER] = match case.get(..HEADER) {
            Some(h) => h.try_into().expect("header"),
            None => return Ok(()),
        };
        let input = &case[HEADER..];
        let max = 1 + header[0] as usize % 64;
        let capacity = 1 + header[1] as usize % 16;
        let source = Chunked {
            data: input,
            rng: Rng::new(header[2] as u64),
        };
        let mut reader = BufReader::with_capacity(capacity, source);
        let mut got = Vec::new();
        futures::executor::block_on(async {
            while let Some(frame) = read_frame(&mut reader, max)
                .await
                .map_err(|e| e.to_string())?
            {
                if got.len() > input.len() + 1 {
                    return Err("more frames than input bytes".to_string());
                }
                got.push(frame);
            }
            Ok::<_, String>(())
        })?;
        for frame in &got {
            if let Frame::Line(line) = frame {
                if line.len() > max || line.contains(&b'\n') {
                    return Err(format!("line of {} bytes over limit {max}", line.len()));
                }
            }
        }
        let expected: Vec<Frame> = oracle(input, max)
            .into_iter()
            .map(|p| p.map_or(Frame::TooLong, |p| Frame::Line(p.to_vec())))
            .collect();
        if got != expected {
            return Err(format!(
                "frames differ from the oracle (max {max}, capacity {capacity}):\n got {got:?}\nwant {expected:?}"
            ));
        }
        // Stated directly: the lines, each plus a newline, are the input
        // without its too-long lines.
        let rebuilt: Vec<u8> = got
            .iter()
            .filter_map(|f| match f {
                Frame::Line(line) => Some(line.iter().chain(b"\n")),
                Frame::TooLong => None,
            })
            .flatten()
            .copied()
            .collect();
        let (mut kept, mut dropped, mut rest) = (Vec::new(), 0, input);
        while !rest.is_empty() {
            let end = rest
                .iter()
                .position(|b| *b == b'\n')
                .map_or(rest.len(), |p| p + 1);
            let (line, tail) = rest.split_at(end);
            let body = line.strip_suffix(b"\n").unwrap_or(line);
            if body.len() <= max {
                kept.extend_from_slice(body);
                kept.push(b'\n');
            } else {
                dropped += 1;
            }
            rest = tail;
        }
        let too_long = got.iter().filter(|f| **f == Frame::TooLong).count();
        if rebuilt != kept || too_long != dropped {
            return Err("lines plus newlines do not rebuild the input minus too-long lines".into());
        }
        Ok(())
    }
}

impl Target for Frames {
    fn name(&self) -> &'static str {
        "frames"
    }

    fn header_len(&self) -> usize {
        HEADER
    }

    fn seeds(&self, rng: &mut Rng) -> Vec<Vec<u8>> {
        let mut seeds = vec![
            b"\x10\x03\x00{\"a\":1}\n\nxyz".to_vec(),
            b"\x09\x00\x01xxxxxxxxxxxxxxxxxxxxxxxx\nok\nyyyyyyyyyyyy".to_vec(),
            b"\x09\x00\x02".to_vec(),
            b"\x3f\x0f\x03\n\n\n".to_vec(),
        ];
        for _ in 0..8 {
            let mut case = vec![rng.byte(), rng.byte(), rng.byte()];
            case.extend(crate::corpus::classify_case(rng));
            case.push(b'\n');
            seeds.push(case);
        }
        seeds
    }

    fn mutate(&self, rng: &mut Rng, base: &[u8], other: &[u8]) -> Vec<u8> {
        let mut case = base.to_vec();
        case.resize(case.len().max(HEADER), 0);
        if rng.one_in(4) {
            case[rng.below(HEADER)] = rng.byte();
        }
        let limit = 1 + case[0] as usize % 64;
        let mut input = case.split_off(HEADER);
        let other = other.get(HEADER..).unwrap_or_default();
        mutate::mutate_bytes(rng, &mut input, other, limit, 4096);
        case.extend(input);
        case
    }

    fn run(&mut self, case: &[u8]) -> Result<Vec<u64>, String> {
        Frames::check(case)?;
        // Features: the shape of the frame sequence.
        let input = case.get(HEADER..).unwrap_or_default();
        let max = 1 + case.first().map_or(0, |b| *b as usize % 64);
        let frames = oracle(input, max);
        let too_long = frames.iter().filter(|f| f.is_none()).count();
        Ok(vec![
            frames.len().min(16) as u64,
            100 + too_long.min(8) as u64,
            200 + input.ends_with(b"\n") as u64,
        ])
    }
}
