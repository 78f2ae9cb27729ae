//! The request pipeline of a warm instance through the real `Gateway::handle`: `initialize`,
//! `tools/list` over routes of 1, 100 and 1,000 tools, `tools/call` argument validation against
//! a realistic nested `inputSchema`, and result mapping of a 1 MiB JSON Tool Service answer
//! (CONTRACT L1, T1, X2, X5; STYLE 10).
//!
//! The network is left out: `tools/call` runs against [`FixedAnswer`], an in-process
//! `ToolInvoker` that returns a fixed Tool Service answer at once, so the figures are the
//! gateway's own work per request (policy checks, envelope, dispatch, validation, mapping,
//! encoding), not a socket round trip. Each request is built outside the timed section. Unless a
//! bench name says `usage_log_json`, no log subscriber is installed and the usage event costs
//! next to nothing; those benches write the JSON usage line the Lambda functions write, to a
//! sink. The load script `infra/bench/run.py` measures the same requests over real sockets.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]

use std::hint::black_box;

use bytes::Bytes;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use http::{Request, StatusCode};
use mcp_gateway::invoke::{InvokeError, ToolInvoker, ToolRequest, ToolResponse};
use mcp_gateway::registry::{ResultShape, Snapshot, ToolLookup, compile_bytes};
use mcp_gateway::tool_result::map_tool_answer;
use mcp_gateway::trace::{Sampler, SpanData, SpanSink, Tracing};
use mcp_gateway::{Config, Gateway, InvocationContext, RequestBody};
use serde_json::{Value, json};

/// The functions' allocator, so that the figures are the functions' own.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A Tool Service stand-in that answers every call at once with the same status and body.
struct FixedAnswer {
    status: StatusCode,
    body: Bytes,
}

impl ToolInvoker for FixedAnswer {
    async fn invoke(&self, _request: ToolRequest) -> Result<ToolResponse, InvokeError> {
        Ok(ToolResponse {
            location: None,
            status: self.status,
            body: self.body.clone(),
        })
    }
}

/// A realistic nested `inputSchema`: bounded strings, enums, a date pattern, an array of
/// strings, an array of objects and a nested required object, closed with
/// `additionalProperties: false` at every level.
fn nested_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 500, "description": "Words to search for."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
            "filters": {
                "type": "object",
                "properties": {
                    "department": {"type": "string", "enum": ["HR", "IT", "Finance", "Legal", "Sales"]},
                    "updatedAfter": {"type": "string", "format": "date", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
                    "tags": {"type": "array", "items": {"type": "string", "maxLength": 40}, "maxItems": 10, "uniqueItems": true},
                    "confidential": {"type": "boolean"}
                },
                "additionalProperties": false
            },
            "sort": {
                "type": "array",
                "maxItems": 3,
                "items": {
                    "type": "object",
                    "properties": {
                        "field": {"type": "string", "enum": ["relevance", "updatedAt", "title"]},
                        "order": {"type": "string", "enum": ["asc", "desc"], "default": "desc"}
                    },
                    "required": ["field"],
                    "additionalProperties": false
                }
            },
            "requester": {
                "type": "object",
                "properties": {
                    "employeeId": {"type": "string", "pattern": "^E[0-9]{6}$"},
                    "locale": {"type": "string", "enum": ["ko-KR", "en-US"]}
                },
                "required": ["employeeId"],
                "additionalProperties": false
            }
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

/// Arguments that use every part of [`nested_schema`] and are valid.
fn valid_arguments() -> Value {
    json!({
        "query": "연차 휴가 이월 remote work",
        "limit": 10,
        "filters": {"department": "HR", "updatedAfter": "2026-01-01", "tags": ["policy", "leave", "2026"], "confidential": false},
        "sort": [{"field": "relevance"}, {"field": "updatedAt", "order": "desc"}],
        "requester": {"employeeId": "E123456", "locale": "ko-KR"}
    })
}

/// Arguments with three violations: `query` missing, `limit` too large, an unknown sort field.
fn invalid_arguments() -> Value {
    json!({
        "limit": 500,
        "filters": {"department": "HR", "tags": ["policy"]},
        "sort": [{"field": "popularity"}]
    })
}

/// A single-route manifest (route `core`) with `n` tools of the nested schema.
fn manifest(n: usize) -> Bytes {
    let tools: Vec<_> = (0..n)
        .map(|i| {
            json!({
                "name": if i == 0 { "search_documents".to_string() } else { format!("tool_{i:04}") },
                "title": format!("Tool {i}"),
                "description": "Searches the document store by query, department and date range; returns the best matches first.",
                "inputSchema": nested_schema(),
                "annotations": {"readOnlyHint": true, "openWorldHint": false},
                "_meta": {"version": "1.0.0", "endpoint": format!("http://127.0.0.1:3001/tools/{i}"), "timeoutMs": 5000}
            })
        })
        .collect();
    serde_json::to_vec(&json!({
        "manifestVersion": 1,
        "routes": [{"routeKey": "core", "server": {"name": "bench", "title": "Bench", "version": "1.0.0"}, "tools": tools}]
    }))
    .expect("a JSON value serializes")
    .into()
}

fn snapshot(tools: usize) -> Snapshot {
    compile_bytes("bench", &manifest(tools)).expect("the bench manifest is valid")
}

fn gateway(tools: usize, answer: Bytes) -> Gateway<FixedAnswer> {
    Gateway::new(
        Config::fixed_defaults(),
        Ok(snapshot(tools)),
        FixedAnswer {
            status: StatusCode::OK,
            body: answer,
        },
    )
}

/// A POST to `/mcp/core` as an MCP 2025-11-25 client sends it.
fn request(body: &Bytes) -> Request<RequestBody> {
    Request::post("http://127.0.0.1:3000/mcp/core")
        .header("host", "127.0.0.1:3000")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(RequestBody::Full(body.clone()))
        .expect("a valid request")
}

fn rpc(method: &str, params: &Value) -> Bytes {
    Bytes::from(
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
            .expect("a JSON value serializes"),
    )
}

/// About 1 MiB of compact JSON as a search Tool Service answers it: an array of documents with
/// Korean and English text, numbers and escaped characters.
fn one_mib_answer() -> Bytes {
    let mut documents = Vec::new();
    let mut size = 2;
    let mut i = 0;
    while size < 1024 * 1024 {
        let department = ["HR", "IT", "Finance", "Legal"][i % 4];
        let document = json!({
            "id": format!("DOC-{i:06}"),
            "title": format!("연차 휴가 규정 {i} / Leave policy \"{i}\""),
            "department": department,
            "score": 0.5 + f64::from(u32::try_from(i % 100).unwrap_or(0)) / 200.0,
            "updatedAt": "2026-03-02",
            "tags": ["policy", "leave", "휴가"],
            "snippet": "연차 휴가는 입사일 기준으로 매년 15일이 부여되며,\n미사용 휴가는 다음 해 3월까지 이월할 수 있습니다. Unused leave carries over until March.",
        });
        size += serde_json::to_vec(&document).expect("serializes").len() + 1;
        documents.push(document);
        i += 1;
    }
    Bytes::from(serde_json::to_vec(&Value::Array(documents)).expect("serializes"))
}

/// A JSON usage-log subscriber writing to a sink, as the Lambda functions log (CONTRACT U1).
fn json_log_to_sink() -> impl tracing::Subscriber + Send + Sync {
    tracing_subscriber::fmt()
        .json()
        .flatten_event(true)
        .with_current_span(false)
        .with_ansi(false)
        .with_writer(std::io::sink)
        .finish()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime")
}

fn handle<I: ToolInvoker>(
    c: &mut Criterion,
    name: &str,
    gateway: &Gateway<I>,
    body: &Bytes,
    expect: &str,
) {
    let rt = runtime();
    // Each bench checks once that the gateway really answers as expected.
    let response = rt.block_on(gateway.handle(request(body), InvocationContext::default()));
    assert_eq!(response.status(), StatusCode::OK, "{name}");
    let text = String::from_utf8_lossy(response.body());
    assert!(
        text.contains(expect),
        "{name}: {}",
        &text[..text.len().min(300)]
    );
    c.bench_function(name, |b| {
        b.iter_batched(
            || request(body),
            |request| rt.block_on(gateway.handle(request, InvocationContext::default())),
            BatchSize::SmallInput,
        );
    });
}

fn initialize(c: &mut Criterion) {
    let gateway = gateway(1, Bytes::new());
    let body = rpc(
        "initialize",
        &json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}),
    );
    handle(
        c,
        "initialize",
        &gateway,
        &body,
        r#""serverInfo":{"name":"bench""#,
    );
}

fn tools_list(c: &mut Criterion) {
    let body = rpc("tools/list", &json!({}));
    for tools in [1, 100, 1000] {
        let gateway = gateway(tools, Bytes::new());
        handle(
            c,
            &format!("tools_list/{tools}_tools"),
            &gateway,
            &body,
            r#"{"tools":[{"name":"search_documents""#,
        );
    }
}

fn small_answer_bytes() -> Bytes {
    Bytes::from_static(
        br#"[{"id":"DOC-1002","title":"Remote work policy","department":"HR","score":0.92}]"#,
    )
}

/// A span sink that counts what it is handed and drops it.
#[derive(Debug, Default)]
struct CountingSink(std::sync::atomic::AtomicUsize);

impl SpanSink for CountingSink {
    fn submit(&self, spans: Vec<SpanData>) {
        self.0
            .fetch_add(black_box(spans).len(), std::sync::atomic::Ordering::Relaxed);
    }

    fn flush(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        Box::pin(std::future::ready(()))
    }
}

fn gateway_with_sink(answer: Bytes) -> Gateway<FixedAnswer> {
    let sink = std::sync::Arc::new(CountingSink::default());
    gateway(1, answer).with_tracing(Tracing::new(
        Sampler::ParentBased(Box::new(Sampler::AlwaysOn)),
        Some(sink),
    ))
}

fn tools_call_validation(c: &mut Criterion) {
    let gateway = gateway(1, small_answer_bytes());
    let valid = rpc(
        "tools/call",
        &json!({"name": "search_documents", "arguments": valid_arguments()}),
    );
    let invalid = rpc(
        "tools/call",
        &json!({"name": "search_documents", "arguments": invalid_arguments()}),
    );
    handle(
        c,
        "tools_call/valid",
        &gateway,
        &valid,
        r#""isError":false"#,
    );
    handle(
        c,
        "tools_call/invalid_3_violations",
        &gateway,
        &invalid,
        r#""code":-32602"#,
    );
    tracing::subscriber::with_default(json_log_to_sink(), || {
        handle(
            c,
            "tools_call/valid_usage_log_json",
            &gateway,
            &valid,
            r#""isError":false"#,
        );
    });

    // CONTRACT O1-O5: a caller's traceparent read and passed on, with no exporter, and with
    // the SERVER and CLIENT spans built and handed to a sink (the OTLP sink's part after that
    // is a push onto its queue; the export runs off the request path, or after the answer is
    // made on Lambda).
    let traced = Bytes::from(
        String::from_utf8(valid.to_vec())
            .unwrap()
            .replace(
                r#""name":"search_documents""#,
                r#""name":"search_documents","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}"#,
            ),
    );
    handle(
        c,
        "tools_call/valid_traceparent",
        &gateway,
        &traced,
        r#""isError":false"#,
    );
    let exported = gateway_with_sink(small_answer_bytes());
    handle(
        c,
        "tools_call/valid_traceparent_exported",
        &exported,
        &traced,
        r#""isError":false"#,
    );

    // The validator alone, as tools/call runs it before every call (CONTRACT X2).
    let snapshot = snapshot(1);
    let Some(ToolLookup::Active(tool)) = snapshot
        .route("core")
        .and_then(|route| route.tool("search_documents"))
    else {
        panic!("the bench manifest has search_documents");
    };
    let arguments = valid_arguments();
    assert!(tool.input_schema.get().is_valid(&arguments));
    c.bench_function("tools_call/validator_only", |b| {
        b.iter(|| tool.input_schema.get().is_valid(black_box(&arguments)));
    });
}

fn result_mapping(c: &mut Criterion) {
    let answer = one_mib_answer();
    let mut group = c.benchmark_group("result_mapping_1mib");
    group.throughput(Throughput::Bytes(answer.len() as u64));
    group.sample_size(30);
    group.bench_function("map_tool_answer", |b| {
        b.iter(|| {
            map_tool_answer(
                Ok(ToolResponse {
                    location: None,
                    status: StatusCode::OK,
                    body: answer.clone(),
                }),
                black_box(3),
                ResultShape::default(),
            )
        });
    });
    group.finish();

    let gateway = gateway(1, answer);
    let body = rpc(
        "tools/call",
        &json!({"name": "search_documents", "arguments": {"query": "휴가"}}),
    );
    handle(
        c,
        "result_mapping_1mib/tools_call",
        &gateway,
        &body,
        r#""isError":false"#,
    );
}

criterion_group!(
    benches,
    initialize,
    tools_list,
    tools_call_validation,
    result_mapping
);
criterion_main!(benches);
