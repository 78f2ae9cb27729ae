//! Fuzz target of the request pipeline (CONTRACT H1–H8, E1–E5, P3–P8, C4, C5, X1, X2): any
//! method, path, header set and body through the real `Gateway::handle` over the baked sample
//! manifest. The gateway must not panic, must answer a known status with `guid` and
//! `x-request-id`, every 200 must be one JSON-RPC response, and a Tool Service call may only
//! come from a POSTed `tools/call` that carries the protocol version.
//!
//! The Tool Service is an in-process fake that records calls: a fuzzer needs millions of cases
//! per hour, and the real invoker is pinned by the contract tests.

#![no_main]

use std::sync::LazyLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http::{Request, StatusCode};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use mcp_gateway::invoke::{InvokeError, ToolInvoker, ToolRequest, ToolResponse};
use mcp_gateway::registry::{baked_manifest, compile_bytes};
use mcp_gateway::{Config, Gateway, InvocationContext, RequestBody};
use serde_json::Value;

/// Tool Service calls made so far.
static INVOKER_CALLS: AtomicUsize = AtomicUsize::new(0);

/// Counts calls in [`INVOKER_CALLS`] and answers each with a small JSON body.
struct RecordingInvoker;

impl ToolInvoker for RecordingInvoker {
    async fn invoke(&self, request: ToolRequest) -> Result<ToolResponse, InvokeError> {
        INVOKER_CALLS.fetch_add(1, Ordering::SeqCst);
        // The arguments object is forwarded as the whole body (CONTRACT X4).
        let arguments: Value = serde_json::from_slice(&request.body).expect("JSON arguments");
        assert!(arguments.is_object(), "arguments forwarded as an object");
        Ok(ToolResponse {
 location: None,
            status: StatusCode::OK,
            body: Bytes::from_static(br#"{"ok":true}"#),
        })
    }
}

struct Pipeline {
    runtime: tokio::runtime::Runtime,
    gateway: Gateway<RecordingInvoker>,
}

static PIPELINE: LazyLock<Pipeline> = LazyLock::new(|| {
    let manifest = baked_manifest("sample").expect("the sample manifest is baked in");
    let snapshot = compile_bytes("baked:sample", &Bytes::from_static(manifest.as_bytes()));
    let mut config = Config::fixed_defaults();
    config.max_request_bytes = 4096;
    Pipeline {
        runtime: tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime"),
        gateway: Gateway::new(config, snapshot, RecordingInvoker),
    }
});

const METHODS: [&str; 6] = ["POST", "GET", "DELETE", "PUT", "OPTIONS", "post"];
const PATHS: [&str; 6] = [
    "/mcp/core",
    "/mcp/core/",
    "/mcp",
    "/mcp/core/x",
    "/",
    "/mcp/core//",
];
const HEADER_NAMES: [&str; 10] = [
    "content-type",
    "accept",
    "mcp-protocol-version",
    "origin",
    "host",
    "guid",
    "x-request-id",
    "mcp-session-id",
    "employee-no",
    "virtual-employee-no",
];

const RPC_METHODS: [&str; 7] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "notifications/initialized",
    "resources/list",
    "",
];
const TOOLS: [&str; 4] = [
    "search_documents",
    "lookup_glossary",
    "create_ticket",
    "no_such_tool",
];

/// A request body: raw bytes, or a JSON-RPC message built from fuzzed parts so that the
/// fuzzer reaches dispatch and tool calls, optionally with bytes spliced into its text.
#[derive(Debug, Arbitrary)]
enum Body {
    Raw(Vec<u8>),
    Rpc {
        version_two: bool,
        id: Option<i64>,
        string_id: bool,
        method: u8,
        tool: u8,
        arguments: Vec<(String, String)>,
        query: Option<String>,
        splice: Option<(u16, Vec<u8>)>,
    },
}

impl Body {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Body::Raw(bytes) => bytes.clone(),
            Body::Rpc {
                version_two,
                id,
                string_id,
                method,
                tool,
                arguments,
                query,
                splice,
            } => {
                let mut args = serde_json::Map::new();
                if let Some(query) = query {
                    args.insert("query".into(), Value::String(query.clone()));
                }
                for (k, v) in arguments {
                    args.insert(k.clone(), Value::String(v.clone()));
                }
                let mut message = serde_json::json!({
                    "jsonrpc": if *version_two { "2.0" } else { "1.0" },
                    "method": RPC_METHODS[usize::from(*method) % RPC_METHODS.len()],
                    "params": {"name": TOOLS[usize::from(*tool) % TOOLS.len()], "arguments": args},
                });
                if let Some(id) = id {
                    message["id"] = if *string_id {
                        Value::String(id.to_string())
                    } else {
                        Value::from(*id)
                    };
                }
                let mut bytes = message.to_string().into_bytes();
                if let Some((at, inserted)) = splice {
                    let at = usize::from(*at) % (bytes.len() + 1);
                    bytes.splice(at..at, inserted.iter().copied());
                }
                bytes
            }
        }
    }
}

#[derive(Debug, Arbitrary)]
struct Input {
    method: u8,
    path: u8,
    /// Used instead of `path` when it parses as a URI.
    raw_path: Option<String>,
    headers: Vec<(u8, Vec<u8>)>,
    /// Adds the headers of a well-behaved client first.
    usual_headers: bool,
    body: Body,
}

/// Set once a case reached the Tool Service (reported once, to show the fuzzer gets there).
static REACHED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fuzz_target!(|input: Input| {
    let pipeline = &*PIPELINE;
    let mut builder = Request::builder().method(METHODS[usize::from(input.method) % METHODS.len()]);
    let path = input
        .raw_path
        .as_deref()
        .filter(|p| p.starts_with('/') && p.parse::<http::Uri>().is_ok())
        .unwrap_or(PATHS[usize::from(input.path) % PATHS.len()]);
    builder = builder.uri(path);
    if input.usual_headers {
        builder = builder
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-11-25");
    }
    for (name, value) in &input.headers {
        let name = HEADER_NAMES[usize::from(*name) % HEADER_NAMES.len()];
        if let Ok(value) = http::HeaderValue::from_bytes(value) {
            builder = builder.header(name, value);
        }
    }
    let request_body = input.body.bytes();
    let Ok(request) = builder.body(RequestBody::Full(Bytes::from(request_body.clone()))) else {
        return;
    };
    let (method, headers) = (request.method().clone(), request.headers().clone());

    let before = INVOKER_CALLS.load(Ordering::SeqCst);
    let response = pipeline.runtime.block_on(
        pipeline
            .gateway
            .handle(request, InvocationContext::default()),
    );
    let called = INVOKER_CALLS.load(Ordering::SeqCst) > before;

    assert!(response.headers().contains_key("guid"));
    assert!(response.headers().contains_key("x-request-id"));
    let body = response.body();
    match response.status().as_u16() {
        202 => assert!(body.is_empty()),
        200 => {
            let answer: Value = serde_json::from_slice(body).expect("a 200 body is JSON");
            assert_eq!(answer["jsonrpc"], "2.0");
            assert!(answer.get("result").is_some() != answer.get("error").is_some());
        }
        400 | 403 | 404 | 405 | 406 | 413 | 415 => {
            let answer: Value = serde_json::from_slice(body).expect("a 4xx body is JSON");
            assert!(answer.is_object());
        }
        other => panic!("unexpected status {other}"),
    }
    if called {
        assert_eq!(method, http::Method::POST);
        assert_eq!(
            headers.get("mcp-protocol-version").map(|v| v.as_bytes()),
            Some(b"2025-11-25".as_slice())
        );
        assert!(
            headers.get("origin").is_none(),
            "no Origin is allowed by default"
        );
        let message: Value = serde_json::from_slice(&request_body).expect("a called body is JSON");
        assert_eq!(message["jsonrpc"], "2.0");
        assert_eq!(message["method"], "tools/call");
        assert!(TOOLS[..3].contains(&message["params"]["name"].as_str().unwrap_or_default()));
        assert_eq!(response.status(), StatusCode::OK);
        if !REACHED.swap(true, Ordering::Relaxed) {
            eprintln!("request_pipeline: a generated tools/call reached the Tool Service");
        }
    }
});
