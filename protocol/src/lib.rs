//! # a3s-code-protocol: the wire contract of the A3S Code bridge
//!
//! The only place wire shapes are defined. Everything here derives serde and
//! JSON Schema; `schema/` at the crate root holds the generated schema and
//! OpenRPC document, and a test fails when they drift from these types.
//!
//! ## Layout
//!
//! - [`message`]: JSON-RPC 2.0 framing types (ids, requests, responses, errors).
//! - [`errors`]: numeric codes and the stable `data.code` strings.
//! - [`types`]: params and results of every method, notification and reverse request.
//! - [`catalog`]: one declarative table per direction, the source of the
//!   capability lists and the generated documents.
//! - [`schema`]: renders the checked-in `schema/` files.

pub mod catalog;
pub mod errors;
pub mod message;
pub mod schema;
pub mod types;

pub use errors::{DataCode, ErrorObject};
pub use message::{Incoming, JsonRpcVersion, Notification, Request, RequestId, Response};

/// The protocol version this crate describes.
pub const PROTOCOL_VERSION: u32 = 1;
/// Every protocol version a bridge built from this crate accepts.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[u32] = &[PROTOCOL_VERSION];
/// Version of the event envelope (`event.version`).
pub const EVENT_ENVELOPE_VERSION: u32 = 1;
