//! The `expectEvents` check: the `session/event` notifications of one stream,
//! in arrival order, against an expected list of event types.
//!
//! Each entry of `types` is an event type with an optional quantifier:
//! `text_delta` (exactly one), `text_delta+` (one or more), `text_delta*`
//! (zero or more), `text_delta?` (zero or one), or `*` alone (any run of
//! events of any type). Mode `exact` (the default) matches the whole list;
//! mode `contains` only asks that the listed types appear in this order,
//! with any other events before, between and after them.
//!
//! Independently of the types, `params.seq` must count 0, 1, 2… without
//! gaps, and every `params.event` must match the optional `each` pattern.

use serde::Deserialize;
use serde_json::Value;

use crate::pattern::{self, Captures};

/// Parameters of an `expectEvents` step.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EventsCheck {
    /// The id of the `session/stream` request whose events are checked.
    pub request_id: Value,
    pub types: Vec<String>,
    #[serde(default)]
    pub mode: Mode,
    /// A pattern every `params.event` must match.
    #[serde(default)]
    pub each: Option<Value>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Exact,
    Contains,
}

/// Checks the `params` of a stream's notifications, in arrival order.
/// Returns the captures of the `each` pattern (later events win).
pub fn check_stream(check: &EventsCheck, params: &[&Value]) -> Result<Captures, String> {
    let mut captures = Captures::new();
    let mut types = Vec::with_capacity(params.len());
    for (index, p) in params.iter().enumerate() {
        match p.get("seq").and_then(Value::as_u64) {
            Some(seq) if seq == index as u64 => {}
            other => {
                return Err(format!(
                    "notification #{index} of the stream has params.seq {}, expected {index} (seq must count 0,1,2… without gaps)",
                    other.map_or("missing".to_string(), |s| s.to_string())
                ))
            }
        }
        let event = p.get("event").unwrap_or(&Value::Null);
        let Some(kind) = event.get("type").and_then(Value::as_str) else {
            return Err(format!(
                "notification #{index} has no params.event.type: {}",
                pattern::brief(p, 200)
            ));
        };
        if let Some(each) = &check.each {
            let caps = pattern::matches(each, event)
                .map_err(|m| format!("event #{index} ({kind}) does not match `each`: {m}"))?;
            captures.extend(caps);
        }
        types.push(kind);
    }
    let tokens = parse_tokens(&check.types, check.mode)?;
    if sequence_matches(&tokens, &types) {
        Ok(captures)
    } else {
        Err(format!(
            "event types do not match ({} mode)\n  expected: {}\n  actual:   {}",
            if check.mode == Mode::Exact {
                "exact"
            } else {
                "contains"
            },
            check.types.join(", "),
            types.join(", ")
        ))
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token<'a> {
    One(&'a str),
    Optional(&'a str),
    Many(&'a str),
    OneOrMore(&'a str),
    Anything,
}

fn parse_tokens(types: &[String], mode: Mode) -> Result<Vec<Token<'_>>, String> {
    let mut tokens = Vec::new();
    if mode == Mode::Contains {
        tokens.push(Token::Anything);
    }
    for entry in types {
        let token = if entry == "*" {
            Token::Anything
        } else if let Some(name) = entry.strip_suffix('+') {
            Token::OneOrMore(name)
        } else if let Some(name) = entry.strip_suffix('*') {
            Token::Many(name)
        } else if let Some(name) = entry.strip_suffix('?') {
            Token::Optional(name)
        } else {
            Token::One(entry)
        };
        if matches!(
            token,
            Token::One("") | Token::Many("") | Token::OneOrMore("") | Token::Optional("")
        ) {
            return Err(format!("bad event type entry {entry:?}"));
        }
        tokens.push(token);
        if mode == Mode::Contains {
            tokens.push(Token::Anything);
        }
    }
    Ok(tokens)
}

/// Dynamic programming over (token, event): `ok[i][j]` says whether
/// `tokens[i..]` matches `actual[j..]`; linear in each, no backtracking.
fn sequence_matches(tokens: &[Token<'_>], actual: &[&str]) -> bool {
    let (m, n) = (tokens.len(), actual.len());
    let mut ok = vec![vec![false; n + 1]; m + 1];
    ok[m][n] = true;
    for i in (0..m).rev() {
        for j in (0..=n).rev() {
            let here = |name: &str| j < n && actual[j] == name;
            ok[i][j] = match tokens[i] {
                Token::One(name) => here(name) && ok[i + 1][j + 1],
                Token::Optional(name) => ok[i + 1][j] || (here(name) && ok[i + 1][j + 1]),
                Token::Many(name) => ok[i + 1][j] || (here(name) && ok[i][j + 1]),
                Token::OneOrMore(name) => here(name) && (ok[i + 1][j + 1] || ok[i][j + 1]),
                Token::Anything => ok[i + 1][j] || (j < n && ok[i][j + 1]),
            };
        }
    }
    ok[0][0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(types: &[&str], mode: Mode) -> EventsCheck {
        EventsCheck {
            request_id: json!(1),
            types: types.iter().map(|s| s.to_string()).collect(),
            mode,
            each: None,
        }
    }

    fn stream(types: &[&str]) -> Vec<Value> {
        types
            .iter()
            .enumerate()
            .map(|(seq, t)| json!({"requestId": 1, "seq": seq, "event": {"version": 1, "type": t}}))
            .collect()
    }

    fn run(expected: &[&str], mode: Mode, actual: &[&str]) -> Result<Captures, String> {
        let params = stream(actual);
        check_stream(&check(expected, mode), &params.iter().collect::<Vec<_>>())
    }

    const RUN: &[&str] = &[
        "agent_start",
        "turn_start",
        "text_delta",
        "text_delta",
        "turn_end",
        "agent_end",
    ];

    #[test]
    fn exact_lists_with_quantifiers() {
        run(
            &[
                "agent_start",
                "turn_start",
                "text_delta+",
                "turn_end",
                "agent_end",
            ],
            Mode::Exact,
            RUN,
        )
        .unwrap();
        run(&["agent_start", "*", "agent_end"], Mode::Exact, RUN).unwrap();
        run(
            &[
                "agent_start",
                "tool_start*",
                "turn_start",
                "text_delta*",
                "turn_end",
                "error?",
                "agent_end",
            ],
            Mode::Exact,
            RUN,
        )
        .unwrap();
        let err = run(
            &[
                "agent_start",
                "turn_start",
                "text_delta",
                "turn_end",
                "agent_end",
            ],
            Mode::Exact,
            RUN,
        )
        .unwrap_err();
        assert!(
            err.contains("expected:") && err.contains("actual:"),
            "{err}"
        );
        run(&["agent_start"], Mode::Exact, &[]).unwrap_err();
        run(&[], Mode::Exact, &[]).unwrap();
    }

    #[test]
    fn contains_is_an_ordered_subsequence() {
        run(
            &["agent_start", "text_delta", "agent_end"],
            Mode::Contains,
            RUN,
        )
        .unwrap();
        run(&[], Mode::Contains, RUN).unwrap();
        run(&["agent_end", "agent_start"], Mode::Contains, RUN).unwrap_err();
        run(&["tool_start"], Mode::Contains, RUN).unwrap_err();
    }

    #[test]
    fn seq_must_count_from_zero_without_gaps() {
        let mut params = stream(&["agent_start", "agent_end"]);
        params[1]["seq"] = json!(2);
        let err = check_stream(
            &check(&["*"], Mode::Exact),
            &params.iter().collect::<Vec<_>>(),
        )
        .unwrap_err();
        assert!(
            err.contains("notification #1") && err.contains("params.seq 2"),
            "{err}"
        );
    }

    #[test]
    fn each_pattern_applies_to_every_event() {
        let mut c = check(&["*"], Mode::Exact);
        c.each = Some(json!({"version": 1, "type": "$capture:last"}));
        let params = stream(RUN);
        let caps = check_stream(&c, &params.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!(caps.last().unwrap().1, json!("agent_end"));
        c.each = Some(json!({"version": 2}));
        let err = check_stream(&c, &params.iter().collect::<Vec<_>>()).unwrap_err();
        assert!(err.contains("event #0 (agent_start)"), "{err}");
    }

    #[test]
    fn empty_quantified_names_are_rejected() {
        assert!(run(&["+"], Mode::Exact, RUN)
            .unwrap_err()
            .contains("bad event type"));
    }
}
