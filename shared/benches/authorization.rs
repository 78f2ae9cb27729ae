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
use mcp_gateway::registry::{compile_bytes, compile_manifest};
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

/// `n` tools whose input schemas differ in their property names and types.
fn cold_tools(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            json!({
                "name": format!("tool_{i:04}"),
                "title": format!("Tool {i}"),
                "description": "Searches the document store by query, department and date range; returns the best matches first.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "minLength": 1, "maxLength": 500},
                        format!("limit_{}", i % 7): {"type": "integer", "minimum": 1, "maximum": 50},
                        format!("amount_{}", i % 5): {"type": "number", "description": "In the order's currency."},
                        "filters": {
                            "type": "object",
                            "properties": {
                                "department": {"type": "string", "enum": ["HR", "IT", "Finance", "Legal"]},
                                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
                                "archived": {"type": "boolean"}
                            },
                            "additionalProperties": false
                        }
                    },
                    "required": ["query"],
                    "additionalProperties": false
                },
                "annotations": {"readOnlyHint": true},
                "_meta": {"endpoint": format!("https://tools.example.internal/t/{i}"), "timeoutMs": 5000}
            })
        })
        .collect()
}

/// 100 policies over `n` (at least 1,000) tools, as `infra/bench/authorization.py` writes
/// them: an admin group's permit of every tool, the anonymous caller's permit of 20, 88 group
/// permits of 10 tools each, 8 forbids on arguments and 2 kill switches.
fn hundred_policies(n: usize) -> String {
    let actions = |from: usize, count: usize| -> String {
        (from..from + count)
            .map(|i| format!(r#"Gateway::Action::"tool_{i:04}""#))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut text = String::from(
        r#"@id("admins") permit(principal, action in Gateway::Action::"call_tool", resource) when { principal.groups.contains("admin") };
"#,
    );
    let _ = writeln!(
        text,
        r#"@id("anonymous") permit(principal == Gateway::Caller::"anonymous", action in [{}], resource);"#,
        actions(0, 20)
    );
    for g in 0..88 {
        let _ = writeln!(
            text,
            r#"@id("team-{g}") permit(principal, action in [{}], resource) when {{ principal.groups.contains("team-{g}") }};"#,
            actions((g * 10) % n, 10)
        );
    }
    for k in 0..8 {
        let _ = writeln!(
            text,
            r#"@id("limit-{k}") forbid(principal, action == Gateway::Action::"tool_{k:04}", resource) when {{ context.input has limit_{} && context.input.limit_{} > 40 }};"#,
            k % 7,
            k % 7
        );
    }
    for i in [n - 2, n - 1] {
        let _ = writeln!(
            text,
            r#"@id("kill-{i}") forbid(principal, action == Gateway::Action::"tool_{i:04}", resource);"#
        );
    }
    text
}

/// The 1,000-tool manifest's text, without `authorization` or with the 100 policies, their
/// JSON form and the digest `mcp-manifest policy embed` would write (CONTRACT Z11, Z12).
fn cold_manifest(policies: bool) -> Bytes {
    let mut route = json!({"routeKey": "core", "tools": cold_tools(1000)});
    if policies {
        route["authorization"] = json!({"mode": "enforce", "policies": hundred_policies(1000)});
    }
    let mut document = json!({"manifestVersion": 1, "routes": [route]});
    if policies {
        let snapshot = compile_manifest(&document).expect("the cold manifest is valid");
        let (json, digest) = snapshot
            .route("core")
            .and_then(|r| r.policies())
            .and_then(RoutePolicies::embedded_form)
            .expect("a JSON form and a digest");
        document["routes"][0]["authorization"]["policiesJson"] = json!(json);
        document["routes"][0]["authorization"]["validated"] = json!(digest);
    }
    Bytes::from(serde_json::to_vec(&document).expect("a JSON value serializes"))
}

/// A cold instance with 1,000 tools, with and without 100 policies their digest vouches for:
/// the load, and the load with the first `tools/list` (what the first list adds is the
/// difference).
fn cold(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let list = rpc("tools/list", &json!({}));
    for (name, bytes) in [
        ("no_policies", cold_manifest(false)),
        ("100_policies_embedded", cold_manifest(true)),
    ] {
        let first_list = || {
            let snapshot = compile_bytes("bench", &bytes).expect("the cold manifest loads");
            let gateway = Gateway::new(Config::fixed_defaults(), Ok(snapshot), FixedAnswer);
            rt.block_on(gateway.handle(request(&list), InvocationContext::default()))
        };
        let listed = first_list();
        let text = String::from_utf8_lossy(listed.body());
        let tools = text.matches(r#"{"name":"tool_"#).count();
        assert_eq!(
            tools,
            if name == "no_policies" { 1000 } else { 20 },
            "{name}"
        );
        c.bench_function(&format!("authorization/cold_load_1000_tools/{name}"), |b| {
            b.iter(|| black_box(compile_bytes("bench", &bytes).is_ok()));
        });
        c.bench_function(
            &format!("authorization/cold_load_and_first_list_1000_tools/{name}"),
            |b| b.iter(|| black_box(first_list().status())),
        );
    }
    cold_parts(c);
}

/// The parts of a first list with 100 policies: the parse of the policies a digest vouched
/// for (their JSON form, CONTRACT Z12, and the text, as a manifest without the JSON form
/// has it), and the visibility of 1,000 tools for the anonymous caller.
fn cold_parts(c: &mut Criterion) {
    use mcp_gateway::authz::{CallerFacts, RequestFacts};
    let document: Value =
        serde_json::from_slice(&cold_manifest(true)).expect("the cold manifest is JSON");
    let route = &document["routes"][0];
    let tools: Vec<(&str, &Value)> = route["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| (t["name"].as_str().unwrap_or(""), &t["inputSchema"]))
        .collect();
    let compile = || {
        RoutePolicies::compile("core", &route["authorization"], tools.iter().copied())
            .expect("the cold policies compile")
    };
    c.bench_function("authorization/cold_parts/compile_with_digest", |b| {
        b.iter(|| black_box(compile().mode()));
    });
    c.bench_function("authorization/cold_parts/parse_100_policies", |b| {
        b.iter_batched(
            compile,
            |policies| black_box(policies.policy_ids().count()),
            BatchSize::LargeInput,
        );
    });
    // The same policies with the digest of their text alone: parsed from the text.
    let mut text_only = route["authorization"].clone();
    let text = text_only["policies"]
        .as_str()
        .expect("policies")
        .to_string();
    let schemas: Vec<(&str, Vec<u8>)> = tools
        .iter()
        .map(|(name, schema)| (*name, serde_json::to_vec(schema).unwrap_or_default()))
        .collect();
    text_only["validated"] = json!(mcp_gateway::authz::policies::validation_digest(
        schemas.iter().map(|(n, s)| (*n, s.as_slice())),
        &text
    ));
    if let Some(object) = text_only.as_object_mut() {
        object.remove("policiesJson");
    }
    c.bench_function("authorization/cold_parts/parse_100_policies_text", |b| {
        b.iter_batched(
            || {
                RoutePolicies::compile("core", &text_only, tools.iter().copied())
                    .expect("the cold policies compile")
            },
            |policies| black_box(policies.policy_ids().count()),
            BatchSize::LargeInput,
        );
    });
    let caller = CallerFacts::anonymous();
    let request = RequestFacts {
        protocol_version: "2025-11-25",
        ..RequestFacts::default()
    };
    c.bench_function("authorization/cold_parts/visible_mask_1000_tools", |b| {
        b.iter_batched(
            || {
                let policies = compile();
                let _ = policies.policy_ids().count();
                policies
            },
            |policies| {
                let view = policies.view(&caller, &request).expect("a view");
                let mask = view.visible_mask(tools.iter().map(|(name, _)| *name));
                black_box(mask.iter().filter(|v| **v).count())
            },
            BatchSize::LargeInput,
        );
    });
}

criterion_group!(benches, calls, decide_only, load, cold);
criterion_main!(benches);
