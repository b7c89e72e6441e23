//! Agent configuration written in ACL (the A3S Agent Configuration Language).
//!
//! ```acl
//! default_model = "openai/gpt-4o-mini"
//! providers "openai" {
//!   api_key  = env("OPENAI_API_KEY")
//!   base_url = "https://api.openai.com/v1"
//!   models "gpt-4o-mini" { max_tokens = 4096 }
//! }
//! providers "offline" {
//!   kind = "scripted"
//!   models "demo" {
//!     script_file = "demo-script.json"       # or inline turns:
//!     turn { tool_call { name = "ls" arguments = { path = "." } } }
//!     turn { text = "Done." }
//!   }
//! }
//! ```
//!
//! A provider's `kind` is explicit (`openai`, `anthropic`, `scripted`) or
//! follows from its name: `anthropic` is the Anthropic Messages API, any other
//! name is OpenAI-compatible.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use a3s_acl::{Block, Value as AclValue};
use serde_json::{Map, Number, Value};

use crate::error::{CodeError, Result};
use crate::llm::ScriptedTurn;

/// Which wire API a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    OpenAi,
    Anthropic,
    Scripted,
}

/// An API key. Its `Debug` form never shows the key.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// One `models "<id>" { ... }` block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelConfig {
    pub id: String,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    /// Turns of a scripted model: inline `turn` blocks, then `script_file`.
    pub script: Vec<ScriptedTurn>,
}

/// One `providers "<name>" { ... }` block.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    pub name: String,
    pub kind: ProviderKind,
    pub api_key: Option<ApiKey>,
    pub base_url: Option<String>,
    /// Per-request timeout in milliseconds.
    pub timeout_ms: Option<u64>,
    /// Retries after the first attempt for retryable failures.
    pub max_retries: Option<u32>,
    pub models: BTreeMap<String, ModelConfig>,
}

/// A parsed agent configuration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AgentConfig {
    /// `provider/model`.
    pub default_model: Option<String>,
    pub system_prompt: Option<String>,
    pub max_tool_rounds: Option<usize>,
    pub providers: BTreeMap<String, ProviderConfig>,
}

impl AgentConfig {
    /// Loads a configuration from a file path, or parses the text itself when
    /// it is not an existing file but looks like ACL (contains `=` or `{`).
    pub fn load(path_or_inline: &str) -> Result<Self> {
        let path = Path::new(path_or_inline);
        if path.is_file() {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CodeError::Config(format!("cannot read {path_or_inline}: {e}")))?;
            let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
            return Self::parse(&text, &base);
        }
        if path_or_inline.contains('=') || path_or_inline.contains('{') {
            return Self::parse(path_or_inline, &std::env::current_dir()?);
        }
        Err(CodeError::Config(format!(
            "config file not found: {path_or_inline}"
        )))
    }

    /// Parses ACL text; relative `script_file` paths resolve against `base_dir`.
    pub fn parse(text: &str, base_dir: &Path) -> Result<Self> {
        let doc = a3s_acl::parse(text).map_err(|e| {
            CodeError::Config(format!(
                "invalid ACL at line {}, column {}: {} ({})",
                e.line, e.column, e.message, e.code
            ))
        })?;
        let mut config = AgentConfig::default();
        for block in &doc.blocks {
            match block.name.as_str() {
                "default_model" => {
                    config.default_model = Some(string_attr(block, "default_model")?)
                }
                "system_prompt" => {
                    config.system_prompt = Some(string_attr(block, "system_prompt")?)
                }
                "max_tool_rounds" => {
                    config.max_tool_rounds = Some(number_attr(block, "max_tool_rounds")? as usize)
                }
                "providers" => {
                    let provider = parse_provider(block, base_dir)?;
                    config.providers.insert(provider.name.clone(), provider);
                }
                // Unknown settings are kept for forward compatibility.
                _ => {}
            }
        }
        Ok(config)
    }

    /// Splits `provider/model` and finds both blocks.
    pub fn resolve_model(&self, model: &str) -> Result<(&ProviderConfig, ModelConfig)> {
        let (provider_name, model_id) = model.split_once('/').ok_or_else(|| {
            CodeError::Config(format!("model '{model}' must be written as provider/model"))
        })?;
        let provider = self.providers.get(provider_name).ok_or_else(|| {
            CodeError::Config(format!(
                "unknown provider '{provider_name}' in model '{model}'"
            ))
        })?;
        let model_config = provider
            .models
            .get(model_id)
            .cloned()
            .unwrap_or(ModelConfig {
                id: model_id.to_string(),
                ..Default::default()
            });
        Ok((provider, model_config))
    }
}

fn parse_provider(block: &Block, base_dir: &Path) -> Result<ProviderConfig> {
    let name = block
        .labels
        .first()
        .cloned()
        .ok_or_else(|| CodeError::Config("providers block needs a name label".into()))?;
    let attr = |key: &str| block.attributes.get(key).map(resolve_value).transpose();
    let kind = match attr("kind")? {
        Some(Value::String(kind)) => match kind.as_str() {
            "openai" | "openai-compatible" => ProviderKind::OpenAi,
            "anthropic" => ProviderKind::Anthropic,
            "scripted" => ProviderKind::Scripted,
            other => {
                return Err(CodeError::Config(format!(
                    "provider '{name}': unknown kind '{other}' (expected openai, anthropic or scripted)"
                )))
            }
        },
        Some(_) => return Err(CodeError::Config(format!("provider '{name}': kind must be a string"))),
        None if name == "anthropic" => ProviderKind::Anthropic,
        None => ProviderKind::OpenAi,
    };
    let api_key = match attr("api_key")? {
        Some(Value::String(key)) if !key.is_empty() => Some(ApiKey::new(key)),
        _ => None,
    };
    let base_url = match attr("base_url")? {
        Some(Value::String(url)) => Some(url),
        _ => None,
    };
    let timeout_ms = attr("timeout_ms")?.and_then(|v| v.as_u64());
    let max_retries = attr("max_retries")?
        .and_then(|v| v.as_u64())
        .map(|n| n as u32);
    let mut models = BTreeMap::new();
    for model_block in block.blocks.iter().filter(|b| b.name == "models") {
        let model = parse_model(&name, model_block, base_dir)?;
        models.insert(model.id.clone(), model);
    }
    Ok(ProviderConfig {
        name,
        kind,
        api_key,
        base_url,
        timeout_ms,
        max_retries,
        models,
    })
}

fn parse_model(provider: &str, block: &Block, base_dir: &Path) -> Result<ModelConfig> {
    let id = block.labels.first().cloned().ok_or_else(|| {
        CodeError::Config(format!(
            "provider '{provider}': models block needs an id label"
        ))
    })?;
    let attr = |key: &str| block.attributes.get(key).map(resolve_value).transpose();
    let mut model = ModelConfig {
        id: id.clone(),
        max_tokens: attr("max_tokens")?
            .and_then(|v| v.as_u64())
            .map(|n| n as u32),
        temperature: attr("temperature")?.and_then(|v| v.as_f64()),
        script: Vec::new(),
    };
    for turn in block.blocks.iter().filter(|b| b.name == "turn") {
        model.script.push(parse_turn(turn)?);
    }
    if let Some(Value::String(file)) = attr("script_file")? {
        let path: PathBuf = base_dir.join(&file);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            CodeError::Config(format!(
                "model '{provider}/{id}': cannot read script {}: {e}",
                path.display()
            ))
        })?;
        let client = crate::llm::ScriptedClient::from_json(&text)
            .map_err(|e| CodeError::Config(format!("model '{provider}/{id}': {e}")))?;
        model.script.extend(client.turns().iter().cloned());
    }
    Ok(model)
}

fn parse_turn(block: &Block) -> Result<ScriptedTurn> {
    let mut json = Map::new();
    for (key, value) in &block.attributes {
        json.insert(key.clone(), resolve_value(value)?);
    }
    let calls: Vec<Value> = block
        .blocks
        .iter()
        .filter(|b| b.name == "tool_call")
        .map(|b| {
            let mut call = Map::new();
            for (key, value) in &b.attributes {
                call.insert(key.clone(), resolve_value(value)?);
            }
            Ok(Value::Object(call))
        })
        .collect::<Result<_>>()?;
    if !calls.is_empty() {
        json.insert("tool_calls".into(), Value::Array(calls));
    }
    serde_json::from_value(Value::Object(json))
        .map_err(|e| CodeError::Config(format!("invalid scripted turn: {e}")))
}

fn string_attr(block: &Block, key: &str) -> Result<String> {
    match block.attributes.get(key).map(resolve_value).transpose()? {
        Some(Value::String(s)) => Ok(s),
        _ => Err(CodeError::Config(format!("{key} must be a string"))),
    }
}

fn number_attr(block: &Block, key: &str) -> Result<f64> {
    match block.attributes.get(key).map(resolve_value).transpose()? {
        Some(Value::Number(n)) => Ok(n.as_f64().unwrap_or_default()),
        _ => Err(CodeError::Config(format!("{key} must be a number"))),
    }
}

/// Turns an ACL value into JSON, evaluating `env("VAR")` (empty when unset)
/// and `concat(...)`.
fn resolve_value(value: &AclValue) -> Result<Value> {
    Ok(match value {
        AclValue::String(s) => Value::String(s.clone()),
        AclValue::Number(n) => {
            if n.fract() == 0.0 && n.abs() < 9.0e15 {
                Value::Number(Number::from(*n as i64))
            } else {
                Number::from_f64(*n)
                    .map(Value::Number)
                    .unwrap_or(Value::Null)
            }
        }
        AclValue::Bool(b) => Value::Bool(*b),
        AclValue::Null => Value::Null,
        AclValue::List(items) => {
            Value::Array(items.iter().map(resolve_value).collect::<Result<_>>()?)
        }
        AclValue::Object(pairs) => Value::Object(
            pairs
                .iter()
                .map(|(k, v)| Ok((k.clone(), resolve_value(v)?)))
                .collect::<Result<_>>()?,
        ),
        AclValue::Call(name, args) => match (name.as_str(), args.as_slice()) {
            ("env", [AclValue::String(var)]) => {
                Value::String(std::env::var(var).unwrap_or_default())
            }
            ("concat", parts) => {
                let mut out = String::new();
                for part in parts {
                    match resolve_value(part)? {
                        Value::String(s) => out.push_str(&s),
                        other => out.push_str(&other.to_string()),
                    }
                }
                Value::String(out)
            }
            _ => return Err(CodeError::Config(format!("unsupported function {name}()"))),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_providers_models_env_keys_and_kinds() {
        std::env::set_var("A3S_TEST_CONFIG_KEY", "sk-test");
        let config = AgentConfig::parse(
            r#"
default_model = "openai/gpt-4o-mini"
max_tool_rounds = 7
providers "openai" {
  api_key = env("A3S_TEST_CONFIG_KEY")
  base_url = "http://localhost:1/v1"
  models "gpt-4o-mini" { max_tokens = 100 }
}
providers "anthropic" {
  api_key = env("A3S_TEST_CONFIG_UNSET")
}
providers "offline" {
  kind = "scripted"
  models "demo" {
    turn {
      tool_call {
        name = "ls"
        arguments = { path = "." }
      }
    }
    turn { text = "Done." }
  }
}
"#,
            Path::new("."),
        )
        .unwrap();
        assert_eq!(config.default_model.as_deref(), Some("openai/gpt-4o-mini"));
        assert_eq!(config.max_tool_rounds, Some(7));
        let openai = &config.providers["openai"];
        assert_eq!(openai.kind, ProviderKind::OpenAi);
        assert_eq!(openai.api_key.as_ref().unwrap().expose(), "sk-test");
        assert!(!format!("{openai:?}").contains("sk-test"));
        assert_eq!(openai.models["gpt-4o-mini"].max_tokens, Some(100));
        assert_eq!(config.providers["anthropic"].kind, ProviderKind::Anthropic);
        assert_eq!(config.providers["anthropic"].api_key, None);
        let (provider, model) = config.resolve_model("offline/demo").unwrap();
        assert_eq!(provider.kind, ProviderKind::Scripted);
        assert_eq!(model.script.len(), 2);
        assert_eq!(
            model.script[0].tool_calls[0].arguments,
            json!({"path": "."})
        );
        assert_eq!(model.script[1].text, "Done.");
    }

    #[test]
    fn reports_bad_configs_clearly() {
        let err = AgentConfig::parse("default_model = = \"x\"", Path::new(".")).unwrap_err();
        assert!(err.to_string().contains("invalid ACL"), "{err}");
        let err = AgentConfig::load("/definitely/not/here.acl").unwrap_err();
        assert_eq!(
            err.to_string(),
            "config error: config file not found: /definitely/not/here.acl"
        );
        let config = AgentConfig::parse(r#"default_model = "x""#, Path::new(".")).unwrap();
        assert!(config.resolve_model("x").is_err());
        assert!(config
            .resolve_model("nope/m")
            .unwrap_err()
            .to_string()
            .contains("unknown provider 'nope'"));
        let err =
            AgentConfig::parse("providers \"p\" { kind = \"grpc\" }", Path::new(".")).unwrap_err();
        assert!(err.to_string().contains("unknown kind 'grpc'"));
    }

    #[test]
    fn loads_script_files_relative_to_the_config() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.json"), r#"[{"text":"hi"}]"#).unwrap();
        std::fs::write(
            dir.path().join("agent.acl"),
            "default_model = \"s/m\"\nproviders \"s\" {\n kind = \"scripted\"\n models \"m\" { script_file = \"s.json\" }\n}\n",
        )
        .unwrap();
        let config = AgentConfig::load(dir.path().join("agent.acl").to_str().unwrap()).unwrap();
        assert_eq!(config.resolve_model("s/m").unwrap().1.script[0].text, "hi");
    }
}
