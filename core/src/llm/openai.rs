//! OpenAI-compatible chat-completions client (being written).

use super::{LlmClient, LlmError, LlmRequest, LlmStream};
use crate::config::{ModelConfig, ProviderConfig};

#[derive(Debug)]
pub struct OpenAiClient {
    provider: String,
}

impl OpenAiClient {
    pub fn new(provider: &ProviderConfig, _model: &ModelConfig) -> Result<Self, LlmError> {
        Ok(Self {
            provider: provider.name.clone(),
        })
    }
}

#[async_trait::async_trait]
impl LlmClient for OpenAiClient {
    async fn stream(&self, _request: LlmRequest) -> Result<LlmStream, LlmError> {
        Err(LlmError::Transport {
            provider: self.provider.clone(),
            message: "OpenAI-compatible client not built yet".into(),
        })
    }
}
