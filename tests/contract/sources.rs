//! Registry sources against real servers on loopback: an S3-protocol server (s3s-fs, in
//! process) and a Tool Service manifest endpoint (wiremock); the local fallback and the prod
//! retry (CONTRACT R1–R4, X8).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use aws_sdk_s3::config::{Credentials, Region};
use gateway_tests::{Harness, VERSION, request, rpc};
use mcp_gateway::invoke::HttpInvoker;
use mcp_gateway::registry::{
    BakedSource, HttpSource, LoadLimits, Registry, RegistryError, S3Source, SnapshotSource,
    SourceChain, load_from,
};
use mcp_gateway::{Config, Gateway, InvocationContext};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use gateway_tests::s3::{ACCESS_KEY, S3Server, SECRET_KEY};

fn limits(timeout_ms: u64) -> LoadLimits {
    LoadLimits {
        timeout: Duration::from_millis(timeout_ms),
        max_bytes: 1024 * 1024,
        max_response_bytes: 5 << 20,
    }
}

/// `error` refuses a manifest over `limit_bytes` (`MCP_MAX_MANIFEST_BYTES`): a source's answer
/// is read up to the limit, never whole.
pub(crate) fn assert_too_large(error: &RegistryError, limit_bytes: usize) {
    assert!(
        matches!(error, RegistryError::TooLarge { limit_bytes: limit, .. } if *limit == limit_bytes),
        "{error}"
    );
}

fn manifest() -> Value {
    json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": [
        {"name": "find", "description": "Finds.", "inputSchema": {"type": "object"},
         "_meta": {"endpoint": "https://tools.example/find"}}
    ]}]})
}

fn s3_client(endpoint: &str, secret: &str) -> aws_sdk_s3::Client {
    let config = aws_sdk_s3::Config::builder()
        .behavior_version_latest()
        .region(Region::new("ap-northeast-2"))
        .endpoint_url(endpoint)
        .credentials_provider(Credentials::new(ACCESS_KEY, secret, None, None, "test"))
        .force_path_style(true)
        .http_client(mcp_gateway::aws_http::sdk_http_client())
        .build();
    aws_sdk_s3::Client::from_conf(config)
}

#[tokio::test]
async fn r2_s3_object_present_loads_including_korean_keys() {
    let s3 = S3Server::start().await;
    s3.put("manifests", "core.json", &manifest().to_string());
    s3.put("manifests", "팀/핵심 도구.json", &manifest().to_string());
    for key in ["core.json", "팀/핵심 도구.json"] {
        let source = S3Source::new(s3_client(&s3.endpoint, SECRET_KEY), "manifests", key);
        let snapshot = load_from(&source, limits(5000))
            .await
            .unwrap_or_else(|e| panic!("{key}: {e}"));
        assert!(snapshot.route("core").unwrap().tool("find").is_some());
    }
}

#[tokio::test]
async fn r2_s3_missing_key_missing_bucket_and_denied_access_are_unreadable() {
    let s3 = S3Server::start().await;
    s3.put("manifests", "core.json", &manifest().to_string());
    let cases = [
        (
            S3Source::new(
                s3_client(&s3.endpoint, SECRET_KEY),
                "manifests",
                "absent.json",
            ),
            "NoSuchKey",
        ),
        // s3s-fs answers a missing bucket on GetObject with NoSuchKey; S3 itself says NoSuchBucket.
        (
            S3Source::new(
                s3_client(&s3.endpoint, SECRET_KEY),
                "no-such-bucket",
                "core.json",
            ),
            "NoSuch",
        ),
        (
            S3Source::new(
                s3_client(&s3.endpoint, "wrong-secret"),
                "manifests",
                "core.json",
            ),
            "Signature",
        ),
    ];
    for (source, expected) in cases {
        let error = load_from(&source, limits(5000)).await.unwrap_err();
        assert!(error.is_unreachable(), "{error}");
        assert!(error.to_string().contains(expected), "{expected}: {error}");
        assert!(
            error
                .to_string()
                .starts_with(&format!("registry source {} is unreadable", source.name())),
            "{error}"
        );
    }
}

#[tokio::test]
async fn r5_s3_malformed_json_and_invalid_manifest_are_not_served() {
    let s3 = S3Server::start().await;
    s3.put("manifests", "broken.json", "{\"manifestVersion\": 1, ");
    s3.put(
        "manifests",
        "invalid.json",
        &json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": [{"name": "x"}]}]})
            .to_string(),
    );
    let error = load_from(
        &S3Source::new(
            s3_client(&s3.endpoint, SECRET_KEY),
            "manifests",
            "broken.json",
        ),
        limits(5000),
    )
    .await
    .unwrap_err();
    assert!(matches!(error, RegistryError::NotJson { .. }), "{error}");
    let error = load_from(
        &S3Source::new(
            s3_client(&s3.endpoint, SECRET_KEY),
            "manifests",
            "invalid.json",
        ),
        limits(5000),
    )
    .await
    .unwrap_err();
    let RegistryError::Invalid { problems, .. } = error else {
        panic!()
    };
    assert!(
        problems
            .iter()
            .any(|p| p.path == "routes[0].tools[0].inputSchema"),
        "{problems:?}"
    );
}

#[tokio::test]
async fn r1_s3_server_slower_than_the_load_timeout_is_a_timeout() {
    // A server that accepts connections and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let held = Arc::new(tokio::sync::Mutex::new(Vec::new()));
    let keep = Arc::clone(&held);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            keep.lock().await.push(socket);
        }
    });
    let source = S3Source::new(s3_client(&endpoint, SECRET_KEY), "manifests", "core.json");
    let started = Instant::now();
    let error = load_from(&source, limits(300)).await.unwrap_err();
    assert!(
        matches!(
            error,
            RegistryError::Timeout {
                timeout_ms: 300,
                ..
            }
        ),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

async fn manifest_server(status: u16, body: &str, content_type: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/manifest"))
        .respond_with(ResponseTemplate::new(status).set_body_raw(body.to_string(), content_type))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn r2_tool_service_manifest_over_http_200_5xx_timeout_and_wrong_content() {
    let ok = manifest_server(200, &manifest().to_string(), "application/json").await;
    let source = HttpSource::new(format!("{}/manifest", ok.uri())).unwrap();
    assert!(
        load_from(&source, limits(5000))
            .await
            .unwrap()
            .route("core")
            .is_some()
    );

    let down = manifest_server(503, "maintenance", "text/plain").await;
    let error = load_from(
        &HttpSource::new(format!("{}/manifest", down.uri())).unwrap(),
        limits(5000),
    )
    .await
    .unwrap_err();
    assert!(
        error.to_string().ends_with("is unreadable: HTTP 503"),
        "{error}"
    );

    let html = manifest_server(200, "<html>login</html>", "text/html").await;
    let error = load_from(
        &HttpSource::new(format!("{}/manifest", html.uri())).unwrap(),
        limits(5000),
    )
    .await
    .unwrap_err();
    assert!(matches!(error, RegistryError::NotJson { .. }), "{error}");

    let slow = MockServer::start().await;
    Mock::given(path("/manifest"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(manifest())
                .set_delay(Duration::from_secs(10)),
        )
        .mount(&slow)
        .await;
    let error = load_from(
        &HttpSource::new(format!("{}/manifest", slow.uri())).unwrap(),
        limits(200),
    )
    .await
    .unwrap_err();
    assert!(matches!(error, RegistryError::Timeout { .. }), "{error}");

    let big = manifest_server(200, &" ".repeat(2048), "application/json").await;
    let small = LoadLimits {
        timeout: Duration::from_secs(5),
        max_bytes: 1024,
        max_response_bytes: 5 << 20,
    };
    let error = load_from(
        &HttpSource::new(format!("{}/manifest", big.uri())).unwrap(),
        small,
    )
    .await
    .unwrap_err();
    assert_too_large(&error, 1024);
}

#[tokio::test]
async fn r3_local_profile_falls_back_to_the_baked_sample_when_the_manifest_endpoint_fails() {
    let down = manifest_server(500, "", "text/plain").await;
    let chain = manifest_chain(&down, Some(Box::new(BakedSource("sample".into()))));
    let snapshot = chain.load().await.unwrap();
    assert_eq!(snapshot.route("core").unwrap().server.name, "core-tools");
}

/// A chain whose configured source is `/manifest` on `server`, with an optional fallback.
fn manifest_chain(server: &MockServer, fallback: Option<Box<dyn SnapshotSource>>) -> SourceChain {
    let source = HttpSource::new(format!("{}/manifest", server.uri())).unwrap();
    SourceChain::new(Box::new(source), fallback, limits(5000))
}

/// A clock the test moves by hand.
fn manual_clock() -> (mcp_gateway::registry::Clock, Arc<AtomicU64>) {
    let base = Instant::now();
    let offset_s = Arc::new(AtomicU64::new(0));
    let read = Arc::clone(&offset_s);
    (
        Arc::new(move || base + Duration::from_secs(read.load(Ordering::SeqCst))),
        offset_s,
    )
}

#[tokio::test]
async fn r4_prod_answers_internal_error_then_recovers_once_per_retry_interval() {
    let server = MockServer::start().await;
    Mock::given(path("/manifest"))
        .respond_with(ResponseTemplate::new(503))
        .mount(&server)
        .await;
    let chain = manifest_chain(&server, None);
    let first = chain.load().await;
    assert!(first.is_err());
    let (clock, offset_s) = manual_clock();
    let registry = Registry::retrying(
        "the tool registry is not loaded",
        chain,
        Duration::from_secs(30),
        clock,
    );
    let gateway = Gateway::with_registry(
        Config::fixed_defaults(),
        registry,
        HttpInvoker::new().unwrap(),
    );
    let send = |body: Value| {
        let gateway = &gateway;
        async move {
            let response = gateway
                .handle(
                    request("POST", "/mcp/core", &[VERSION], body.to_string()),
                    InvocationContext::default(),
                )
                .await;
            serde_json::from_slice::<Value>(response.body()).unwrap()
        }
    };
    let fetches = || async { server.received_requests().await.unwrap().len() };
    assert_eq!(fetches().await, 1);

    // Initialize works without a snapshot; tool methods say the registry is not loaded.
    assert_eq!(
        send(rpc(json!(1), "initialize", json!({}))).await["result"]["protocolVersion"],
        "2025-11-25"
    );
    let list = send(rpc(json!(2), "tools/list", Value::Null)).await;
    assert_eq!(list["error"]["code"], -32603);
    assert_eq!(
        list["error"]["message"],
        "Internal error: the tool registry is not loaded"
    );
    assert_eq!(fetches().await, 1, "no retry before the interval");

    // The source is healthy again, but the interval has not passed.
    server.reset().await;
    Mock::given(path("/manifest"))
        .respond_with(ResponseTemplate::new(200).set_body_json(manifest()))
        .mount(&server)
        .await;
    offset_s.store(29, Ordering::SeqCst);
    assert_eq!(
        send(rpc(json!(3), "tools/list", Value::Null)).await["error"]["code"],
        -32603
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 0);

    // After the interval one request makes one attempt, and its success is kept.
    offset_s.store(30, Ordering::SeqCst);
    let list = send(rpc(json!(4), "tools/list", Value::Null)).await;
    assert_eq!(list["result"]["tools"][0]["name"], "find", "{list}");
    offset_s.store(300, Ordering::SeqCst);
    let list = send(rpc(json!(5), "tools/list", Value::Null)).await;
    assert_eq!(list["result"]["tools"][0]["name"], "find");
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        1,
        "loaded once, kept"
    );
}

#[tokio::test]
async fn r4_a_failed_retry_waits_for_the_next_interval() {
    let server = MockServer::start().await;
    Mock::given(path("/manifest"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&server)
        .await;
    let chain = manifest_chain(&server, None);
    let (clock, offset_s) = manual_clock();
    let registry = Registry::retrying(
        "the tool registry is not loaded",
        chain,
        Duration::from_secs(10),
        clock,
    );
    offset_s.store(10, Ordering::SeqCst);
    assert!(registry.current_or_retry().await.is_none());
    assert!(registry.current_or_retry().await.is_none());
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        1,
        "one attempt per interval"
    );
    offset_s.store(20, Ordering::SeqCst);
    assert!(registry.current_or_retry().await.is_none());
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn p5_route_lookup_of_a_loaded_snapshot_makes_no_network_call() {
    let h = Harness::dynamic().await;
    let answer = h
        .post(
            "/mcp/unknown",
            &rpc(json!(1), "tools/list", Value::Null),
            &[],
        )
        .await;
    answer.assert_rpc_error(-32600, "route key is not registered", &json!(1));
    assert!(h.tool_service.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn m1_a_fixed_chain_refuses_a_routes_manifest_without_its_route_and_retries_it() {
    let server = manifest_server(200, &manifest().to_string(), "application/json").await;
    let chain = manifest_chain(&server, None).serving("payroll");
    let error = chain.load().await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "manifest from {}/manifest has no route 'payroll' (routes: core)",
            server.uri()
        )
    );
    // The route it names loads; so does the single route of a single-route manifest.
    let chain = manifest_chain(&server, None).serving("core");
    let snapshot = chain.load().await.unwrap();
    assert!(snapshot.fixed_route("core").is_some());
    let single = json!({"manifestVersion": 1, "tools": manifest()["routes"][0]["tools"].clone()});
    let server = manifest_server(200, &single.to_string(), "application/json").await;
    let chain = manifest_chain(&server, None).serving("payroll");
    assert!(chain.load().await.unwrap().fixed_route("payroll").is_some());
}

/// A manifest of `tools` tools with long descriptions (about 1.6 KB each), so that its body
/// arrives in many chunks.
fn large_manifest(tools: usize) -> String {
    let tools: Vec<Value> = (0..tools)
        .map(|i| {
            let description = format!("Tool {i}. {}", "검색 lookup ".repeat(100));
            json!({"name": format!("t{i}"), "description": description,
                   "inputSchema": {"type": "object"},
                   "_meta": {"endpoint": format!("https://tools.example/t{i}")}})
        })
        .collect();
    json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": tools}]}).to_string()
}

/// `source` serves [`large_manifest`]`(tools)`, `len` bytes: under a limit of exactly `len` it
/// loads whole (its first and last tools are there), and one byte less is `TooLarge`.
async fn assert_loads_whole_at_the_limit(source: &dyn SnapshotSource, len: usize, tools: usize) {
    let exact = LoadLimits {
        timeout: Duration::from_secs(10),
        max_bytes: len,
        max_response_bytes: 5 << 20,
    };
    let snapshot = load_from(source, exact).await.unwrap();
    let route = snapshot.route("core").unwrap();
    assert!(route.tool("t0").is_some());
    assert!(route.tool(&format!("t{}", tools - 1)).is_some());
    assert!(route.tool(&format!("t{tools}")).is_none());
    let under = LoadLimits {
        max_bytes: len - 1,
        ..exact
    };
    let error = load_from(source, under).await.unwrap_err();
    assert_too_large(&error, len - 1);
}

#[tokio::test]
async fn r7_a_large_s3_object_loads_whole_and_one_byte_over_the_limit_is_too_large() {
    let s3 = S3Server::start().await;
    let body = large_manifest(2000);
    s3.put("manifests", "large.json", &body);
    let source = S3Source::new(
        s3_client(&s3.endpoint, SECRET_KEY),
        "manifests",
        "large.json",
    );
    assert_loads_whole_at_the_limit(&source, body.len(), 2000).await;
}

/// A manifest endpoint that answers `body` with `Transfer-Encoding: chunked` (no announced
/// length), in chunks of `chunk` bytes, to every connection.
async fn chunked_manifest_server(body: String, chunk: usize) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/manifest", listener.local_addr().unwrap());
    let body = Arc::new(body);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let body = Arc::clone(&body);
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.ends_with(b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                            transfer-encoding: chunked\r\nconnection: close\r\n\r\n";
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for part in body.as_bytes().chunks(chunk) {
                    let mut framed = format!("{:x}\r\n", part.len()).into_bytes();
                    framed.extend_from_slice(part);
                    framed.extend_from_slice(b"\r\n");
                    if socket.write_all(&framed).await.is_err() {
                        return;
                    }
                    socket.flush().await.ok();
                }
                socket.write_all(b"0\r\n\r\n").await.ok();
            });
        }
    });
    url
}

#[tokio::test]
async fn r7_a_chunked_manifest_without_a_length_loads_whole_and_one_over_the_limit_is_too_large() {
    let body = large_manifest(500);
    let url = chunked_manifest_server(body.clone(), 7_001).await;
    let source = HttpSource::new(url).unwrap();
    assert_loads_whole_at_the_limit(&source, body.len(), 500).await;
}

/// What [`misbehaving_server`] sends after its head.
#[derive(Clone, Copy)]
enum Rest {
    /// 64 KiB chunks of spaces until the client goes away.
    Endless,
    /// 16 bytes of spaces, then nothing for a minute.
    Stalls,
    /// 16 bytes of spaces, then the connection is closed.
    BreaksOff,
}

/// A loopback server that answers every request with `head` and then `rest`: a body that never
/// ends, stalls or breaks off, which the bound or the read's error must end.
async fn misbehaving_server(head: &'static str, rest: Rest) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                if let Rest::Endless = rest {
                    let mut frame = format!("{:x}\r\n", 64 * 1024).into_bytes();
                    frame.resize(frame.len() + 64 * 1024, b' ');
                    frame.extend_from_slice(b"\r\n");
                    while socket.write_all(&frame).await.is_ok() {}
                    return;
                }
                let _ = socket.write_all(&[b' '; 16]).await;
                if let Rest::Stalls = rest {
                    tokio::time::sleep(Duration::from_mins(1)).await;
                }
            });
        }
    });
    endpoint
}

#[tokio::test]
async fn r7_a_manifest_over_the_limit_is_refused_as_it_arrives_from_s3_and_http() {
    let limits = LoadLimits {
        timeout: Duration::from_secs(20),
        max_bytes: 1 << 20,
        max_response_bytes: 5 << 20,
    };
    let announced_huge = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                          content-length: 1099511627776\r\n\r\n";
    let endless = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                   transfer-encoding: chunked\r\n\r\n";
    for (head, rest) in [(announced_huge, Rest::Stalls), (endless, Rest::Endless)] {
        let endpoint = misbehaving_server(head, rest).await;
        // An S3 answer is refused by its announced length before its body is read, and one
        // without a length once what arrived passes the limit: not at the timeout, and not
        // after the SDK's client read it all.
        let s3 = S3Source::new(s3_client(&endpoint, SECRET_KEY), "manifests", "core.json");
        let started = Instant::now();
        let error = load_from(&s3, limits).await.unwrap_err();
        assert_too_large(&error, 1 << 20);
        assert!(
            started.elapsed() < limits.timeout,
            "{:?}",
            started.elapsed()
        );
        let http = HttpSource::new(format!("{endpoint}/manifest")).unwrap();
        let error = load_from(&http, limits).await.unwrap_err();
        assert_too_large(&error, 1 << 20);
    }
}

#[tokio::test]
async fn r7_a_manifest_body_that_breaks_off_is_unreadable_from_s3_and_http() {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                content-length: 1000\r\nconnection: close\r\n\r\n";
    let endpoint = misbehaving_server(head, Rest::BreaksOff).await;
    let s3 = S3Source::new(s3_client(&endpoint, SECRET_KEY), "manifests", "core.json");
    let error = load_from(&s3, limits(10_000)).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "registry source s3://manifests/core.json is unreadable: the object body broke off"
    );
    let url = format!("{endpoint}/manifest");
    let http = HttpSource::new(url.clone()).unwrap();
    let error = load_from(&http, limits(10_000)).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("registry source {url} is unreadable: the response body broke off")
    );
}
