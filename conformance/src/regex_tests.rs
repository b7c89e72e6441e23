use super::*;

fn find(re: &str, text: &str) -> Option<Vec<(String, String)>> {
    Regex::new(re)
        .unwrap_or_else(|e| panic!("{re}: {e}"))
        .captures(text)
        .unwrap()
}

fn group(re: &str, text: &str, name: &str) -> Option<String> {
    find(re, text)?
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

#[test]
fn finds_unanchored_matches_and_respects_anchors() {
    assert!(find("b+c", "aabbbcd").is_some());
    assert!(find("^b", "ab").is_none());
    assert!(find("^ab$", "ab").is_some());
    assert!(find("^ab$", "abc").is_none());
    assert!(find("a.c", "a\nc").is_none());
    assert!(find("", "").is_some());
}

#[test]
fn named_groups_capture_the_leftmost_greedy_match() {
    let out = "preview... stored as artifact://art-7 (sha256 ab12)";
    assert_eq!(
        group(r"(?P<uri>artifact://[^ ]+)", out, "uri").as_deref(),
        Some("artifact://art-7")
    );
    assert_eq!(
        group(r"sha256 (?<h>[0-9a-f]+)\)", out, "h").as_deref(),
        Some("ab12")
    );
    assert_eq!(
        group(r"(?P<x>a+?)", "aaa", "x").as_deref(),
        Some("a"),
        "lazy"
    );
    assert_eq!(
        group("(?P<n>\\d{2,3})", "x12345", "n").as_deref(),
        Some("123")
    );
    assert_eq!(
        group("(?P<n>\\d{2,})", "x12345", "n").as_deref(),
        Some("12345")
    );
}

#[test]
fn alternation_classes_and_escapes() {
    assert_eq!(
        group("(?P<w>cat|dog)s", "hotdogs", "w").as_deref(),
        Some("dog")
    );
    assert!(find(r"^[a-c\d_]+$", "ab9_c").is_some());
    assert!(find(r"^[a-c\d_]+$", "abd").is_none());
    assert!(find(r"^\S+\s\w+\.$", "r1 ünï.").is_some());
    assert!(find(r"^[^-]-[\]x]$", "a-]").is_some());
    assert!(find(r"^(?:ab)*$", "ababab").is_some());
    assert!(find(r"^(a*)*b$", "aaaab").is_some());
    assert!(
        find(r"^(?:a|ab)c$", "abc").is_some(),
        "backtracks into alternatives"
    );
}

#[test]
fn groups_outside_the_match_capture_nothing() {
    let caps = find("(?P<a>x)|(?P<b>y)", "y").unwrap();
    assert_eq!(caps, vec![("b".to_string(), "y".to_string())]);
}

#[test]
fn unsupported_or_broken_syntax_is_rejected() {
    for (re, needle) in [
        ("(a", "unclosed group"),
        ("a)", "unmatched"),
        ("[ab", "unclosed"),
        ("*a", "nothing to repeat"),
        (r"\bword", "unsupported escape"),
        ("(?=a)", "unsupported group"),
        ("(?P<x>a)(?P<x>b)", "repeated"),
        ("a{3,1}", "repetition"),
        ("a**", "nested"),
        ("[z-a]", "out of order"),
    ] {
        let err = Regex::new(re).unwrap_err();
        assert!(err.contains(needle), "{re}: {err}");
    }
}

#[test]
fn pathological_patterns_give_up_instead_of_hanging() {
    let text = "a".repeat(40);
    let re = Regex::new("^(a|a)*b$").unwrap();
    assert!(re.captures(&text).is_err());
}

#[test]
fn long_texts_do_not_exhaust_the_stack() {
    let text = format!("{} artifact://x {}", "y".repeat(200_000), "z".repeat(1000));
    assert_eq!(
        group(r"(?P<u>artifact://\S+)", &text, "u").as_deref(),
        Some("artifact://x")
    );
    assert!(find("^.*$", &text).is_some());
}
