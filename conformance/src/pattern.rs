//! Structural matching of received JSON against scenario patterns.
//!
//! - An object pattern matches an object holding at least its keys (extra
//!   keys are allowed), each value matching recursively.
//! - An array pattern matches an array of the same length, element-wise.
//! - Numbers compare by value (`1` matches `1.0`); other literals by equality.
//! - Tokens (whole strings): `$any` (present, any value), `$absent` (the key
//!   is missing), `$string`, `$number`, `$integer`, `$boolean`, `$object`,
//!   `$array`, and `$capture:name` (present; stores the value as `name`).
//! - Operators (an object with exactly one `$` key): `{"$contains": [p...]}`
//!   (an array with, for each pattern, some matching element),
//!   `{"$contains": "text"}` (a string containing `text`),
//!   `{"$startsWith": "prefix"}`, `{"$all": [p...]}`, `{"$anyOf": [p...]}`,
//!   `{"$literal": v}` (exactly `v`, for values that look like tokens),
//!   `{"$not": p}` (present and not matching `p`; its captures are dropped),
//!   `{"$regex": "re"}` (a string in which `re` finds a match, see
//!   `regex.rs`; each named group `(?P<name>...)` that takes part stores its
//!   text as `name`).
//!
//! Any other string starting with `$` is a literal (`"$/streamAck"`), except
//! a bare `$word`, which is rejected as a likely typo of a token.

use std::fmt;

use serde_json::{Map, Value};

use crate::regex::Regex;

/// Values stored by `$capture:name` tokens, in match order.
pub type Captures = Vec<(String, Value)>;

/// Why a value does not match, and where (`$.result.text`).
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub path: String,
    pub reason: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at {}: {}", self.path, self.reason)
    }
}

/// Matches `actual` against `pattern`; on success returns the captures.
pub fn matches(pattern: &Value, actual: &Value) -> Result<Captures, Mismatch> {
    let mut captures = Captures::new();
    match_at(pattern, Some(actual), "$", &mut captures)?;
    Ok(captures)
}

/// Shows at most `max` characters of a value's JSON.
pub fn brief(value: &Value, max: usize) -> String {
    let text = value.to_string();
    if text.chars().count() <= max {
        return text;
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}… ({} bytes)", text.len())
}

fn fail<T>(path: &str, reason: impl Into<String>) -> Result<T, Mismatch> {
    Err(Mismatch {
        path: path.to_string(),
        reason: reason.into(),
    })
}

fn match_at(
    pattern: &Value,
    actual: Option<&Value>,
    path: &str,
    caps: &mut Captures,
) -> Result<(), Mismatch> {
    if let Value::String(token) = pattern {
        if let Some(result) = match_token(token, actual, path, caps) {
            return result;
        }
    }
    if let Value::Object(map) = pattern {
        if let Some(result) = match_operator(map, actual, path, caps) {
            return result;
        }
    }
    let Some(actual) = actual else {
        return fail(path, format!("missing, expected {}", brief(pattern, 80)));
    };
    match (pattern, actual) {
        (Value::Object(want), Value::Object(got)) => {
            for (key, sub) in want {
                match_at(sub, got.get(key), &format!("{path}.{key}"), caps)?;
            }
            Ok(())
        }
        (Value::Array(want), Value::Array(got)) => {
            if want.len() != got.len() {
                return fail(
                    path,
                    format!(
                        "expected {} elements, got {}: {}",
                        want.len(),
                        got.len(),
                        brief(actual, 200)
                    ),
                );
            }
            for (index, (sub, item)) in want.iter().zip(got).enumerate() {
                match_at(sub, Some(item), &format!("{path}[{index}]"), caps)?;
            }
            Ok(())
        }
        (Value::Number(_), Value::Number(_)) if numbers_equal(pattern, actual) => Ok(()),
        _ if pattern == actual => Ok(()),
        _ => fail(
            path,
            format!(
                "expected {}, got {}",
                brief(pattern, 120),
                brief(actual, 200)
            ),
        ),
    }
}

fn numbers_equal(a: &Value, b: &Value) -> bool {
    match (a.as_i64(), b.as_i64()) {
        (Some(x), Some(y)) => x == y,
        _ => match (a.as_u64(), b.as_u64()) {
            (Some(x), Some(y)) => x == y,
            _ => a.as_f64() == b.as_f64(),
        },
    }
}

/// `None` when `token` is not a token (then it is a literal string).
fn match_token(
    token: &str,
    actual: Option<&Value>,
    path: &str,
    caps: &mut Captures,
) -> Option<Result<(), Mismatch>> {
    if token == "$absent" {
        return Some(match actual {
            None => Ok(()),
            Some(value) => fail(path, format!("expected absent, got {}", brief(value, 120))),
        });
    }
    let check: fn(&Value) -> bool = match token {
        "$any" => |_| true,
        "$string" => Value::is_string,
        "$number" => Value::is_number,
        "$integer" => |v| v.is_i64() || v.is_u64(),
        "$boolean" => Value::is_boolean,
        "$object" => Value::is_object,
        "$array" => Value::is_array,
        _ => {
            if let Some(name) = token.strip_prefix("$capture:") {
                return Some(match actual {
                    Some(value) => {
                        caps.push((name.to_string(), value.clone()));
                        Ok(())
                    }
                    None => fail(
                        path,
                        format!("missing, expected a value to capture as {name}"),
                    ),
                });
            }
            let word = token.strip_prefix('$')?;
            if !word.is_empty() && word.chars().all(|c| c.is_ascii_alphabetic()) {
                return Some(fail(path, format!("unknown pattern token {token:?}")));
            }
            return None;
        }
    };
    Some(match actual {
        Some(value) if check(value) => Ok(()),
        Some(value) => fail(
            path,
            format!("expected {}, got {}", &token[1..], brief(value, 120)),
        ),
        None => fail(path, format!("missing, expected {}", &token[1..])),
    })
}

/// `None` when `map` is not an operator object.
fn match_operator(
    map: &Map<String, Value>,
    actual: Option<&Value>,
    path: &str,
    caps: &mut Captures,
) -> Option<Result<(), Mismatch>> {
    if map.len() != 1 {
        return None;
    }
    let (op, arg) = map.iter().next()?;
    if !op.starts_with('$') {
        return None;
    }
    let Some(value) = actual else {
        return Some(fail(
            path,
            format!(
                "missing, expected {}",
                brief(&Value::Object(map.clone()), 80)
            ),
        ));
    };
    Some(match op.as_str() {
        "$literal" if arg == value => Ok(()),
        "$literal" => fail(
            path,
            format!(
                "expected exactly {}, got {}",
                brief(arg, 120),
                brief(value, 200)
            ),
        ),
        "$startsWith" => match (arg.as_str(), value.as_str()) {
            (Some(prefix), Some(text)) if text.starts_with(prefix) => Ok(()),
            (Some(prefix), _) => fail(
                path,
                format!(
                    "expected a string starting with {prefix:?}, got {}",
                    brief(value, 120)
                ),
            ),
            (None, _) => fail(path, "$startsWith takes a string"),
        },
        "$contains" => contains(arg, value, path, caps),
        "$all" => match arg.as_array() {
            Some(parts) => parts
                .iter()
                .try_for_each(|part| match_at(part, Some(value), path, caps)),
            None => fail(path, "$all takes an array of patterns"),
        },
        "$anyOf" => any_of(arg, value, path, caps),
        "$not" => {
            let mut scratch = Captures::new();
            match match_at(arg, Some(value), path, &mut scratch) {
                Ok(()) => fail(
                    path,
                    format!(
                        "expected anything but {}, got {}",
                        brief(arg, 80),
                        brief(value, 200)
                    ),
                ),
                Err(_) => Ok(()),
            }
        }
        "$regex" => regex(arg, value, path, caps),
        other => fail(path, format!("unknown pattern operator {other:?}")),
    })
}

fn contains(arg: &Value, value: &Value, path: &str, caps: &mut Captures) -> Result<(), Mismatch> {
    if let Some(needle) = arg.as_str() {
        return match value.as_str() {
            Some(text) if text.contains(needle) => Ok(()),
            _ => fail(
                path,
                format!(
                    "expected a string containing {needle:?}, got {}",
                    brief(value, 200)
                ),
            ),
        };
    }
    let (Some(wanted), Some(items)) = (arg.as_array(), value.as_array()) else {
        return fail(
            path,
            format!(
                "$contains needs an array pattern and an array, got {}",
                brief(value, 120)
            ),
        );
    };
    for want in wanted {
        let found = items.iter().enumerate().any(|(index, item)| {
            let mark = caps.len();
            let ok = match_at(want, Some(item), &format!("{path}[{index}]"), caps).is_ok();
            if !ok {
                caps.truncate(mark);
            }
            ok
        });
        if !found {
            return fail(
                path,
                format!(
                    "no element matches {}: {}",
                    brief(want, 80),
                    brief(value, 300)
                ),
            );
        }
    }
    Ok(())
}

fn regex(arg: &Value, value: &Value, path: &str, caps: &mut Captures) -> Result<(), Mismatch> {
    let Some(source) = arg.as_str() else {
        return fail(path, "$regex takes a string");
    };
    let re =
        Regex::new(source).or_else(|e| fail(path, format!("invalid $regex {source:?}: {e}")))?;
    let Some(text) = value.as_str() else {
        return fail(
            path,
            format!("expected a string for $regex, got {}", brief(value, 120)),
        );
    };
    match re.captures(text) {
        Ok(Some(groups)) => {
            caps.extend(
                groups
                    .into_iter()
                    .map(|(name, text)| (name, Value::String(text))),
            );
            Ok(())
        }
        Ok(None) => fail(
            path,
            format!("no match for /{source}/ in {}", brief(value, 300)),
        ),
        Err(e) => fail(path, format!("$regex {source:?}: {e}")),
    }
}

fn any_of(arg: &Value, value: &Value, path: &str, caps: &mut Captures) -> Result<(), Mismatch> {
    let Some(options) = arg.as_array() else {
        return fail(path, "$anyOf takes an array of patterns");
    };
    let mut reasons = Vec::new();
    for option in options {
        let mark = caps.len();
        match match_at(option, Some(value), path, caps) {
            Ok(()) => return Ok(()),
            Err(mismatch) => {
                caps.truncate(mark);
                reasons.push(mismatch.to_string());
            }
        }
    }
    fail(
        path,
        format!("no alternative matches ({})", reasons.join("; ")),
    )
}

#[cfg(test)]
#[path = "pattern_tests.rs"]
mod tests;
