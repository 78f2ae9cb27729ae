//! A misbehaving Tool Service on a raw loopback socket (CONTRACT X6, X7): slow headers, a
//! trickled body, a 7 MB body, an endless chunked body, a reset mid-body, a redirect to another
//! port, invalid UTF-8 and an HTML page served with 200 all become `isError` results, in time,
//! without following the redirect and without reading past the byte cap.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_gateway::invoke::HttpInvoker;
use mcp_gateway::registry::compile_manifest;
use mcp_gateway::{Config, Gateway, InvocationContext};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// How the fault service answers each request.
#[derive(Clone)]
enum Fault {
    /// Reads the request and sends nothing for a minute.
    SlowHeaders,
    /// Sends headers announcing 1 MB, then one byte every 50 ms.
    TrickleBody,
    /// Sends a 7 MB body with its `Content-Length`.
    SevenMegabytes,
    /// Sends a chunked body that never ends, 64 KiB per chunk.
    EndlessChunked,
    /// Announces 1,000 bytes, sends 100, then resets the connection.
    ResetMidBody,
    /// Answers `302` with `Location` pointing at this URL.
    Redirect(String),
    /// Sends `{` 0xFF 0xFE `}` as `application/json`.
    InvalidUtf8,
    /// Sends an HTML error page with status 200 and `text/html`.
    HtmlPage,
    /// Answers 200 `{"ok":true}`.
    Healthy,
}

/// What the fault service saw.
#[derive(Default)]
struct Seen {
    /// Requests read.
    calls: AtomicUsize,
    /// A write failed because the gateway closed the connection.
    closed_by_peer: AtomicBool,
}

/// A fault-injecting Tool Service on `127.0.0.1`, serving until the test's runtime ends.
struct FaultService {
    url: String,
    seen: Arc<Seen>,
}

impl FaultService {
    async fn start(fault: Fault) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/tool", listener.local_addr().unwrap());
        let seen = Arc::new(Seen::default());
        let shared = Arc::clone(&seen);
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let fault = fault.clone();
                let seen = Arc::clone(&shared);
                tokio::spawn(async move {
                    let mut stream = stream;
                    if read_request(&mut stream).await {
                        seen.calls.fetch_add(1, Ordering::SeqCst);
                        if answer(&mut stream, &fault).await.is_err() {
                            seen.closed_by_peer.store(true, Ordering::SeqCst);
                        }
                    }
                });
            }
        });
        Self { url, seen }
    }

    fn calls(&self) -> usize {
        self.seen.calls.load(Ordering::SeqCst)
    }

    /// Waits up to `within` for the gateway to close the connection under a writing answer.
    async fn closed_by_peer_within(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if self.seen.closed_by_peer.load(Ordering::SeqCst) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }
}

/// Reads one request: headers, then a `Content-Length` body. `false` when the peer left.
async fn read_request(stream: &mut TcpStream) -> bool {
    let mut buffer = Vec::new();
    let mut chunk = [0_u8; 4096];
    let header_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buffer[..header_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buffer.len() < header_end + length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
    true
}

async fn answer(stream: &mut TcpStream, fault: &Fault) -> std::io::Result<()> {
    match fault {
        Fault::SlowHeaders => {
            tokio::time::sleep(Duration::from_mins(1)).await;
            stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
                .await
        }
        Fault::TrickleBody => {
            stream
                .write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\n\r\n[",
                )
                .await?;
            for _ in 0..1_200 {
                tokio::time::sleep(Duration::from_millis(50)).await;
                stream.write_all(b"1").await?;
                stream.flush().await?;
            }
            Ok(())
        }
        Fault::SevenMegabytes => {
            let size = 7 * 1000 * 1000;
            stream
                .write_all(
                    format!("HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {size}\r\n\r\n")
                        .as_bytes(),
                )
                .await?;
            let block = vec![b'x'; 64 * 1024];
            let mut sent = 0;
            while sent < size {
                let n = block.len().min(size - sent);
                stream.write_all(&block[..n]).await?;
                sent += n;
            }
            Ok(())
        }
        Fault::EndlessChunked => {
            stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n")
                .await?;
            let mut chunk = format!("{:x}\r\n", 64 * 1024).into_bytes();
            chunk.extend(std::iter::repeat_n(b'y', 64 * 1024));
            chunk.extend_from_slice(b"\r\n");
            // Bounded so that a broken gateway cannot keep the test running: 64 KiB × 16,384
            // is 1 GiB, far past every cap.
            for _ in 0..16_384 {
                stream.write_all(&chunk).await?;
            }
            Ok(())
        }
        Fault::ResetMidBody => {
            stream
                .write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n",
                )
                .await?;
            stream.write_all(&[b' '; 100]).await?;
            stream.flush().await?;
            tokio::time::sleep(Duration::from_millis(50)).await;
            stream.set_zero_linger()?;
            Ok(())
        }
        Fault::Redirect(location) => {
            stream
                .write_all(
                    format!(
                        "HTTP/1.1 302 Found\r\nlocation: {location}\r\ncontent-length: 0\r\n\r\n"
                    )
                    .as_bytes(),
                )
                .await
        }
        Fault::InvalidUtf8 => {
            stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 4\r\n\r\n{\xff\xfe}")
                .await
        }
        Fault::HtmlPage => {
            let page = "<!DOCTYPE html><html><body><h1>Sign in</h1><p>Session expired.</p></body></html>";
            stream
                .write_all(
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\r\n{page}",
                        page.len()
                    )
                    .as_bytes(),
                )
                .await
        }
        Fault::Healthy => {
            stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{\"ok\":true}")
                .await
        }
    }
}

/// A fixed gateway whose one tool `t` calls `endpoint` with `timeout_ms`.
fn gateway(endpoint: &str, timeout_ms: u64) -> Gateway<HttpInvoker> {
    let manifest = json!({"tools": [{
        "name": "t", "inputSchema": {"type": "object"},
        "_meta": {"endpoint": endpoint, "timeoutMs": timeout_ms}
    }]});
    Gateway::new(
        Config::fixed_defaults(),
        Ok(compile_manifest(&manifest).unwrap()),
        HttpInvoker::new().unwrap(),
    )
}

/// Calls tool `t` and returns the `isError` text, asserting the result shape and that neither
/// the endpoint nor the loopback address leaks.
async fn failure_text(gateway: &Gateway<HttpInvoker>, endpoint: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "t", "arguments": {}}});
    let response = gateway
        .handle(
            gateway_tests::request(
                "POST",
                "/mcp/core",
                &[gateway_tests::VERSION],
                body.to_string(),
            ),
            InvocationContext::default(),
        )
        .await;
    assert_eq!(response.status(), 200);
    let raw = String::from_utf8_lossy(response.body()).into_owned();
    assert!(!raw.contains(endpoint), "endpoint leaked: {raw}");
    assert!(!raw.contains("127.0.0.1"), "address leaked: {raw}");
    let value: Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(value["id"], 7);
    assert!(
        value.get("error").is_none(),
        "a result, not an error: {raw}"
    );
    assert_eq!(value["result"]["isError"], true, "{raw}");
    assert!(value["result"]["content"][0]["_meta"]["searchTime"].is_u64());
    value["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn x7_slow_headers_time_out_at_the_tools_timeout() {
    let service = FaultService::start(Fault::SlowHeaders).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    let text = failure_text(&gateway(&service.url, 400), &service.url).await;
    assert_eq!(text, "Tool Service did not answer within 400 ms");
    assert!(
        Instant::now() < deadline,
        "answered long before the service"
    );
    assert_eq!(service.calls(), 1);
}

#[tokio::test]
async fn x7_a_trickled_body_cannot_hold_the_call_past_the_tools_timeout() {
    let service = FaultService::start(Fault::TrickleBody).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    let text = failure_text(&gateway(&service.url, 500), &service.url).await;
    assert_eq!(text, "Tool Service did not answer within 500 ms");
    assert!(Instant::now() < deadline, "the trickle lasts a minute");
    assert!(
        service.closed_by_peer_within(Duration::from_secs(10)).await,
        "the gateway hung up on the trickle"
    );
}

#[tokio::test]
async fn x6_a_seven_megabyte_body_is_refused_at_the_byte_cap() {
    let service = FaultService::start(Fault::SevenMegabytes).await;
    let text = failure_text(&gateway(&service.url, 10_000), &service.url).await;
    assert_eq!(text, "Tool Service response exceeds 4194304 bytes");
}

#[tokio::test]
async fn x6_an_endless_chunked_body_stops_being_read_at_the_byte_cap() {
    let service = FaultService::start(Fault::EndlessChunked).await;
    let deadline = Instant::now() + Duration::from_secs(25);
    // A timeout far longer than reading 4 MiB on loopback: the cap, not the clock, ends it.
    let text = failure_text(&gateway(&service.url, 30_000), &service.url).await;
    assert_eq!(text, "Tool Service response exceeds 4194304 bytes");
    assert!(Instant::now() < deadline, "the cap ends the call early");
    assert!(
        service.closed_by_peer_within(Duration::from_secs(10)).await,
        "the gateway stopped reading and closed the connection"
    );
}

#[tokio::test]
async fn x6_a_connection_reset_mid_body_is_an_is_error_result() {
    let service = FaultService::start(Fault::ResetMidBody).await;
    let text = failure_text(&gateway(&service.url, 5_000), &service.url).await;
    assert_eq!(
        text,
        "Tool Service call failed (the response body broke off)"
    );
}

#[tokio::test]
async fn x6_a_redirect_to_another_port_is_never_followed() {
    let elsewhere = FaultService::start(Fault::Healthy).await;
    let service = FaultService::start(Fault::Redirect(elsewhere.url.clone())).await;
    let text = failure_text(&gateway(&service.url, 5_000), &service.url).await;
    assert_eq!(
        text,
        "Tool Service answered with a redirect (HTTP 302), which is not followed"
    );
    assert_eq!(service.calls(), 1);
    // Give a wrongly followed redirect time to arrive before checking it never did.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(elsewhere.calls(), 0, "the redirect target was called");
}

#[tokio::test]
async fn x6_invalid_utf8_is_an_is_error_result() {
    let service = FaultService::start(Fault::InvalidUtf8).await;
    let text = failure_text(&gateway(&service.url, 5_000), &service.url).await;
    assert_eq!(text, "Tool Service response is not valid UTF-8");
}

#[tokio::test]
async fn x6_an_html_page_served_with_200_is_an_is_error_result() {
    let service = FaultService::start(Fault::HtmlPage).await;
    let text = failure_text(&gateway(&service.url, 5_000), &service.url).await;
    assert_eq!(
        text,
        "Tool Service answered with content type 'text/html', which is neither JSON nor plain text"
    );
    assert!(!text.contains("Sign in"), "the page is not quoted");
}

#[tokio::test]
async fn x6_a_healthy_service_on_the_same_socket_code_is_a_result() {
    // The fault service itself is sound: a healthy answer is a plain success.
    let service = FaultService::start(Fault::Healthy).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "t", "arguments": {"k": "v"}}});
    let response = gateway(&service.url, 5_000)
        .handle(
            gateway_tests::request(
                "POST",
                "/mcp/core",
                &[gateway_tests::VERSION],
                body.to_string(),
            ),
            InvocationContext::default(),
        )
        .await;
    let value: Value = serde_json::from_slice(response.body()).unwrap();
    assert_eq!(value["result"]["isError"], false, "{value}");
    assert_eq!(value["result"]["content"][0]["text"], r#"{"ok":true}"#);
    assert_eq!(service.calls(), 1);
}
