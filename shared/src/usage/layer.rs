//! The `tracing` layer that writes each usage event as one EMF document line (CONTRACT U1).
//!
//! Every other event goes to the ordinary JSON formatter; this layer takes only events of
//! [`USAGE_TARGET`], reads their fields back into a [`UsageRecord`] and writes the document with
//! one `write_all`, so lines from concurrent requests never interleave. Should a document ever
//! break an EMF rule, the fields are still written as a plain JSON line: the event is never lost.

use std::io::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::{Context, Layer};

use super::event::USAGE_TARGET;
use super::metrics::EmfFormatter;
use super::record::UsageRecord;

/// Writes usage events as EMF documents to a [`MakeWriter`] (stdout in the functions).
pub struct UsageMetricsLayer<W> {
    make_writer: W,
    formatter: Mutex<EmfFormatter>,
    /// Set until the first usage event: that request is the instance's cold start.
    first: AtomicBool,
}

impl<W> std::fmt::Debug for UsageMetricsLayer<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UsageMetricsLayer")
    }
}

impl<W> UsageMetricsLayer<W> {
    /// A layer publishing metrics to CloudWatch `namespace`, writing lines to `make_writer`.
    #[must_use]
    pub fn new(namespace: &str, make_writer: W) -> Self {
        Self {
            make_writer,
            formatter: Mutex::new(EmfFormatter::new(namespace)),
            first: AtomicBool::new(true),
        }
    }

    fn render(&self, record: &UsageRecord) -> Vec<u8> {
        let mut line = Vec::with_capacity(1024);
        let mut formatter = self
            .formatter
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Err(error) = formatter.format(record, SystemTime::now(), &mut line) {
            line = plain_line(record, &error);
        }
        line
    }
}

/// The record as a plain JSON line, with the EMF error that prevented the document.
fn plain_line(record: &UsageRecord, error: &str) -> Vec<u8> {
    let value = serde_json::json!({
        "level": "INFO",
        "target": USAGE_TARGET,
        "message": "request",
        "route": record.route,
        "method": record.method,
        "tool": record.tool,
        "tool_ms": record.tool_ms,
        "outcome": record.outcome,
        "status": record.status,
        "code": record.code,
        "rejection": record.rejection,
        "era": record.era,
        "protocol_version": record.protocol_version,
        "cors": record.cors,
        "duration_ms": record.duration_ms,
        "guid": record.guid,
        "x_request_id": record.x_request_id,
        "auth": record.auth,
        "auth_outcome": record.auth_outcome,
        "delegation_id": record.delegation_id,
        "retry_after": record.retry_after,
        "trace_id": record.trace_id,
        "emf_error": error,
    });
    let mut line = value.to_string().into_bytes();
    line.push(b'\n');
    line
}

impl<S, W> Layer<S> for UsageMetricsLayer<W>
where
    S: Subscriber,
    W: for<'a> MakeWriter<'a> + 'static,
{
    fn on_event(&self, event: &Event<'_>, _context: Context<'_, S>) {
        if event.metadata().target() != USAGE_TARGET {
            return;
        }
        let mut record = UsageRecord::default();
        event.record(&mut record);
        record.cold_start = self.first.swap(false, Ordering::Relaxed);
        let line = self.render(&record);
        // A log line that cannot be written has nowhere else to go.
        let _ = self.make_writer.make_writer().write_all(&line);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use serde_json::Value;
    use tracing_subscriber::layer::SubscriberExt as _;

    use super::*;
    use crate::usage::{Outcome, ToolUse, UsageEvent};

    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn lines_of(emit: impl FnOnce()) -> Vec<Value> {
        let buffer = Buffer::default();
        let sink = buffer.clone();
        let subscriber = tracing_subscriber::registry()
            .with(UsageMetricsLayer::new("TestNs", move || sink.clone()));
        tracing::subscriber::with_default(subscriber, emit);
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn u1_the_usage_event_becomes_exactly_one_emf_line_with_every_field() {
        let mut event = UsageEvent::new(
            "0b5e7c0a-1d2e-4f3a-9b8c-7d6e5f4a3b2c".into(),
            "req-7".into(),
        );
        event.route = Some("core".into());
        event.route_checked = true;
        event.method = Some("tools/call".into());
        event.tool = ToolUse {
            name: Some("search_documents".into()),
            tool_ms: Some(3),
            ..ToolUse::default()
        };
        event.trace_id = Some("4bf92f3577b34da6a3ce929d0e0e4736".into());
        event.era = Some(crate::protocol::Era::Modern);
        event.protocol_version = Some("2026-07-28".into());
        let lines = lines_of(|| {
            event.emit(Duration::from_millis(9));
            tracing::info!(target: "mcp_gateway::other", "not a usage event");
        });
        assert_eq!(lines.len(), 1, "{lines:?}");
        let doc = &lines[0];
        assert_eq!(doc["route"], "core");
        assert_eq!(doc["method"], "tools/call");
        assert_eq!(doc["tool"], "search_documents");
        assert_eq!(doc["tool_ms"], 3);
        assert_eq!(doc["outcome"], "ok");
        assert_eq!(doc["status"], 200);
        assert_eq!(doc["duration_ms"], 9);
        assert_eq!(doc["guid"], "0b5e7c0a-1d2e-4f3a-9b8c-7d6e5f4a3b2c");
        assert_eq!(doc["x_request_id"], "req-7");
        // CONTRACT U3.
        assert_eq!(doc["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
        // CONTRACT N7.
        assert_eq!(doc["era"], "modern");
        assert_eq!(doc["protocol_version"], "2026-07-28");
        assert_eq!(doc["ToolCalls"], 1);
        assert_eq!(doc["ToolErrors"], 0);
        assert_eq!(doc["Route"], "core");
        assert!(doc["_aws"]["CloudWatchMetrics"].is_array());
    }

    #[test]
    fn u1_a_rejection_is_logged_with_its_code_status_and_negative_rpc_codes() {
        let mut rejected = UsageEvent::new("g".into(), "r".into());
        rejected.outcome = Outcome::HttpError;
        rejected.status = 413;
        rejected.rejection = Some("payload_too_large");
        let mut rpc = UsageEvent::new("g".into(), "r2".into());
        rpc.outcome = Outcome::RpcError(-32700);
        let lines = lines_of(|| {
            rejected.emit(Duration::ZERO);
            rpc.emit(Duration::ZERO);
        });
        assert_eq!(lines[0]["rejection"], "payload_too_large");
        assert_eq!(lines[0]["status"], 413);
        assert_eq!(lines[0]["FailedRequests"], 1);
        assert!(lines[0].get("ToolCalls").is_none());
        assert_eq!(lines[1]["code"], -32700);
        assert_eq!(lines[1]["outcome"], "rpc_error");
    }
}
