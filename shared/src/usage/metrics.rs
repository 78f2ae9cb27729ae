//! CloudWatch metrics from the usage event: the one log line of a request becomes a CloudWatch
//! Embedded Metric Format (EMF) document, formatted by `metrique-writer-format-emf` (CONTRACT
//! U1, C6).
//!
//! The document keeps the usage fields (`route`, `method`, `tool`, `outcome`, `status`, `code`,
//! `rejection`, `duration_ms`, `tool_ms`, `guid`, `x_request_id`) as top-level members for
//! CloudWatch Logs Insights, and adds, in namespace [`DEFAULT_NAMESPACE`] unless configured:
//!
//! | metric | unit | dimensions |
//! |---|---|---|
//! | `Requests` (1 per request) | Count | `Route`, `Method`, `Outcome` |
//! | `FailedRequests` (1 for an HTTP rejection or a JSON-RPC error, else 0) | Count | `Route`, `Method`, `Outcome` |
//! | `Latency` (the request's duration) | Milliseconds | `Route`, `Method`, `Outcome` |
//! | `ToolCalls`, `ToolErrors` (1 or 0) | Count | `Route`, `Tool` |
//! | `ToolLatency` (the Tool Service call) | Milliseconds | `Route`, `Tool` |
//!
//! Dimension values are bounded so that no client can mint metrics: `Method` is a method the
//! gateway knows, `notification`, `other` or `none`; `Route` is a registered route or `none`;
//! `Outcome` is an outcome label; `Tool` exists only when a Tool Service was called, so it is
//! a tool of the snapshot. Tool metrics exist only for requests that reached a Tool Service:
//! an Origin rejection, for instance, is a failed request and never tool use.

use std::time::SystemTime;

use metrique_writer::format::Format as _;
use metrique_writer::unit::{AsCount, AsMilliseconds};
use metrique_writer::{Entry, EntryWriter, MetricFlags, Observation, Unit, Value, ValueWriter};
use metrique_writer_format_emf::{Emf, MetricDefinition, MetricDirective, NoMetric};

use super::event::USAGE_TARGET;
use crate::protocol::methods;

/// The CloudWatch namespace when `MCP_METRICS_NAMESPACE` is unset.
pub const DEFAULT_NAMESPACE: &str = "McpGateway";

/// Dimensions of the request metrics.
const REQUEST_DIMENSIONS: [&str; 3] = ["Route", "Method", "Outcome"];
/// Dimensions of the tool metrics.
const TOOL_DIMENSIONS: [&str; 2] = ["Route", "Tool"];

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
                | methods::PING
                | methods::TOOLS_LIST
                | methods::TOOLS_CALL
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

    fn is_failure(&self) -> bool {
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
            "guid" => &mut self.guid,
            "x_request_id" => &mut self.x_request_id,
            "auth" => &mut self.auth,
            "auth_outcome" => &mut self.auth_outcome,
            "delegation_id" => &mut self.delegation_id,
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
            ("guid", &r.guid),
            ("x_request_id", &r.x_request_id),
            ("auth", &r.auth),
            ("auth_outcome", &r.auth_outcome),
            ("delegation_id", &r.delegation_id),
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
        if let (Some(tool), Some(tool_ms)) = (r.tool_dimension(), r.tool_ms) {
            // Declared by the tool directive only, under the tool dimensions.
            let failed = u64::from(r.outcome_dimension() != "ok");
            writer.value("Tool", tool);
            writer.value("ToolCalls", &NoMetric::from(1_u64));
            writer.value("ToolErrors", &NoMetric::from(failed));
            writer.value("ToolLatency", &NoMetric::from(tool_ms));
        }
    }
}

/// Formats usage records as EMF documents, one JSON object per line.
pub struct EmfFormatter {
    /// Request metrics only.
    requests: Emf,
    /// Request metrics and the tool directive, for requests that called a Tool Service.
    with_tool: Emf,
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
        let dimensions = vec![REQUEST_DIMENSIONS.map(String::from).to_vec()];
        let requests = Emf::builder(namespace.to_string(), dimensions.clone()).build();
        let metric = |name, unit| MetricDefinition {
            name,
            unit,
            storage_resolution: None,
        };
        let with_tool = Emf::builder(namespace.to_string(), dimensions)
            .directive(MetricDirective {
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
            })
            .build();
        Self {
            requests,
            with_tool,
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
        let emf = if record.tool_dimension().is_some() {
            &mut self.with_tool
        } else {
            &mut self.requests
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
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use serde_json::{Value, json};

    use super::*;

    fn record() -> UsageRecord {
        UsageRecord {
            route: Some("core".into()),
            route_checked: true,
            method: Some("tools/call".into()),
            tool: Some("search_documents".into()),
            tool_ms: Some(12),
            outcome: Some("tool_error".into()),
            status: Some(200),
            code: None,
            rejection: None,
            duration_ms: Some(15),
            guid: Some("4f1c2a9e-8b7d-4e6f-a5c4-3b2a1f0e9d8c".into()),
            x_request_id: Some("req-1".into()),
            ..UsageRecord::default()
        }
    }

    fn document(record: &UsageRecord) -> Value {
        let mut out = Vec::new();
        EmfFormatter::new("TestNs")
            .format(
                record,
                UNIX_EPOCH + Duration::from_millis(1_700_000_000_123),
                &mut out,
            )
            .expect("a valid EMF document");
        let text = String::from_utf8(out).unwrap();
        assert!(text.ends_with('\n'), "one line: {text}");
        assert_eq!(text.matches('\n').count(), 1, "one line: {text}");
        serde_json::from_str(&text).unwrap()
    }

    /// Checks a document against the EMF specification: `_aws` with an integer `Timestamp` and
    /// `CloudWatchMetrics` directives whose every dimension is a top-level string member and
    /// whose every metric is a top-level number; at most 30 dimensions per set and 100 metrics
    /// per directive.
    fn assert_emf_spec(doc: &Value) {
        let aws = &doc["_aws"];
        assert!(aws["Timestamp"].is_u64(), "{doc}");
        let directives = aws["CloudWatchMetrics"].as_array().expect("directives");
        assert!(!directives.is_empty());
        for directive in directives {
            assert!(
                directive["Namespace"]
                    .as_str()
                    .is_some_and(|n| !n.is_empty())
            );
            for set in directive["Dimensions"].as_array().unwrap() {
                let set = set.as_array().unwrap();
                assert!(set.len() <= 30);
                for name in set {
                    let name = name.as_str().unwrap();
                    assert!(doc[name].is_string(), "dimension {name} is a string: {doc}");
                }
            }
            let metrics = directive["Metrics"].as_array().unwrap();
            assert!(metrics.len() <= 100);
            for metric in metrics {
                let name = metric["Name"].as_str().unwrap();
                assert!(doc[name].is_number(), "metric {name} is a number: {doc}");
            }
        }
    }

    fn declared(doc: &Value) -> Vec<(Vec<String>, String, String)> {
        let mut out = Vec::new();
        for directive in doc["_aws"]["CloudWatchMetrics"].as_array().unwrap() {
            for set in directive["Dimensions"].as_array().unwrap() {
                let dims: Vec<String> = set
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_str().unwrap().to_string())
                    .collect();
                for metric in directive["Metrics"].as_array().unwrap() {
                    out.push((
                        dims.clone(),
                        metric["Name"].as_str().unwrap().to_string(),
                        metric["Unit"].as_str().unwrap_or("None").to_string(),
                    ));
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn u1_a_tool_call_is_one_emf_document_with_request_and_tool_metrics() {
        let doc = document(&record());
        assert_emf_spec(&doc);
        assert_eq!(doc["_aws"]["Timestamp"], 1_700_000_000_123_u64);
        assert_eq!(
            doc["_aws"]["CloudWatchMetrics"][0]["Namespace"],
            json!("TestNs")
        );
        let request_dims = vec!["Route".to_string(), "Method".into(), "Outcome".into()];
        let tool_dims = vec!["Route".to_string(), "Tool".into()];
        assert_eq!(
            declared(&doc),
            vec![
                (
                    request_dims.clone(),
                    "FailedRequests".into(),
                    "Count".into()
                ),
                (
                    request_dims.clone(),
                    "Latency".into(),
                    "Milliseconds".into()
                ),
                (request_dims, "Requests".into(), "Count".into()),
                (tool_dims.clone(), "ToolCalls".into(), "Count".into()),
                (tool_dims.clone(), "ToolErrors".into(), "Count".into()),
                (tool_dims, "ToolLatency".into(), "Milliseconds".into()),
            ]
        );
        // The Logs Insights fields, as logged.
        for (field, value) in [
            ("target", json!("mcp_gateway::usage")),
            ("route", json!("core")),
            ("method", json!("tools/call")),
            ("tool", json!("search_documents")),
            ("outcome", json!("tool_error")),
            ("status", json!(200)),
            ("duration_ms", json!(15)),
            ("tool_ms", json!(12)),
            ("guid", json!("4f1c2a9e-8b7d-4e6f-a5c4-3b2a1f0e9d8c")),
            ("x_request_id", json!("req-1")),
        ] {
            assert_eq!(doc[field], value, "{field}: {doc}");
        }
        // The metric values.
        for (field, value) in [
            ("Route", json!("core")),
            ("Method", json!("tools/call")),
            ("Outcome", json!("tool_error")),
            ("Tool", json!("search_documents")),
            ("Requests", json!(1)),
            ("FailedRequests", json!(0)),
            ("Latency", json!(15)),
            ("ToolCalls", json!(1)),
            ("ToolErrors", json!(1)),
            ("ToolLatency", json!(12)),
        ] {
            assert_eq!(doc[field], value, "{field}: {doc}");
        }
    }

    #[test]
    fn u1_h5_an_origin_rejection_is_a_failed_request_and_never_tool_use() {
        let record = UsageRecord {
            outcome: Some("http_error".into()),
            status: Some(403),
            rejection: Some("origin_not_allowed".into()),
            duration_ms: Some(0),
            guid: Some("g".into()),
            x_request_id: Some("r".into()),
            ..UsageRecord::default()
        };
        let doc = document(&record);
        assert_emf_spec(&doc);
        assert_eq!(doc["Requests"], 1);
        assert_eq!(doc["FailedRequests"], 1);
        assert_eq!(doc["Outcome"], "http_error");
        assert_eq!(doc["Route"], "none");
        assert_eq!(doc["Method"], "none");
        assert_eq!(doc["rejection"], "origin_not_allowed");
        assert_eq!(doc["status"], 403);
        assert_eq!(
            doc["_aws"]["CloudWatchMetrics"].as_array().unwrap().len(),
            1
        );
        for absent in [
            "Tool",
            "ToolCalls",
            "ToolErrors",
            "ToolLatency",
            "tool",
            "tool_ms",
        ] {
            assert!(doc.get(absent).is_none(), "{absent}: {doc}");
        }
    }

    #[test]
    fn u1_rpc_errors_carry_their_negative_code_as_a_number_and_count_as_failed() {
        let record = UsageRecord {
            outcome: Some("rpc_error".into()),
            code: Some(-32602),
            // The tool was named but never called: not tool use.
            tool_ms: None,
            ..record()
        };
        let doc = document(&record);
        assert_emf_spec(&doc);
        assert_eq!(doc["code"], json!(-32602));
        assert_eq!(doc["FailedRequests"], 1);
        assert_eq!(doc["tool"], "search_documents");
        assert!(doc.get("ToolCalls").is_none(), "{doc}");
        let names: Vec<String> = declared(&doc).into_iter().map(|d| d.1).collect();
        assert_eq!(names, ["FailedRequests", "Latency", "Requests"]);
    }

    #[test]
    fn u1_dimension_values_are_bounded_whatever_the_client_sends() {
        let mut record = UsageRecord {
            method: Some("x".repeat(100)),
            ..record()
        };
        assert_eq!(record.method_dimension(), "other");
        record.method = Some("notifications/cancelled".into());
        assert_eq!(record.method_dimension(), "notification");
        record.method = Some("notifications/initialized".into());
        assert_eq!(record.method_dimension(), "notifications/initialized");
        record.route_checked = false;
        assert_eq!(record.route_dimension(), "none");
        record.outcome = Some("whatever".into());
        assert_eq!(record.outcome_dimension(), "none");
        record.tool_ms = None;
        assert_eq!(record.tool_dimension(), None);
    }

    #[test]
    fn c6_strings_are_json_escaped_inside_the_document() {
        let record = UsageRecord {
            method: Some("a\"b\\c\nd\u{0}é".into()),
            ..record()
        };
        let doc = document(&record);
        assert_eq!(doc["method"], "a\"b\\c\nd\u{0}é");
        assert_eq!(doc["Method"], "other");
    }
}
