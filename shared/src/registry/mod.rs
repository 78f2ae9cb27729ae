//! The registry snapshot: the immutable in-memory set of routes and tools a warm instance loaded
//! at cold start (CONTRACT R, M, T3, X3).
//!
//! A manifest is validated as a whole at load, and each route's `tools/list` result is built then,
//! never per request (STYLE 10). A tool's schema validators are checked at load and compiled the
//! first time a call needs them, once per instance ([`LazyValidator`]).

pub(crate) mod compile;
mod endpoint;
mod lazy_validator;
pub(crate) mod list_filter;
pub(crate) mod list_page;
mod outbound_auth;
mod portability;
mod rest;
pub mod search;
pub(crate) mod snapshot;
pub mod source;
mod state;

pub use compile::{MAX_TOOL_TIMEOUT_MS, ManifestProblem, RESERVED_HEADERS, compile_manifest};
pub use endpoint::{Endpoint, FunctionArn};
pub use lazy_validator::LazyValidator;
pub use list_page::{LIST_ENVELOPE_BYTES, oversized_list_entries};
pub use outbound_auth::{
    AwsArn, ClientAuth, KeyPlacement, OutboundAuth, SecretRef, SecretSource, env_secret_problems,
};
pub use portability::portability_warnings;
pub use rest::{ArgumentLocation, EndpointTemplate, RestCall, TemplatePiece};
pub use snapshot::{
    ResultFormat, ResultShape, Route, ServerInfo, Snapshot, Tool, ToolLookup, ToolsListResult,
};
pub use source::{
    BakedSource, FileSource, HttpSource, LoadLimits, RegistryError, S3Source, SnapshotSource,
    SourceChain, baked_manifest, compile_bytes, load_from,
};
pub use state::{Clock, Registry};

// A tool's `x-mcp-header` parameters, the policy's type (CONTRACT N2, N6), at their old path.
pub use crate::policy::HeaderParam;
