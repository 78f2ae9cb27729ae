//! JSON-RPC 2.0 and MCP 2025-11-25 protocol types: error objects, the message envelope, method
//! names and protocol versions (CONTRACT E, H4, L1).

mod envelope;
mod error;
pub mod methods;
mod response;
mod version;

pub use envelope::{Message, RequestId, parse_message};
pub use error::{ErrorCode, ErrorObject};
pub use response::{ResponsePayload, encode_error, encode_response};
pub use version::{LATEST_PROTOCOL_VERSION, ProtocolVersion};
