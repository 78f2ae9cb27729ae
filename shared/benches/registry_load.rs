//! Cold-start load of a 1,000-tool manifest: parse, validate, compile every `inputSchema`,
//! pre-serialize `tools/list` (CONTRACT R1, R5; STYLE 10).

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_gateway::registry::compile_bytes;
use serde_json::json;

/// The functions' allocator, so that the figures are the functions' own.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A manifest with `n` tools, each with a realistic nested input schema.
fn manifest(n: usize) -> Vec<u8> {
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

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = load
}
criterion_main!(benches);
