//! Auto-compaction in the loop: older turns summarised, pairs never split.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use a3s_code_core::compaction::SUMMARY_PREFIX;
use a3s_code_core::llm::{
    LlmChunk, LlmClient, LlmError, LlmRequest, LlmStream, Message, TokenUsage, ToolCall,
};
use a3s_code_core::{Agent, AgentEvent, SessionOptions};
use serde_json::json;

/// A model that reads four files, one per round, then answers; it answers
/// summary requests (no tools offered) with a fixed summary. Records requests.
#[derive(Debug, Default)]
struct ReadingModel {
    requests: Mutex<Vec<LlmRequest>>,
}

#[async_trait::async_trait]
impl LlmClient for ReadingModel {
    async fn stream(&self, request: LlmRequest) -> Result<LlmStream, LlmError> {
        let mut requests = self.requests.lock().unwrap();
        requests.push(request.clone());
        let chunks = if request.tools.is_empty() {
            vec![LlmChunk::TextDelta(
                "files 0-2 were read; they hold filler.".into(),
            )]
        } else {
            let rounds = requests.iter().filter(|r| !r.tools.is_empty()).count() - 1;
            if rounds < 4 {
                vec![LlmChunk::ToolCall(ToolCall {
                    id: format!("call-{rounds}"),
                    name: "read".into(),
                    arguments: json!({"file_path": format!("f{rounds}.txt")}),
                })]
            } else {
                vec![LlmChunk::TextDelta("Read them all.".into())]
            }
        };
        let mut chunks: Vec<Result<LlmChunk, LlmError>> = chunks.into_iter().map(Ok).collect();
        chunks.push(Ok(LlmChunk::Usage(TokenUsage::new(10, 10))));
        Ok(Box::pin(futures::stream::iter(chunks)))
    }
}

#[tokio::test]
async fn older_turns_are_summarised_and_tool_pairs_stay_whole() {
    let workspace = tempfile::tempdir().unwrap();
    for n in 0..4 {
        std::fs::write(
            workspace.path().join(format!("f{n}.txt")),
            "filler text ".repeat(80),
        )
        .unwrap();
    }
    let model = Arc::new(ReadingModel::default());
    let agent = Agent::from_config(Default::default());
    let session = agent
        .session_builder(workspace.path())
        .options(
            SessionOptions::new()
                .with_llm_client(model.clone())
                .with_max_context_tokens(1200)
                .with_auto_compact(0.8),
        )
        .build()
        .await
        .unwrap();
    let mut stream = session.stream("read the files").unwrap();
    let mut compactions = Vec::new();
    while let Some(record) = stream.next().await {
        if let AgentEvent::ContextCompacted {
            summarized_messages,
            tokens_before,
            tokens_after,
        } = record.event
        {
            assert!(tokens_after < tokens_before);
            assert!(summarized_messages >= 2);
            compactions.push(summarized_messages);
        }
    }
    assert_eq!(stream.result().await.unwrap().text, "Read them all.");
    assert!(
        !compactions.is_empty(),
        "a context_compacted event was emitted"
    );

    let requests = model.requests.lock().unwrap();
    let summary_requests = requests.iter().filter(|r| r.tools.is_empty()).count();
    assert_eq!(summary_requests, compactions.len());
    for request in requests.iter().filter(|r| !r.tools.is_empty()) {
        // Every tool result follows the assistant message that made its call.
        let mut open: HashSet<String> = HashSet::new();
        for message in &request.messages {
            match message {
                Message::Assistant { tool_calls, .. } => {
                    open = tool_calls.iter().map(|c| c.id.clone()).collect();
                }
                Message::Tool { tool_call_id, .. } => {
                    assert!(open.remove(tool_call_id), "orphan result {tool_call_id}");
                }
                Message::User { .. } => assert!(open.is_empty(), "a call lost its result"),
            }
        }
    }
    let last = requests.iter().rev().find(|r| !r.tools.is_empty()).unwrap();
    let Message::User { content } = &last.messages[0] else {
        panic!("summary first")
    };
    assert!(content.starts_with(SUMMARY_PREFIX));
    let Message::User { content } = &session.history()[0] else {
        panic!()
    };
    assert!(
        content.starts_with(SUMMARY_PREFIX),
        "the session keeps the compacted history"
    );
}

#[tokio::test]
async fn without_auto_compact_the_history_is_sent_whole() {
    let workspace = tempfile::tempdir().unwrap();
    for n in 0..4 {
        std::fs::write(
            workspace.path().join(format!("f{n}.txt")),
            "filler text ".repeat(80),
        )
        .unwrap();
    }
    let model = Arc::new(ReadingModel::default());
    let session = Agent::from_config(Default::default())
        .session_builder(workspace.path())
        .options(
            SessionOptions::new()
                .with_llm_client(model.clone())
                .with_max_context_tokens(1200),
        )
        .build()
        .await
        .unwrap();
    session.send("read the files", None).await.unwrap();
    assert!(model
        .requests
        .lock()
        .unwrap()
        .iter()
        .all(|r| !r.tools.is_empty()));
    assert_eq!(session.history().len(), 10);
}
