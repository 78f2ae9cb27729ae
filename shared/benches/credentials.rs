//! What an outbound credential (CONTRACT M5, X12) adds to a warm `tools/call` through the real
//! `Gateway::handle`: three tools of one route with the same `inputSchema`, one without
//! `_meta.auth`, one with an `apiKey` header, one with `oauth2ClientCredentials`; and what the
//! first call of a fresh instance adds when the tool has a key.
//!
//! The network is left out. [`Standin`] answers every Tool Service call at once and gives the
//! secret and the access token at once, kept in the same per-instance [`SecretCache`]s the
//! `HttpInvoker` keeps them in, so the figures are the gateway's own work per call: the cache
//! lookups, the secret's parsing, the token request's key, the header, the request's copy. In
//! production the first call of an instance also waits for the secret read (Secrets Manager or
//! SSM, signed, over the network) and, for `oauth2ClientCredentials`, the token endpoint's
//! answer: tens of milliseconds that no in-process bench sees.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]

use std::time::Duration;

use bytes::Bytes;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use http::{Request, StatusCode};
use mcp_gateway::invoke::{
    Fetched, InvokeError, SecretCache, SecretError, SecretText, TokenError, TokenKey, TokenRequest,
    ToolInvoker, ToolRequest, ToolResponse,
};
use mcp_gateway::registry::{SecretSource, compile_bytes};
use mcp_gateway::{Config, Gateway, InvocationContext, RequestBody};
use serde_json::{Value, json};

/// The functions' allocator, so that the figures are the functions' own.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The API key the `env:BENCH_KEY` reference names.
const API_KEY: &str = "k3y-0123456789abcdef0123456789abcdef";
/// The client of the `env:BENCH_CLIENT` reference.
const CLIENT_SECRET: &str =
    r#"{"client_id": "bench-client", "client_secret": "s3cr3t-0123456789abcdef"}"#;
/// The access token the token endpoint would give.
const ACCESS_TOKEN: &str =
    "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJiZW5jaC1jbGllbnQifQ.c2lnbmF0dXJlLW9mLWEtYmVuY2gtdG9rZW4";

/// A Tool Service, secret store and token endpoint that answer at once, behind the same
/// per-instance caches as the `HttpInvoker`'s (`MCP_SECRET_TTL_S` 300 s; a token kept for its
/// lifetime, here an hour). Its answer says whether the call carried a credential.
struct Standin {
    secrets: SecretCache<SecretSource>,
    tokens: SecretCache<TokenKey>,
}

impl Standin {
    fn new() -> Self {
        Self {
            secrets: SecretCache::new(Duration::from_mins(5)),
            tokens: SecretCache::new(Duration::from_mins(5)),
        }
    }
}

impl ToolInvoker for Standin {
    async fn invoke(&self, request: ToolRequest) -> Result<ToolResponse, InvokeError> {
        let credential = request
            .headers
            .iter()
            .any(|(name, _)| name == http::header::AUTHORIZATION || name.as_str() == "x-api-key");
        Ok(ToolResponse {
            location: None,
            status: StatusCode::OK,
            body: Bytes::from_static(if credential {
                br#"{"credential":"present","results":[{"id":"DOC-1002","score":0.92}]}"#
            } else {
                br#"{"credential":"none","results":[{"id":"DOC-1002","score":0.92}]}"#
            }),
        })
    }

    async fn secret(
        &self,
        source: &SecretSource,
        stale: Option<u64>,
    ) -> Result<Fetched, SecretError> {
        self.secrets
            .get(source, stale, || async move {
                match source {
                    SecretSource::Env(name) if name == "BENCH_KEY" => Ok(SecretText::new(API_KEY)),
                    SecretSource::Env(name) if name == "BENCH_CLIENT" => {
                        Ok(SecretText::new(CLIENT_SECRET))
                    }
                    _ => Err(SecretError::NotFound),
                }
            })
            .await
    }

    async fn token(
        &self,
        request: &TokenRequest,
        stale: Option<u64>,
    ) -> Result<Fetched, TokenError> {
        self.tokens
            .get_for(&request.key, stale, || async {
                Ok((SecretText::new(ACCESS_TOKEN), Duration::from_hours(1)))
            })
            .await
    }
}

/// One route `core` with the same `inputSchema` for a tool without `_meta.auth`, one with an
/// `apiKey` header and one with `oauth2ClientCredentials`.
fn manifest() -> Bytes {
    let schema = json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 500},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
            "department": {"type": "string", "enum": ["HR", "IT", "Finance", "Legal", "Sales"]}
        },
        "required": ["query"],
        "additionalProperties": false
    });
    let tool = |name: &str, auth: Option<Value>| {
        let mut meta = json!({
            "version": "1.0.0",
            "endpoint": format!("https://tools.example/{name}"),
            "timeoutMs": 5000
        });
        if let Some(auth) = auth {
            meta["auth"] = auth;
        }
        json!({"name": name, "description": "Searches the document store.",
               "inputSchema": schema.clone(), "_meta": meta})
    };
    let tools = [
        tool("no_auth", None),
        tool(
            "api_key",
            Some(
                json!({"type": "apiKey", "in": "header", "name": "X-Api-Key",
                        "secret": "env:BENCH_KEY"}),
            ),
        ),
        tool(
            "oauth",
            Some(json!({"type": "oauth2ClientCredentials",
                        "tokenUrl": "https://idp.example/oauth2/token",
                        "scopes": ["documents.read"], "audience": "https://tools.example",
                        "secret": "env:BENCH_CLIENT"})),
        ),
    ];
    serde_json::to_vec(&json!({
        "manifestVersion": 1,
        "routes": [{"routeKey": "core", "server": {"name": "bench", "version": "1.0.0"},
                    "tools": tools}]
    }))
    .expect("a JSON value serializes")
    .into()
}

fn gateway(manifest: &Bytes) -> Gateway<Standin> {
    let snapshot = compile_bytes("bench", manifest).expect("the bench manifest is valid");
    Gateway::new(Config::fixed_defaults(), Ok(snapshot), Standin::new())
}

/// A `tools/call` of `tool` as an MCP 2025-11-25 client sends it.
fn call(tool: &str) -> Bytes {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": {"query": "연차 휴가 이월", "limit": 5, "department": "HR"}}});
    serde_json::to_vec(&body).expect("serializes").into()
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

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime")
}

/// Calls `tool` once and checks that the answer is a result with (or without) the credential.
fn check(rt: &tokio::runtime::Runtime, gateway: &Gateway<Standin>, tool: &str, expect: &str) {
    let response = rt.block_on(gateway.handle(request(&call(tool)), InvocationContext::default()));
    assert_eq!(response.status(), StatusCode::OK, "{tool}");
    let text = String::from_utf8_lossy(response.body());
    assert!(
        text.contains(r#""isError":false"#) && text.contains(expect),
        "{tool}: {text}"
    );
}

const TOOLS: [(&str, &str, &str); 3] = [
    ("no_auth", "no_auth", r#"\"credential\":\"none\""#),
    ("api_key", "api_key_cached", r#"\"credential\":\"present\""#),
    (
        "oauth",
        "oauth_token_cached",
        r#"\"credential\":\"present\""#,
    ),
];

/// Warm calls: the secret and the token were read by a call before the timing.
fn cached(c: &mut Criterion) {
    let rt = runtime();
    let manifest = manifest();
    let gateway = gateway(&manifest);
    let mut group = c.benchmark_group("tools_call");
    for (tool, name, expect) in TOOLS {
        check(&rt, &gateway, tool, expect);
        let body = call(tool);
        group.bench_function(name, |b| {
            b.iter_batched(
                || request(&body),
                |request| rt.block_on(gateway.handle(request, InvocationContext::default())),
                BatchSize::SmallInput,
            );
        });
    }
    group.finish();
}

/// A tool's first call on a fresh instance (its validator compiled, its secret and token read
/// and kept), the gateway built outside the timing.
fn first_call(c: &mut Criterion) {
    let rt = runtime();
    let manifest = manifest();
    let mut group = c.benchmark_group("tools_call");
    for (tool, name, expect) in [
        ("no_auth", "no_auth_first_call", TOOLS[0].2),
        ("api_key", "api_key_first_call", TOOLS[1].2),
        ("oauth", "oauth_first_call", TOOLS[2].2),
    ] {
        check(&rt, &gateway(&manifest), tool, expect);
        let body = call(tool);
        group.bench_function(name, |b| {
            b.iter_batched(
                || (gateway(&manifest), request(&body)),
                |(gateway, request)| {
                    let response =
                        rt.block_on(gateway.handle(request, InvocationContext::default()));
                    (gateway, response)
                },
                BatchSize::SmallInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, cached, first_call);
criterion_main!(benches);
