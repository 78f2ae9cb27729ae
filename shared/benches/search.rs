//! `search_tools` over a route of 10,000 tools through the real `Gateway::handle` (CONTRACT
//! S2–S4): a warm search (English, Korean and mixed queries in turn), and the first search of
//! an instance, which builds the route's index. The manifest is compiled with the loader's
//! one pass (`compile_bytes`), as a function's cold start does; no Tool Service is involved.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]

use bytes::Bytes;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use http::Request;
use mcp_gateway::invoke::{InvokeError, ToolInvoker, ToolRequest, ToolResponse};
use mcp_gateway::registry::compile_bytes;
use mcp_gateway::{Config, Gateway, InvocationContext, RequestBody};
use serde_json::{Value, json};

/// The functions' allocator, so that the figures are the functions' own.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `search_tools` never calls a Tool Service.
struct NoToolService;

impl ToolInvoker for NoToolService {
    async fn invoke(&self, _request: ToolRequest) -> Result<ToolResponse, InvokeError> {
        unreachable!("search_tools calls no Tool Service")
    }
}

const TOOLS: usize = 10_000;

/// 10,000 tools of 25 kinds, each described in English or Korean, with two properties.
fn manifest() -> Bytes {
    let kinds = [
        (
            "search",
            "documents",
            "Searches documents by keywords",
            "문서를 키워드로 검색합니다",
        ),
        (
            "get",
            "leave_balance",
            "Shows the remaining annual leave",
            "남은 연차휴가를 조회합니다",
        ),
        (
            "create",
            "ticket",
            "Creates a support ticket",
            "지원 티켓을 생성합니다",
        ),
        (
            "list",
            "invoices",
            "Lists the invoices of a customer",
            "고객의 청구서를 나열합니다",
        ),
        (
            "update",
            "address",
            "Updates a shipping address",
            "배송 주소를 변경합니다",
        ),
    ];
    let areas = ["hr", "finance", "sales", "it", "legal"];
    let tools: Vec<Value> = (0..TOOLS)
        .map(|i| {
            let (verb, noun, english, korean) = kinds[i % kinds.len()];
            let area = areas[(i / kinds.len()) % areas.len()];
            let description = if i % 2 == 0 {
                format!("{english} in the {area} system, record set {i}.")
            } else {
                format!("{area} 시스템에서 {korean}. 레코드 {i}.")
            };
            json!({
                "name": format!("{area}_{verb}_{noun}_{i}"),
                "description": description,
                "inputSchema": {"type": "object", "properties": {
                    "id": {"type": "string", "description": "The record's identifier"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100}}},
                "_meta": {"endpoint": format!("https://tools.example/{area}/{i}")}
            })
        })
        .collect();
    serde_json::to_vec(&json!({"manifestVersion": 1, "routes": [
        {"routeKey": "core", "toolSearch": {"mode": "only"}, "tools": tools}]}))
    .expect("serializes")
    .into()
}

fn gateway(manifest: &Bytes) -> Gateway<NoToolService> {
    let snapshot = compile_bytes("bench", manifest).expect("the bench manifest is valid");
    Gateway::new(Config::fixed_defaults(), Ok(snapshot), NoToolService)
}

fn request(query: &str) -> Request<RequestBody> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "search_tools", "arguments": {"query": query}}});
    Request::post("http://127.0.0.1:3000/mcp/core")
        .header("host", "127.0.0.1:3000")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(RequestBody::Full(Bytes::from(body.to_string())))
        .expect("a valid request")
}

const QUERIES: [&str; 3] = [
    "create a support ticket in the IT system",
    "남은 연차 휴가 조회",
    "finance 청구서 list",
];

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime")
}

fn search(c: &mut Criterion) {
    let rt = runtime();
    let manifest = manifest();
    let warm = gateway(&manifest);
    // The index is built by this first search, outside the timing; every answer finds tools.
    for query in QUERIES {
        let response = rt.block_on(warm.handle(request(query), InvocationContext::default()));
        let body: Value = serde_json::from_slice(response.body()).expect("JSON");
        let found = body["result"]["structuredContent"]["tools"]
            .as_array()
            .map_or(0, Vec::len);
        assert_eq!(found, 5, "{query}: {body}");
    }
    let mut turn = 0;
    c.bench_function("search_tools/10000_tools", |b| {
        b.iter_batched(
            || {
                turn += 1;
                request(QUERIES[turn % QUERIES.len()])
            },
            |request| rt.block_on(warm.handle(request, InvocationContext::default())),
            BatchSize::SmallInput,
        );
    });
    let mut group = c.benchmark_group("search_tools");
    group.sample_size(10);
    group.bench_function("10000_tools_first_search", |b| {
        b.iter_batched(
            || (gateway(&manifest), request(QUERIES[0])),
            |(gateway, request)| {
                let response = rt.block_on(gateway.handle(request, InvocationContext::default()));
                (gateway, response)
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

criterion_group!(benches, search);
criterion_main!(benches);
