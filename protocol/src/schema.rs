//! Renders the checked-in `schema/` directory from the Rust types.

use std::collections::BTreeMap;

use schemars::schema::RootSchema;
use schemars::schema_for;
use serde_json::{json, Map, Value};

use crate::catalog::{Direction, MethodSpec, BRIDGE_REQUESTS, HOST_REQUESTS, NOTIFICATIONS};
use crate::errors::DataCode;
use crate::message::{Notification, Request, Response};
use crate::types::EventEnvelope;

/// The command that rewrites the checked-in files.
pub const REFRESH_COMMAND: &str =
    "cargo run -p a3s-code-protocol --bin a3s-code-protocol-schema -- protocol/schema";

/// Every file of `schema/`, by file name, as pretty JSON with a final newline.
pub fn render() -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let mut put = |name: String, value: Value| {
        let mut text = serde_json::to_string_pretty(&value).expect("schema serializes");
        text.push('\n');
        files.insert(name, text);
    };
    put("Request.json".into(), to_value(schema_for!(Request)));
    put("Response.json".into(), to_value(schema_for!(Response)));
    put(
        "Notification.json".into(),
        to_value(schema_for!(Notification)),
    );
    put("DataCode.json".into(), to_value(schema_for!(DataCode)));
    put(
        "AgentEvent.json".into(),
        to_value(schema_for!(a3s_code_core::AgentEvent)),
    );
    put(
        "EventEnvelope.json".into(),
        to_value(schema_for!(EventEnvelope)),
    );
    for spec in all_methods() {
        let stem = file_stem(spec.name);
        put(format!("{stem}.params.json"), to_value((spec.params)()));
        if let Some(result) = spec.result {
            put(format!("{stem}.result.json"), to_value(result()));
        }
    }
    put("openrpc.json".into(), openrpc());
    files
}

fn all_methods() -> impl Iterator<Item = &'static MethodSpec> {
    HOST_REQUESTS
        .iter()
        .chain(BRIDGE_REQUESTS)
        .chain(NOTIFICATIONS)
}

/// `session/send` → `session_send`, `$/cancelRequest` → `cancelRequest`.
fn file_stem(method: &str) -> String {
    method.trim_start_matches("$/").replace('/', "_")
}

fn to_value(schema: RootSchema) -> Value {
    serde_json::to_value(schema).expect("schema serializes")
}

/// The OpenRPC document: every method, reverse request and notification
/// with its params, result and errors. Definitions move to
/// `components.schemas` so references resolve in one document.
fn openrpc() -> Value {
    let mut components = Map::new();
    let mut lift = |schema: RootSchema| -> Value {
        let mut value = to_value(schema);
        if let Some(Value::Object(definitions)) =
            value.as_object_mut().and_then(|o| o.remove("definitions"))
        {
            for (name, definition) in definitions {
                components.insert(name, definition);
            }
        }
        if let Value::Object(map) = &mut value {
            map.remove("$schema");
        }
        value
    };
    let methods: Vec<Value> = all_methods()
        .map(|spec| {
            let params = lift((spec.params)());
            let mut method = json!({
                "name": spec.name,
                "summary": spec.summary,
                "paramStructure": "by-name",
                "params": by_name_params(&params),
                "x-direction": match spec.direction {
                    Direction::HostToBridge => "host-to-bridge",
                    Direction::BridgeToHost => "bridge-to-host",
                    Direction::Both => "both",
                },
            });
            match spec.result {
                Some(result) => {
                    method["result"] = json!({"name": "result", "schema": lift(result())});
                    method["errors"] = Value::Array(
                        spec.errors
                            .iter()
                            .map(|code| json!({"code": -32000, "message": code.as_str(), "data": {"code": code.as_str()}}))
                            .collect(),
                    );
                }
                None => method["x-notification"] = Value::Bool(true),
            }
            method
        })
        .collect();
    let text = serde_json::to_string(&json!({
        "openrpc": "1.3.2",
        "info": {
            "title": "A3S Code bridge protocol",
            "version": crate::PROTOCOL_VERSION.to_string(),
            "description": "Line-delimited JSON-RPC 2.0 over stdin/stdout. See protocol/README.md."
        },
        "methods": methods,
        "components": {"schemas": Value::Object(components)},
    }))
    .expect("openrpc serializes");
    serde_json::from_str(&text.replace("#/definitions/", "#/components/schemas/"))
        .expect("valid json")
}

/// OpenRPC lists params by name: one entry per property of the params object.
fn by_name_params(schema: &Value) -> Value {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let params = schema["properties"]
        .as_object()
        .map(|props| {
            props
                .iter()
                .map(|(name, property)| {
                    json!({"name": name, "required": required.contains(&name.as_str()), "schema": property})
                })
                .collect()
        })
        .unwrap_or_default();
    Value::Array(params)
}
