//! # a3s-code-core: an embeddable agent runtime
//!
//! ```no_run
//! use a3s_code_core::{Agent, SessionOptions};
//!
//! # async fn demo() -> a3s_code_core::Result<()> {
//! let agent = Agent::new("agent.acl").await?;
//! let session = agent
//!     .session_builder(".")
//!     .options(SessionOptions::new().with_max_tool_rounds(10))
//!     .build()
//!     .await?;
//! let result = session.send("Summarize this repository.", None).await?;
//! println!("{} ({} tokens)", result.text, result.usage.total_tokens);
//! # Ok(()) }
//! ```
//!
//! ## Layout
//!
//! - [`config`]: agent configuration in ACL (`a3s-acl`): models and providers.
//! - [`agent`]: [`Agent`] loads a configuration and builds sessions.
//! - [`session`]: [`Session`] holds the conversation and runs one prompt at a
//!   time, by `send` (to completion) or `stream` (typed events).
//! - `agent_loop`: the tool-calling loop behind both.
//! - [`llm`]: the [`llm::LlmClient`] trait and its providers (scripted,
//!   OpenAI-compatible, Anthropic).
//! - [`tools`]: tools confined to the session's workspace.
//! - [`events`]: [`AgentEvent`], the stable event vocabulary.
//! - [`budget`]: the host-owned budget guard seam.
//! - [`host_env`]: where ids and timestamps come from (replay).
//!
//! The runtime knows nothing of JSON-RPC or processes: the bridge adapts
//! host callbacks to the traits defined here.

pub mod agent;
mod agent_loop;
pub mod artifacts;
pub mod budget;
mod budget_enforce;
pub mod compaction;
pub mod config;
mod emitter;
mod error;
pub mod events;
pub mod host_env;
pub mod llm;
mod model_call;
pub mod options;
pub mod permissions;
mod persist;
pub mod retention;
mod run_control;
pub mod session;
mod session_state;
pub mod snapshot;
pub mod store;
mod tool_call;
pub mod tools;

pub use agent::{Agent, SessionBuilder};
pub use error::{CodeError, Result};
pub use events::AgentEvent;
pub use options::SessionOptions;
pub use session::{
    EventRecord, IdentityTags, RunRecord, RunResult, RunStatus, RunStream, SendOptions, Session,
};
