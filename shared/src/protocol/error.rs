//! JSON-RPC error objects (CONTRACT E, X2, X3, X8; JSON-RPC 2.0 section 5.1).

use serde::Serialize;
use serde_json::{Map, Value};

/// A JSON-RPC error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// `-32700`: the body is not JSON (CONTRACT E1).
    pub const PARSE_ERROR: Self = Self(-32700);
    /// `-32600`: not a valid JSON-RPC request, or a rejected route key / caller header
    /// (CONTRACT E2, E3, P3, P4, C4, C5, H5).
    pub const INVALID_REQUEST: Self = Self(-32600);
    /// `-32601`: unknown method (CONTRACT E4).
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    /// `-32602`: invalid params (CONTRACT X2, T2).
    pub const INVALID_PARAMS: Self = Self(-32602);
    /// `-32603`: the server cannot serve the request (CONTRACT X3, X8).
    pub const INTERNAL_ERROR: Self = Self(-32603);
    /// `-32020` `HeaderMismatch`: a mirrored header is missing or differs from the body
    /// (CONTRACT N2; MCP 2026-07-28 basic/transports/streamable-http).
    pub const HEADER_MISMATCH: Self = Self(-32020);
    /// `-32021` `MissingRequiredClientCapability` (CONTRACT K5; MCP 2026-07-28 schema,
    /// ext-tasks "Capability Negotiation").
    pub const MISSING_CLIENT_CAPABILITY: Self = Self(-32021);
    /// `-32022` `UnsupportedProtocolVersion` (CONTRACT N2; MCP 2026-07-28 schema).
    pub const UNSUPPORTED_PROTOCOL_VERSION: Self = Self(-32022);
}

/// A JSON-RPC error object: `{"code", "message", "data"?}`.
///
/// `data`, when present, is an object; the gateway puts `guid` in it (CONTRACT E5) and, for
/// `-32602`, `detail` and optionally `errors` (CONTRACT X2).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// The human-readable message; exact texts are fixed by CONTRACT.
    pub message: String,
    /// Extra data: `guid`, `detail`, `errors`.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub data: Map<String, Value>,
}

impl ErrorObject {
    /// An error object with the given code and message and no data.
    #[must_use]
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: Map::new(),
        }
    }

    /// `-32700 Parse error` (CONTRACT E1).
    #[must_use]
    pub fn parse_error() -> Self {
        Self::new(ErrorCode::PARSE_ERROR, "Parse error")
    }

    /// `-32600 Invalid Request: <detail>` (CONTRACT E2, E3).
    #[must_use]
    pub fn invalid_request(detail: &str) -> Self {
        Self::new(
            ErrorCode::INVALID_REQUEST,
            format!("Invalid Request: {detail}"),
        )
    }

    /// `-32600` with a message used verbatim (CONTRACT P3, P4, H5, H6, C4, C5).
    #[must_use]
    pub fn invalid_request_exact(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_REQUEST, message)
    }

    /// `-32601 Method not found: <method>` (CONTRACT E4).
    #[must_use]
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// `-32602 Invalid params: <detail>`, with `data.detail` (CONTRACT X2).
    #[must_use]
    pub fn invalid_params(detail: impl Into<String>) -> Self {
        let detail = detail.into();
        let mut error = Self::new(
            ErrorCode::INVALID_PARAMS,
            format!("Invalid params: {detail}"),
        );
        error.data.insert("detail".into(), Value::String(detail));
        error
    }

    /// `-32603 Internal error: <detail>` (CONTRACT X3, X8).
    #[must_use]
    pub fn internal_error(detail: impl Into<String>) -> Self {
        let detail = detail.into();
        Self::new(
            ErrorCode::INTERNAL_ERROR,
            format!("Internal error: {detail}"),
        )
    }

    /// `-32020 Header mismatch: <detail>` (CONTRACT N2).
    #[must_use]
    pub fn header_mismatch(detail: &str) -> Self {
        Self::new(
            ErrorCode::HEADER_MISMATCH,
            format!("Header mismatch: {detail}"),
        )
    }

    /// `-32021 Missing required client capability` with `data.requiredCapabilities` naming
    /// the tasks extension (CONTRACT K5).
    #[must_use]
    pub fn missing_tasks_capability() -> Self {
        let mut error = Self::new(
            ErrorCode::MISSING_CLIENT_CAPABILITY,
            "Missing required client capability",
        );
        if let Value::Object(data) = serde_json::json!({
            "requiredCapabilities": {"extensions": {super::TASKS_EXTENSION: {}}}
        }) {
            error.data = data;
        }
        error
    }

    /// `-32602 Invalid params: unknown task` (CONTRACT K6): one answer for a task id that is
    /// made up, changed, expired, another caller's or another route's, or whose work the Tool
    /// Service no longer knows.
    #[must_use]
    pub fn unknown_task() -> Self {
        Self::invalid_params("unknown task")
    }

    /// `-32022 Unsupported protocol version` with `data: {"supported": [...], "requested":
    /// "<version>"}` (CONTRACT N2, N3).
    #[must_use]
    pub fn unsupported_protocol_version(supported: &[&str], requested: &str) -> Self {
        Self::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
        )
        .with_versions(supported, requested)
    }

    /// `-32600 Invalid Request: unsupported protocol version` with the same `data` as
    /// `-32022`, listing the legacy versions: the answer of a deployment that serves no modern
    /// version, so that an auto-negotiating client falls back to `initialize` (CONTRACT N5).
    #[must_use]
    pub fn no_modern_version(supported: &[&str], requested: &str) -> Self {
        Self::invalid_request("unsupported protocol version").with_versions(supported, requested)
    }

    fn with_versions(mut self, supported: &[&str], requested: &str) -> Self {
        self.data.insert(
            "supported".into(),
            Value::Array(supported.iter().map(|v| Value::from(*v)).collect()),
        );
        self.data
            .insert("requested".into(), Value::String(requested.into()));
        self
    }

    /// Adds `data.guid` (CONTRACT E5, C1).
    #[must_use]
    pub fn with_guid(mut self, guid: &str) -> Self {
        self.data.insert("guid".into(), Value::String(guid.into()));
        self
    }

    /// Adds `data.errors`: every violation found (CONTRACT X2).
    #[must_use]
    pub fn with_errors(mut self, errors: Vec<String>) -> Self {
        self.data.insert(
            "errors".into(),
            Value::Array(errors.into_iter().map(Value::String).collect()),
        );
        self
    }
}
