//! Anthropic Messages API client (being written).

use super::{LlmClient, LlmError, LlmRequest, LlmStream};
use crate::config::{ModelConfig, ProviderConfig};

#[derive(Debug)]
pub struct AnthropicClient {
    provider: String,
}

impl AnthropicClient {
    pub fn new(provider: &ProviderConfig, _model: &ModelConfig) -> Result<Self, LlmError> {
        Ok(Self {
            provider: provider.name.clone(),
        })
    }
}

#[async_trait::async_trait]
impl LlmClient for AnthropicClient {
    async fn stream(&self, _request: LlmRequest) -> Result<LlmStream, LlmError> {
        Err(LlmError::Transport {
            provider: self.provider.clone(),
            message: "Anthropic client not built yet".into(),
        })
    }
}
