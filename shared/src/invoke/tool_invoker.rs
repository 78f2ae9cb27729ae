//! The [`ToolInvoker`] I/O trait and the values of one Tool Service call (CONTRACT X4, X6, X7):
//! the request the dispatch builds, the answer read whole, and why there was none.

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, StatusCode};

/// One Tool Service call (CONTRACT X4).
#[derive(Debug, Clone)]
pub struct ToolRequest {
    /// HTTP method from the manifest (`POST` by default).
    pub method: Method,
    /// Endpoint URL from the snapshot, never from the request (a REST-shaped tool's path and
    /// query arguments placed in its template, CONTRACT X9).
    pub endpoint: url::Url,
    /// Forwarded caller headers (`guid`, `x-request-id`, `mcp-session-id`, `employee-no`,
    /// `virtual-employee-no`), then a REST-shaped tool's `header` arguments (CONTRACT X9).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// The JSON body: the `arguments` object as compact JSON (CONTRACT X4) or a REST-shaped
    /// tool's body (X9); empty when the request has none (then no `Content-Type` is sent).
    pub body: Bytes,
    /// The effective timeout of the whole call, body included (CONTRACT X7).
    pub timeout: Duration,
    /// Most body bytes to read (`MCP_MAX_TOOL_RESPONSE_BYTES`, CONTRACT X6).
    pub max_response_bytes: usize,
}

/// A Tool Service answer that was read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResponse {
    /// The HTTP status.
    pub status: StatusCode,
    /// The body, at most `max_response_bytes` long.
    pub body: Bytes,
}

/// Why a Tool Service call produced no answer (CONTRACT X6). Messages never name the endpoint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvokeError {
    /// No complete answer within the effective timeout.
    #[error("Tool Service did not answer within {timeout_ms} ms")]
    Timeout {
        /// The effective timeout in ms.
        timeout_ms: u64,
    },
    /// The connection could not be made.
    #[error("Tool Service is unreachable (connection failed)")]
    Connect,
    /// The body exceeded the limit; reading stopped there.
    #[error("Tool Service response exceeds {limit_bytes} bytes")]
    ResponseTooLarge {
        /// `MCP_MAX_TOOL_RESPONSE_BYTES`.
        limit_bytes: usize,
    },
    /// A 2xx answer that is neither JSON nor plain text (e.g. an HTML page); its body is not
    /// read.
    #[error(
        "Tool Service answered with content type '{content_type}', which is neither JSON nor plain text"
    )]
    UnexpectedContentType {
        /// The `Content-Type` sent, printable ASCII only, cut short.
        content_type: String,
    },
    /// The exchange failed mid-way (reset, malformed HTTP).
    #[error("Tool Service call failed ({kind})")]
    Transport {
        /// A short, URL-free description.
        kind: &'static str,
    },
}

/// Executes Tool Service calls. Implementations must enforce `timeout` and
/// `max_response_bytes` themselves.
pub trait ToolInvoker: Send + Sync + 'static {
    /// Sends one request and reads the whole answer.
    ///
    /// # Errors
    /// [`InvokeError`] for every failure that left no answer.
    fn invoke(
        &self,
        request: ToolRequest,
    ) -> impl Future<Output = Result<ToolResponse, InvokeError>> + Send;
}
