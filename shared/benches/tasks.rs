//! What the tasks extension's sealed ids cost (CONTRACT K3): sealing a task id when a
//! `tools/call` creates a task, and opening one for every `tasks/get`, `tasks/update` and
//! `tasks/cancel` (a made-up id is refused after this work alone, with no request to any
//! service). Also the status document's parse (K2).

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_gateway::tasks::{TaskClaims, TaskKeys, parse_status};

/// The functions' allocator, so that the figures are the functions' own.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn claims() -> TaskClaims {
    TaskClaims {
        route: "reports".into(),
        tool: "export_report".into(),
        location:
            "https://reports.internal.example/jobs/status/6f1c2a4e-3b1d-4f7e-9a55-2f0d7c1e9b31"
                .into(),
        caller: "oauth:00u1a2b3c4d5e6f7g8h9".into(),
        created_ms: 1_764_930_600_123,
        ttl_ms: 3_600_000,
    }
}

fn bench(c: &mut Criterion) {
    let keys = TaskKeys::parse("AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=").expect("key");
    let id = keys.seal(&claims()).expect("sealed");
    let mut forged = id.clone().into_bytes();
    let at = forged.len() - 3;
    forged[at] = if forged[at] == b'A' { b'B' } else { b'A' };
    let forged = String::from_utf8(forged).expect("ascii");
    let mut group = c.benchmark_group("tasks");
    group.bench_function("seal", |b| b.iter(|| keys.seal(&claims())));
    group.bench_function("open", |b| b.iter(|| keys.open(&id)));
    group.bench_function("open_forged", |b| b.iter(|| keys.open(&forged)));
    let running = br#"{"status":"running","message":"40% done"}"#;
    let done = br#"{"status":"succeeded","result":{"report":"s3://reports/2026-12/1234.csv","rows":1234}}"#;
    group.bench_function("parse_status_running", |b| b.iter(|| parse_status(running)));
    group.bench_function("parse_status_succeeded", |b| b.iter(|| parse_status(done)));
    group.bench_function("key_set_parse", |b| {
        b.iter(|| TaskKeys::parse("AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
