//! The usage log: exactly one structured event per request (CONTRACT U1, C6).
//!
//! Only `guid` and `x-request-id` appear as correlation values; no bodies, arguments, tool
//! outputs, employee numbers or session ids are ever logged.

use std::time::Duration;

/// The `target` of usage events, for log filters.
pub const USAGE_TARGET: &str = "mcp_gateway::usage";

/// How a request ended (CONTRACT U1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A result (tools/call with `isError: false`), or a 202 for a notification.
    Ok,
    /// A tools/call result with `isError: true`.
    ToolError,
    /// A JSON-RPC error object with this code.
    RpcError(i32),
    /// A non-200 HTTP rejection (403, 404, 405, 406, 413, 415, 400).
    HttpError,
}

impl Outcome {
    /// The outcome label: `ok`, `tool_error`, `rpc_error`, `http_error`.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::ToolError => "tool_error",
            Self::RpcError(_) => "rpc_error",
            Self::HttpError => "http_error",
        }
    }
}

/// The fields of one usage event, filled in as the request moves through the checks.
#[derive(Debug, Clone)]
pub struct UsageEvent {
    /// The route key, once known.
    pub route: Option<String>,
    /// The JSON-RPC method, once parsed.
    pub method: Option<String>,
    /// The tool name of a tools/call.
    pub tool: Option<String>,
    /// The outcome.
    pub outcome: Outcome,
    /// The HTTP status answered.
    pub status: u16,
    /// The `guid` of the request.
    pub guid: String,
    /// The `x-request-id` of the request.
    pub request_id: String,
}

impl UsageEvent {
    /// Writes the event at `info` level to [`USAGE_TARGET`].
    pub fn emit(&self, duration: Duration) {
        let code = match self.outcome {
            Outcome::RpcError(code) => Some(code),
            _ => None,
        };
        tracing::info!(
            target: USAGE_TARGET,
            route = self.route.as_deref(),
            method = self.method.as_deref(),
            tool = self.tool.as_deref(),
            outcome = self.outcome.label(),
            status = self.status,
            code,
            duration_ms = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            guid = %self.guid,
            x_request_id = %self.request_id,
            "request"
        );
    }
}
