//! CONTRACT N7: the usage event (U1) records the era and the protocol version of each request.
//!
//! A test binary of its own: it installs a `tracing` subscriber for its thread, which other
//! tests running beside it in one binary would race with for the callsite's cached interest.

use std::sync::{Arc, Mutex};

use gateway_tests::{Harness, request, rpc};
use serde_json::{Map, Value, json};
use tracing_subscriber::fmt::MakeWriter;

const MODERN: &str = "2026-07-28";

fn modern_body(id: i64, version: &str) -> String {
    rpc(
        json!(id),
        "tools/list",
        json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {}
        }}),
    )
    .to_string()
}

async fn send_modern(h: &Harness, version: &str, body: String) {
    let headers = [
        ("content-type", "application/json"),
        ("mcp-protocol-version", version),
        ("mcp-method", "tools/list"),
    ];
    h.send(request("POST", "/mcp/core", &headers, body)).await;
}

/// Log lines written by the gateway while a test runs (JSON, one per line).
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Lines {
    type Writer = Self;

    fn make_writer(&'a self) -> Self {
        self.clone()
    }
}

impl Lines {
    fn usage_events(&self) -> Vec<Map<String, Value>> {
        let text = String::from_utf8(self.0.lock().unwrap().clone()).unwrap();
        text.lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|event| event["target"] == "mcp_gateway::usage")
            .filter_map(|event| event["fields"].as_object().cloned())
            .collect()
    }
}

#[tokio::test]
async fn n7_the_usage_event_records_era_and_protocol_version() {
    let lines = Lines::default();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_writer(lines.clone())
        .finish();
    let _guard = tracing_subscriber::util::SubscriberInitExt::set_default(subscriber);
    let h = Harness::fixed().await;
    h.post("/mcp/core", &rpc(json!(1), "tools/list", Value::Null), &[])
        .await;
    let init = rpc(json!(2), "initialize", json!({}));
    h.send(request(
        "POST",
        "/mcp/core",
        &[("content-type", "application/json")],
        init.to_string(),
    ))
    .await;
    send_modern(&h, MODERN, modern_body(3, MODERN)).await;
    send_modern(&h, "2027-01-01", modern_body(4, "2027-01-01")).await;
    send_modern(&h, MODERN, "{".into()).await;

    let events = lines.usage_events();
    let seen: Vec<(Value, Value, Value)> = events
        .iter()
        .map(|e| {
            (
                e.get("era").cloned().unwrap_or(Value::Null),
                e.get("protocol_version").cloned().unwrap_or(Value::Null),
                e.get("status").cloned().unwrap_or(Value::Null),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            (json!("legacy"), json!("2025-11-25"), json!(200)),
            (json!("legacy"), Value::Null, json!(200)),
            (json!("modern"), json!(MODERN), json!(200)),
            (json!("modern"), json!("2027-01-01"), json!(400)),
            (json!("modern"), json!(MODERN), json!(400)),
        ],
        "{events:?}"
    );
}
