//! Span export (CONTRACT O4, O5) into an OTLP/HTTP receiver on loopback that decodes every export
//! with the official OTLP protobuf classes (`support/otlp_collector.py`, Python
//! `opentelemetry-proto`): the SERVER and CLIENT spans of a request, their ids, names and
//! attributes, the Tool Service's received traceparent, the resource, the sampler, the Lambda
//! adapter's X-Ray link, and a collector that is down or slow.

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use gateway_tests::{Harness, manifest, rpc};
use lambda_http::RequestExt as _;
use mcp_gateway::invoke::HttpInvoker;
use mcp_gateway::registry::compile_manifest;
use mcp_gateway::trace::export::{FlushMode, OtelEnv, from_env};
use mcp_gateway::{Config, Gateway};
use serde_json::{Value, json};
use wiremock::{MockServer, ResponseTemplate};

const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

/// `support/otlp_collector.py` in the repository's Python (`MOTO_PYTHON`, else `.venv`), killed
/// when dropped (and exiting by itself when its stdin closes).
struct Collector {
    url: String,
    child: Child,
}

impl Collector {
    fn start(args: &[&str]) -> Self {
        let python = std::env::var_os("MOTO_PYTHON").map_or_else(
            || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python"),
            PathBuf::from,
        );
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("support/otlp_collector.py");
        let mut child = Command::new(&python)
            .arg(&script)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{} does not start: {e}", python.display()));
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port: u16 = line.trim().parse().unwrap_or_else(|_| {
            panic!(
                "otlp_collector.py printed no port ({line:?}): does {} have opentelemetry-proto? \
                 Run tests/run.sh (it installs tests/requirements.txt into .venv) or set MOTO_PYTHON",
                python.display()
            )
        });
        Self {
            url: format!("http://127.0.0.1:{port}"),
            child,
        }
    }

    async fn get(&self, path: &str) -> Value {
        reqwest::Client::builder()
            .no_proxy()
            .build()
            .unwrap()
            .get(format!("{}{path}", self.url))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .map(|text| serde_json::from_str(&text).unwrap())
            .unwrap()
    }

    async fn spans(&self) -> Vec<Value> {
        self.get("/__spans").await.as_array().unwrap().clone()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A gateway over the test manifest exporting as `vars` say, its Tool Service answering.
async fn gateway(vars: &[(&str, &str)]) -> Harness {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect();
    let lookup = move |name: &str| vars.get(name).cloned();
    let tracing = from_env(&OtelEnv { var: &lookup }, FlushMode::PerInvocation).unwrap();
    let tool_service = MockServer::start().await;
    let snapshot = compile_manifest(&manifest(&tool_service.uri())).unwrap();
    let gateway = Gateway::new(
        Config::fixed_defaults(),
        Ok(snapshot),
        HttpInvoker::new().unwrap(),
    )
    .with_tracing(tracing);
    let h = Harness {
        gateway: Arc::new(gateway),
        tool_service,
    };
    h.tool_answers(
        "/search",
        ResponseTemplate::new(200).set_body_json(json!({"hits": 1})),
    )
    .await;
    h
}

fn call(name: &str) -> Value {
    rpc(
        json!("call-1"),
        "tools/call",
        json!({"name": name, "arguments": {"query": "q"}}),
    )
}

fn find<'a>(spans: &'a [Value], kind: &str) -> &'a Value {
    spans
        .iter()
        .find(|s| s["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} span in {spans:#?}"))
}

#[tokio::test]
async fn o4_o5_a_tool_call_exports_a_server_span_and_its_client_span() {
    let collector = Collector::start(&[]);
    let h = gateway(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url),
        ("OTEL_SERVICE_NAME", "hr-gateway"),
        ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-collector-key=k1"),
    ])
    .await;
    let answer = h
        .post(
            "/mcp/core",
            &call("search_documents"),
            &[
                ("traceparent", PARENT),
                ("baggage", "secret=baggage-canary"),
            ],
        )
        .await;
    assert_eq!(answer.json()["result"]["isError"], false);
    h.gateway.flush_traces().await;
    let spans = collector.spans().await;
    assert_eq!(spans.len(), 2, "{spans:#?}");
    let server = find(&spans, "SPAN_KIND_SERVER");
    let client = find(&spans, "SPAN_KIND_CLIENT");
    assert_eq!(server["name"], "tools/call search_documents");
    assert_eq!(server["trace_id"], TRACE_ID);
    assert_eq!(server["parent_span_id"], "00f067aa0ba902b7");
    assert_eq!(client["trace_id"], TRACE_ID);
    assert_eq!(client["parent_span_id"], server["span_id"]);
    let attributes = &server["attributes"];
    assert_eq!(attributes["mcp.method.name"], "tools/call");
    assert_eq!(attributes["gen_ai.tool.name"], "search_documents");
    assert_eq!(attributes["gen_ai.operation.name"], "execute_tool");
    assert_eq!(attributes["jsonrpc.request.id"], "call-1");
    assert_eq!(attributes["mcp.protocol.version"], "2025-11-25");
    assert_eq!(attributes["mcp_gateway.route"], "core");
    assert_eq!(attributes["http.response.status_code"], 200);
    assert!(attributes.get("error.type").is_none(), "{server:#}");
    assert_eq!(server["status_code"], "STATUS_CODE_UNSET");
    assert_eq!(client["name"], "POST");
    assert_eq!(client["attributes"]["http.request.method"], "POST");
    assert_eq!(client["attributes"]["server.address"], "127.0.0.1");
    assert_eq!(client["attributes"]["http.response.status_code"], 200);
    assert!(client["attributes"]["server.port"].as_i64().unwrap() > 0);
    // The Tool Service's parent is the CLIENT span.
    let requests = h.tool_service.received_requests().await.unwrap();
    let traceparent = requests[0].headers.get("traceparent").unwrap();
    assert_eq!(
        traceparent.to_str().unwrap(),
        format!("00-{TRACE_ID}-{}-01", client["span_id"].as_str().unwrap())
    );
    // The resource and the exporter's headers.
    assert_eq!(server["resource"]["service.name"], "hr-gateway");
    assert_eq!(server["resource"]["deployment.environment"], "test");
    assert_eq!(server["scope"], "mcp-gateway");
    assert_eq!(server["request_headers"]["x-collector-key"], "k1");
    assert_eq!(
        server["request_headers"]["content-type"],
        "application/x-protobuf"
    );
    // CONTRACT O4: no span carries baggage, arguments or URLs.
    let text = serde_json::to_string(&spans).unwrap();
    for absent in ["baggage-canary", "/search", "\"q\""] {
        assert!(!text.contains(absent), "{absent} in {text}");
    }
}

#[tokio::test]
async fn o4_failures_carry_error_type_and_a_tool_error_is_tool_error() {
    let collector = Collector::start(&[]);
    let h = gateway(&[(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        &format!("{}/v1/traces", collector.url),
    )])
    .await;
    h.tool_answers("/fail", ResponseTemplate::new(503)).await;
    let answer = h.post("/mcp/core", &call("failing_tool"), &[]).await;
    assert_eq!(answer.json()["result"]["isError"], true);
    let bad = rpc(json!(9), "tools/call", json!({"name": "no_such_tool"}));
    h.post("/mcp/core", &bad, &[]).await;
    // An HTTP rejection: a JSON body that is not JSON-RPC's media type.
    let rejected = h
        .send(gateway_tests::request(
            "POST",
            "/mcp/core",
            &[("content-type", "text/plain")],
            "{}".to_string(),
        ))
        .await;
    assert_eq!(rejected.status, 415);
    h.gateway.flush_traces().await;
    let spans = collector.spans().await;
    let servers: Vec<&Value> = spans
        .iter()
        .filter(|s| s["kind"] == "SPAN_KIND_SERVER")
        .collect();
    assert_eq!(servers.len(), 3, "{spans:#?}");
    assert_eq!(servers[0]["name"], "tools/call failing_tool");
    assert_eq!(servers[0]["attributes"]["error.type"], "tool_error");
    assert_eq!(servers[0]["status_code"], "STATUS_CODE_ERROR");
    let client = find(&spans, "SPAN_KIND_CLIENT");
    assert_eq!(client["attributes"]["http.response.status_code"], 503);
    assert_eq!(client["attributes"]["error.type"], "503");
    assert_eq!(servers[1]["attributes"]["error.type"], "-32602");
    assert_eq!(
        servers[1]["attributes"]["rpc.response.status_code"],
        "-32602"
    );
    assert_eq!(servers[1]["attributes"]["jsonrpc.request.id"], "9");
    assert_eq!(servers[2]["name"], "POST");
    assert_eq!(servers[2]["attributes"]["error.type"], "415");
    assert_eq!(servers[2]["attributes"]["http.response.status_code"], 415);
    // A new trace each, as none came in.
    assert_ne!(servers[0]["trace_id"], servers[1]["trace_id"]);
    assert_eq!(servers[0]["parent_span_id"], "");
}

/// CONTRACT O4: a call whose credential could not be made was never sent: its request has a
/// SERVER span and no CLIENT span.
#[tokio::test]
async fn o4_a_call_never_sent_has_no_client_span() {
    let collector = Collector::start(&[]);
    let endpoint = format!("{}/v1/traces", collector.url);
    let lookup =
        move |name: &str| (name == "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").then(|| endpoint.clone());
    let tracing = from_env(&OtelEnv { var: &lookup }, FlushMode::PerInvocation).unwrap();
    let tool_service = MockServer::start().await;
    let mut document = manifest(&tool_service.uri());
    document["routes"][0]["tools"].as_array_mut().unwrap().push(
        json!({"name": "keyed", "description": "d", "inputSchema": {"type": "object"},
            "_meta": {"endpoint": format!("{}/keyed", tool_service.uri()),
                      "auth": {"type": "apiKey", "in": "header", "name": "X-Api-Key",
                               "secret": "env:UNSET_TOOL_KEY"}}}),
    );
    let gateway = Gateway::new(
        Config::fixed_defaults(),
        Ok(compile_manifest(&document).unwrap()),
        HttpInvoker::new()
            .unwrap()
            .with_env_lookup(Arc::new(|_: &str| None)),
    )
    .with_tracing(tracing);
    let h = Harness {
        gateway: Arc::new(gateway),
        tool_service,
    };
    let answer = h
        .post(
            "/mcp/core",
            &rpc(json!(1), "tools/call", json!({"name": "keyed"})),
            &[],
        )
        .await;
    assert_eq!(
        answer.json()["result"]["content"][0]["text"],
        "Tool 'keyed': the credential could not be read (the environment variable is not set)"
    );
    h.gateway.flush_traces().await;
    let spans = collector.spans().await;
    assert_eq!(spans.len(), 1, "{spans:#?}");
    assert_eq!(spans[0]["kind"], "SPAN_KIND_SERVER");
    assert_eq!(spans[0]["attributes"]["error.type"], "tool_error");
    assert!(h.tool_service.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn o5_the_sampler_decides_what_is_exported_and_the_flags_sent_on() {
    let collector = Collector::start(&[]);
    let off = gateway(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url),
        ("OTEL_TRACES_SAMPLER", "always_off"),
    ])
    .await;
    off.post(
        "/mcp/core",
        &call("search_documents"),
        &[("traceparent", PARENT)],
    )
    .await;
    off.gateway.flush_traces().await;
    let sent = off.tool_service.received_requests().await.unwrap();
    let traceparent = sent[0]
        .headers
        .get("traceparent")
        .unwrap()
        .to_str()
        .unwrap();
    assert!(traceparent.starts_with(&format!("00-{TRACE_ID}-")));
    assert!(traceparent.ends_with("-00"), "{traceparent}");

    // The default is parent-based: an unsampled parent is not exported, a sampled one is.
    let parent_based = gateway(&[("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url)]).await;
    parent_based
        .post(
            "/mcp/core",
            &call("search_documents"),
            &[(
                "traceparent",
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00",
            )],
        )
        .await;
    parent_based
        .post(
            "/mcp/core",
            &call("search_documents"),
            &[("traceparent", PARENT)],
        )
        .await;
    parent_based.gateway.flush_traces().await;
    let spans = collector.spans().await;
    assert_eq!(spans.len(), 2, "{spans:#?}");
    assert!(spans.iter().all(|s| s["trace_id"] == TRACE_ID));
}

#[tokio::test]
async fn o5_a_collector_that_fails_or_is_down_never_changes_an_answer_and_pauses_export() {
    // A collector that answers 503: the export fails, later spans are dropped for the pause.
    let failing = Collector::start(&["--status", "503"]);
    let h = gateway(&[("OTEL_EXPORTER_OTLP_ENDPOINT", &failing.url)]).await;
    let before = h.post("/mcp/core", &call("search_documents"), &[]).await;
    h.gateway.flush_traces().await;
    let tried = failing.get("/__exports").await["requests"].clone();
    assert!(tried.as_u64().unwrap() >= 1, "{tried}");
    let after = h.post("/mcp/core", &call("search_documents"), &[]).await;
    h.gateway.flush_traces().await;
    assert_eq!(
        before.json()["result"]["content"][0]["text"],
        after.json()["result"]["content"][0]["text"]
    );
    assert_eq!(after.json()["result"]["isError"], false);
    // Paused: the second request's spans were dropped, not sent.
    assert_eq!(failing.get("/__exports").await["requests"], tried);

    // A slow collector: the flush gives up at the export timeout and the answer stands.
    let slow = Collector::start(&["--delay-ms", "3000"]);
    let h = gateway(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &slow.url),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "100"),
    ])
    .await;
    let answer = h.post("/mcp/core", &call("search_documents"), &[]).await;
    assert_eq!(answer.json()["result"]["isError"], false);
    tokio::time::timeout(Duration::from_mins(1), h.gateway.flush_traces())
        .await
        .expect("the flush ends at its timeout");

    // Nothing listening at all.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let h = gateway(&[(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        &format!("http://127.0.0.1:{closed}"),
    )])
    .await;
    let answer = h.post("/mcp/core", &call("search_documents"), &[]).await;
    assert_eq!(answer.json()["result"]["isError"], false);
    h.gateway.flush_traces().await;
}

#[tokio::test]
async fn o1_o2_the_lambda_adapter_links_the_xray_trace_and_passes_it_on() {
    let collector = Collector::start(&[]);
    let h = gateway(&[("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url)]).await;
    let xray = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
    let event = json!({
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": "/mcp/core",
        "rawQueryString": "",
        "headers": {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25",
            "host": "abc.execute-api.eu-west-1.amazonaws.com",
            "x-amzn-trace-id": "Root=1-00000000-000000000000000000000000;Parent=0000000000000001;Sampled=1"
        },
        "requestContext": {
            "accountId": "123456789012", "apiId": "abc", "domainName": "abc.execute-api.eu-west-1.amazonaws.com",
            "domainPrefix": "abc", "http": {"method": "POST", "path": "/mcp/core", "protocol": "HTTP/1.1",
            "sourceIp": "203.0.113.1", "userAgent": "test"}, "requestId": "r1", "routeKey": "$default",
            "stage": "$default", "time": "03/Dec/2026:12:00:00 +0000", "timeEpoch": 1_796_212_800_000_u64
        },
        "body": call("search_documents").to_string(),
        "isBase64Encoded": false
    });
    let mut context = lambda_http::Context::default();
    context.xray_trace_id = Some(xray.into());
    let request = mcp_gateway::lambda::request_from_event(&event.to_string())
        .unwrap()
        .with_lambda_context(context);
    let response = mcp_gateway::lambda::handle_event(&h.gateway, request).await;
    assert_eq!(response.status(), 200);
    h.gateway.flush_traces().await;
    // The invocation's own X-Ray trace goes on, not the one a client put in the headers.
    let sent = h.tool_service.received_requests().await.unwrap();
    assert_eq!(
        sent[0]
            .headers
            .get("x-amzn-trace-id")
            .unwrap()
            .to_str()
            .unwrap(),
        xray
    );
    let spans = collector.spans().await;
    let server = find(&spans, "SPAN_KIND_SERVER");
    let link = &server["links"][0];
    assert_eq!(link["trace_id"], "5759e988bd862e3fe1be46a994272793");
    assert_eq!(link["span_id"], "53995c3f42cd8ad8");
    // The X-Ray trace is a link, never the parent.
    assert_ne!(server["trace_id"], "5759e988bd862e3fe1be46a994272793");
}

#[tokio::test]
async fn o4_a_lambda_tool_call_is_a_lambda_invoke_client_span_without_the_account() {
    let collector = Collector::start(&[]);
    let url = collector.url.clone();
    let lookup = move |name: &str| (name == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| url.clone());
    let tracing = from_env(&OtelEnv { var: &lookup }, FlushMode::PerInvocation).unwrap();
    let h = crate::lambda_tools::answering_ok(tracing).await;
    let body = rpc(
        json!(1),
        "tools/call",
        json!({"name": "lookup_glossary_live", "arguments": {"term": "x"}}),
    );
    h.post("/mcp/core", &body, &[("traceparent", PARENT)]).await;
    h.gateway.flush_traces().await;
    let spans = collector.spans().await;
    let client = find(&spans, "SPAN_KIND_CLIENT");
    assert_eq!(client["name"], "Lambda.Invoke");
    let attributes = &client["attributes"];
    assert_eq!(attributes["rpc.system"], "aws-api");
    assert_eq!(attributes["rpc.service"], "Lambda");
    assert_eq!(attributes["rpc.method"], "Invoke");
    assert_eq!(attributes["faas.invoked_provider"], "aws");
    assert_eq!(attributes["faas.invoked_name"], "hr-tools");
    assert_eq!(attributes["faas.invoked_region"], "us-east-1");
    assert_eq!(attributes["http.response.status_code"], 200);
    let text = serde_json::to_string(&spans).unwrap();
    assert!(!text.contains("123456789012"), "{text}");
    assert_eq!(
        find(&spans, "SPAN_KIND_SERVER")["name"],
        "tools/call lookup_glossary_live"
    );
}

#[tokio::test]
async fn o5_an_oversized_collector_answer_fails_the_export_and_a_deadline_cuts_the_flush() {
    // 1 MiB answered to every export: read up to 64 KiB, then the export fails and pauses.
    let big = Collector::start(&["--answer-bytes", "1048576"]);
    let h = gateway(&[("OTEL_EXPORTER_OTLP_ENDPOINT", &big.url)]).await;
    let first = h.post("/mcp/core", &call("search_documents"), &[]).await;
    h.gateway.flush_traces().await;
    let tried = big.get("/__exports").await["requests"].clone();
    assert!(tried.as_u64().unwrap() >= 1);
    let second = h.post("/mcp/core", &call("search_documents"), &[]).await;
    h.gateway.flush_traces().await;
    assert_eq!(big.get("/__exports").await["requests"], tried, "paused");
    assert_eq!(first.json()["result"]["isError"], false);
    assert_eq!(second.json()["result"]["isError"], false);

    // A collector that takes 30 s, an export timeout of 60 s, and an invocation deadline 0.6 s
    // away (the margin is 0.5 s): the flush gives up at the deadline less the margin, far
    // inside the guard.
    let slow = Collector::start(&["--delay-ms", "30000"]);
    let h = gateway(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &slow.url),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "60000"),
    ])
    .await;
    h.post("/mcp/core", &call("search_documents"), &[]).await;
    let deadline = std::time::Instant::now() + Duration::from_millis(600);
    tokio::time::timeout(
        Duration::from_secs(20),
        h.gateway.flush_traces_before(Some(deadline)),
    )
    .await
    .expect("the flush ends at the invocation deadline less the margin");
}

#[tokio::test]
async fn o4_client_texts_are_cut_and_an_answer_mapped_to_is_error_fails_the_client_span() {
    let collector = Collector::start(&[]);
    let h = gateway(&[("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url)]).await;
    let long_tool = "t".repeat(100_000);
    let body = rpc(json!(1), "tools/call", json!({"name": long_tool}));
    h.post("/mcp/core", &body, &[]).await;
    let long_method = format!("x/{}", "m".repeat(100_000));
    h.post("/mcp/core", &rpc(json!(2), &long_method, json!({})), &[])
        .await;
    h.tool_answers(
        "/fail",
        ResponseTemplate::new(302).insert_header("location", "http://127.0.0.1:1/elsewhere"),
    )
    .await;
    let redirected = h.post("/mcp/core", &call("failing_tool"), &[]).await;
    assert_eq!(redirected.json()["result"]["isError"], true);
    h.tool_answers(
        "/fail",
        ResponseTemplate::new(200).set_body_raw(vec![0xff, 0xfe], "text/plain"),
    )
    .await;
    let garbled = h.post("/mcp/core", &call("failing_tool"), &[]).await;
    assert_eq!(
        garbled.json()["result"]["isError"],
        true,
        "{}",
        garbled.json()
    );
    h.gateway.flush_traces().await;
    let spans = collector.spans().await;
    let text = serde_json::to_string(&spans).unwrap();
    assert!(text.len() < 20_000, "{} bytes of spans", text.len());
    let servers: Vec<&Value> = spans
        .iter()
        .filter(|s| s["kind"] == "SPAN_KIND_SERVER")
        .collect();
    assert_eq!(servers.len(), 4, "{spans:#?}");
    assert_eq!(
        servers[0]["attributes"]["gen_ai.tool.name"],
        "t".repeat(128)
    );
    assert_eq!(
        servers[0]["name"],
        format!("tools/call {}", "t".repeat(128))
    );
    assert_eq!(
        servers[1]["attributes"]["mcp.method.name"]
            .as_str()
            .unwrap()
            .len(),
        128
    );
    let clients: Vec<&Value> = spans
        .iter()
        .filter(|s| s["kind"] == "SPAN_KIND_CLIENT")
        .collect();
    assert_eq!(clients.len(), 2, "{spans:#?}");
    assert_eq!(clients[0]["attributes"]["error.type"], "302");
    assert_eq!(clients[0]["status_code"], "STATUS_CODE_ERROR");
    assert_eq!(clients[1]["attributes"]["error.type"], "tool_error");
    assert_eq!(clients[1]["attributes"]["http.response.status_code"], 200);
}

#[tokio::test]
async fn k9_o4_a_tasks_status_request_is_a_client_span_of_its_request() {
    use super::tasks::{accept_at, create_task, key, modern, with_task_tools};
    let collector = Collector::start(&[]);
    let vars: HashMap<String, String> =
        HashMap::from([("OTEL_EXPORTER_OTLP_ENDPOINT".into(), collector.url.clone())]);
    let lookup = move |name: &str| vars.get(name).cloned();
    let tracing = from_env(&OtelEnv { var: &lookup }, FlushMode::PerInvocation).unwrap();
    let tool_service = MockServer::start().await;
    let mut document = manifest(&tool_service.uri());
    with_task_tools(&mut document, &tool_service.uri(), 3_600_000);
    let gateway = Gateway::new(
        Config::fixed_defaults(),
        Ok(compile_manifest(&document).unwrap()),
        HttpInvoker::new().unwrap(),
    )
    .with_tracing(tracing)
    .with_task_keys(mcp_gateway::tasks::TaskKeys::parse(&key(1)).unwrap());
    let h = Harness {
        gateway: Arc::new(gateway),
        tool_service,
    };
    accept_at(&h, "/export", "/jobs/1").await;
    wiremock::Mock::given(wiremock::matchers::path("/jobs/1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"status": "running"})))
        .mount(&h.tool_service)
        .await;
    let (_, task_id) = create_task(&h, &[("traceparent", PARENT)]).await;
    let answer = modern(
        &h,
        "tasks/get",
        json!({"taskId": task_id}),
        true,
        &[("traceparent", PARENT)],
    )
    .await;
    assert_eq!(answer.json()["result"]["status"], "working");
    h.gateway.flush_traces().await;
    let spans = collector.spans().await;
    let status_span = spans
        .iter()
        .find(|s| s["kind"] == "SPAN_KIND_CLIENT" && s["name"] == "GET")
        .unwrap_or_else(|| panic!("no GET client span in {spans:#?}"));
    let server = spans
        .iter()
        .find(|s| s["span_id"] == status_span["parent_span_id"])
        .unwrap_or_else(|| panic!("no parent of the GET span in {spans:#?}"));
    assert_eq!(server["attributes"]["mcp.method.name"], "tasks/get");
    assert_eq!(status_span["trace_id"], TRACE_ID);
    assert_eq!(status_span["attributes"]["http.response.status_code"], 200);
    // The status request carried the CLIENT span's trace context.
    let requests = h.tool_service.received_requests().await.unwrap();
    let get = requests
        .iter()
        .find(|r| r.method.as_str() == "GET")
        .unwrap();
    assert_eq!(
        get.headers.get("traceparent").unwrap().to_str().unwrap(),
        format!(
            "00-{TRACE_ID}-{}-01",
            status_span["span_id"].as_str().unwrap()
        )
    );
    // CONTRACT K3: no span carries the task id.
    let text = serde_json::to_string(&spans).unwrap();
    assert!(!text.contains(&task_id), "{text}");
}
