//! Scenario variables: values captured by `"$capture:name"` patterns (plus
//! the predefined `workspace`) and the `${name}` references that use them.
//!
//! A string that is exactly `"${name}"` becomes the captured value itself,
//! whatever its JSON type, so a captured number stays a number. A reference
//! inside a longer string is replaced by the value's text (a string's
//! contents, any other value's JSON). An unknown name is an error, never an
//! empty string, so a typo cannot make a check pass silently.

use std::collections::BTreeMap;

use serde_json::Value;

/// The variables of one scenario run.
#[derive(Debug, Default, Clone)]
pub struct Vars(BTreeMap<String, Value>);

impl Vars {
    pub fn set(&mut self, name: impl Into<String>, value: Value) {
        self.0.insert(name.into(), value);
    }

    /// Returns `value` with every `${name}` reference in its strings
    /// (object values and array elements, not object keys) replaced.
    pub fn substitute(&self, value: &Value) -> Result<Value, String> {
        Ok(match value {
            Value::String(text) => self.substitute_str(text)?,
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|item| self.substitute(item))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, item)| Ok((key.clone(), self.substitute(item)?)))
                    .collect::<Result<_, String>>()?,
            ),
            other => other.clone(),
        })
    }

    fn substitute_str(&self, text: &str) -> Result<Value, String> {
        if let Some(name) = whole_reference(text) {
            return self.lookup(name).cloned();
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after
                .find('}')
                .ok_or_else(|| format!("unterminated variable reference in {text:?}"))?;
            match self.lookup(&after[..end])? {
                Value::String(s) => out.push_str(s),
                other => out.push_str(&other.to_string()),
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(Value::String(out))
    }

    fn lookup(&self, name: &str) -> Result<&Value, String> {
        self.0.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.0.keys().map(String::as_str).collect();
            format!("unknown variable ${{{name}}} (known: {})", known.join(", "))
        })
    }
}

/// `Some(name)` when `text` is exactly one `${name}` reference.
fn whole_reference(text: &str) -> Option<&str> {
    let name = text.strip_prefix("${")?.strip_suffix('}')?;
    (!name.contains('}') && !name.contains("${")).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars() -> Vars {
        let mut vars = Vars::default();
        vars.set("workspace", json!("/tmp/ws"));
        vars.set("n", json!(7));
        vars
    }

    #[test]
    fn a_whole_reference_keeps_the_json_type() {
        let out = vars()
            .substitute(&json!({"id": "${n}", "dir": "${workspace}"}))
            .unwrap();
        assert_eq!(out, json!({"id": 7, "dir": "/tmp/ws"}));
    }

    #[test]
    fn references_inside_strings_are_spliced_as_text() {
        let out = vars()
            .substitute(&json!(["${workspace}/a", "n=${n}!", "plain"]))
            .unwrap();
        assert_eq!(out, json!(["/tmp/ws/a", "n=7!", "plain"]));
    }

    #[test]
    fn unknown_and_unterminated_references_are_errors() {
        assert!(vars()
            .substitute(&json!("${nope}"))
            .unwrap_err()
            .contains("${nope}"));
        assert!(vars()
            .substitute(&json!("x ${n"))
            .unwrap_err()
            .contains("unterminated"));
    }

    #[test]
    fn pattern_tokens_are_left_alone() {
        let pattern = json!({"a": "$capture:x", "b": "$/cancelRequest"});
        assert_eq!(vars().substitute(&pattern).unwrap(), pattern);
    }
}
