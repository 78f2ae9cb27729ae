//! The usage event: the facts of one request, filled in as it moves through the checks and
//! written once as a `tracing` event (CONTRACT U1, C6).

use std::time::Duration;

use crate::protocol::Era;
use crate::text::prefix_within;

/// The `target` of usage events, for log filters.
pub const USAGE_TARGET: &str = "mcp_gateway::usage";

/// Longest method or tool name written to the log, in bytes; longer names are cut there (a
/// client chooses them, and one request must not make a megabyte log line).
pub const MAX_LOGGED_NAME_BYTES: usize = 128;

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

    /// Whether the gateway failed the request: an HTTP rejection (405 included, CONTRACT H1) or
    /// a JSON-RPC error. A tool's own failure (`isError: true`) is a served request.
    #[must_use]
    pub fn is_failure(self) -> bool {
        matches!(self, Self::RpcError(_) | Self::HttpError)
    }
}

/// The tool part of a `tools/call`: its name once read, and the Tool Service call's duration
/// once the call was made. A request that never reached a Tool Service has no `tool_ms`, so
/// it is never counted as tool use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolUse {
    /// `params.name` of a `tools/call`.
    pub name: Option<String>,
    /// Whole milliseconds the Tool Service call took, when it was made: the usage event's
    /// `tool_ms`, the result's `searchTime` (CONTRACT U1, X5).
    pub tool_ms: Option<u64>,
    /// The call as its CLIENT span records it (CONTRACT O4), when a Tool Service was called.
    pub span: Option<crate::trace::ToolCallSpan>,
    /// `decision` on a route with authorization policies: `allow`, `deny`, `shadow_deny` or
    /// `error` (CONTRACT Z10).
    pub decision: Option<&'static str>,
    /// `policies`: the ids of the determining policies, space separated (CONTRACT Z10); never
    /// an argument value.
    pub policies: Option<String>,
    /// `task_status` of the tasks extension (CONTRACT K9): `created` for a `tools/call` that
    /// returned a task; the status a `tasks/get` read (`working`, `completed`, `failed`,
    /// `cancelled`); `cancel_requested` for a `tasks/cancel`.
    pub task_status: Option<&'static str>,
}

/// The fields of one usage event, filled in as the request moves through the checks.
#[derive(Debug, Clone)]
pub struct UsageEvent {
    /// The route key, once read from the path.
    pub route: Option<String>,
    /// Whether `route` was checked against the snapshot (or is the fixed route), so that it
    /// names a registered route and may serve as a metric dimension.
    pub route_checked: bool,
    /// The JSON-RPC method, once parsed.
    pub method: Option<String>,
    /// The tool of a tools/call.
    pub tool: ToolUse,
    /// The outcome.
    pub outcome: Outcome,
    /// The HTTP status answered.
    pub status: u16,
    /// The `error` code of an HTTP rejection (`origin_not_allowed`, `payload_too_large` …).
    pub rejection: Option<&'static str>,
    /// The `guid` of the request.
    pub guid: String,
    /// The `x-request-id` of the request.
    pub request_id: String,
    /// `era`: `legacy` or `modern`, once the body (or its header) told (CONTRACT N7).
    pub era: Option<Era>,
    /// `protocol_version`: the version the request speaks, when it names one (CONTRACT N7).
    pub protocol_version: Option<String>,
    /// `cors`: `preflight` for a CORS preflight (CONTRACT H9), which never reaches a method.
    pub cors: Option<&'static str>,
    /// `auth`: the authentication mode, when one is on.
    pub auth: Option<&'static str>,
    /// `auth_outcome`, `delegation_id`, `retry_after` of the authentication chain; never a
    /// token, hash or claim (CONTRACT C6).
    pub auth_record: crate::auth::AuthRecord,
    /// `trace_id`: the request's W3C trace id, 32 lowercase hex digits (CONTRACT U3).
    pub trace_id: Option<String>,
}

impl UsageEvent {
    /// A new event for a request with these correlation values: outcome `ok`, status 200,
    /// nothing else known yet.
    #[must_use]
    pub fn new(guid: String, request_id: String) -> Self {
        Self {
            route: None,
            route_checked: false,
            method: None,
            tool: ToolUse::default(),
            outcome: Outcome::Ok,
            status: 200,
            rejection: None,
            guid,
            request_id,
            era: None,
            protocol_version: None,
            cors: None,
            auth: None,
            auth_record: crate::auth::AuthRecord::default(),
            trace_id: None,
        }
    }

    /// Writes the event at `info` level to [`USAGE_TARGET`]: `route`, `route_checked`,
    /// `method`, `tool`, `tool_ms`, `outcome`, `status`, `code`, `rejection`, `era`,
    /// `protocol_version`, `cors`, `duration_ms`,
    /// `guid`, `x_request_id`, `trace_id` (CONTRACT U3), and with authentication on `auth`, `auth_outcome`,
    /// `delegation_id`, `retry_after` (seconds), on a route with policies `decision` and
    /// `policies` (CONTRACT Z10), and for the tasks extension `task_status` (K9). Absent values are left out. With
    /// [`LogFormat::Json`](crate::telemetry::LogFormat::Json) it becomes one EMF document
    /// ([`super::UsageMetricsLayer`]).
    pub fn emit(&self, duration: Duration) {
        let code = match self.outcome {
            Outcome::RpcError(code) => Some(code),
            _ => None,
        };
        tracing::info!(
            target: USAGE_TARGET,
            route = self.route.as_deref(),
            route_checked = self.route_checked,
            method = self.method.as_deref().map(capped),
            tool = self.tool.name.as_deref().map(capped),
            tool_ms = self.tool.tool_ms,
            outcome = self.outcome.label(),
            status = self.status,
            code,
            rejection = self.rejection,
            era = self.era.map(Era::label),
            protocol_version = self.protocol_version.as_deref().map(capped),
            cors = self.cors,
            duration_ms = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            guid = self.guid.as_str(),
            x_request_id = self.request_id.as_str(),
            auth = self.auth,
            auth_outcome = self.auth.map(|_| self.auth_record.outcome),
            delegation_id = self.auth_record.delegation_id.as_deref(),
            retry_after = self.auth_record.retry_after_s,
            trace_id = self.trace_id.as_deref(),
            decision = self.tool.decision,
            policies = self.tool.policies.as_deref(),
            task_status = self.tool.task_status,
            "request"
        );
    }
}

/// `name` cut to at most [`MAX_LOGGED_NAME_BYTES`] on a character boundary.
fn capped(name: &str) -> &str {
    prefix_within(name, MAX_LOGGED_NAME_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u1_logged_names_are_capped_on_a_character_boundary() {
        assert_eq!(capped("tools/call"), "tools/call");
        let long = "é".repeat(100);
        let cut = capped(&long);
        assert!(cut.len() <= MAX_LOGGED_NAME_BYTES);
        assert_eq!(cut.len(), 128);
        let odd = format!("a{long}");
        assert_eq!(capped(&odd).len(), 127);
    }

    #[test]
    fn u1_http_rejections_and_rpc_errors_are_failures_tool_errors_are_not() {
        assert!(Outcome::HttpError.is_failure());
        assert!(Outcome::RpcError(-32602).is_failure());
        assert!(!Outcome::ToolError.is_failure());
        assert!(!Outcome::Ok.is_failure());
    }
}
