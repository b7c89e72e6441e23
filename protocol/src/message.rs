//! JSON-RPC 2.0 messages: ids, requests, notifications, responses.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::errors::ErrorObject;

/// The `"jsonrpc": "2.0"` member: serializes as `"2.0"`, refuses anything else.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JsonRpcVersion;

impl Serialize for JsonRpcVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str("2.0")
    }
}

impl<'de> Deserialize<'de> for JsonRpcVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let version = String::deserialize(deserializer)?;
        if version == "2.0" {
            Ok(JsonRpcVersion)
        } else {
            Err(serde::de::Error::custom(format!(
                "jsonrpc must be \"2.0\", got {version:?}"
            )))
        }
    }
}

impl JsonSchema for JsonRpcVersion {
    fn schema_name() -> String {
        "JsonRpcVersion".into()
    }
    fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        serde_json::from_value(serde_json::json!({"type": "string", "enum": ["2.0"]}))
            .expect("static schema")
    }
}

/// A request id: a number or a string. Strings print quoted so `92` and
/// `"92"` cannot be confused in logs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RequestId {
    Number(i64),
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s)
    }
}

/// A request: expects exactly one response with the same id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Request {
    pub jsonrpc: JsonRpcVersion,
    pub id: RequestId,
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

impl Request {
    pub fn new(id: RequestId, method: impl Into<String>, params: Value) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id,
            method: method.into(),
            params: Some(params),
        }
    }
}

/// A notification: never answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Notification {
    pub jsonrpc: JsonRpcVersion,
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

impl Notification {
    pub fn new(method: impl Into<String>, params: Value) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            method: method.into(),
            params: Some(params),
        }
    }
}

/// A response: `result` on success, `error` on failure. `id` is `null` only
/// when the request's id could not be read (parse errors, invalid requests).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Response {
    pub jsonrpc: JsonRpcVersion,
    pub id: Option<RequestId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

impl Response {
    pub fn success(id: RequestId, result: Value) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id: Some(id),
            result: Some(result),
            error: None,
        }
    }

    pub fn failure(id: Option<RequestId>, error: ErrorObject) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id,
            result: None,
            error: Some(error),
        }
    }
}

/// One message as read from the peer, classified.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Request(Request),
    Notification(Notification),
    Response(Response),
}

impl Incoming {
    /// Classifies one JSON value (not a batch). On failure returns the
    /// `Invalid Request` error and, when it could be read, the request id.
    pub fn classify(value: Value) -> Result<Incoming, (Option<RequestId>, ErrorObject)> {
        let Value::Object(ref object) = value else {
            return Err((
                None,
                ErrorObject::invalid_request("message must be a JSON object"),
            ));
        };
        let id = object
            .get("id")
            .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err((
                id,
                ErrorObject::invalid_request("\"jsonrpc\" must be \"2.0\""),
            ));
        }
        let invalid = |message: String| (id.clone(), ErrorObject::invalid_request(message));
        if object.contains_key("method") {
            if !object.get("method").is_some_and(Value::is_string) {
                return Err(invalid("\"method\" must be a string".into()));
            }
            if let Some(params) = object.get("params") {
                if !(params.is_object() || params.is_array()) {
                    return Err(invalid("\"params\" must be an object or an array".into()));
                }
            }
            if object.contains_key("id") {
                if id.is_none() {
                    return Err(invalid("\"id\" must be a string or an integer".into()));
                }
                return serde_json::from_value(value.clone())
                    .map(Incoming::Request)
                    .map_err(|e| invalid(e.to_string()));
            }
            return serde_json::from_value(value.clone())
                .map(Incoming::Notification)
                .map_err(|e| invalid(e.to_string()));
        }
        if object.contains_key("result") || object.contains_key("error") {
            // Built by hand so that `"result": null` stays `Some(Null)`.
            let error = match object.get("error") {
                Some(error) => Some(
                    serde_json::from_value::<ErrorObject>(error.clone())
                        .map_err(|e| invalid(format!("invalid error object: {e}")))?,
                ),
                None => None,
            };
            return Ok(Incoming::Response(Response {
                jsonrpc: JsonRpcVersion,
                id,
                result: object.get("result").cloned(),
                error,
            }));
        }
        Err(invalid("not a request, notification or response".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_keep_their_type_and_print_unambiguously() {
        let n: RequestId = serde_json::from_value(json!(92)).unwrap();
        let s: RequestId = serde_json::from_value(json!("92")).unwrap();
        assert_ne!(n, s);
        assert_eq!(n.to_string(), "92");
        assert_eq!(s.to_string(), "\"92\"");
        assert_eq!(serde_json::to_value(&s).unwrap(), json!("92"));
    }

    #[test]
    fn responses_serialize_null_ids_and_one_of_result_or_error() {
        let ok = Response::success(RequestId::Number(1), json!({}));
        assert_eq!(
            serde_json::to_value(&ok).unwrap(),
            json!({"jsonrpc": "2.0", "id": 1, "result": {}})
        );
        let err = Response::failure(None, ErrorObject::parse_error("bad"));
        let value = serde_json::to_value(&err).unwrap();
        assert_eq!(value["id"], Value::Null);
        assert_eq!(value["error"]["code"], -32700);
        assert!(value.get("result").is_none());
    }

    #[test]
    fn classifies_requests_notifications_responses_and_rejects_the_rest() {
        let request = json!({"jsonrpc": "2.0", "id": "a", "method": "m", "params": {}});
        assert!(matches!(
            Incoming::classify(request),
            Ok(Incoming::Request(_))
        ));
        let note = json!({"jsonrpc": "2.0", "method": "m"});
        assert!(matches!(
            Incoming::classify(note),
            Ok(Incoming::Notification(_))
        ));
        let response = json!({"jsonrpc": "2.0", "id": "bridge-1", "result": null});
        let Ok(Incoming::Response(response)) = Incoming::classify(response) else {
            panic!("not a response")
        };
        assert_eq!(response.result, Some(Value::Null));

        for (bad, id) in [
            (json!(1), None),
            (json!({"id": 1, "method": "m"}), Some(RequestId::Number(1))),
            (
                json!({"jsonrpc": "2.0", "id": 1, "method": 5}),
                Some(RequestId::Number(1)),
            ),
            (json!({"jsonrpc": "2.0", "id": 1.5, "method": "m"}), None),
            (
                json!({"jsonrpc": "2.0", "id": 2, "method": "m", "params": 3}),
                Some(RequestId::Number(2)),
            ),
            (
                json!({"jsonrpc": "2.0", "id": 3}),
                Some(RequestId::Number(3)),
            ),
        ] {
            let (got_id, error) = Incoming::classify(bad.clone()).unwrap_err();
            assert_eq!(got_id, id, "{bad}");
            assert_eq!(error.code, -32600, "{bad}");
        }
    }
}
