//! Mapping a Tool Service answer to an MCP `tools/call` result (CONTRACT X5, X6): pure functions
//! over the answer and the tool's [`crate::registry::ResultShape`].
//!
//! - [`map_answer`]: the mapping, by result format ([`map_tool_answer`]);
//! - [`model`]: the result's types ([`CallResult`], [`Content`]) and their JSON;
//! - `mcp_native`: the shape check of an MCP-native result (`_meta.resultFormat: "mcp"`);
//! - `output_schema`: `structuredContent` against the tool's `outputSchema`;
//! - [`redact`]: the secrets a call sent, taken out of its answer (X12).

pub mod map_answer;
mod mcp_native;
pub mod model;
mod output_schema;
pub mod redact;

pub use map_answer::{MAX_QUOTED_ERROR_BYTES, map_tool_answer, oversized_result};
pub use model::{CallResult, Content};
