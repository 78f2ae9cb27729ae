//! The `hostile` group: the worst input known for each parser of untrusted text, each within
//! the 1 MiB request body, through the real `Gateway::handle` of a warm instance (CONTRACT O1,
//! E2, E6, T2, S2, X2, N2; STYLE 20). Each answer is checked once before it is timed; the figures
//! are the gateway's work per request at one core (docs/performance.md "Hostile input").
//!
//! No Tool Service is called: every input here is refused, ignored or answered by the gateway
//! itself. The JWT of a bearer token has its own bench (`jwt_verify`).

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]

use std::hint::black_box;

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

/// Most bytes of a hostile body: just under the default `MCP_MAX_REQUEST_BYTES` (1 MiB).
const BODY_BYTES: usize = 1024 * 1024 - 512;

/// No input here reaches a Tool Service.
struct NoToolService;

impl ToolInvoker for NoToolService {
    async fn invoke(&self, _request: ToolRequest) -> Result<ToolResponse, InvokeError> {
        unreachable!("no hostile input reaches a Tool Service")
    }
}

const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// A route of 1,000 tools with `search_tools` added (CONTRACT S1).
fn gateway() -> Gateway<NoToolService> {
    let tools: Vec<Value> = (0..1000)
        .map(|i| {
            json!({
                "name": format!("tool_{i:04}"),
                "description": format!("Looks up record {i} of the document store by its query."),
                "inputSchema": {"type": "object", "properties": {
                    "query": {"type": "string", "maxLength": 500},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50}},
                    "required": ["query"], "additionalProperties": false},
                "_meta": {"endpoint": format!("http://127.0.0.1:9/tools/{i}")}
            })
        })
        .chain(std::iter::once(json!({
            "name": "tool_ids",
            "description": "Looks up records by their 64-bit ids.",
            "inputSchema": {"type": "object", "properties": {
                "ids": {"type": "array", "items": {"type": "integer"}, "uniqueItems": true}}},
            "_meta": {"endpoint": "http://127.0.0.1:9/tools/ids"}
        })))
        .collect();
    let manifest = json!({"manifestVersion": 1, "routes": [{"routeKey": "core",
        "server": {"name": "bench", "version": "1"}, "toolSearch": {"mode": "add"},
        "tools": tools}]});
    let snapshot = compile_bytes("bench", &Bytes::from(manifest.to_string()))
        .expect("the bench manifest is valid");
    Gateway::new(Config::fixed_defaults(), Ok(snapshot), NoToolService)
}

/// A POST to `/mcp/core` with `headers` besides the usual ones of `era`'s client.
fn request(body: &Bytes, modern: bool, headers: &[(&str, String)]) -> Request<RequestBody> {
    let mut builder = Request::post("http://127.0.0.1:3000/mcp/core")
        .header("host", "127.0.0.1:3000")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header(
            "mcp-protocol-version",
            if modern { "2026-07-28" } else { "2025-11-25" },
        );
    for (name, value) in headers {
        builder = builder.header(*name, value.as_str());
    }
    builder
        .body(RequestBody::Full(body.clone()))
        .expect("a valid request")
}

/// Distinct list members `member(0)`, `member(1)` … joined with `,`, as many as fit in `bytes`.
fn members_within(bytes: usize, member: impl Fn(usize) -> String) -> String {
    let mut out = String::with_capacity(bytes);
    for i in 0.. {
        let next = member(i);
        if out.len() + next.len() + 1 > bytes {
            break;
        }
        if i > 0 {
            out.push(',');
        }
        out.push_str(&next);
    }
    out
}

/// A body of `value` as JSON, checked to fit the body limit.
fn body(value: &Value) -> Bytes {
    let bytes = Bytes::from(value.to_string());
    assert!(bytes.len() <= BODY_BYTES, "{}", bytes.len());
    bytes
}

/// One hostile case: its name, body, extra headers, era and a text its answer holds.
struct Case {
    name: &'static str,
    body: Bytes,
    headers: Vec<(&'static str, String)>,
    modern: bool,
    expect: &'static str,
}

fn cases() -> Vec<Case> {
    let legacy = |name, body, expect| Case {
        name,
        body,
        headers: Vec::new(),
        modern: false,
        expect,
    };
    let ping_meta = |meta: Value| {
        body(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": meta}}))
    };
    let call = |name: &str, arguments: Value| {
        body(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}))
    };
    // Distinct members up to the body: the quadratic case of CONTRACT O1.
    let members = members_within(BODY_BYTES - 300, |i| format!("{i:x}=v"));
    let thirty_three = members_within(1000, |i| format!("{i:x}=v"))
        .split(',')
        .take(33)
        .collect::<Vec<_>>()
        .join(",");
    let baggage = members_within(BODY_BYTES - 300, |i| format!("k{i}=v"));
    let valid_baggage = (0..64)
        .map(|i| format!("key{i:02}={}", "v".repeat(100)))
        .collect::<Vec<_>>()
        .join(",");
    let mut nested = json!("q");
    for _ in 0..120 {
        nested = json!([nested]);
    }
    let many_keys: serde_json::Map<String, Value> =
        (0..60_000).map(|i| (format!("k{i}"), json!(1))).collect();
    // At E6's limits, the costliest items per count: 4,990 member names of 32 bytes (each
    // name and its value count one), and 3,320 numbers of 24 characters (each counts three),
    // each halfway between two doubles until its last digit, so it takes the exact slow path.
    let long_keys: serde_json::Map<String, Value> = (0..4_990)
        .map(|i| (format!("{i:0>32}"), json!(1)))
        .collect();
    let halfway = format!("9007199254740993.{}1", "0".repeat(24 - 18));
    let numbers = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"tool_0001","arguments":{{"query":"q","x":[{}]}}}}}}"#,
        vec![halfway.as_str(); 3_320].join(",")
    );
    // E6's most integers beyond a double's precision (50 items each): 198 distinct ones that
    // round to the same double, and the first again, which `uniqueItems` finds last.
    let mut ids: Vec<u64> = (0..198).map(|j| (1_u64 << 63) + j).collect();
    ids.push(1_u64 << 63);
    let huge_number = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"tool_0001","arguments":{{"query":"q","limit":{}}}}}}}"#,
        "9".repeat(BODY_BYTES - 200)
    );
    let distinct_words: String = (0..100)
        .map(|i| format!("w{i:x}"))
        .collect::<Vec<_>>()
        .join(" ");
    vec![
        legacy(
            "tracestate_distinct_members_in_meta",
            ping_meta(json!({"traceparent": PARENT, "tracestate": members})),
            r#""result":{}"#,
        ),
        Case {
            name: "tracestate_33_members_in_header",
            body: ping_meta(json!({})),
            headers: vec![
                ("traceparent", PARENT.to_string()),
                ("tracestate", thirty_three),
            ],
            modern: false,
            expect: r#""result":{}"#,
        },
        legacy(
            "baggage_members_to_the_body_limit",
            ping_meta(json!({"baggage": baggage})),
            r#""result":{}"#,
        ),
        legacy(
            "baggage_valid_64_members",
            ping_meta(json!({"baggage": valid_baggage})),
            r#""result":{}"#,
        ),
        legacy(
            "cursor_to_the_body_limit",
            body(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                "params": {"cursor": "A".repeat(BODY_BYTES - 100)}})),
            "cursor is not one this tool list issued",
        ),
        legacy(
            "id_to_the_body_limit",
            body(
                &json!({"jsonrpc": "2.0", "id": "i".repeat(BODY_BYTES - 100), "method": "tools/list"}),
            ),
            "'id' must be at most 1024 bytes",
        ),
        legacy(
            "arguments_nested_120_deep",
            call("tool_0001", json!({"query": "q", "x": nested})),
            "Invalid params",
        ),
        legacy(
            "arguments_60000_keys",
            call("tool_0001", Value::Object(many_keys)),
            "more than 10000 JSON values and member names",
        ),
        legacy(
            "arguments_4990_keys_of_32_bytes",
            call("tool_0001", Value::Object(long_keys)),
            "Additional properties are not allowed",
        ),
        legacy(
            "numbers_3320_halfway_of_24_characters",
            Bytes::from(numbers),
            "Additional properties are not allowed",
        ),
        legacy(
            "integers_199_sharing_one_double_in_unique_items",
            call("tool_ids", json!({ "ids": ids })),
            // `uniqueItems`' text quotes the array first: the cut keeps only its start.
            "Invalid params: [9223372036854775808,9223372036854775809,",
        ),
        legacy(
            "number_of_a_million_digits",
            Bytes::from(huge_number),
            "a number longer than 64 characters",
        ),
        legacy(
            "search_query_of_100_distinct_words",
            call("search_tools", json!({"query": distinct_words})),
            r#""isError":false"#,
        ),
        legacy(
            "search_query_to_the_body_limit",
            call(
                "search_tools",
                json!({"query": "검색 ".repeat((BODY_BYTES - 200) / 7)}),
            ),
            "Invalid params",
        ),
        Case {
            name: "mcp_name_header_of_64_kib",
            body: body(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "tool_0001", "arguments": {"query": "q"},
                    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                              "io.modelcontextprotocol/clientCapabilities": {}}}})),
            headers: vec![
                ("mcp-method", "tools/call".to_string()),
                ("mcp-name", "t".repeat(64 * 1024)),
            ],
            modern: true,
            expect: "Header mismatch",
        },
    ]
}

fn hostile(c: &mut Criterion) {
    let gateway = gateway();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    let mut group = c.benchmark_group("hostile");
    for case in cases() {
        // Each case checks once that the gateway answers as expected.
        let response = rt.block_on(gateway.handle(
            request(&case.body, case.modern, &case.headers),
            InvocationContext::default(),
        ));
        let text = String::from_utf8_lossy(response.body());
        assert!(
            text.contains(case.expect),
            "{}: {}",
            case.name,
            &text[..text.len().min(400)]
        );
        group.bench_function(case.name, |b| {
            b.iter_batched(
                || request(&case.body, case.modern, &case.headers),
                |request| {
                    black_box(rt.block_on(gateway.handle(request, InvocationContext::default())))
                },
                BatchSize::SmallInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, hostile);
criterion_main!(benches);
