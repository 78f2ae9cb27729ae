//! CONTRACT N7: the usage event (U1) records the era and the protocol version of each request.
//! CONTRACT X12: no secret of an outbound credential reaches any log line, at any level, nor the
//! usage event or the answer.
//! CONTRACT Z10: on a route with policies, the decision and the determining policies' ids.
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
    /// The JSON lines the gateway writes on this thread at `info`, until the guard drops.
    fn capture() -> (Self, impl Drop) {
        let lines = Self::default();
        let subscriber = tracing_subscriber::fmt()
            .json()
            .with_writer(lines.clone())
            .finish();
        let guard = tracing_subscriber::util::SubscriberInitExt::set_default(subscriber);
        (lines, guard)
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }

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
    let (lines, _guard) = Lines::capture();
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

/// A secret value no log line, usage event or answer may hold (CONTRACT X12).
const CANARY: &str = "canary-7f3e9c1d";

#[tokio::test]
async fn x12_secret_values_never_reach_logs_at_trace_level_usage_events_or_answers() {
    use std::sync::Arc;

    use base64::Engine as _;
    use gateway_tests::manifest;
    use mcp_gateway::invoke::HttpInvoker;
    use mcp_gateway::registry::compile_manifest;
    use mcp_gateway::{Config, Gateway};
    use wiremock::matchers::{any, header, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let lines = Lines::default();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_max_level(tracing_subscriber::filter::LevelFilter::TRACE)
        .with_writer(lines.clone())
        .finish();
    let _guard = tracing_subscriber::util::SubscriberInitExt::set_default(subscriber);

    let secret = json!({"api_key": CANARY, "username": "svc", "password": CANARY,
                        "client_id": "app", "client_secret": CANARY})
    .to_string();
    let idp = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"access_token": format!("tok-{CANARY}"), "token_type": "Bearer"}),
        ))
        .mount(&idp)
        .await;
    let store = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"SecretString": secret})))
        .mount(&store)
        .await;
    let tool_service = MockServer::start().await;
    // The query-keyed tool is refused once (401), then answers with an error naming its URL.
    Mock::given(path("/refused"))
        .respond_with(ResponseTemplate::new(401).set_body_string("no"))
        .mount(&tool_service)
        .await;
    Mock::given(header("x-api-key", CANARY))
        .respond_with(ResponseTemplate::new(200).set_body_string("ok"))
        .mount(&tool_service)
        .await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(500).set_body_string("failed"))
        .mount(&tool_service)
        .await;
    let arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tools/k-AbCdEf";
    let mut document = manifest(&tool_service.uri());
    let tools = document["routes"][0]["tools"].as_array_mut().unwrap();
    for (name, endpoint, auth) in [
        (
            "in_header",
            "/h",
            json!({"type": "apiKey", "in": "header", "name": "X-Api-Key",
                                   "secret": format!("{arn}#api_key")}),
        ),
        (
            "in_query",
            "/refused",
            json!({"type": "apiKey", "in": "query", "name": "key",
                                        "secret": format!("{arn}#api_key")}),
        ),
        ("basic", "/b", json!({"type": "basic", "secret": arn})),
        (
            "oauth",
            "/o",
            json!({"type": "oauth2ClientCredentials", "secret": arn,
                               "tokenUrl": format!("{}/token", idp.uri())}),
        ),
        (
            "missing",
            "/m",
            json!({"type": "apiKey", "in": "header", "name": "X-Api-Key",
                                 "secret": format!("{arn}#nope")}),
        ),
    ] {
        tools.push(json!({"name": name, "inputSchema": {"type": "object"},
            "_meta": {"endpoint": format!("{}{endpoint}", tool_service.uri()), "auth": auth}}));
    }
    // The list and the search show these tools too: neither may carry a secret or its ARN.
    document["routes"][0]["toolSearch"] = json!({"mode": "add"});
    let mut config = Config::fixed_defaults();
    config.secrets_manager_endpoint = Some(store.uri());
    let invoker = HttpInvoker::from_config(&config)
        .unwrap()
        .with_aws_credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
    let h = Harness {
        gateway: Arc::new(Gateway::new(
            config,
            Ok(compile_manifest(&document).unwrap()),
            invoker,
        )),
        tool_service,
    };
    let mut answers = String::new();
    for name in ["in_header", "in_query", "basic", "oauth", "missing"] {
        let body = rpc(
            json!(1),
            "tools/call",
            json!({"name": name, "arguments": {}}),
        );
        let answer = h.post("/mcp/core", &body, &[]).await;
        answers.push_str(&String::from_utf8_lossy(&answer.body));
    }
    assert!(answers.contains(r#""text":"ok""#), "{answers}");
    for (method, params) in [
        ("tools/list", json!({})),
        (
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": "in header query basic oauth missing", "limit": 10}}),
        ),
    ] {
        let answer = h
            .post("/mcp/core", &rpc(json!(2), method, params), &[])
            .await;
        let text = String::from_utf8_lossy(&answer.body).into_owned();
        assert!(text.contains(r#""name":"in_header""#), "{text}");
        answers.push_str(&text);
    }
    let logs = lines.text();
    assert!(logs.contains("TRACE"), "trace lines were captured");
    assert_eq!(lines.usage_events().len(), 7);
    assert_eq!(idp.received_requests().await.unwrap().len(), 1);
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("svc:{CANARY}"));
    for hidden in [CANARY, basic.as_str(), "123456789012"] {
        assert!(!logs.contains(hidden), "{hidden} in a log line");
        assert!(
            !answers.contains(hidden),
            "{hidden} in an answer: {answers}"
        );
    }
}

/// CONTRACT U3: the usage event carries the request's trace id, the caller's when it sent one,
/// else a new one; never its tracestate or baggage.
#[tokio::test]
async fn u3_the_usage_event_carries_the_trace_id_and_no_other_trace_value() {
    let (lines, _guard) = Lines::capture();
    let h = Harness::fixed().await;
    let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    h.post(
        "/mcp/core",
        &rpc(json!(1), "tools/list", Value::Null),
        &[
            ("traceparent", parent),
            ("tracestate", "vendor=state-canary-51"),
            ("baggage", "user=baggage-canary-52"),
        ],
    )
    .await;
    h.post("/mcp/core", &rpc(json!(2), "tools/list", Value::Null), &[])
        .await;
    let events = lines.usage_events();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0]["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
    let fresh = events[1]["trace_id"].as_str().expect("a trace id");
    assert_eq!(fresh.len(), 32);
    assert!(
        fresh
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    assert_ne!(fresh, "4bf92f3577b34da6a3ce929d0e0e4736");
    let text = lines.text();
    assert!(!text.contains("state-canary-51"), "{text}");
    assert!(!text.contains("baggage-canary-52"), "{text}");
}

/// CONTRACT Z10: on a route with policies the usage event records the decision and the
/// determining policies' ids, never an argument value.
#[tokio::test]
async fn z10_the_usage_event_records_the_decision_and_the_policies_never_the_arguments() {
    use mcp_gateway::Config;
    use wiremock::matchers::path;
    use wiremock::{Mock, ResponseTemplate};

    let (lines, _guard) = Lines::capture();
    let h = Harness::with_manifest(Config::fixed_defaults(), |document| {
        let endpoint = document["routes"][0]["tools"][0]["_meta"]["endpoint"].clone();
        let tools = document["routes"][0]["tools"].as_array_mut().unwrap();
        tools.push(json!({"name": "refund", "description": "Refunds an order.",
            "inputSchema": {"type": "object", "properties": {"amount": {"type": "number"},
                "note": {"type": "string"}}, "required": ["amount"]},
            "_meta": {"endpoint": endpoint}}));
        document["routes"][0]["authorization"] = json!({"mode": "enforce", "policies":
            r#"@id("refunds") permit(principal, action == Gateway::Action::"refund", resource);
               @id("big") forbid(principal, action == Gateway::Action::"refund", resource)
               when { context.input.amount.greaterThan(decimal("500.0")) };"#});
    })
    .await;
    Mock::given(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_body_string("ok"))
        .mount(&h.tool_service)
        .await;
    for amount in [20, 900] {
        let body = rpc(
            json!(1),
            "tools/call",
            json!({"name": "refund", "arguments": {"amount": amount, "note": "canary-note-77"}}),
        );
        h.post("/mcp/core", &body, &[]).await;
    }
    let events = lines.usage_events();
    let seen: Vec<(Value, Value)> = events
        .iter()
        .map(|e| {
            (
                e.get("decision").cloned().unwrap_or(Value::Null),
                e.get("policies").cloned().unwrap_or(Value::Null),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            (json!("allow"), json!("refunds")),
            (json!("deny"), json!("big")),
        ],
        "{events:?}"
    );
    assert!(!lines.text().contains("canary-note-77"));
}
