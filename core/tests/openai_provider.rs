//! The OpenAI-compatible client against a scripted local server: the request
//! it sends, how it reassembles streamed text and tool calls, and how HTTP
//! and stream failures map to `LlmError`.

mod support;

use a3s_code_core::config::ProviderKind;
use a3s_code_core::llm::{
    LlmChunk, LlmClient, LlmError, LlmRequest, Message, OpenAiClient, TokenUsage, ToolCall,
    ToolDefinition,
};
use serde_json::{json, Value};
use support::sse::{data, done, pieces};
use support::{
    collect, collect_ok, model, provider, request, text_of, Framing, ScriptedResponse, TestServer,
};

const KEY: &str = "sk-test-secret-123";

fn client(server: &TestServer, key: Option<&str>, max_retries: u32) -> OpenAiClient {
    let mut config = provider(ProviderKind::OpenAi, &format!("{}/v1/", server.url()), key);
    config.max_retries = Some(max_retries);
    OpenAiClient::new(&config, &model("gpt-test")).unwrap()
}

/// One `chat.completion.chunk` event with this delta and finish reason.
fn chunk(delta: Value, finish: Option<&str>) -> String {
    data(
        &json!({"id": "chatcmpl-1", "object": "chat.completion.chunk",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
    )
}

fn usage(prompt: u64, completion: u64) -> String {
    data(&json!({"id": "chatcmpl-1", "choices": [],
                 "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}}))
}

fn call(index: u64, id: Option<&str>, name: Option<&str>, arguments: &str) -> Value {
    let mut function = json!({"arguments": arguments});
    if let Some(name) = name {
        function["name"] = json!(name);
    }
    let mut fragment = json!({"index": index, "function": function});
    if let Some(id) = id {
        fragment["id"] = json!(id);
        fragment["type"] = json!("function");
    }
    json!({"tool_calls": [fragment]})
}

fn error_response(status: u16, message: &str, code: &str) -> ScriptedResponse {
    ScriptedResponse::json(
        status,
        &json!({"error": {"message": message, "type": "invalid_request_error", "code": code}}),
    )
}

fn ok_stream() -> ScriptedResponse {
    ScriptedResponse::sse([chunk(json!({"content": "ok"}), Some("stop")), done()])
}

#[tokio::test]
async fn streams_text_deltas_then_usage_and_stops_at_done() {
    let body = [
        chunk(json!({"role": "assistant", "content": ""}), None),
        chunk(json!({"content": "Hel"}), None),
        chunk(json!({"content": "lo, wörld"}), None),
        chunk(json!({}), Some("stop")),
        usage(9, 3),
        done(),
        // Anything after [DONE] must not be read.
        data(&json!({"error": {"message": "read past [DONE]"}})),
    ]
    .concat();
    let server = TestServer::start([ScriptedResponse::sse(pieces(&body, 7))]).await;
    let chunks = collect_ok(
        client(&server, None, 0)
            .stream(request("gpt-test", "hi"))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        chunks,
        vec![
            LlmChunk::TextDelta("Hel".into()),
            LlmChunk::TextDelta("lo, wörld".into()),
            LlmChunk::Usage(TokenUsage::new(9, 3)),
        ]
    );
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(
        requests[0].header("authorization"),
        None,
        "no key configured, no header"
    );
}

#[tokio::test]
async fn assembles_tool_calls_split_across_chunks_and_interleaved_by_index() {
    let body = [
        chunk(call(0, Some("call_a"), Some("read"), ""), None),
        chunk(call(0, None, Some("_file"), "{\"pa"), None),
        chunk(call(1, Some("call_b"), Some("ls"), ""), None),
        chunk(call(0, None, None, "th\": \"src/"), None),
        chunk(call(1, None, None, "{\"path\""), None),
        chunk(call(0, None, None, "main.rs\"}"), None),
        chunk(call(1, None, None, ": \".\"}"), None),
        chunk(call(2, Some("call_c"), Some("now"), ""), None),
        chunk(json!({}), Some("tool_calls")),
        usage(20, 15),
        done(),
    ]
    .concat();
    let server = TestServer::start([ScriptedResponse::sse(pieces(&body, 11))]).await;
    let chunks = collect_ok(
        client(&server, Some(KEY), 0)
            .stream(request("gpt-test", "go"))
            .await
            .unwrap(),
    )
    .await;
    let expected_call = |id: &str, name: &str, arguments: Value| {
        LlmChunk::ToolCall(ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
        })
    };
    assert_eq!(
        chunks,
        vec![
            expected_call("call_a", "read_file", json!({"path": "src/main.rs"})),
            expected_call("call_b", "ls", json!({"path": "."})),
            expected_call("call_c", "now", json!({})),
            LlmChunk::Usage(TokenUsage::new(20, 15)),
        ]
    );
}

#[tokio::test]
async fn sends_the_documented_request_shape() {
    let server = TestServer::start([ok_stream()]).await;
    let mut model_config = model("gpt-test");
    model_config.max_tokens = Some(256);
    let config = provider(
        ProviderKind::OpenAi,
        &format!("{}/v1", server.url()),
        Some(KEY),
    );
    let client = OpenAiClient::new(&config, &model_config).unwrap();
    let request = LlmRequest {
        model: "gpt-test".into(),
        system: Some("Be brief.".into()),
        messages: vec![
            Message::User {
                content: "list".into(),
            },
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![ToolCall {
                    id: "call_1".into(),
                    name: "ls".into(),
                    arguments: json!({"path": "."}),
                }],
            },
            Message::Tool {
                tool_call_id: "call_1".into(),
                name: "ls".into(),
                content: "a.txt".into(),
                is_error: false,
            },
            Message::Assistant {
                content: "One file.".into(),
                tool_calls: vec![],
            },
        ],
        tools: vec![ToolDefinition {
            name: "ls".into(),
            description: "List a directory".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
        max_tokens: None,
        temperature: Some(0.2),
    };
    let chunks = collect_ok(client.stream(request).await.unwrap()).await;
    assert_eq!(text_of(&chunks), "ok");
    let sent = &server.requests()[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(
        sent.json(),
        json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "list"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{\"path\":\".\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"},
                {"role": "assistant", "content": "One file."},
            ],
            "tools": [{"type": "function", "function": {
                "name": "ls", "description": "List a directory",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            }}],
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": 256,
            "temperature": 0.2,
        })
    );
}

#[tokio::test]
async fn unauthorized_is_auth_and_never_echoes_the_key() {
    let echo = format!("Incorrect API key provided: {KEY}. You can find your API key at ...");
    let server = TestServer::start([error_response(401, &echo, "invalid_api_key")]).await;
    let client = client(&server, Some(KEY), 2);
    let err = client
        .stream(request("gpt-test", "hi"))
        .await
        .err()
        .unwrap();
    assert!(matches!(err, LlmError::Auth { status: 401, .. }), "{err:?}");
    for text in [err.to_string(), format!("{err:?}"), format!("{client:?}")] {
        assert!(!text.contains(KEY), "key leaked: {text}");
    }
    assert!(
        err.to_string().contains("Incorrect API key provided"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 1, "auth failures are not retried");
}

#[tokio::test]
async fn rate_limit_honours_retry_after_then_succeeds() {
    let limited =
        error_response(429, "slow down", "rate_limit_exceeded").header("retry-after", "0");
    let server = TestServer::start([limited, ok_stream()]).await;
    let chunks = collect_ok(
        client(&server, Some(KEY), 2)
            .stream(request("gpt-test", "hi"))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(text_of(&chunks), "ok");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn rate_limit_after_the_last_retry_is_rate_limited() {
    let limited =
        || error_response(429, "slow down", "rate_limit_exceeded").header("retry-after", "0");
    let server = TestServer::start([limited(), limited(), ok_stream()]).await;
    let err = client(&server, Some(KEY), 1)
        .stream(request("gpt-test", "hi"))
        .await
        .err()
        .unwrap();
    assert!(
        matches!(err, LlmError::RateLimited { status: 429, retry_after_ms: Some(0), ref message, .. } if message == "slow down"),
        "{err:?}"
    );
    assert_eq!(server.requests().len(), 2, "one try plus one retry");
}

#[tokio::test]
async fn server_errors_are_retried_then_reported_as_http() {
    let failure = || error_response(500, "The server had an error", "server_error");
    let server = TestServer::start([failure(), ok_stream()]).await;
    let chunks = collect_ok(
        client(&server, None, 1)
            .stream(request("gpt-test", "hi"))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(text_of(&chunks), "ok");
    assert_eq!(server.requests().len(), 2);

    let server = TestServer::start([failure(), ok_stream()]).await;
    let err = client(&server, None, 0)
        .stream(request("gpt-test", "hi"))
        .await
        .err()
        .unwrap();
    assert!(
        matches!(err, LlmError::Http { status: 500, ref message, .. } if message == "The server had an error"),
        "{err:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn context_length_exceeded_is_context_overflow() {
    let message = "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.";
    let server = TestServer::start([error_response(400, message, "context_length_exceeded")]).await;
    let err = client(&server, None, 2)
        .stream(request("gpt-test", "hi"))
        .await
        .err()
        .unwrap();
    assert!(
        matches!(err, LlmError::ContextOverflow { ref message, .. } if message.contains("8192")),
        "{err:?}"
    );
    assert_eq!(server.requests().len(), 1, "not retryable");
}

#[tokio::test]
async fn a_stream_cut_before_the_end_is_an_error() {
    // Close-delimited body that simply stops: text so far, then the error.
    let cut =
        ScriptedResponse::sse([chunk(json!({"content": "partial"}), None)]).framing(Framing::Close);
    // Chunked body whose connection dies mid-event.
    let broken = ScriptedResponse::sse([
        chunk(json!({"content": "partial"}), None),
        "data: {\"choi".into(),
    ])
    .truncated();
    let server = TestServer::start([cut, broken]).await;
    let client = client(&server, None, 0);
    for _ in 0..2 {
        let items = collect(client.stream(request("gpt-test", "hi")).await.unwrap()).await;
        assert_eq!(items.len(), 2, "{items:?}");
        assert_eq!(items[0], Ok(LlmChunk::TextDelta("partial".into())));
        assert!(
            matches!(items[1], Err(LlmError::Transport { .. })),
            "{items:?}"
        );
    }
}

#[tokio::test]
async fn stream_errors_and_bad_arguments_are_reported() {
    let in_stream_error = ScriptedResponse::sse([
        chunk(json!({"content": "a"}), None),
        data(&json!({"error": {"message": "upstream model crashed", "type": "server_error"}})),
    ]);
    let bad_arguments = ScriptedResponse::sse([
        chunk(call(0, Some("call_x"), Some("ls"), "{\"path\": "), None),
        chunk(json!({}), Some("tool_calls")),
        done(),
    ]);
    let server = TestServer::start([in_stream_error, bad_arguments]).await;
    let client = client(&server, None, 0);
    let items = collect(client.stream(request("gpt-test", "hi")).await.unwrap()).await;
    assert_eq!(items[0], Ok(LlmChunk::TextDelta("a".into())));
    assert!(
        matches!(&items[1], Err(LlmError::Stream { message, .. }) if message == "upstream model crashed"),
        "{items:?}"
    );
    let items = collect(client.stream(request("gpt-test", "hi")).await.unwrap()).await;
    assert!(
        matches!(&items[..], [Err(LlmError::Protocol { message, .. })] if message.contains("'ls'")),
        "{items:?}"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let server = TestServer::start([ScriptedResponse::stall()]).await;
    let mut config = provider(ProviderKind::OpenAi, &server.url(), None);
    config.timeout_ms = Some(200);
    config.max_retries = Some(0);
    let err = OpenAiClient::new(&config, &model("m"))
        .unwrap()
        .stream(request("m", "hi"))
        .await
        .err()
        .unwrap();
    assert!(matches!(err, LlmError::Transport { .. }), "{err:?}");
}
