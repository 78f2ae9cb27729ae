//! Test support: a gateway wired to a real Tool Service on loopback (wiremock), and helpers to
//! send requests through the real service and read its answers.

pub mod auth;
pub mod s3;

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Request, StatusCode};
use mcp_gateway::invoke::HttpInvoker;
use mcp_gateway::registry::compile_manifest;
use mcp_gateway::{Config, Gateway, InvocationContext, RequestBody};
use serde_json::{Value, json};
use wiremock::MockServer;

/// The protocol version header every non-initialize request needs (CONTRACT H4).
pub const VERSION: (&str, &str) = ("mcp-protocol-version", "2025-11-25");

/// A test manifest: route `core` (plus `hr` for dynamic tests) whose tools call `tool_service`.
///
/// Tools on `core`: `search_documents` (POST /search, required `query`), `failing_tool`
/// (POST /fail), `slow_tool` (POST /slow, timeoutMs 300), `versioned` (two active versions),
/// `put_tool` (PUT /put), `count_documents` (POST /count, with an `outputSchema`: `total`
/// integer and `departments` array of strings, both required), `render_chart` (POST /chart,
/// `resultFormat: "mcp"`) and `chart_stats` (POST /stats, `resultFormat: "mcp"` with an
/// `outputSchema`: `points` integer, required).
#[must_use]
pub fn manifest(tool_service: &str) -> Value {
    let search_schema = json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            "filters": {
                "type": "object",
                "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
                "required": ["from"]
            }
        },
        "required": ["query"]
    });
    let tool = |name: &str, path: &str, extra: Value| {
        let mut meta = json!({"version": "1.0.0", "endpoint": format!("{tool_service}{path}")});
        if let (Value::Object(meta), Value::Object(extra)) = (&mut meta, extra) {
            meta.extend(extra);
        }
        json!({
            "name": name,
            "title": format!("Title of {name}"),
            "description": format!("Description of {name}"),
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
            "_meta": meta
        })
    };
    let mut search = tool(
        "search_documents",
        "/search",
        json!({"timeoutMs": 2000, "cache": {"ttlSeconds": 60}}),
    );
    search["inputSchema"] = search_schema;
    search["annotations"] = json!({"readOnlyHint": true});
    let mut count = tool("count_documents", "/count", json!({}));
    count["outputSchema"] = json!({
        "type": "object",
        "properties": {
            "total": {"type": "integer", "minimum": 0},
            "departments": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["total", "departments"]
    });
    let chart = tool("render_chart", "/chart", json!({"resultFormat": "mcp"}));
    let mut stats = tool("chart_stats", "/stats", json!({"resultFormat": "mcp"}));
    stats["outputSchema"] = json!({
        "type": "object",
        "properties": {"points": {"type": "integer"}},
        "required": ["points"]
    });
    json!({
        "manifestVersion": 1,
        "routes": [
            {
                "routeKey": "core",
                "server": {"name": "core-tools", "title": "Core tools", "version": "1.0.0"},
                "tools": [
                    search,
                    tool("failing_tool", "/fail", json!({})),
                    tool("slow_tool", "/slow", json!({"timeoutMs": 300})),
                    tool("versioned", "/v1", json!({"version": "1.0.0"})),
                    tool("versioned", "/v2", json!({"version": "2.0.0"})),
                    tool("put_tool", "/put", json!({"method": "PUT"})),
                    count,
                    chart,
                    stats,
                ]
            },
            {
                "routeKey": "hr",
                "server": {"name": "hr-tools", "title": "HR tools", "version": "2.0.0"},
                "tools": [tool("leave_balance", "/leave", json!({}))]
            }
        ]
    })
}

/// A gateway over [`manifest`] with a real HTTP invoker, and the Tool Service it calls.
#[derive(Debug)]
pub struct Harness {
    /// The gateway under test.
    pub gateway: Arc<Gateway<HttpInvoker>>,
    /// The real Tool Service on loopback.
    pub tool_service: MockServer,
}

impl Harness {
    /// A fixed deployment at `/mcp/core`.
    pub async fn fixed() -> Self {
        Self::with_config(Config::fixed_defaults()).await
    }

    /// A dynamic deployment at `/mcp`.
    pub async fn dynamic() -> Self {
        Self::with_config(Config::dynamic_defaults()).await
    }

    /// A deployment with any configuration over [`manifest`].
    pub async fn with_config(config: Config) -> Self {
        Self::with_manifest(config, |_| {}).await
    }

    /// A deployment with any configuration over [`manifest`] as `edit` changes it.
    pub async fn with_manifest(config: Config, edit: impl FnOnce(&mut Value)) -> Self {
        let tool_service = MockServer::start().await;
        let mut document = manifest(&tool_service.uri());
        edit(&mut document);
        let snapshot = compile_manifest(&document).expect("test manifest compiles");
        let gateway = Gateway::new(config, Ok(snapshot), HttpInvoker::new().expect("client"));
        Self {
            gateway: Arc::new(gateway),
            tool_service,
        }
    }

    /// Sends a request through the real service.
    pub async fn send(&self, request: Request<RequestBody>) -> Answer {
        self.send_with(request, InvocationContext::default()).await
    }

    /// Sends a request with an invocation context (deadline).
    pub async fn send_with(
        &self,
        request: Request<RequestBody>,
        context: InvocationContext,
    ) -> Answer {
        let response = self.gateway.handle(request, context).await;
        let (parts, body) = response.into_parts();
        Answer {
            status: parts.status,
            headers: parts.headers,
            body,
        }
    }

    /// Makes the Tool Service answer every request to `path` with `template`, replacing what it
    /// answered before.
    pub async fn tool_answers(&self, path: &str, template: wiremock::ResponseTemplate) {
        self.tool_service.reset().await;
        wiremock::Mock::given(wiremock::matchers::path(path))
            .respond_with(template)
            .mount(&self.tool_service)
            .await;
    }

    /// Sends `tools/call` for `name` with `arguments` to the fixed endpoint `/mcp/core`.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Answer {
        let body = rpc(
            json!(1),
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        );
        self.post("/mcp/core", &body, &[]).await
    }

    /// POSTs a JSON-RPC body to `path` with JSON headers, the protocol version and `extra`.
    pub async fn post(&self, path: &str, body: &Value, extra: &[(&str, &str)]) -> Answer {
        let mut headers = vec![
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            VERSION,
        ];
        headers.extend_from_slice(extra);
        self.send(request("POST", path, &headers, body.to_string()))
            .await
    }
}

/// Builds a request with the given headers and body.
#[must_use]
pub fn request(
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> Request<RequestBody> {
    let mut builder = Request::builder().method(method).uri(path);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder
        .body(RequestBody::Full(body.into()))
        .expect("valid test request")
}

/// A response as the service produced it.
#[derive(Debug)]
pub struct Answer {
    /// HTTP status.
    pub status: StatusCode,
    /// Response headers.
    pub headers: HeaderMap,
    /// Raw body.
    pub body: Bytes,
}

impl Answer {
    /// The body as JSON (panics when it is not JSON).
    #[must_use]
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {:?}", self.body))
    }

    /// A header value as text.
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts a JSON-RPC error answer: HTTP 200, the code, the exact message and the id.
    #[track_caller]
    pub fn assert_rpc_error(&self, code: i64, message: &str, id: &Value) {
        assert_eq!(self.status, StatusCode::OK, "body: {:?}", self.body);
        let body = self.json();
        assert_eq!(body["jsonrpc"], "2.0", "{body}");
        assert_eq!(&body["id"], id, "{body}");
        assert_eq!(body["error"]["code"], code, "{body}");
        assert_eq!(body["error"]["message"], message, "{body}");
        assert_eq!(
            body["error"]["data"]["guid"].as_str(),
            self.header("guid"),
            "data.guid echoes the guid header: {body}"
        );
        assert!(body.get("result").is_none(), "{body}");
    }

    /// Asserts a transport-level JSON error body: status and `error` code.
    #[track_caller]
    pub fn assert_http_error(&self, status: u16, code: &str) {
        assert_eq!(self.status.as_u16(), status, "body: {:?}", self.body);
        assert_eq!(self.header("content-type"), Some("application/json"));
        let body = self.json();
        assert_eq!(body["error"], code, "{body}");
        assert_eq!(body["guid"].as_str(), self.header("guid"), "{body}");
    }
}

/// A JSON-RPC request body.
#[must_use]
#[expect(
    clippy::needless_pass_by_value,
    reason = "callers write the id in place, as json!(1)"
)]
pub fn rpc(id: Value, method: &str, params: Value) -> Value {
    let mut body = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if !params.is_null() {
        body["params"] = params;
    }
    body
}

/// Cases of a property test: `PROPTEST_CASES` when set, else `default`.
#[must_use]
pub fn proptest_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A multi-threaded runtime with two workers, for property tests that drive the service from
/// a synchronous runner.
///
/// # Panics
/// When the runtime cannot be built.
#[must_use]
pub fn two_worker_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}
