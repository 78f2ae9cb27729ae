//! JSON-RPC 2.0 and MCP protocol types: error objects, the message envelope, method names,
//! protocol versions and their eras (CONTRACT E, H4, L1, N).

pub mod bounds;
mod envelope;
mod error;
pub mod methods;
mod response;
mod version;

pub use envelope::{MAX_ID_BYTES, Message, RequestId, declared_version, parse_message};
pub use error::{ErrorCode, ErrorObject};
pub use response::{ResponsePayload, encode_error, encode_response};
pub use version::{
    Era, LATEST_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION,
    META_SERVER_INFO, ProtocolVersion, ResultFields, TASKS_EXTENSION,
};
