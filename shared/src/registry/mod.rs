//! The registry snapshot: the immutable in-memory set of routes and tools a warm instance loaded
//! at cold start (CONTRACT R, M, T3, X3).
//!
//! A manifest is validated as a whole and compiled once: each tool's `inputSchema` validator and
//! each route's `tools/list` result are built at load, never per request (STYLE 10).

pub(crate) mod compile;
mod portability;
mod snapshot;
pub mod source;
mod state;

pub use compile::{MAX_TOOL_TIMEOUT_MS, ManifestProblem, compile_manifest, prepare_schema_checks};
pub use portability::portability_warnings;
pub use snapshot::{
    HeaderParam, ResultFormat, ResultShape, Route, ServerInfo, Snapshot, Tool, ToolLookup,
    ToolsListResult,
};
pub use source::{
    BakedSource, FileSource, HttpSource, LoadLimits, RegistryError, S3Source, SnapshotSource,
    SourceChain, baked_manifest, compile_bytes, load_from,
};
pub use state::{Clock, Registry};
