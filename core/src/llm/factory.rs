//! Builds the client for a configured `provider/model`.

use std::sync::Arc;

use super::{AnthropicClient, LlmClient, OpenAiClient, ScriptedClient};
use crate::config::{ModelConfig, ProviderConfig, ProviderKind};
use crate::error::{CodeError, Result};

/// Creates the provider client for one model of one provider.
pub fn client_for(provider: &ProviderConfig, model: &ModelConfig) -> Result<Arc<dyn LlmClient>> {
    Ok(match provider.kind {
        ProviderKind::Scripted => {
            if model.script.is_empty() {
                return Err(CodeError::Config(format!(
                    "scripted model '{}/{}' has no turns (add turn blocks or script_file)",
                    provider.name, model.id
                )));
            }
            Arc::new(ScriptedClient::new(model.script.clone()))
        }
        ProviderKind::OpenAi => Arc::new(OpenAiClient::new(provider, model)?),
        ProviderKind::Anthropic => Arc::new(AnthropicClient::new(provider, model)?),
    })
}
