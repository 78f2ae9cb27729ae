//! The cost of a route's authorization policies (CONTRACT Z): a `tools/call` and a `tools/list`
//! through the real `Gateway::handle` on a route with 50 Cedar policies, beside the same route
//! without `authorization`, and the policies' load (parse, strict validation, schema).
//!
//! As in `pipeline`, the Tool Service is an in-process stand-in that answers at once, so the
//! figures are the gateway's own work per request.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]

use std::fmt::Write as _;
use std::hint::black_box;

use bytes::Bytes;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use http::{Request, StatusCode};
use mcp_gateway::authz::RoutePolicies;
use mcp_gateway::invoke::{InvokeError, ToolInvoker, ToolRequest, ToolResponse};
use mcp_gateway::registry::compile_manifest;
use mcp_gateway::{Config, Gateway, InvocationContext, RequestBody};
use serde_json::{Value, json};

/// The functions' allocator, so that the figures are the functions' own.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A Tool Service stand-in that answers every call at once.
struct FixedAnswer;

impl ToolInvoker for FixedAnswer {
    async fn invoke(&self, _request: ToolRequest) -> Result<ToolResponse, InvokeError> {
        Ok(ToolResponse {
            location: None,
            status: StatusCode::OK,
            body: Bytes::from_static(br#"{"ok":true}"#),
        })
    }
}

/// 20 tools, `refund` among them, each with a few typed arguments.
fn tools() -> Vec<Value> {
    let mut tools = vec![json!({
        "name": "refund", "description": "Refunds an order.",
        "inputSchema": {"type": "object", "properties": {
            "amount": {"type": "number"}, "currency": {"type": "string"},
            "order": {"type": "object", "properties": {"id": {"type": "string"}, "lines": {"type": "integer"}}, "required": ["id"]},
            "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["amount", "currency", "order"]},
        "_meta": {"endpoint": "https://tools.example.internal/refund"}
    })];
    for i in 0..19 {
        tools.push(json!({
            "name": format!("tool_{i}"), "description": format!("Tool number {i}."),
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}},
            "_meta": {"endpoint": format!("https://tools.example.internal/t{i}")}
        }));
    }
    tools
}

/// 50 policies: permits per group and tool, forbids on arguments, a kill switch.
fn fifty_policies() -> String {
    let mut text = String::from(
        r#"@id("refunds") permit(principal, action == Gateway::Action::"refund", resource);
@id("big-refunds") @reason("refunds above 500 need a person")
forbid(principal, action == Gateway::Action::"refund", resource) when { context.input.amount.greaterThan(decimal("500.0")) };
@id("no-krw") forbid(principal, action == Gateway::Action::"refund", resource) when { context.input.currency == "KRW" };
"#,
    );
    for i in 0..47 {
        let tool = i % 19;
        let _ = writeln!(
            text,
            r#"@id("p{i}") permit(principal, action == Gateway::Action::"tool_{tool}", resource) when {{ principal.groups.contains("g{i}") || (context.input has n && context.input.n < {i}) }};"#
        );
    }
    text
}

fn manifest(policies: Option<&str>) -> Value {
    let mut route = json!({"routeKey": "core", "tools": tools()});
    if let Some(policies) = policies {
        route["authorization"] = json!({"mode": "enforce", "policies": policies});
    }
    json!({"manifestVersion": 1, "routes": [route]})
}

fn gateway(policies: Option<&str>) -> Gateway<FixedAnswer> {
    let snapshot = compile_manifest(&manifest(policies)).expect("the bench manifest is valid");
    Gateway::new(Config::fixed_defaults(), Ok(snapshot), FixedAnswer)
}

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

fn handle(
    c: &mut Criterion,
    name: &str,
    gateway: &Gateway<FixedAnswer>,
    body: &Bytes,
    expect: &str,
) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let response = rt.block_on(gateway.handle(request(body), InvocationContext::default()));
    let text = String::from_utf8_lossy(response.body());
    assert!(text.contains(expect), "{name}: {text}");
    c.bench_function(name, |b| {
        b.iter_batched(
            || request(body),
            |request| rt.block_on(gateway.handle(request, InvocationContext::default())),
            BatchSize::SmallInput,
        );
    });
}

fn calls(c: &mut Criterion) {
    let plain = gateway(None);
    let policies = fifty_policies();
    let guarded = gateway(Some(&policies));
    let arguments = json!({"amount": 120.5, "currency": "EUR", "order": {"id": "o-1", "lines": 3}, "tags": ["a", "b"]});
    let allowed = rpc(
        "tools/call",
        &json!({"name": "refund", "arguments": arguments}),
    );
    let denied = rpc(
        "tools/call",
        &json!({"name": "refund", "arguments": {"amount": 900, "currency": "EUR", "order": {"id": "o-1"}}}),
    );
    handle(
        c,
        "authorization/tools_call/no_policies",
        &plain,
        &allowed,
        r#""isError":false"#,
    );
    handle(
        c,
        "authorization/tools_call/50_policies_allow",
        &guarded,
        &allowed,
        r#""isError":false"#,
    );
    handle(
        c,
        "authorization/tools_call/50_policies_deny",
        &guarded,
        &denied,
        "Tool call denied by policy",
    );
    let list = rpc("tools/list", &json!({}));
    handle(
        c,
        "authorization/tools_list_20/no_policies",
        &plain,
        &list,
        r#""tools""#,
    );
    handle(
        c,
        "authorization/tools_list_20/50_policies",
        &guarded,
        &list,
        r#""tools""#,
    );
}

fn load(c: &mut Criterion) {
    let policies = json!({"mode": "enforce", "policies": fifty_policies()});
    let tools = tools();
    c.bench_function("authorization/load_50_policies_20_tools", |b| {
        b.iter(|| {
            let compiled = RoutePolicies::compile(
                "core",
                &policies,
                tools
                    .iter()
                    .map(|t| (t["name"].as_str().unwrap_or(""), &t["inputSchema"])),
            );
            black_box(compiled.is_ok())
        });
    });
}

/// The decision alone, and the caller's entity it starts from, without the pipeline.
fn decide_only(c: &mut Criterion) {
    use mcp_gateway::authz::{CallerFacts, RequestFacts};
    let policies = json!({"mode": "enforce", "policies": fifty_policies()});
    let tools = tools();
    let compiled = RoutePolicies::compile(
        "core",
        &policies,
        tools
            .iter()
            .map(|t| (t["name"].as_str().unwrap_or(""), &t["inputSchema"])),
    )
    .expect("the bench policies compile");
    let caller = CallerFacts::anonymous();
    let request = RequestFacts {
        protocol_version: "2025-11-25",
        ..RequestFacts::default()
    };
    let arguments = json!({"amount": 120.5, "currency": "EUR", "order": {"id": "o-1", "lines": 3}, "tags": ["a", "b"]});
    c.bench_function("authorization/caller_view", |b| {
        b.iter(|| black_box(compiled.view(&caller, &request).is_some()));
    });
    let view = compiled.view(&caller, &request).expect("a view");
    c.bench_function("authorization/decide_only", |b| {
        b.iter(|| black_box(view.decide("refund", &arguments)));
    });
    c.bench_function("authorization/visible_only", |b| {
        b.iter(|| black_box(view.visible("refund")));
    });
}

criterion_group!(benches, calls, decide_only, load);
criterion_main!(benches);
