//! Params and results of every method, notification and reverse request.
//! Names follow `XxxParams` / `XxxResult`; fields are camelCase on the wire.

mod agent;
mod budget;
mod control;
mod handshake;
mod permission;
mod session;
mod stream;
mod tools;

pub use agent::*;
pub use budget::*;
pub use control::*;
pub use handshake::*;
pub use permission::*;
pub use session::*;
pub use stream::*;
pub use tools::*;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `{}`: the result of methods that only acknowledge.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmptyResult {}

/// `{}` or absent: params of methods that take none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmptyParams {}
