//! [`UsageRecord`]: a usage event read back from its `tracing` fields (CONTRACT U1), the input
//! of the EMF document ([`super::metrics`]).

use crate::protocol::methods;

/// A usage event as read back from its log fields (see
/// [`UsageEvent::emit`](super::UsageEvent::emit)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsageRecord {
    /// `route`.
    pub route: Option<String>,
    /// `route_checked`: `route` names a registered route.
    pub route_checked: bool,
    /// `method`.
    pub method: Option<String>,
    /// `tool`.
    pub tool: Option<String>,
    /// `tool_ms`: present only when a Tool Service was called.
    pub tool_ms: Option<u64>,
    /// `outcome`.
    pub outcome: Option<String>,
    /// `status`.
    pub status: Option<u64>,
    /// `code`: the JSON-RPC error code.
    pub code: Option<i64>,
    /// `rejection`: the `error` code of an HTTP rejection.
    pub rejection: Option<String>,
    /// `era`: `legacy` or `modern` (CONTRACT N7).
    pub era: Option<String>,
    /// `protocol_version`: the version the request speaks (CONTRACT N7).
    pub protocol_version: Option<String>,
    /// `cors`: `preflight` for a CORS preflight (CONTRACT H9).
    pub cors: Option<String>,
    /// `duration_ms`.
    pub duration_ms: Option<u64>,
    /// `guid`.
    pub guid: Option<String>,
    /// `x_request_id`.
    pub x_request_id: Option<String>,
    /// `auth`: the authentication mode, when one is on.
    pub auth: Option<String>,
    /// `auth_outcome`.
    pub auth_outcome: Option<String>,
    /// `delegation_id`.
    pub delegation_id: Option<String>,
    /// `retry_after`: seconds sent in `Retry-After`.
    pub retry_after: Option<u64>,
    /// `trace_id`: the W3C trace id of the request's span, 32 lowercase hex digits (CONTRACT
    /// U3, O1).
    pub trace_id: Option<String>,
    /// `decision`: the policies' decision on a route with policies (CONTRACT Z10).
    pub decision: Option<String>,
    /// `policies`: the determining policies' ids (CONTRACT Z10).
    pub policies: Option<String>,
    /// `task_status` of the tasks extension (CONTRACT K9).
    pub task_status: Option<String>,
    /// Whether this is the first request the instance served (the `ColdStarts` metric); set by
    /// the layer that writes the document, not a log field.
    pub cold_start: bool,
}

impl UsageRecord {
    /// The `Route` dimension: the route when it was checked against the snapshot, else `none`.
    #[must_use]
    pub fn route_dimension(&self) -> &str {
        match &self.route {
            Some(route) if self.route_checked => route,
            _ => "none",
        }
    }

    /// The `Method` dimension: a method the gateway knows, `notification` for another
    /// notification, `other` for another method, `none` when no method was read.
    #[must_use]
    pub fn method_dimension(&self) -> &str {
        match self.method.as_deref() {
            None => "none",
            Some(
                m @ (methods::INITIALIZE
                | methods::SERVER_DISCOVER
                | methods::PING
                | methods::TOOLS_LIST
                | methods::TOOLS_CALL
                | methods::TASKS_GET
                | methods::TASKS_UPDATE
                | methods::TASKS_CANCEL
                | methods::NOTIFICATION_INITIALIZED),
            ) => m,
            Some(m) if m.starts_with("notifications/") => "notification",
            Some(_) => "other",
        }
    }

    /// The `Outcome` dimension: `ok`, `tool_error`, `rpc_error`, `http_error` (else `none`).
    #[must_use]
    pub fn outcome_dimension(&self) -> &str {
        match self.outcome.as_deref() {
            Some(o @ ("ok" | "tool_error" | "rpc_error" | "http_error")) => o,
            _ => "none",
        }
    }

    /// The `Tool` dimension: the tool name when a Tool Service was called, else `None`.
    #[must_use]
    pub fn tool_dimension(&self) -> Option<&str> {
        self.tool_ms.and(self.tool.as_deref())
    }

    /// Whether a route's policies denied the call (or would have, in shadow mode): the
    /// `PolicyDenials` metric (CONTRACT Z10).
    #[must_use]
    pub fn is_policy_denial(&self) -> bool {
        matches!(
            self.decision.as_deref(),
            Some("deny" | "error" | "shadow_deny")
        )
    }

    /// The task counts of this request (CONTRACT K9): `TasksCreated`, `TasksCompleted`,
    /// `TasksFailed`, `TasksCancelled`, each 1 when its `task_status` says so, else 0.
    #[must_use]
    pub fn task_counts(&self) -> [(&'static str, u64); 4] {
        let status = self.task_status.as_deref();
        [
            ("TasksCreated", "created"),
            ("TasksCompleted", "completed"),
            ("TasksFailed", "failed"),
            ("TasksCancelled", "cancelled"),
        ]
        .map(|(metric, label)| (metric, u64::from(status == Some(label))))
    }

    pub(super) fn is_failure(&self) -> bool {
        matches!(self.outcome_dimension(), "rpc_error" | "http_error")
    }
}

impl tracing::field::Visit for UsageRecord {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        let slot = match field.name() {
            "route" => &mut self.route,
            "method" => &mut self.method,
            "tool" => &mut self.tool,
            "outcome" => &mut self.outcome,
            "rejection" => &mut self.rejection,
            "era" => &mut self.era,
            "protocol_version" => &mut self.protocol_version,
            "cors" => &mut self.cors,
            "guid" => &mut self.guid,
            "x_request_id" => &mut self.x_request_id,
            "auth" => &mut self.auth,
            "auth_outcome" => &mut self.auth_outcome,
            "delegation_id" => &mut self.delegation_id,
            "trace_id" => &mut self.trace_id,
            "decision" => &mut self.decision,
            "policies" => &mut self.policies,
            "task_status" => &mut self.task_status,
            _ => return,
        };
        *slot = Some(value.to_string());
    }

    fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
        match field.name() {
            "tool_ms" => self.tool_ms = Some(value),
            "status" => self.status = Some(value),
            "duration_ms" => self.duration_ms = Some(value),
            "retry_after" => self.retry_after = Some(value),
            "code" => self.code = i64::try_from(value).ok(),
            _ => {}
        }
    }

    fn record_i64(&mut self, field: &tracing::field::Field, value: i64) {
        if field.name() == "code" {
            self.code = Some(value);
        } else if let Ok(value) = u64::try_from(value) {
            self.record_u64(field, value);
        }
    }

    fn record_bool(&mut self, field: &tracing::field::Field, value: bool) {
        if field.name() == "route_checked" {
            self.route_checked = value;
        }
    }

    fn record_debug(&mut self, _field: &tracing::field::Field, _value: &dyn std::fmt::Debug) {}
}
