//! Mutations: byte-level (bit flips, truncation, splicing, newlines, NULs,
//! invalid UTF-8, huge numbers, deep nesting, lengths around the line limit)
//! and structure-aware (ids of every type, dropped or duplicated keys,
//! params of the wrong type, nesting, padding to the limit).

use serde_json::{json, Map, Value};

use crate::rng::Rng;

const INTERESTING: &[u8] = b"\n\0\"\\{}[],: \r\t-0123456789eE.\x7f\x80\xbf\xc0\xc1\xed\xf4\xf5\xff";

const INVALID_UTF8: &[&[u8]] = &[
    b"\xff",
    b"\x80",
    b"\xc0\x80",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"\xe2\x82",
    b"\xf0\x9f\x98",
];

/// Fragments that mean something to a JSON-RPC parser.
const TOKENS: &[&str] = &[
    r#""jsonrpc":"2.0","#,
    r#""jsonrpc":"1.0""#,
    r#""id":"#,
    r#""method":"#,
    r#""params":"#,
    r#""result":"#,
    r#""error":{"code":-1,"message":"x"}"#,
    "null",
    "true",
    "-0",
    "1e999",
    "-1e-999",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "0.5",
    r#""\u0000""#,
    r#""\ud800""#,
    r#""\udc00\ud800""#,
    "{}",
    "[]",
    "[{}]",
    r#""initialize""#,
    r#""shutdown""#,
    r#""session/stream""#,
    r#""session/send""#,
    r#""$/cancelRequest""#,
    r#""$/streamAck""#,
    r#""bridge-1""#,
    r#""agent-1""#,
    r#""s1""#,
    ",",
    ":",
    "\\",
    "\\u",
    "\"",
];

/// Strings worth putting where the bridge expects one.
const STRINGS: &[&str] = &[
    "",
    "s1",
    "s2",
    "agent-1",
    "agent-2",
    "bridge-1",
    "bridge-2",
    "initialize",
    "shutdown",
    "agent/create",
    "agent/close",
    "session/create",
    "session/info",
    "session/send",
    "session/stream",
    "session/close",
    "session/setBudgetGuard",
    "$/cancelRequest",
    "$/streamAck",
    "host/budget/checkBeforeLlm",
    "2.0",
    "1",
    "\u{0}",
    "\u{feff}é😀\u{7f}",
    "../..",
    "README.md",
];

const KEYS: &[&str] = &[
    "jsonrpc",
    "id",
    "method",
    "params",
    "result",
    "error",
    "sessionId",
    "agentId",
    "requestId",
    "seq",
    "prompt",
    "guard",
    "config",
    "workspace",
    "options",
    "timeoutMs",
    "protocolVersion",
    "decision",
];

/// A scalar or small container of an often surprising type.
pub fn scalar(rng: &mut Rng) -> Value {
    match rng.below(20) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(0),
        3 => json!(-1),
        4 => json!(i64::MAX),
        5 => json!(i64::MIN),
        6 => json!(u64::MAX),
        7 => json!(1.5),
        8 => json!(-0.0),
        9 => json!(1e300),
        10 => json!({}),
        11 => json!([]),
        12 => json!("x".repeat(rng.range(100, 5000))),
        13 => json!(rng.range(0, 10)),
        14 => json!(rng.range(0, 10).to_string()),
        _ => json!(*rng.pick(STRINGS)),
    }
}

/// A random JSON value at most `depth` levels deep.
pub fn value(rng: &mut Rng, depth: usize) -> Value {
    if depth == 0 || rng.below(3) > 0 {
        return scalar(rng);
    }
    if rng.one_in(2) {
        (0..rng.below(4)).map(|_| value(rng, depth - 1)).collect()
    } else {
        let mut map = Map::new();
        for _ in 0..rng.below(5) {
            map.insert(rng.pick(KEYS).to_string(), value(rng, depth - 1));
        }
        Value::Object(map)
    }
}

/// JSON pointers of the nodes of `v` (at most 64).
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    if out.len() >= 64 {
        return;
    }
    out.push(at.clone());
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let k = k.replace('~', "~0").replace('/', "~1");
                pointers(child, format!("{at}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                pointers(child, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// One structure-aware change somewhere in `v`.
pub fn mutate_value(rng: &mut Rng, v: &mut Value) {
    let mut all = Vec::new();
    pointers(v, String::new(), &mut all);
    let at = rng.pick(&all).clone();
    let Some(node) = v.pointer_mut(&at) else {
        return;
    };
    match rng.below(10) {
        0..=2 => *node = scalar(rng),
        3 => *node = value(rng, 3),
        4 => {
            // Nest around the serde_json recursion limit (128).
            let depth = *rng.pick(&[1, 2, 10, 126, 127, 128, 129, 200]);
            for _ in 0..depth {
                *node = Value::Array(vec![node.take()]);
            }
        }
        _ => match node {
            Value::Object(map) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                if !keys.is_empty() && rng.one_in(2) {
                    map.remove(rng.pick(&keys));
                } else {
                    map.insert(rng.pick(KEYS).to_string(), scalar(rng));
                }
            }
            Value::Array(items) if !items.is_empty() => {
                let i = rng.below(items.len());
                if rng.one_in(2) {
                    items.remove(i);
                } else {
                    let copy = items[i].clone();
                    items.insert(i, copy);
                }
            }
            Value::Number(_) => *node = scalar(rng),
            Value::String(s) => match rng.below(3) {
                0 => s.push_str(rng.pick::<&str>(STRINGS)),
                1 => *s = rng.pick(STRINGS).to_string(),
                _ => *node = json!([s.clone()]),
            },
            _ => *node = scalar(rng),
        },
    }
}

/// Serializes `v`, sometimes with a duplicated member (first or last wins).
pub fn to_text(rng: &mut Rng, v: &Value) -> Vec<u8> {
    let text = v.to_string();
    let Value::Object(map) = v else {
        return text.into_bytes();
    };
    if map.is_empty() || !rng.one_in(4) {
        return text.into_bytes();
    }
    let keys: Vec<&String> = map.keys().collect();
    let member = format!("{}:{}", json!(rng.pick(&keys)), scalar(rng));
    if rng.one_in(2) {
        format!("{{{member},{}", &text[1..]).into_bytes()
    } else {
        format!("{},{member}}}", &text[..text.len() - 1]).into_bytes()
    }
}

/// Grows a string inside `v` so that its serialization is `target` bytes.
pub fn pad_to(v: &mut Value, target: usize) {
    if !v.is_object() {
        return;
    }
    let pointer = if v.pointer("/params/prompt").is_some_and(Value::is_string) {
        "/params/prompt"
    } else {
        v["pad"] = json!("");
        "/pad"
    };
    let len = v.to_string().len() - v.pointer(pointer).map_or(0, |p| p.to_string().len() - 2);
    if let Some(slot) = v.pointer_mut(pointer) {
        *slot = json!("p".repeat(target.saturating_sub(len)));
    }
}

/// 1 to 4 byte-level changes. `limit` is the line limit of the target,
/// `cap` the size beyond which the result is truncated.
pub fn mutate_bytes(rng: &mut Rng, data: &mut Vec<u8>, other: &[u8], limit: usize, cap: usize) {
    for _ in 0..rng.range(1, 4) {
        let at = rng.below(data.len() + 1);
        match rng.below(14) {
            0 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] ^= 1 << rng.below(8);
            }
            1 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] = *rng.pick(INTERESTING);
            }
            2 => data.insert(at, b'\n'),
            3 => data.insert(at, b'\0'),
            4 => splice_in(data, at, rng.pick::<&[u8]>(INVALID_UTF8)),
            5 => data.truncate(at),
            6 if !data.is_empty() => {
                let start = rng.below(data.len());
                let end = (start + rng.range(1, 16)).min(data.len());
                data.drain(start..end);
            }
            7 if !data.is_empty() => {
                let start = rng.below(data.len());
                let end = (start + rng.range(1, 32)).min(data.len());
                let copy = data[start..end].to_vec();
                splice_in(data, at, &copy);
            }
            8 if !other.is_empty() => {
                let start = rng.below(other.len());
                let end = (start + rng.range(1, 256)).min(other.len());
                if rng.one_in(2) {
                    data.truncate(at);
                }
                let at = at.min(data.len());
                splice_in(data, at, &other[start..end]);
            }
            9 => splice_in(data, at, rng.pick(TOKENS).as_bytes()),
            10 => {
                let digits = "9".repeat(rng.range(20, 400));
                splice_in(data, at, digits.as_bytes());
            }
            11 => {
                let open = if rng.one_in(2) { b'[' } else { b'{' };
                let n = *rng.pick(&[127, 128, 129, 300, 3000]);
                splice_in(data, at, &vec![open; n]);
            }
            12 => {
                // A line of exactly limit - 1, limit or limit + 1 bytes.
                let want = (limit + rng.below(3)).saturating_sub(1);
                let line_start = data[..at]
                    .iter()
                    .rposition(|b| *b == b'\n')
                    .map_or(0, |p| p + 1);
                let line_end = data[at..]
                    .iter()
                    .position(|b| *b == b'\n')
                    .map_or(data.len(), |p| at + p);
                let have = line_end - line_start;
                if want > have {
                    splice_in(data, at, &vec![b'a'; want - have]);
                }
            }
            _ => {
                let b = rng.byte();
                data.insert(at, b);
            }
        }
    }
    data.truncate(cap);
}

fn splice_in(data: &mut Vec<u8>, at: usize, bytes: &[u8]) {
    data.splice(at..at, bytes.iter().copied());
}
