//! Cold-start load of a 1,000-tool manifest: parse, validate, check every schema, pre-serialize
//! `tools/list` (CONTRACT R1, R5; STYLE 10); and what a tool's first call adds over a later one,
//! since validators are compiled on first use.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]

use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use mcp_gateway::registry::compile_bytes;
use serde_json::json;

/// The functions' allocator, so that the figures are the functions' own.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A manifest with `n` tools, each with a realistic nested input schema.
fn manifest(n: usize) -> Bytes {
    let tools: Vec<_> = (0..n)
        .map(|i| {
            json!({
                "name": format!("tool_{i:04}"),
                "title": format!("Tool {i}"),
                "description": "Searches the document store by query, department and date range; returns the best matches first.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "minLength": 1, "maxLength": 500},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
                        "filters": {
                            "type": "object",
                            "properties": {
                                "department": {"type": "string", "enum": ["HR", "IT", "Finance", "Legal"]},
                                "from": {"type": "string", "format": "date"},
                                "to": {"type": "string", "format": "date"},
                                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10}
                            },
                            "additionalProperties": false
                        }
                    },
                    "required": ["query"],
                    "additionalProperties": false
                },
                "annotations": {"readOnlyHint": true},
                "_meta": {"version": "1.0.0", "endpoint": format!("https://tools.example.internal/t/{i}"), "timeoutMs": 5000}
            })
        })
        .collect();
    serde_json::to_vec(
        &json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": tools}]}),
    )
    .unwrap()
    .into()
}

fn load(c: &mut Criterion) {
    let bytes = manifest(1000);
    c.bench_function("load_manifest_1000_tools", |b| {
        b.iter(|| compile_bytes("bench", std::hint::black_box(&bytes)).unwrap());
    });
    // The JSON parse alone (the document is freed inside the timing, as in a load).
    c.bench_function("parse_manifest_1000_tools", |b| {
        b.iter(|| {
            serde_json::from_slice::<serde_json::Value>(std::hint::black_box(&bytes)).unwrap()
        });
    });
}

/// The one active tool of a snapshot compiled from `bytes`.
fn only_tool(snapshot: &mcp_gateway::registry::Snapshot) -> &mcp_gateway::registry::Tool {
    let route = snapshot.route("core").expect("route core");
    match route.tool("tool_0000") {
        Some(mcp_gateway::registry::ToolLookup::Active(tool)) => tool,
        _ => panic!("tool_0000 is active"),
    }
}

fn first_and_later_calls(c: &mut Criterion) {
    let bytes = manifest(1);
    let arguments = json!({"query": "remote work", "limit": 5, "filters": {"department": "HR"}});
    // A first call: the validator is compiled (once per instance), then validates.
    c.bench_function("tool_first_call_validation", |b| {
        b.iter_batched(
            || compile_bytes("bench", &bytes).unwrap(),
            |snapshot| {
                assert!(only_tool(&snapshot).input_schema.get().is_valid(&arguments));
                snapshot
            },
            criterion::BatchSize::SmallInput,
        );
    });
    // A later call: the compiled validator validates.
    let snapshot = compile_bytes("bench", &bytes).unwrap();
    let tool = only_tool(&snapshot);
    assert!(tool.input_schema.get().is_valid(&arguments));
    c.bench_function("tool_later_call_validation", |b| {
        b.iter(|| {
            tool.input_schema
                .get()
                .is_valid(std::hint::black_box(&arguments))
        });
    });
    // The load with every validator compiled, as a load did before validators were compiled
    // on first use: what a cold start no longer pays.
    let bytes = manifest(1000);
    c.bench_function("load_manifest_1000_tools_every_validator_compiled", |b| {
        b.iter(|| {
            let snapshot = compile_bytes("bench", std::hint::black_box(&bytes)).unwrap();
            let route = snapshot.route("core").unwrap();
            for i in 0..1000 {
                if let Some(mcp_gateway::registry::ToolLookup::Active(tool)) =
                    route.tool(&format!("tool_{i:04}"))
                {
                    let _ = tool.input_schema.get();
                }
            }
            snapshot
        });
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = load, first_and_later_calls
}
criterion_main!(benches);
