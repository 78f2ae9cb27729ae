//! CloudWatch metrics from the usage event: the one log line of a request becomes a CloudWatch
//! Embedded Metric Format (EMF) document, formatted by `metrique-writer-format-emf` (CONTRACT
//! U1, C6).
//!
//! The document keeps the usage fields (`route`, `method`, `tool`, `outcome`, `status`, `code`,
//! `rejection`, `era`, `protocol_version`, `cors`, `duration_ms`, `tool_ms`, `guid`, `x_request_id`,
//! `trace_id`) as top-level members for
//! CloudWatch Logs Insights, and adds, in namespace [`DEFAULT_NAMESPACE`] unless configured:
//!
//! | metric | unit | dimensions |
//! |---|---|---|
//! | `Requests` (1 per request) | Count | `Route`, `Method`, `Outcome`; and `Route` |
//! | `FailedRequests` (1 for an HTTP rejection or a JSON-RPC error, else 0) | Count | `Route`, `Method`, `Outcome`; and `Route` |
//! | `Latency` (the request's duration) | Milliseconds | `Route`, `Method`, `Outcome`; and `Route` |
//! | `RateLimited` (1 for a 429, else 0), `ColdStarts` (1 on an instance's first request, else 0) | Count | `Route` |
//! | `TasksCreated`, `TasksCompleted`, `TasksFailed`, `TasksCancelled` (1 when the request's `task_status` says so, else 0; CONTRACT K9) | Count | `Route` |
//! | `ToolCalls`, `ToolErrors` (1 or 0) | Count | `Route`, `Tool` |
//! | `ToolLatency` (the Tool Service call) | Milliseconds | `Route`, `Tool` |
//! | `PolicyDenials` (1 for a call a route's policies denied, `shadow_deny` included) | Count | `Route`, `Tool` |
//!
//! Dimension values are bounded so that no client can mint metrics: `Method` is a method the
//! gateway knows, `notification`, `other` or `none`; `Route` is a registered route or `none`;
//! `Outcome` is an outcome label; `Tool` exists only when a Tool Service was called, so it is
//! a tool of the snapshot, as is a decided call's. Tool metrics exist only for requests that reached a Tool Service:
//! an Origin rejection, for instance, is a failed request and never tool use.

use std::time::SystemTime;

use metrique_writer::format::Format as _;
use metrique_writer::unit::{AsCount, AsMilliseconds};
use metrique_writer::{Entry, EntryWriter, MetricFlags, Observation, Unit, Value, ValueWriter};
use metrique_writer_format_emf::{Emf, MetricDefinition, MetricDirective, NoMetric};

use super::event::USAGE_TARGET;
use super::record::UsageRecord;

/// The CloudWatch namespace when `MCP_METRICS_NAMESPACE` is unset.
pub const DEFAULT_NAMESPACE: &str = "McpGateway";

/// Dimensions of the request metrics (with [`ROUTE_DIMENSIONS`] as their second set, so that a
/// route's p99 and error rate are one metric each for alarms and dashboards).
pub const REQUEST_DIMENSIONS: [&str; 3] = ["Route", "Method", "Outcome"];
/// Dimensions of the per-route metrics: [`ROUTE_METRICS`], and the second set of the request
/// metrics.
pub const ROUTE_DIMENSIONS: [&str; 1] = ["Route"];
/// Dimensions of the tool metrics.
pub const TOOL_DIMENSIONS: [&str; 2] = ["Route", "Tool"];
/// The request metrics: one each per document, under [`REQUEST_DIMENSIONS`] and
/// [`ROUTE_DIMENSIONS`].
pub const REQUEST_METRICS: [&str; 3] = ["Requests", "FailedRequests", "Latency"];
/// The per-route counts, under [`ROUTE_DIMENSIONS`] only (CONTRACT U4): a 429 answer and an
/// instance's first request.
pub const ROUTE_METRICS: [&str; 6] = [
    "RateLimited",
    "ColdStarts",
    "TasksCreated",
    "TasksCompleted",
    "TasksFailed",
    "TasksCancelled",
];
/// The tool metrics, under [`TOOL_DIMENSIONS`], for requests that reached a Tool Service.
pub const TOOL_METRICS: [&str; 3] = ["ToolCalls", "ToolErrors", "ToolLatency"];
/// Metrics under `Route` and `Tool` written only for a call a route's policies denied
/// (CONTRACT Z10).
pub const POLICY_METRICS: [&str; 1] = ["PolicyDenials"];

/// A signed whole number written as a plain JSON number, never as a metric (`code`).
struct SignedProperty(i64);

impl Value for SignedProperty {
    fn write(&self, writer: impl ValueWriter) {
        // Exact for every JSON-RPC code; the formatter prints whole floats without a fraction.
        #[expect(
            clippy::cast_precision_loss,
            reason = "JSON-RPC codes are far inside f64's exact integer range"
        )]
        let value = self.0 as f64;
        writer.metric(
            [Observation::Floating(value)],
            Unit::None,
            [],
            MetricFlags::empty(),
        );
    }
}

/// One EMF document: the record at a timestamp.
struct Document<'r> {
    record: &'r UsageRecord,
    timestamp: SystemTime,
}

impl Entry for Document<'_> {
    fn write<'a>(&'a self, writer: &mut impl EntryWriter<'a>) {
        let r = self.record;
        writer.timestamp(self.timestamp);
        writer.value("level", "INFO");
        writer.value("target", USAGE_TARGET);
        writer.value("message", "request");
        for (name, value) in [
            ("route", &r.route),
            ("method", &r.method),
            ("tool", &r.tool),
            ("outcome", &r.outcome),
            ("rejection", &r.rejection),
            ("era", &r.era),
            ("protocol_version", &r.protocol_version),
            ("cors", &r.cors),
            ("guid", &r.guid),
            ("x_request_id", &r.x_request_id),
            ("auth", &r.auth),
            ("auth_outcome", &r.auth_outcome),
            ("delegation_id", &r.delegation_id),
            ("trace_id", &r.trace_id),
            ("decision", &r.decision),
            ("policies", &r.policies),
            ("task_status", &r.task_status),
        ] {
            if let Some(value) = value {
                writer.value(name, value.as_str());
            }
        }
        for (name, value) in [
            ("status", r.status),
            ("duration_ms", r.duration_ms),
            ("tool_ms", r.tool_ms),
            ("retry_after", r.retry_after),
        ] {
            if let Some(value) = value {
                writer.value(name, &NoMetric::from(value));
            }
        }
        if let Some(code) = r.code {
            writer.value("code", &NoMetric::from(SignedProperty(code)));
        }

        writer.value("Route", r.route_dimension());
        writer.value("Method", r.method_dimension());
        writer.value("Outcome", r.outcome_dimension());
        writer.value("Requests", &AsCount::from(1_u64));
        writer.value("FailedRequests", &AsCount::from(u64::from(r.is_failure())));
        writer.value(
            "Latency",
            &AsMilliseconds::from(r.duration_ms.unwrap_or_default()),
        );
        // Declared by the route directive only, under the route dimension.
        writer.value(
            "RateLimited",
            &NoMetric::from(u64::from(r.status == Some(429))),
        );
        writer.value("ColdStarts", &NoMetric::from(u64::from(r.cold_start)));
        // CONTRACT K9: tasks created, and the ends `tasks/get` read.
        for (metric, count) in r.task_counts() {
            writer.value(metric, &NoMetric::from(count));
        }
        if let (Some(tool), Some(tool_ms)) = (r.tool_dimension(), r.tool_ms) {
            // Declared by the tool directive only, under the tool dimensions.
            let failed = u64::from(r.outcome_dimension() != "ok");
            writer.value("Tool", tool);
            writer.value("ToolCalls", &NoMetric::from(1_u64));
            writer.value("ToolErrors", &NoMetric::from(failed));
            writer.value("ToolLatency", &NoMetric::from(tool_ms));
        }
        if let (true, Some(tool)) = (r.is_policy_denial(), r.tool.as_deref()) {
            // CONTRACT Z10: declared by the denial directive only; the tool is one the route's
            // policies decided on, a tool of the snapshot.
            if r.tool_dimension().is_none() {
                writer.value("Tool", tool);
            }
            writer.value("PolicyDenials", &NoMetric::from(1_u64));
        }
    }
}

/// Formats usage records as EMF documents, one JSON object per line.
pub struct EmfFormatter {
    /// Request metrics only.
    requests: Emf,
    /// Request metrics and the tool directive, for requests that called a Tool Service.
    with_tool: Emf,
    /// Request metrics and the denial directive (CONTRACT Z10).
    with_denial: Emf,
    /// Both: a call shadow mode let through although its policies denied it.
    with_tool_and_denial: Emf,
}

impl std::fmt::Debug for EmfFormatter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EmfFormatter")
    }
}

impl EmfFormatter {
    /// A formatter publishing to CloudWatch `namespace`.
    #[must_use]
    pub fn new(namespace: &str) -> Self {
        let dimensions = vec![
            REQUEST_DIMENSIONS.map(String::from).to_vec(),
            ROUTE_DIMENSIONS.map(String::from).to_vec(),
        ];
        let metric = |name, unit| MetricDefinition {
            name,
            unit,
            storage_resolution: None,
        };
        let route_directive = || MetricDirective {
            dimensions: vec![ROUTE_DIMENSIONS.to_vec()],
            metrics: ROUTE_METRICS
                .iter()
                .map(|name| metric(name, Unit::Count))
                .collect(),
            namespace,
        };
        let tool_directive = || MetricDirective {
            dimensions: vec![TOOL_DIMENSIONS.to_vec()],
            metrics: vec![
                metric("ToolCalls", Unit::Count),
                metric("ToolErrors", Unit::Count),
                metric(
                    "ToolLatency",
                    Unit::Second(metrique_writer::unit::NegativeScale::Milli),
                ),
            ],
            namespace,
        };
        let denial_directive = || MetricDirective {
            dimensions: vec![TOOL_DIMENSIONS.to_vec()],
            metrics: POLICY_METRICS
                .iter()
                .map(|name| metric(name, Unit::Count))
                .collect(),
            namespace,
        };
        let build = |tool: bool, denial: bool| {
            let mut builder = Emf::builder(namespace.to_string(), dimensions.clone())
                .directive(route_directive());
            if tool {
                builder = builder.directive(tool_directive());
            }
            if denial {
                builder = builder.directive(denial_directive());
            }
            builder.build()
        };
        Self {
            requests: build(false, false),
            with_tool: build(true, false),
            with_denial: build(false, true),
            with_tool_and_denial: build(true, true),
        }
    }

    /// Appends one EMF document for `record` at `timestamp` to `out`, ending in a newline.
    ///
    /// # Errors
    /// The formatter's message when the document breaks an EMF rule; `out` is then unchanged.
    pub fn format(
        &mut self,
        record: &UsageRecord,
        timestamp: SystemTime,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        let denial = record.is_policy_denial() && record.tool.is_some();
        let emf = match (record.tool_dimension().is_some(), denial) {
            (true, true) => &mut self.with_tool_and_denial,
            (true, false) => &mut self.with_tool,
            (false, true) => &mut self.with_denial,
            (false, false) => &mut self.requests,
        };
        let start = out.len();
        let document = Document { record, timestamp };
        if let Err(error) = emf.format(&document, out) {
            out.truncate(start);
            return Err(error.to_string());
        }
        if out.last() != Some(&b'\n') {
            out.push(b'\n');
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
