//! The Anthropic Messages client against a scripted local server replaying
//! the real event sequence: the request it sends, the chunks it assembles,
//! and how HTTP and in-stream failures map to `LlmError`.

mod support;

use a3s_code_core::config::ProviderKind;
use a3s_code_core::llm::{
    AnthropicClient, LlmChunk, LlmClient, LlmError, LlmRequest, Message, TokenUsage, ToolCall,
    ToolDefinition,
};
use serde_json::{json, Value};
use support::sse::{event, pieces};
use support::{
    collect, collect_ok, model, provider, request, text_of, Framing, ScriptedResponse, TestServer,
};

const KEY: &str = "sk-ant-test-secret-456";

fn client(server: &TestServer, max_retries: u32) -> AnthropicClient {
    let mut config = provider(
        ProviderKind::Anthropic,
        &format!("{}/", server.url()),
        Some(KEY),
    );
    config.max_retries = Some(max_retries);
    AnthropicClient::new(&config, &model("claude-test")).unwrap()
}

fn message_start(input_tokens: u64) -> String {
    event(
        "message_start",
        &json!({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-test",
        "stop_reason": null, "usage": {"input_tokens": input_tokens, "output_tokens": 1}}}),
    )
}

fn block_start(index: u64, block: Value) -> String {
    event(
        "content_block_start",
        &json!({"type": "content_block_start", "index": index, "content_block": block}),
    )
}

fn text_delta(index: u64, text: &str) -> String {
    event(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": index,
                                         "delta": {"type": "text_delta", "text": text}}),
    )
}

fn json_delta(index: u64, partial: &str) -> String {
    event(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": index,
                                         "delta": {"type": "input_json_delta", "partial_json": partial}}),
    )
}

fn block_stop(index: u64) -> String {
    event(
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": index}),
    )
}

fn message_end(stop_reason: &str, output_tokens: u64) -> String {
    [
        event("message_delta", &json!({"type": "message_delta",
              "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": output_tokens}})),
        event("message_stop", &json!({"type": "message_stop"})),
    ]
    .concat()
}

fn ping() -> String {
    event("ping", &json!({"type": "ping"}))
}

fn error_body(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

fn text_answer(text: &str) -> ScriptedResponse {
    ScriptedResponse::sse([
        message_start(5),
        block_start(0, json!({"type": "text", "text": ""})),
        text_delta(0, text),
        block_stop(0),
        message_end("end_turn", 2),
    ])
}

#[tokio::test]
async fn assembles_text_and_split_tool_use_from_the_event_sequence() {
    let body = [
        message_start(25),
        block_start(0, json!({"type": "text", "text": ""})),
        ping(),
        text_delta(0, "Let me "),
        text_delta(0, "look."),
        block_stop(0),
        block_start(
            1,
            json!({"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}),
        ),
        json_delta(1, ""),
        json_delta(1, "{\"pa"),
        json_delta(1, "th\": \"a.t"),
        json_delta(1, "xt\"}"),
        block_stop(1),
        block_start(
            2,
            json!({"type": "tool_use", "id": "toolu_2", "name": "now", "input": {}}),
        ),
        block_stop(2),
        message_end("tool_use", 40),
        // Anything after message_stop must not be read.
        event("error", &error_body("api_error", "read past message_stop")),
    ]
    .concat();
    let server = TestServer::start([ScriptedResponse::sse(pieces(&body, 9))]).await;
    let chunks = collect_ok(
        client(&server, 0)
            .stream(request("claude-test", "hi"))
            .await
            .unwrap(),
    )
    .await;
    let tool = |id: &str, name: &str, arguments: Value| {
        LlmChunk::ToolCall(ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
        })
    };
    assert_eq!(
        chunks,
        vec![
            LlmChunk::TextDelta("Let me ".into()),
            LlmChunk::TextDelta("look.".into()),
            tool("toolu_1", "read_file", json!({"path": "a.txt"})),
            tool("toolu_2", "now", json!({})),
            LlmChunk::Usage(TokenUsage::new(25, 40)),
        ]
    );
}

#[tokio::test]
async fn sends_system_tools_and_merged_tool_results_with_the_api_headers() {
    let server = TestServer::start([text_answer("ok")]).await;
    let call = |id: &str, path: &str| ToolCall {
        id: id.into(),
        name: "read_file".into(),
        arguments: json!({"path": path}),
    };
    let result = |id: &str, content: &str, is_error: bool| Message::Tool {
        tool_call_id: id.into(),
        name: "read_file".into(),
        content: content.into(),
        is_error,
    };
    let request = LlmRequest {
        model: "claude-test".into(),
        system: Some("You are terse.".into()),
        messages: vec![
            Message::User {
                content: "read both".into(),
            },
            Message::Assistant {
                content: "Reading.".into(),
                tool_calls: vec![call("toolu_a", "a.txt"), call("toolu_b", "b.txt")],
            },
            result("toolu_a", "alpha", false),
            result("toolu_b", "no such file", true),
        ],
        tools: vec![ToolDefinition {
            name: "read_file".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        }],
        max_tokens: None,
        temperature: None,
    };
    let chunks = collect_ok(client(&server, 0).stream(request).await.unwrap()).await;
    assert_eq!(text_of(&chunks), "ok");
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.json(),
        json!({
            "model": "claude-test",
            "max_tokens": 4096,
            "system": "You are terse.",
            "messages": [
                {"role": "user", "content": "read both"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {"path": "a.txt"}},
                    {"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {"path": "b.txt"}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_a", "content": "alpha", "is_error": false},
                    {"type": "tool_result", "tool_use_id": "toolu_b", "content": "no such file", "is_error": true},
                ]},
            ],
            "tools": [{"name": "read_file", "description": "Read a file",
                       "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}],
            "stream": true,
        })
    );
}

#[tokio::test]
async fn error_events_in_the_stream_are_errors() {
    let overloaded = ScriptedResponse::sse([
        message_start(5),
        block_start(0, json!({"type": "text", "text": ""})),
        text_delta(0, "Hi"),
        event("error", &error_body("overloaded_error", "Overloaded")),
    ]);
    let api_error = ScriptedResponse::sse([
        message_start(5),
        event("error", &error_body("api_error", "Internal error")),
    ]);
    let server = TestServer::start([overloaded, api_error]).await;
    let client = client(&server, 0);
    let items = collect(client.stream(request("claude-test", "hi")).await.unwrap()).await;
    assert_eq!(items[0], Ok(LlmChunk::TextDelta("Hi".into())));
    assert!(
        matches!(items[1], Err(LlmError::RateLimited { status: 529, .. })),
        "{items:?}"
    );
    let items = collect(client.stream(request("claude-test", "hi")).await.unwrap()).await;
    assert!(
        matches!(&items[..], [Err(LlmError::Stream { message, .. })] if message.contains("Internal error")),
        "{items:?}"
    );
}

#[tokio::test]
async fn overloaded_529_is_retried_then_reported_as_rate_limited() {
    let overloaded = || {
        ScriptedResponse::json(529, &error_body("overloaded_error", "Overloaded"))
            .header("retry-after", "0")
    };
    let server = TestServer::start([overloaded(), text_answer("recovered")]).await;
    let chunks = collect_ok(
        client(&server, 2)
            .stream(request("claude-test", "hi"))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(text_of(&chunks), "recovered");
    assert_eq!(chunks.last(), Some(&LlmChunk::Usage(TokenUsage::new(5, 2))));
    assert_eq!(server.requests().len(), 2);

    let server = TestServer::start([overloaded(), overloaded(), text_answer("too late")]).await;
    let err = client(&server, 1)
        .stream(request("claude-test", "hi"))
        .await
        .err()
        .unwrap();
    assert!(
        matches!(err, LlmError::RateLimited { status: 529, ref message, .. } if message == "Overloaded"),
        "{err:?}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn auth_and_context_errors_are_mapped_without_leaking_the_key() {
    let echo = format!("invalid x-api-key: {KEY}");
    let unauthorized = ScriptedResponse::json(401, &error_body("authentication_error", &echo));
    let too_long = ScriptedResponse::json(
        400,
        &error_body(
            "invalid_request_error",
            "prompt is too long: 210345 tokens > 200000 maximum",
        ),
    );
    let server = TestServer::start([unauthorized, too_long]).await;
    let client = client(&server, 2);
    let err = client
        .stream(request("claude-test", "hi"))
        .await
        .err()
        .unwrap();
    assert!(matches!(err, LlmError::Auth { status: 401, .. }), "{err:?}");
    for text in [err.to_string(), format!("{err:?}"), format!("{client:?}")] {
        assert!(!text.contains(KEY), "key leaked: {text}");
    }
    let err = client
        .stream(request("claude-test", "hi"))
        .await
        .err()
        .unwrap();
    assert!(
        matches!(err, LlmError::ContextOverflow { ref message, .. } if message.contains("210345")),
        "{err:?}"
    );
    assert_eq!(server.requests().len(), 2, "neither is retried");
}

#[tokio::test]
async fn truncated_streams_and_bad_tool_input_are_errors() {
    let cut = ScriptedResponse::sse([
        message_start(5),
        block_start(0, json!({"type": "text", "text": ""})),
        text_delta(0, "half"),
    ])
    .framing(Framing::Close);
    let bad_input = ScriptedResponse::sse([
        message_start(5),
        block_start(
            0,
            json!({"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}}),
        ),
        json_delta(0, "{\"path\": "),
        block_stop(0),
        message_end("tool_use", 3),
    ]);
    let server = TestServer::start([cut, bad_input]).await;
    let client = client(&server, 0);
    let items = collect(client.stream(request("claude-test", "hi")).await.unwrap()).await;
    assert_eq!(items[0], Ok(LlmChunk::TextDelta("half".into())));
    assert!(
        matches!(&items[1], Err(LlmError::Transport { message, .. }) if message.contains("ended unexpectedly")),
        "{items:?}"
    );
    let items = collect(client.stream(request("claude-test", "hi")).await.unwrap()).await;
    assert!(
        matches!(&items[..], [Err(LlmError::Protocol { message, .. })] if message.contains("'ls'")),
        "{items:?}"
    );
}
