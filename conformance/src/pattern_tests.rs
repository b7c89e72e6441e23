use serde_json::json;

use super::*;

fn ok(pattern: Value, actual: Value) -> Captures {
    matches(&pattern, &actual).unwrap_or_else(|m| panic!("{pattern} vs {actual}: {m}"))
}

fn mismatch(pattern: Value, actual: Value) -> Mismatch {
    matches(&pattern, &actual).expect_err("expected a mismatch")
}

#[test]
fn objects_match_subsets() {
    ok(
        json!({"id": 1}),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
    );
    ok(json!({}), json!({"anything": true}));
    let m = mismatch(
        json!({"result": {"text": "a"}}),
        json!({"result": {"text": "b"}}),
    );
    assert_eq!(m.path, "$.result.text");
    assert!(
        m.reason.contains("\"a\"") && m.reason.contains("\"b\""),
        "{m}"
    );
}

#[test]
fn missing_keys_and_wrong_kinds_fail() {
    assert!(mismatch(json!({"error": "$any"}), json!({"result": {}}))
        .reason
        .starts_with("missing"));
    mismatch(json!({"a": {}}), json!({"a": []}));
    mismatch(json!({"a": 1}), json!([1]));
}

#[test]
fn arrays_match_exactly_element_wise() {
    ok(json!([1, "$string"]), json!([1, "x"]));
    assert!(mismatch(json!([1]), json!([1, 2]))
        .reason
        .contains("expected 1 elements"));
    assert_eq!(mismatch(json!([1, 2]), json!([1, 3])).path, "$[1]");
}

#[test]
fn numbers_compare_by_value() {
    ok(json!(1), json!(1.0));
    ok(json!(-32601), json!(-32601));
    ok(
        json!(18446744073709551615u64),
        json!(18446744073709551615u64),
    );
    mismatch(json!(1), json!("1"));
    mismatch(json!(1), json!(2));
}

#[test]
fn type_tokens() {
    ok(
        json!({"a": "$any", "b": "$string", "c": "$number", "d": "$integer"}),
        json!({"a": null, "b": "x", "c": 1.5, "d": 3}),
    );
    ok(
        json!(["$boolean", "$object", "$array"]),
        json!([false, {}, []]),
    );
    mismatch(json!("$integer"), json!(1.5));
    mismatch(json!("$string"), json!(1));
    assert!(mismatch(json!({"a": "$any"}), json!({}))
        .reason
        .contains("missing"));
}

#[test]
fn absent_requires_a_missing_key() {
    ok(json!({"error": "$absent"}), json!({"result": 1}));
    let m = mismatch(json!({"error": "$absent"}), json!({"error": null}));
    assert!(m.reason.contains("expected absent"), "{m}");
}

#[test]
fn null_is_a_literal_not_absence() {
    ok(json!({"id": null}), json!({"id": null}));
    mismatch(json!({"id": null}), json!({}));
    mismatch(json!({"id": null}), json!({"id": 0}));
}

#[test]
fn captures_store_values() {
    let caps = ok(
        json!({"result": {"agentId": "$capture:agent", "n": "$capture:n"}}),
        json!({"result": {"agentId": "a-1", "n": 4}}),
    );
    assert_eq!(
        caps,
        vec![("agent".into(), json!("a-1")), ("n".into(), json!(4))]
    );
    mismatch(json!({"x": "$capture:x"}), json!({}));
}

#[test]
fn literal_dollar_strings_and_unknown_tokens() {
    ok(
        json!({"method": "$/cancelRequest"}),
        json!({"method": "$/cancelRequest"}),
    );
    ok(json!({"$literal": "$any"}), json!("$any"));
    mismatch(json!({"$literal": "$any"}), json!("other"));
    assert!(mismatch(json!("$strin"), json!("x"))
        .reason
        .contains("unknown pattern token"));
    assert!(mismatch(json!({"$nope": 1}), json!(1))
        .reason
        .contains("unknown pattern operator"));
}

#[test]
fn contains_finds_each_pattern_somewhere() {
    let methods = json!(["initialize", "session/send", "agent/create"]);
    ok(
        json!({"$contains": ["session/send", "initialize"]}),
        methods.clone(),
    );
    let m = mismatch(json!({"$contains": ["session/stream"]}), methods);
    assert!(m.reason.contains("no element matches"), "{m}");
    mismatch(json!({"$contains": ["x"]}), json!("x"));
}

#[test]
fn contains_on_strings_is_a_substring_test() {
    ok(json!({"$contains": "hello"}), json!("1\thello\n"));
    mismatch(json!({"$contains": "hello"}), json!("bye"));
    mismatch(json!({"$contains": "1"}), json!(1));
}

#[test]
fn contains_keeps_only_captures_of_the_matching_element() {
    let caps = ok(
        json!({"$contains": [{"kind": "b", "v": "$capture:v"}]}),
        json!([{"kind": "a", "v": 1}, {"kind": "b", "v": 2}]),
    );
    assert_eq!(caps, vec![("v".into(), json!(2))]);
}

#[test]
fn starts_with_all_and_any_of() {
    ok(json!({"$startsWith": "bridge-"}), json!("bridge-7"));
    mismatch(json!({"$startsWith": "bridge-"}), json!(7));
    let caps = ok(
        json!({"$all": ["$string", "$capture:id"]}),
        json!("bridge-1"),
    );
    assert_eq!(caps, vec![("id".into(), json!("bridge-1"))]);
    mismatch(json!({"$all": ["$string", "$number"]}), json!("x"));
    ok(json!({"$anyOf": [1, "$string"]}), json!("x"));
    let caps = ok(
        json!({"$anyOf": [{"a": "$capture:c", "b": 1}, {"a": "$any"}]}),
        json!({"a": 5}),
    );
    assert!(
        caps.is_empty(),
        "captures of a failed alternative leak: {caps:?}"
    );
    assert!(mismatch(json!({"$anyOf": [1, 2]}), json!(3))
        .reason
        .contains("no alternative"));
}

#[test]
fn objects_with_several_dollar_keys_are_plain_objects() {
    ok(json!({"$a": 1, "$b": 2}), json!({"$a": 1, "$b": 2, "c": 3}));
}

#[test]
fn brief_truncates_long_values() {
    let long = json!("x".repeat(500));
    let text = brief(&long, 20);
    assert!(text.contains('…') && text.len() < 60, "{text}");
    assert_eq!(brief(&json!(1), 20), "1");
}

#[test]
fn not_inverts_and_drops_captures() {
    ok(json!({"$not": "bridge-1"}), json!("bridge-2"));
    let m = mismatch(json!({"$not": {"$startsWith": "b"}}), json!("bridge-1"));
    assert!(m.reason.contains("anything but"), "{m}");
    let caps = ok(
        json!({"$all": ["$capture:id", {"$not": {"$all": ["$capture:x", 1]}}]}),
        json!(5),
    );
    assert_eq!(caps, vec![("id".into(), json!(5))]);
    mismatch(json!({"a": {"$not": 1}}), json!({}));
}

#[test]
fn regex_matches_strings_and_captures_named_groups() {
    let output = json!("head… 12 KiB stored as artifact://a-1 (sha256 0f)");
    let caps = ok(
        json!({"$regex": "(?P<uri>artifact://[^ ]+)"}),
        output.clone(),
    );
    assert_eq!(caps, vec![("uri".into(), json!("artifact://a-1"))]);
    ok(json!({"$regex": "^head"}), output.clone());
    let m = mismatch(json!({"$regex": "^tail"}), output);
    assert!(m.reason.contains("no match"), "{m}");
    assert!(mismatch(json!({"$regex": "x"}), json!(1))
        .reason
        .contains("expected a string"));
    assert!(mismatch(json!({"$regex": "(x"}), json!("x"))
        .reason
        .contains("invalid $regex"));
}
