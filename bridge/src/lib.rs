//! # a3s-code-bridge: the runtime served over stdin/stdout
//!
//! ## Layout
//!
//! - [`transport`]: line framing with a size limit; the single writer task.
//! - [`server`]: the connection: classification, the `initialize` gate,
//!   concurrent requests with a bounded in-flight count, batches,
//!   cancellation, shutdown.
//! - `handlers`: one file per method area, typed params in, typed result out.
//! - [`reverse`]: requests to the host, with deadlines and withdrawal.
//! - [`flow`]: per-stream flow-control windows.
//! - `host_budget`: core's `BudgetGuard` answered by the host.
//! - `state`: the agents and sessions of this connection.
//!
//! The bridge never reimplements agent logic: it adapts the wire to core.

pub mod config;
mod errors;
pub mod flow;
mod handlers;
mod host_budget;
mod host_confirmation;
pub mod reverse;
pub mod server;
mod state;
pub mod stdio;
pub mod transport;

pub use config::BridgeConfig;
pub use server::{serve, Exit};
