//! End-to-end tests of the real `mcp-local` binary on a free loopback port: the curl walk-throughs
//! of README.md and docs/clients.md, the usage log's canary checks and EMF metrics (CONTRACT U1,
//! U2, C6), and HTTP policy over a real socket, rejected before any tool use (CONTRACT H1, H5, H6,
//! H7).

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::LocalServer;

mod support;

/// The usage events logged for `request_id`, waiting up to 10 s for `count` of them. Requests
/// on separate connections may be served by separate threads, whose lines reach the log in
/// either order: read them as a set ([`event_with`]), never by position.
fn usage_events(server: &LocalServer, request_id: &str, count: usize) -> Vec<Value> {
    server.usage_events_matching(count, |e| e["x_request_id"] == request_id)
}

/// The one event of `events` whose `field` is `value`.
#[track_caller]
fn event_with<'a>(events: &'a [Value], field: &str, value: &Value) -> &'a Value {
    let found: Vec<&Value> = events.iter().filter(|e| &e[field] == value).collect();
    assert_eq!(found.len(), 1, "one event with {field} {value}: {events:?}");
    found[0]
}

/// README.md, whose walk-through is run here.
const README: &str = include_str!("../../../README.md");

/// docs/clients.md, whose "Two eras" walk-through is run here.
const CLIENTS_GUIDE: &str = include_str!("../../../docs/clients.md");

/// The `sh` blocks of the README walk-through, in order.
fn readme_walkthrough() -> Vec<String> {
    sh_blocks(README, "walkthrough")
}

/// The `sh` blocks between `<!-- NAME:start -->` and `<!-- NAME:end -->` in `doc`.
fn sh_blocks(doc: &str, name: &str) -> Vec<String> {
    let start = doc
        .find(&format!("<!-- {name}:start -->"))
        .expect("start marker");
    let end = doc
        .find(&format!("<!-- {name}:end -->"))
        .expect("end marker");
    let mut blocks = Vec::new();
    let mut rest = &doc[start..end];
    while let Some(open) = rest.find("```sh\n") {
        let after = &rest[open + 6..];
        let close = after.find("```").unwrap();
        blocks.push(after[..close].to_string());
        rest = &after[close + 3..];
    }
    blocks
}

fn run_shell(script: &str) -> String {
    let output = Command::new("bash")
        .args(["-c", script])
        .output()
        .expect("bash runs");
    assert!(
        output.status.success(),
        "{script}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn body_of(http_output: &str) -> &str {
    http_output
        .split_once("\r\n\r\n")
        .map_or(http_output, |(_, body)| body)
}

#[test]
fn readme_curl_walkthrough_works_against_the_real_binary() {
    let server = LocalServer::start(&[]);
    let blocks = readme_walkthrough();
    assert_eq!(
        blocks.len(),
        4,
        "initialize, initialized, tools/list, tools/call"
    );
    let outputs: Vec<String> = blocks
        .iter()
        .map(|b| run_shell(&b.replace("http://127.0.0.1:3000", &server.base)))
        .collect();

    assert!(outputs[0].starts_with("HTTP/1.1 200"), "{}", outputs[0]);
    assert!(
        outputs[0]
            .to_ascii_lowercase()
            .contains("\r\nmcp-session-id: ")
    );
    let init: Value = serde_json::from_str(body_of(&outputs[0])).unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "core-tools");
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");

    assert!(outputs[1].starts_with("HTTP/1.1 202"), "{}", outputs[1]);
    assert_eq!(body_of(&outputs[1]), "");

    let list: Value = serde_json::from_str(&outputs[2]).unwrap();
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["search_documents", "lookup_glossary", "create_ticket"]
    );

    let call: Value = serde_json::from_str(&outputs[3]).unwrap();
    assert_eq!(call["result"]["isError"], false);
    let text = call["result"]["content"][0]["text"].as_str().unwrap();
    let docs: Value = serde_json::from_str(text).unwrap();
    assert_eq!(
        docs[0]["title"], "연차 휴가 규정",
        "Korean round-trips as UTF-8"
    );
    assert!(call["result"]["content"][0]["_meta"]["searchTime"].is_u64());
}

/// CONTRACT N3, N4, N2: the curl blocks of docs/clients.md "Two eras" against the real binary.
#[test]
fn n3_n4_clients_guide_two_eras_walkthrough_works_against_the_real_binary() {
    let server = LocalServer::start(&[]);
    let blocks = sh_blocks(CLIENTS_GUIDE, "eras");
    assert_eq!(
        blocks.len(),
        4,
        "server/discover, tools/list, tools/call, -32020"
    );
    let outputs: Vec<String> = blocks
        .iter()
        .map(|b| run_shell(&b.replace("http://127.0.0.1:3000", &server.base)))
        .collect();
    let server_info = json!({"name": "core-tools", "title": "Core tools", "version": "1.0.0"});

    assert!(outputs[0].starts_with("HTTP/1.1 200"), "{}", outputs[0]);
    assert!(!outputs[0].to_ascii_lowercase().contains("mcp-session-id"));
    let discover: Value = serde_json::from_str(body_of(&outputs[0])).unwrap();
    assert_eq!(
        discover["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );
    assert_eq!(discover["result"]["resultType"], "complete");
    assert_eq!(
        discover["result"]["_meta"]["io.modelcontextprotocol/serverInfo"],
        server_info
    );
    assert_eq!(discover["result"]["cacheScope"], "public");

    let list: Value = serde_json::from_str(&outputs[1]).unwrap();
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 3);
    assert_eq!(list["result"]["ttlMs"], 300_000);
    assert_eq!(
        list["result"]["_meta"]["io.modelcontextprotocol/serverInfo"],
        server_info
    );

    let call: Value = serde_json::from_str(&outputs[2]).unwrap();
    assert_eq!(call["result"]["isError"], false);
    assert_eq!(call["result"]["resultType"], "complete");
    let docs: Value =
        serde_json::from_str(call["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(docs[0]["id"], "DOC-1001");

    assert!(outputs[3].starts_with("HTTP/1.1 400"), "{}", outputs[3]);
    let error: Value = serde_json::from_str(body_of(&outputs[3])).unwrap();
    assert_eq!(error["id"], 4);
    assert_eq!(error["error"]["code"], -32020);
    assert_eq!(
        error["error"]["message"],
        "Header mismatch: Mcp-Name header is required"
    );
}

/// A plain TCP connection to `server` (reads time out after 10 s) and its `host:port`.
fn raw_connection(server: &LocalServer) -> (std::net::TcpStream, String) {
    let addr = server.base.trim_start_matches("http://").to_string();
    let stream = std::net::TcpStream::connect(&addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    (stream, addr)
}

fn post(server: &LocalServer, headers: &[(&str, &str)], body: &Value) -> (u16, String) {
    let mut args = vec![
        "-s".to_string(),
        "-o".into(),
        "-".into(),
        "-w".into(),
        "\n%{http_code}".into(),
        server.url("/mcp/core"),
        "-H".into(),
        "Content-Type: application/json".into(),
        "--data-binary".into(),
        body.to_string(),
    ];
    for (name, value) in headers {
        args.push("-H".into());
        args.push(format!("{name}: {value}"));
    }
    let output = Command::new("curl")
        .args(&args)
        .output()
        .expect("curl runs");
    let text = String::from_utf8(output.stdout).unwrap();
    let (body, status) = text.rsplit_once('\n').unwrap();
    (status.parse().unwrap(), body.to_string())
}

#[test]
fn usage_log_has_one_event_per_request_and_never_the_canaries() {
    let server = LocalServer::start(&[]);
    let canary = format!("canary{}", std::process::id());
    let employee = format!("EMP-{canary}-1");
    let virtual_employee = format!("VEMP-{canary}-2");
    let session = format!("sess-{canary}-3");
    let argument = format!("arg-{canary}-4");
    let guid = "4f1c2a9e-8b7d-4e6f-a5c4-3b2a1f0e9d8c";
    let request_id = format!("rid-{}", std::process::id());
    let headers = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("employee-no", employee.as_str()),
        ("virtual-employee-no", virtual_employee.as_str()),
        ("mcp-session-id", session.as_str()),
        ("guid", guid),
        ("x-request-id", request_id.as_str()),
    ];
    // create_ticket echoes its title: the canary is in the arguments and in the tool output.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "create_ticket", "arguments": {"title": argument, "priority": "low"}}});
    let (status, body) = post(&server, &headers, &call);
    assert_eq!(status, 200);
    assert!(
        body.contains(&argument),
        "the tool output carries the canary: {body}"
    );
    let bad = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "create_ticket", "arguments": {"title": argument}}});
    assert_eq!(post(&server, &headers, &bad).0, 200);

    let usage = usage_events(&server, &request_id, 2);
    assert_eq!(usage.len(), 2, "one event per request: {usage:?}");
    let usage = [
        event_with(&usage, "outcome", &json!("ok")).clone(),
        event_with(&usage, "outcome", &json!("rpc_error")).clone(),
    ];
    assert_eq!(usage[0]["guid"], guid);
    assert_eq!(usage[0]["route"], "core");
    assert_eq!(usage[0]["method"], "tools/call");
    assert_eq!(usage[0]["tool"], "create_ticket");
    assert_eq!(usage[0]["outcome"], "ok");
    assert_eq!(usage[0]["status"], 200);
    assert!(usage[0]["duration_ms"].is_u64());
    assert_eq!(usage[1]["outcome"], "rpc_error");
    assert_eq!(usage[1]["code"], -32602);
    // The same line is an EMF document: request metrics, and tool metrics for tool use only.
    assert!(
        usage[0]["_aws"]["CloudWatchMetrics"].is_array(),
        "{}",
        usage[0]
    );
    assert_eq!(usage[0]["Requests"], 1);
    assert_eq!(usage[0]["ToolCalls"], 1);
    assert_eq!(usage[0]["ToolErrors"], 0);
    assert_eq!(usage[0]["Tool"], "create_ticket");
    assert!(usage[0]["ToolLatency"].is_u64());
    assert_eq!(usage[1]["FailedRequests"], 1);
    assert!(usage[1].get("ToolCalls").is_none(), "{}", usage[1]);

    let logs = server.logs.lock().unwrap().join("\n");
    for secret in [&canary, &employee, &virtual_employee, &session, &argument] {
        assert!(
            !logs.contains(secret.as_str()),
            "{secret} leaked into the log:\n{logs}"
        );
    }
}

#[test]
fn http_policy_holds_over_a_real_socket() {
    let server = LocalServer::start(&[("MCP_MAX_REQUEST_BYTES", "2048")]);
    // H1: GET probes for SSE get 405 with Allow: POST.
    let out = run_shell(&format!(
        "curl -s -i -H 'Accept: text/event-stream' {}",
        server.url("/mcp/core")
    ));
    assert!(out.starts_with("HTTP/1.1 405"), "{out}");
    assert!(
        out.to_ascii_lowercase().contains("\r\nallow: post\r\n"),
        "{out}"
    );
    // H6: the local server only answers loopback Host names by default.
    let out = run_shell(&format!(
        "curl -s -o /dev/null -w '%{{http_code}}' -H 'Host: attacker.example' {}",
        server.url("/mcp/core")
    ));
    assert_eq!(out, "403");
    // H7: the body limit applies to what the socket delivers.
    let big =
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "y".repeat(4096)}});
    let (status, body) = post(&server, &[("MCP-Protocol-Version", "2025-11-25")], &big);
    assert_eq!(status, 413, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"],
        "payload_too_large"
    );
    // H7: a body announced over the limit is refused before it is sent.
    {
        use std::io::{Read, Write};
        let (mut stream, addr) = raw_connection(&server);
        write!(
            stream,
            "POST /mcp/core HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
             mcp-protocol-version: 2025-11-25\r\ncontent-length: 1000000000\r\n\r\n{{\"jsonrpc\":"
        )
        .unwrap();
        // Read until the whole JSON body is there (it may come in more than one segment).
        let mut answer = Vec::new();
        let error: Value = loop {
            let mut chunk = [0_u8; 4096];
            let n = stream
                .read(&mut chunk)
                .expect("an answer before the body is sent");
            assert!(n > 0, "closed before a whole answer: {answer:?}");
            answer.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&answer).into_owned();
            if let Some((_, json_body)) = text.split_once("\r\n\r\n")
                && let Ok(error) = serde_json::from_str::<Value>(json_body)
            {
                assert!(text.starts_with("HTTP/1.1 413"), "{text}");
                break error;
            }
        };
        assert_eq!(error["error"], "payload_too_large", "{error}");
    }
    // P6: outside the endpoint is a JSON 404.
    let out = run_shell(&format!(
        "curl -s -o /dev/null -w '%{{http_code}}' -X POST {}",
        server.url("/other")
    ));
    assert_eq!(out, "404");
}

/// Sends `head` and then the whole `body` before reading anything, as Python's
/// `http.client` does, and returns the status line and the JSON body of the answer.
fn send_whole_then_read(server: &LocalServer, head: &str, body: &[u8]) -> (String, Value) {
    use std::io::{Read, Write};
    let (mut stream, _) = raw_connection(server);
    stream.write_all(head.as_bytes()).unwrap();
    stream
        .write_all(body)
        .expect("the whole body is taken, not reset");
    let mut answer = Vec::new();
    loop {
        let mut chunk = [0_u8; 4096];
        let n = stream.read(&mut chunk).expect("an answer, not a reset");
        assert!(n > 0, "closed before a whole answer: {answer:?}");
        answer.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&answer).into_owned();
        if let Some((head, json_body)) = text.split_once("\r\n\r\n")
            && let Ok(error) = serde_json::from_str::<Value>(json_body)
        {
            return (head.lines().next().unwrap_or_default().to_string(), error);
        }
    }
}

/// CONTRACT H7: a 413 answered before the body is read whole reaches a client that sends its
/// whole body first (the rest of the body is read and dropped), with the body's length
/// announced or chunked.
#[test]
fn h7_a_client_that_sends_its_whole_body_before_reading_still_reads_the_413() {
    let server = LocalServer::start(&[("MCP_MAX_REQUEST_BYTES", "2048")]);
    let addr = server.base.trim_start_matches("http://").to_string();
    let body = vec![b'x'; 2 * 1024 * 1024];
    let mut chunked = Vec::new();
    for piece in body.chunks(64 * 1024) {
        chunked.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        chunked.extend_from_slice(piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    for _ in 0..5 {
        let head = format!(
            "POST /mcp/core HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
             content-length: {}\r\n\r\n",
            body.len()
        );
        let (status, error) = send_whole_then_read(&server, &head, &body);
        assert_eq!(status, "HTTP/1.1 413 Payload Too Large");
        assert_eq!(error["error"], "payload_too_large", "{error}");
        let head = format!(
            "POST /mcp/core HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
             transfer-encoding: chunked\r\n\r\n"
        );
        let (status, error) = send_whole_then_read(&server, &head, &chunked);
        assert_eq!(status, "HTTP/1.1 413 Payload Too Large");
        assert_eq!(error["error"], "payload_too_large", "{error}");
    }
    // A client that waits for `100 Continue` is not invited to send the body it announced.
    let head = format!(
        "POST /mcp/core HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         expect: 100-continue\r\ncontent-length: 5000000\r\n\r\n"
    );
    let (status, error) = send_whole_then_read(&server, &head, b"");
    assert_eq!(status, "HTTP/1.1 413 Payload Too Large");
    assert_eq!(error["error"], "payload_too_large", "{error}");
}

#[test]
fn registry_file_source_and_dynamic_routing_are_configured_by_environment() {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../../manifests/sample.json");
    let source = format!("file:{manifest}");
    let server = LocalServer::start(&[
        ("MCP_ROUTING", "dynamic"),
        ("MCP_ENDPOINT_PATH", "/mcp"),
        ("MCP_REGISTRY_SOURCE", &source),
        ("MCP_PROFILE", "prod"),
    ]);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let out = run_shell(&format!(
        "curl -s -H 'MCP-Protocol-Version: 2025-11-25' -H 'Content-Type: application/json' -d '{list}' {}",
        server.url("/mcp/core")
    ));
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["result"]["tools"].as_array().unwrap().len(), 3);
    let out = run_shell(&format!(
        "curl -s -H 'MCP-Protocol-Version: 2025-11-25' -H 'Content-Type: application/json' -d '{list}' {}",
        server.url("/mcp/payroll")
    ));
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["error"]["message"], "route key is not registered");
}

/// A Tool Service on loopback that answers every request after `delay`, counting calls.
fn slow_tool_service(delay: Duration) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let (url, calls, _) = slow_server("/slow", delay, r#"{"ok":true}"#);
    (url, calls)
}

/// An HTTP server on loopback that answers every request on `path` after `delay` with the JSON
/// `body`: its URL, the requests received, and the answers written.
fn slow_server(
    path: &str,
    delay: Duration,
    body: &str,
) -> (
    String,
    Arc<std::sync::atomic::AtomicUsize>,
    Arc<std::sync::atomic::AtomicUsize>,
) {
    answering_server(path, delay, "200 OK", body)
}

/// An HTTP server on loopback that answers every request on `path`, once its head is read,
/// after `delay` with `status` (e.g. `403 Forbidden`) and the JSON `body`: its URL, the
/// requests received, and the answers written.
fn answering_server(
    path: &str,
    delay: Duration,
    status: &str,
    body: &str,
) -> (
    String,
    Arc<std::sync::atomic::AtomicUsize>,
    Arc<std::sync::atomic::AtomicUsize>,
) {
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}{path}", listener.local_addr().unwrap());
    let calls = Arc::new(AtomicUsize::new(0));
    let answers = Arc::new(AtomicUsize::new(0));
    let (counter, answered) = (Arc::clone(&calls), Arc::clone(&answers));
    let response = Arc::new(format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    ));
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            let (counter, answered) = (Arc::clone(&counter), Arc::clone(&answered));
            let response = Arc::clone(&response);
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut request = Vec::new();
                let mut buffer = [0_u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buffer) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                counter.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(delay);
                answered.fetch_add(1, Ordering::SeqCst);
                let _ = stream.write_all(response.as_bytes());
            });
        }
    });
    (url, calls, answers)
}

#[test]
fn a_client_that_connects_while_the_registry_loads_is_answered_once_it_is_loaded() {
    use std::io::{Read, Write};
    use std::sync::atomic::Ordering;

    /// Kills the server when the test ends, failed or not.
    struct Killed(Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    let manifest = json!({"tools": [{"name": "late", "inputSchema": {"type": "object"},
                                     "_meta": {"endpoint": "http://127.0.0.1:9/late"}}]});
    let (source, requested, answered) = slow_server(
        "/manifest.json",
        Duration::from_secs(2),
        &manifest.to_string(),
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let _server = Killed(
        Command::new(env!("CARGO_BIN_EXE_mcp-local"))
            .args(["--listen", &addr, "--no-sample-tool-service"])
            .env("MCP_REGISTRY_SOURCE", &source)
            .env("MCP_PROFILE", "prod")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("mcp-local starts"),
    );
    // The port accepts while the manifest is still being fetched.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut stream = loop {
        match std::net::TcpStream::connect(&addr) {
            Ok(stream) => break stream,
            Err(error) => {
                assert!(
                    Instant::now() < deadline,
                    "mcp-local never accepted: {error}"
                );
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    };
    assert_eq!(
        answered.load(Ordering::SeqCst),
        0,
        "the connection was accepted only after the manifest arrived"
    );
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    write!(
        stream,
        "POST /mcp/core HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         mcp-protocol-version: 2025-11-25\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let list: Value = serde_json::from_str(body_of(&answer)).unwrap();
    assert_eq!(list["result"]["tools"][0]["name"], "late", "{answer}");
    assert_eq!(requested.load(Ordering::SeqCst), 1);
    assert_eq!(answered.load(Ordering::SeqCst), 1);
}

#[test]
fn u2_a_client_that_disconnects_before_the_answer_still_produces_its_usage_event() {
    use std::io::Write;
    use std::sync::atomic::Ordering;

    let (endpoint, calls) = slow_tool_service(Duration::from_millis(1500));
    let manifest = json!({"tools": [{
        "name": "slow_search", "inputSchema": {"type": "object"},
        "_meta": {"endpoint": endpoint, "timeoutMs": 10000}
    }]});
    let path = std::env::temp_dir().join(format!("mcp-local-u2-{}.json", std::process::id()));
    std::fs::write(&path, manifest.to_string()).unwrap();
    let source = format!("file:{}", path.display());
    let server = LocalServer::start(&[("MCP_REGISTRY_SOURCE", &source), ("MCP_PROFILE", "prod")]);

    let request_id = format!("gone-{}", std::process::id());
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "slow_search", "arguments": {}}})
    .to_string();
    let addr = server.base.trim_start_matches("http://").to_string();
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        stream,
        "POST /mcp/core HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         mcp-protocol-version: 2025-11-25\r\nx-request-id: {request_id}\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    stream.flush().unwrap();
    // The client leaves while the Tool Service is still working on the call.
    let deadline = Instant::now() + Duration::from_secs(10);
    while calls.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the call reached the Tool Service"
    );
    drop(stream);

    let usage = usage_events(&server, &request_id, 1);
    let _ = std::fs::remove_file(&path);
    assert_eq!(
        usage.len(),
        1,
        "the event is written after the client left: {usage:?}"
    );
    assert_eq!(usage[0]["method"], "tools/call");
    assert_eq!(usage[0]["tool"], "slow_search");
    assert_eq!(usage[0]["outcome"], "ok");
    assert!(usage[0]["tool_ms"].as_u64().is_some_and(|ms| ms > 0));
    assert_eq!(usage[0]["ToolCalls"], 1);
}

/// The ticket number `create_ticket` hands out next, read by creating one.
fn next_ticket(server: &LocalServer) -> u64 {
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "create_ticket", "arguments": {"title": "probe", "priority": "low"}}});
    let (status, body) = post(server, &[("MCP-Protocol-Version", "2025-11-25")], &call);
    assert_eq!(status, 200, "{body}");
    let value: Value = serde_json::from_str(&body).unwrap();
    let ticket: Value =
        serde_json::from_str(value["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    ticket["ticketId"]
        .as_str()
        .and_then(|t| t.strip_prefix("IT-"))
        .and_then(|n| n.parse().ok())
        .unwrap()
}

#[test]
fn h1_h5_h6_h7_rejections_happen_before_any_tool_use_and_are_logged_as_failed_requests() {
    let server = LocalServer::start(&[("MCP_MAX_REQUEST_BYTES", "2048")]);
    let employee = format!("EMP-canary{}-9", std::process::id());
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "create_ticket", "arguments": {"title": "t", "priority": "low"}}});
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "create_ticket",
                   "arguments": {"title": "y".repeat(4096), "priority": "low"}}});
    let rid = |what: &str| format!("{what}-{}", std::process::id());
    let before = next_ticket(&server);

    let with = |extra: (&str, &str), request_id: &str, body: &Value| {
        post(
            &server,
            &[
                ("MCP-Protocol-Version", "2025-11-25"),
                ("employee-no", employee.as_str()),
                ("x-request-id", request_id),
                extra,
            ],
            body,
        )
    };
    assert_eq!(
        with(("Origin", "https://evil.example"), &rid("origin"), &call).0,
        403
    );
    assert_eq!(
        with(("Host", "attacker.example"), &rid("host"), &call).0,
        403
    );
    assert_eq!(with(("Accept", "*/*"), &rid("size"), &big).0, 413);
    let out = run_shell(&format!(
        "curl -s -o /dev/null -w '%{{http_code}}' -H 'x-request-id: {}' {}",
        rid("get"),
        server.url("/mcp/core")
    ));
    assert_eq!(out, "405");

    // No create_ticket ran between the two probes: the rejected calls never reached it.
    assert_eq!(next_ticket(&server), before + 1);

    for (what, status, rejection) in [
        ("origin", 403, "origin_not_allowed"),
        ("host", 403, "host_not_allowed"),
        ("size", 413, "payload_too_large"),
        ("get", 405, "method_not_allowed"),
    ] {
        let usage = usage_events(&server, &rid(what), 1);
        assert_eq!(usage.len(), 1, "{what}: {usage:?}");
        let event = &usage[0];
        assert_eq!(event["outcome"], "http_error", "{what}: {event}");
        assert_eq!(event["status"], status, "{what}: {event}");
        assert_eq!(event["rejection"], rejection, "{what}: {event}");
        assert_eq!(event["Requests"], 1, "{what}: {event}");
        assert_eq!(event["FailedRequests"], 1, "{what}: {event}");
        for absent in ["tool", "tool_ms", "method", "Tool", "ToolCalls"] {
            assert!(event.get(absent).is_none(), "{what}: no {absent}: {event}");
        }
    }
    let logs = server.logs.lock().unwrap().join("\n");
    assert!(!logs.contains(&employee), "{employee} leaked into the log");
}

#[test]
fn a12_with_token_auth_the_usage_log_records_the_auth_outcome_and_never_the_token() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (store, token) = runtime.block_on(async {
        let store = gateway_tests::auth::fresh_store().await;
        let token = mcp_gateway::auth::PersonalToken::generate().unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        store
            .put_delegation(&mcp_gateway::auth::NewDelegation {
                key: token.store_key(),
                delegation_id: "3d9c0f52-delegation".into(),
                routes: vec!["core".into()],
                idle_ttl_s: 600,
                expires_at: now + 86_400,
                created_at: now,
                description: None,
                groups: Vec::new(),
            })
            .await
            .unwrap();
        (store, token)
    });
    let endpoint = gateway_tests::auth::dynamodb_url();
    let server = LocalServer::start(&[
        ("MCP_AUTH", "token"),
        ("MCP_AUTH_TABLE", store.table()),
        ("MCP_RATE_LIMIT", "1/3600"),
        // Even at trace level the AWS SDK's request logs (which hold the item key) stay off.
        ("RUST_LOG", "trace"),
        ("AWS_ENDPOINT_URL_DYNAMODB", endpoint.as_str()),
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
        ("AWS_REGION", "us-east-1"),
    ]);
    let request_id = format!("auth-{}", std::process::id());
    let bearer = format!("Bearer {}", token.expose());
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let with_token = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("x-request-id", request_id.as_str()),
        ("authorization", bearer.as_str()),
    ];
    assert_eq!(post(&server, &with_token, &list).0, 200);
    assert_eq!(post(&server, &with_token, &list).0, 429);
    let (status, body) = post(&server, &with_token[..2], &list);
    assert_eq!(status, 401, "{body}");

    let usage = usage_events(&server, &request_id, 3);
    assert_eq!(usage.len(), 3, "{usage:?}");
    for event in &usage {
        assert_eq!(event["auth"], "token", "{event}");
    }
    let usage = [
        event_with(&usage, "auth_outcome", &json!("ok")).clone(),
        event_with(&usage, "auth_outcome", &json!("rate_limited")).clone(),
        event_with(&usage, "auth_outcome", &json!("missing")).clone(),
    ];
    assert_eq!(usage[0]["auth_outcome"], "ok");
    assert_eq!(usage[0]["delegation_id"], "3d9c0f52-delegation");
    assert_eq!(usage[0]["outcome"], "ok");
    assert_eq!(usage[1]["auth_outcome"], "rate_limited");
    assert_eq!(usage[1]["status"], 429);
    assert_eq!(usage[1]["rejection"], "rate_limited");
    assert!(usage[1]["retry_after"].as_u64().is_some_and(|s| s >= 1));
    assert_eq!(usage[2]["auth_outcome"], "missing");
    assert_eq!(usage[2]["status"], 401);
    assert_eq!(usage[2]["FailedRequests"], 1);

    let logs = server.logs.lock().unwrap().join("\n");
    let hash = token.store_key();
    for secret in [token.expose(), &token.expose()[6..], &hash[4..]] {
        assert!(!logs.contains(secret), "{secret} leaked into the log");
    }
}

/// The names of the process's threads that serve requests (`mcp-serve-N`).
fn serving_threads(pid: u32) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .map_while(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("comm")).ok())
        .map(|name| name.trim().to_string())
        .filter(|name| name.starts_with("mcp-serve-"))
        .collect();
    names.sort();
    names
}

/// Runs `clients` curl processes at once against `/mcp/core`, each sending `calls` tools/call
/// of `create_ticket` (titled `title`) over one kept-alive connection. `options(client, call)`
/// gives each call's own curl options (what to print, which headers). Returns each client's
/// standard output, in client order.
fn concurrent_calls(
    server: &LocalServer,
    clients: usize,
    calls: usize,
    title: &str,
    options: impl Fn(usize, usize) -> Vec<String>,
) -> Vec<String> {
    let handles: Vec<_> = (0..clients)
        .map(|client| {
            let mut args: Vec<String> = Vec::new();
            for call in 0..calls {
                if call > 0 {
                    args.push("--next".into());
                }
                let body = json!({"jsonrpc": "2.0", "id": call, "method": "tools/call",
                    "params": {"name": "create_ticket",
                               "arguments": {"title": title, "priority": "low"}}});
                args.push("-s".into());
                args.extend(options(client, call));
                args.extend([
                    server.url("/mcp/core"),
                    "-H".into(),
                    "Content-Type: application/json".into(),
                    "-H".into(),
                    "MCP-Protocol-Version: 2025-11-25".into(),
                    "--data-binary".into(),
                    body.to_string(),
                ]);
            }
            std::thread::spawn(move || {
                let output = Command::new("curl")
                    .args(&args)
                    .output()
                    .expect("curl runs");
                String::from_utf8(output.stdout).unwrap()
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|handle| handle.join().unwrap())
        .collect()
}

#[test]
fn serving_threads_answer_concurrent_keep_alive_connections_from_one_registry() {
    let server = LocalServer::start_with_args(&["--threads", "3"], &[]);
    // The endpoint is printed once the socket listens; the threads start right after.
    let deadline = Instant::now() + Duration::from_secs(10);
    while serving_threads(server.child.id()).len() < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        serving_threads(server.child.id()),
        ["mcp-serve-0", "mcp-serve-1", "mcp-serve-2"]
    );

    // Six clients at once, each one connection (curl reuses it) with five tools/call.
    let run = format!("run-{}", std::process::id());
    let outputs = concurrent_calls(&server, 6, 5, "스레드 테스트", |client, _| {
        vec![
            "-w".into(),
            "\n".into(),
            "-H".into(),
            format!("x-request-id: {run}-{client}"),
        ]
    });
    let mut tickets = Vec::new();
    for output in outputs {
        let answers: Vec<Value> = output
            .lines()
            .filter(|line| !line.is_empty())
            .map(|line| serde_json::from_str(line).expect("a JSON-RPC response"))
            .collect();
        assert_eq!(answers.len(), 5, "{output}");
        for answer in answers {
            assert_eq!(answer["result"]["isError"], false, "{answer}");
            let text = answer["result"]["content"][0]["text"].as_str().unwrap();
            let ticket: Value = serde_json::from_str(text).unwrap();
            tickets.push(ticket["ticketId"].clone());
        }
    }
    // Every call reached the one sample Tool Service: 30 different tickets.
    let distinct: std::collections::BTreeSet<String> =
        tickets.iter().map(ToString::to_string).collect();
    assert_eq!(distinct.len(), 30, "{tickets:?}");
    for client in 0..6 {
        let usage = usage_events(&server, &format!("{run}-{client}"), 5);
        assert_eq!(usage.len(), 5, "one usage event per request: {usage:?}");
        assert!(usage.iter().all(|event| event["outcome"] == "ok"));
    }
}

fn send_signal(server: &LocalServer, signal: &str) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// The exit status of `server` once it has exited, waiting at most `seconds`.
fn exit_within(server: &mut LocalServer, seconds: u64) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "mcp-local exits within {seconds} s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ctrl_c_and_sigterm_let_a_call_in_flight_finish_before_the_server_exits() {
    for signal in ["INT", "TERM"] {
        shutdown_lets_a_call_in_flight_finish(signal);
    }
}

fn shutdown_lets_a_call_in_flight_finish(signal: &str) {
    use std::io::{Read, Write};
    use std::sync::atomic::Ordering;

    let (endpoint, calls) = slow_tool_service(Duration::from_millis(800));
    let manifest = json!({"tools": [{
        "name": "slow_search", "inputSchema": {"type": "object"},
        "_meta": {"endpoint": endpoint, "timeoutMs": 10000}
    }]});
    let path = std::env::temp_dir().join(format!("mcp-local-stop-{}.json", std::process::id()));
    std::fs::write(&path, manifest.to_string()).unwrap();
    let source = format!("file:{}", path.display());
    let mut server = LocalServer::start_with_args(
        &["--threads", "2"],
        &[("MCP_REGISTRY_SOURCE", &source), ("MCP_PROFILE", "prod")],
    );

    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "slow_search", "arguments": {}}})
    .to_string();
    let (mut stream, addr) = raw_connection(&server);
    write!(
        stream,
        "POST /mcp/core HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         mcp-protocol-version: 2025-11-25\r\nconnection: close\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while calls.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the call is in flight");

    send_signal(&server, signal);
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    let (_, json_body) = answer.split_once("\r\n\r\n").unwrap();
    let response: Value = serde_json::from_str(json_body).unwrap();
    assert_eq!(response["id"], 7);
    assert_eq!(response["result"]["isError"], false, "{response}");

    let status = exit_within(&mut server, 10);
    assert!(status.success(), "SIG{signal}: {status}");
}

#[test]
fn after_ctrl_c_new_connections_are_refused_and_a_second_ctrl_c_exits_despite_a_half_sent_request()
{
    use std::io::Write;

    let mut server = LocalServer::start_with_args(&["--threads", "2"], &[]);
    let addr = server.base.trim_start_matches("http://").to_string();
    // A client that sends part of a request and then nothing more.
    let mut stalled = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        stalled,
        "POST /mcp/core HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         content-length: 100\r\n\r\n{{\"jsonrpc\":"
    )
    .unwrap();
    stalled.flush().unwrap();
    std::thread::sleep(Duration::from_millis(200));

    send_signal(&server, "INT");
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::net::TcpStream::connect(&addr).is_ok() {
        assert!(
            Instant::now() < deadline,
            "the listener closes on the first ctrl-c"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "the half-sent request is waited for"
    );

    send_signal(&server, "INT");
    let status = exit_within(&mut server, 5);
    assert!(status.success(), "{status}");
    drop(stalled);
}

/// `mcp-local FLAG VALUE` exits with status 2 and says `invalid value 'VALUE' for 'FLAG
/// <PLACEHOLDER>': EXPECTED`.
fn assert_refused(flag: &str, placeholder: &str, values: &[&str], expected: &str) {
    for value in values {
        let output = Command::new(env!("CARGO_BIN_EXE_mcp-local"))
            .args([flag, value, "--listen", "127.0.0.1:0"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{flag} {value}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(
            stderr.contains(&format!(
                "invalid value '{value}' for '{flag} <{placeholder}>': {expected}"
            )),
            "{stderr}"
        );
    }
}

/// A malformed `MCP_*` variable stops `mcp-local` with one sentence on stderr (the
/// configuration error form): the variable, the value and the range, never a debug struct.
#[test]
fn a_malformed_variable_is_refused_with_one_sentence() {
    for (variable, value, expected) in [
        (
            "MCP_LIST_PAGE_SIZE",
            "abc",
            format!("'abc' is not a whole number from 1 to {}", usize::MAX),
        ),
        (
            "MCP_LIST_PAGE_SIZE",
            "99999999999999999999999",
            format!(
                "'99999999999999999999999' is too large: at most {}",
                usize::MAX
            ),
        ),
        (
            "MCP_ROUTING",
            "sideways",
            "'sideways' is not fixed or dynamic".to_string(),
        ),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_mcp-local"))
            .args(["--listen", "127.0.0.1:0"])
            .env(variable, value)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{variable}={value}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr, format!("mcp-local: {variable}: {expected}\n"));
    }
}

#[test]
fn threads_outside_1_to_256_are_refused_with_a_clear_error() {
    assert_refused(
        "--threads",
        "THREADS",
        &["0", "257", "many"],
        "expected a whole number from 1 to 256",
    );
}

#[test]
fn u1_a_burst_of_concurrent_requests_logs_each_request_exactly_once_on_whole_lines() {
    // The serving threads hold their log lines and write them together when idle: under
    // load every request's event must still be written once, on a line of its own, without
    // the server being stopped first.
    let server = LocalServer::start_with_args(&["--threads", "2"], &[]);
    let run = format!("burst-{}", std::process::id());
    let (clients, calls) = (8, 40);
    let outputs = concurrent_calls(&server, clients, calls, "burst", |client, call| {
        vec![
            "-o".into(),
            "/dev/null".into(),
            "-w".into(),
            "%{http_code}\n".into(),
            "-H".into(),
            format!("x-request-id: {run}-{client}-{call}"),
        ]
    });
    for statuses in outputs {
        assert_eq!(statuses, "200\n".repeat(calls), "every call is answered");
    }

    let expected: std::collections::BTreeSet<String> = (0..clients)
        .flat_map(|client| {
            let run = &run;
            (0..calls).map(move |call| format!("{run}-{client}-{call}"))
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    let (logged, lines) = loop {
        let lines = server.logs.lock().unwrap().clone();
        let logged: Vec<String> = lines
            .iter()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|event| event["target"] == "mcp_gateway::usage")
            .filter_map(|event| event["x_request_id"].as_str().map(str::to_string))
            .filter(|id| id.starts_with(&run))
            .collect();
        if logged.len() >= expected.len() || Instant::now() > deadline {
            break (logged, lines);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(logged.len(), expected.len(), "one event per request");
    let unique: std::collections::BTreeSet<String> = logged.into_iter().collect();
    assert_eq!(unique, expected, "each request's event, once");
    for line in &lines {
        assert!(
            serde_json::from_str::<Value>(line).is_ok(),
            "every log line is one whole JSON document: {line}"
        );
    }
}

#[test]
fn header_timeout_outside_1_to_3600_seconds_is_refused_with_a_clear_error() {
    assert_refused(
        "--header-timeout",
        "SECONDS",
        &["0", "3601", "soon"],
        "expected a whole number of seconds from 1 to 3600",
    );
}

#[test]
fn connections_that_stall_before_a_whole_request_head_are_closed_after_the_header_timeout() {
    use std::io::{Read, Write};

    let server = LocalServer::start_with_args(&["--threads", "1", "--header-timeout", "1"], &[]);
    // Silent from the start; stopped halfway through its headers; idle after one answer.
    let (mut silent, _) = raw_connection(&server);
    let (mut half, addr) = raw_connection(&server);
    write!(
        half,
        "POST /mcp/core HTTP/1.1\r\nhost: {addr}\r\ncontent-type: appl"
    )
    .unwrap();
    let (mut idle, _) = raw_connection(&server);
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    write!(
        idle,
        "POST /mcp/core HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         mcp-protocol-version: 2025-11-25\r\ncontent-length: {}\r\n\r\n{list}",
        list.len()
    )
    .unwrap();
    let mut answer = [0_u8; 16];
    idle.read_exact(&mut answer).unwrap();
    assert_eq!(
        &answer, b"HTTP/1.1 200 OK\r",
        "the idle connection was answered first"
    );

    for (what, stream) in [
        ("silent", &mut silent),
        ("half-sent head", &mut half),
        ("idle", &mut idle),
    ] {
        // Closed with no answer (EOF, or a reset) before raw_connection's 10 s read timeout.
        let mut rest = Vec::new();
        let outcome = stream.read_to_end(&mut rest);
        assert!(
            !rest.windows(8).any(|w| w == b"HTTP/1.1"),
            "{what}: no answer is sent: {:?}",
            String::from_utf8_lossy(&rest)
        );
        if let Err(error) = outcome {
            assert!(
                !matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ),
                "{what}: still open after 10 s: {error}"
            );
        }
    }
    // The server still serves new connections.
    let (status, body) = post(
        &server,
        &[("MCP-Protocol-Version", "2025-11-25")],
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    assert_eq!(status, 200, "{body}");
}

#[test]
fn body_timeout_outside_1_to_3600_seconds_is_refused_with_a_clear_error() {
    assert_refused(
        "--body-timeout",
        "SECONDS",
        &["0", "3601", "soon"],
        "expected a whole number of seconds from 1 to 3600",
    );
}

#[test]
fn connections_that_stall_in_a_request_body_are_closed_after_the_body_timeout() {
    use std::io::{Read, Write};

    // A header timeout far longer than the body timeout: only the body timeout can close the
    // stalled connections below within raw_connection's 10 s read timeout.
    let server = LocalServer::start_with_args(
        &[
            "--threads",
            "1",
            "--header-timeout",
            "60",
            "--body-timeout",
            "1",
        ],
        &[],
    );
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let head = |addr: &str, framing: &str| {
        format!(
            "POST /mcp/core HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
             mcp-protocol-version: 2025-11-25\r\n{framing}\r\n\r\n"
        )
    };
    // A whole head announcing 100 bytes, then 11 of them and nothing more.
    let (mut short, addr) = raw_connection(&server);
    write!(
        short,
        "{}{{\"jsonrpc\":",
        head(&addr, "content-length: 100")
    )
    .unwrap();
    // A chunked body that never sends its last chunk.
    let (mut chunked, _) = raw_connection(&server);
    write!(
        chunked,
        "{}b\r\n{{\"jsonrpc\":\r\n",
        head(&addr, "transfer-encoding: chunked")
    )
    .unwrap();
    // A body that arrives whole, in two parts, well within the body timeout: answered.
    let (mut slow, _) = raw_connection(&server);
    let content_length = format!("content-length: {}", list.len());
    write!(slow, "{}{}", head(&addr, &content_length), &list[..10]).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    write!(slow, "{}", &list[10..]).unwrap();
    let mut answer = [0_u8; 16];
    slow.read_exact(&mut answer).unwrap();
    assert_eq!(&answer, b"HTTP/1.1 200 OK\r", "a whole body is answered");

    for (what, stream) in [
        ("short body", &mut short),
        ("unfinished chunks", &mut chunked),
    ] {
        // Closed with no answer (EOF, or a reset) before raw_connection's 10 s read timeout.
        let mut rest = Vec::new();
        let outcome = stream.read_to_end(&mut rest);
        assert!(
            !rest.windows(8).any(|w| w == b"HTTP/1.1"),
            "{what}: no answer is sent: {:?}",
            String::from_utf8_lossy(&rest)
        );
        if let Err(error) = outcome {
            assert!(
                !matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ),
                "{what}: still open after 10 s: {error}"
            );
        }
    }
    // The stalled requests never reached the gateway: no usage event, a log line each.
    let deadline = Instant::now() + Duration::from_secs(10);
    let closed = loop {
        let closed: Vec<Value> = server
            .logs
            .lock()
            .unwrap()
            .iter()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|event| event["body_timeout_s"] == 1)
            .collect();
        if closed.len() >= 2 || Instant::now() > deadline {
            break closed;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(closed.len(), 2, "{closed:?}");
    for event in &closed {
        assert_eq!(event["level"], "WARN", "{event}");
        assert_eq!(
            event["message"], "connection closed: request body not received in full within 1 s",
            "{event}"
        );
    }
    // The log lines above are written with the usage events of their time.
    assert_eq!(
        server.usage_events_matching(1, |_| true).len(),
        1,
        "only the whole request was handled"
    );
    // The server still serves new connections.
    let (status, body) = post(
        &server,
        &[("MCP-Protocol-Version", "2025-11-25")],
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    assert_eq!(status, 200, "{body}");
}

#[test]
fn h9_u1_a_preflight_is_answered_by_the_binary_and_logged_as_a_preflight() {
    let server = LocalServer::start(&[("MCP_ALLOWED_ORIGINS", "http://app.example")]);
    let request_id = format!("preflight-{}", std::process::id());
    let output = Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-D",
            "-",
            "-X",
            "OPTIONS",
            &server.url("/mcp/core"),
            "-H",
            "Origin: http://app.example",
            "-H",
            "Access-Control-Request-Method: POST",
            "-H",
            "Access-Control-Request-Headers: content-type, mcp-protocol-version",
            "-H",
            &format!("x-request-id: {request_id}"),
        ])
        .output()
        .expect("curl runs");
    let head = String::from_utf8_lossy(&output.stdout).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 204"), "{head}");
    assert!(
        head.contains("access-control-allow-origin: http://app.example\r\n"),
        "{head}"
    );
    assert!(
        head.contains("access-control-allow-headers: content-type, mcp-protocol-version\r\n"),
        "{head}"
    );
    let usage = usage_events(&server, &request_id, 1);
    assert_eq!(usage.len(), 1, "{usage:?}");
    assert_eq!(usage[0]["cors"], "preflight");
    assert_eq!(usage[0]["status"], 204);
    assert_eq!(usage[0]["outcome"], "ok");
    assert_eq!(usage[0]["FailedRequests"], 0);

    // A preflight that H5 refuses is logged as a preflight too.
    let refused_id = format!("{request_id}-foreign");
    let status = Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "-X",
            "OPTIONS",
            &server.url("/mcp/core"),
            "-H",
            "Origin: http://evil.example",
            "-H",
            "Access-Control-Request-Method: POST",
            "-H",
            &format!("x-request-id: {refused_id}"),
        ])
        .output()
        .expect("curl runs");
    assert_eq!(String::from_utf8_lossy(&status.stdout), "403");
    let usage = usage_events(&server, &refused_id, 1);
    assert_eq!(usage.len(), 1, "{usage:?}");
    assert_eq!(usage[0]["cors"], "preflight");
    assert_eq!(usage[0]["rejection"], "origin_not_allowed");
}

/// The Lambda function of the credential tests below.
const LAMBDA_ARN: &str = "arn:aws:lambda:us-east-1:123456789012:function:hr-tools";

/// `mcp-local` serving route `core` with two tools on [`LAMBDA_ARN`], `quick_lookup`
/// (`timeoutMs` 1000) and `lookup` (the default 10,000 ms), and a `sigv4` HTTP tool
/// `signed_lookup` (`timeoutMs` 1000) at `<invoke_api>/signed`, invoking the Invoke API at
/// `invoke_api` with credentials from the standard AWS chain, in which only the container
/// credentials endpoint `credentials_uri` can give any: no other AWS variable reaches the server
/// (see [`LocalServer::start_with_args`]), no profile file is read and instance metadata is off.
fn lambda_server(label: &str, credentials_uri: &str, invoke_api: &str) -> LocalServer {
    let tool = |name: &str, meta: Value| {
        json!({
            "name": name,
            "description": format!("Lambda tool {name}"),
            "inputSchema": {"type": "object", "properties": {"term": {"type": "string"}}},
            "_meta": meta
        })
    };
    let manifest = json!({
        "manifestVersion": 1,
        "tools": [
            tool("quick_lookup", json!({"endpoint": LAMBDA_ARN, "timeoutMs": 1000})),
            tool("lookup", json!({"endpoint": LAMBDA_ARN})),
            // An HTTP tool signed with the same credentials (CONTRACT X12), on the same server.
            tool("signed_lookup", json!({
                "endpoint": format!("{invoke_api}/signed"), "timeoutMs": 1000,
                "auth": {"type": "sigv4", "service": "execute-api", "region": "us-east-1"}
            })),
        ]
    });
    let path = std::env::temp_dir().join(format!(
        "mcp-local-credentials-{label}-{}.json",
        std::process::id()
    ));
    std::fs::write(&path, manifest.to_string()).unwrap();
    let source = format!("file:{}", path.display());
    let missing = std::env::temp_dir().join(format!("mcp-local-no-such-aws-file-{label}"));
    let missing = missing.to_str().unwrap();
    LocalServer::start(&[
        ("MCP_REGISTRY_SOURCE", &source),
        ("MCP_PROFILE", "prod"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ENDPOINT_URL_LAMBDA", invoke_api),
        ("AWS_CONTAINER_CREDENTIALS_FULL_URI", credentials_uri),
        ("AWS_CONFIG_FILE", missing),
        ("AWS_SHARED_CREDENTIALS_FILE", missing),
        ("AWS_EC2_METADATA_DISABLED", "true"),
    ])
}

/// Calls `tool` on `server` and returns its result's `isError` and text, asserting that the
/// answer names neither the function nor any endpoint.
fn lambda_call(server: &LocalServer, tool: &str) -> (bool, String) {
    let (status, body) = post(
        server,
        &[("MCP-Protocol-Version", "2025-11-25")],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": tool, "arguments": {"term": "SLA"}}}),
    );
    assert_eq!(status, 200, "{body}");
    for secret in ["123456789012", "us-east-1", "arn:", "hr-tools", "127.0.0.1"] {
        assert!(!body.contains(secret), "{secret} leaked: {body}");
    }
    let value: Value = serde_json::from_str(&body).unwrap();
    let text = value["result"]["content"][0]["text"].as_str().unwrap();
    (
        value["result"]["isError"].as_bool().unwrap(),
        text.to_string(),
    )
}

#[test]
fn x10_credentials_from_the_container_endpoint_sign_the_invocation() {
    use std::sync::atomic::Ordering;

    // The control of the two tests below: with an endpoint that answers, the chain takes its
    // credentials from it and the function is invoked.
    let (credentials, asked, _) = answering_server(
        "/credentials",
        Duration::ZERO,
        "200 OK",
        r#"{"AccessKeyId":"AKIDEXAMPLE","SecretAccessKey":"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY","Token":"session-token","Expiration":"2099-01-01T00:00:00Z"}"#,
    );
    let (invoke_api, invoked, _) =
        answering_server("", Duration::ZERO, "200 OK", r#"{"term":"SLA"}"#);
    let server = lambda_server("answering", &credentials, &invoke_api);
    assert_eq!(
        lambda_call(&server, "lookup"),
        (false, r#"{"term":"SLA"}"#.to_string())
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1, "credentials fetched once");
    assert_eq!(invoked.load(Ordering::SeqCst), 1, "the function invoked");
}

#[test]
fn x10_x7_a_credentials_endpoint_that_never_answers_is_reported_as_such_within_the_tool_timeout() {
    use std::sync::atomic::Ordering;

    // Accepts, reads the request and never answers.
    let (credentials, asked, _) =
        answering_server("/credentials", Duration::from_hours(1), "200 OK", "{}");
    let (invoke_api, invoked, _) = answering_server("", Duration::ZERO, "200 OK", "{}");
    let server = lambda_server("hanging", &credentials, &invoke_api);
    // The tool's own timeout, when it is shorter than the credentials' 5 s.
    assert_eq!(
        lambda_call(&server, "quick_lookup"),
        (
            true,
            "The gateway could not obtain AWS credentials within 1000 ms to invoke the Tool \
             Service function"
                .to_string()
        )
    );
    // At most 5 s of the default 10 s: the rest is the invocation's.
    assert_eq!(
        lambda_call(&server, "lookup"),
        (
            true,
            "The gateway could not obtain AWS credentials within 5000 ms to invoke the Tool \
             Service function"
                .to_string()
        )
    );
    assert!(
        asked.load(Ordering::SeqCst) >= 2,
        "the chain asked the endpoint"
    );
    assert_eq!(invoked.load(Ordering::SeqCst), 0, "nothing was invoked");
}

/// CONTRACT X7, X12: a `sigv4` tool's one timeout covers the credential read and the request
/// together: credentials in 0.7 s and an answer 0.7 s later pass a 1,000 ms timeout.
#[test]
fn x7_x12_a_sigv4_tools_credential_read_and_request_share_one_timeout() {
    use std::sync::atomic::Ordering;

    let (credentials, asked, _) = answering_server(
        "/credentials",
        Duration::from_millis(700),
        "200 OK",
        r#"{"AccessKeyId":"AKIDEXAMPLE","SecretAccessKey":"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY","Token":"session-token","Expiration":"2099-01-01T00:00:00Z"}"#,
    );
    let (service, called, _) = answering_server(
        "",
        Duration::from_millis(700),
        "200 OK",
        r#"{"term":"SLA"}"#,
    );
    let server = lambda_server("one-timeout", &credentials, &service);
    assert_eq!(
        lambda_call(&server, "signed_lookup"),
        (
            true,
            "Tool Service did not answer within 1000 ms".to_string()
        )
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1, "credentials fetched");
    assert_eq!(called.load(Ordering::SeqCst), 1, "the request was sent");
}

#[test]
fn x10_a_credentials_endpoint_that_refuses_or_answers_an_error_is_a_credentials_failure() {
    use std::sync::atomic::Ordering;

    let (invoke_api, invoked, _) = answering_server("", Duration::ZERO, "200 OK", "{}");
    let failed = (
        true,
        "The gateway could not obtain AWS credentials to invoke the Tool Service function (the \
         credential provider failed)"
            .to_string(),
    );

    // A port nothing listens on: every connection is refused (the SDK retries twice first).
    let refusing = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let refused = format!("http://{}/credentials", refusing.local_addr().unwrap());
    drop(refusing);
    let server = lambda_server("refused", &refused, &invoke_api);
    assert_eq!(lambda_call(&server, "lookup"), failed);

    // An error answer: its message is never quoted.
    let (credentials, asked, _) = answering_server(
        "/credentials",
        Duration::ZERO,
        "403 Forbidden",
        r#"{"Code":"AccessDenied","Message":"token tok-5f2a9c expired"}"#,
    );
    let server = lambda_server("forbidden", &credentials, &invoke_api);
    let (is_error, text) = lambda_call(&server, "lookup");
    assert_eq!((is_error, text.clone()), failed);
    assert!(!text.contains("tok-5f2a9c") && !text.contains("AccessDenied"));
    assert_eq!(asked.load(Ordering::SeqCst), 1, "a 403 is not retried");
    assert_eq!(invoked.load(Ordering::SeqCst), 0, "nothing was invoked");
}

/// A `tools/list` of the `core` route, through curl.
fn core_tools_list(server: &LocalServer) -> Value {
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let out = run_shell(&format!(
        "curl -s -H 'MCP-Protocol-Version: 2025-11-25' -H 'Content-Type: application/json' -d '{list}' {}",
        server.url("/mcp/core")
    ));
    serde_json::from_str(&out).unwrap()
}

#[test]
fn r2_registry_s3_source_signs_with_the_keys_of_the_environment() {
    use gateway_tests::s3::{ACCESS_KEY, S3Server, SECRET_KEY};
    // The S3-protocol server checks each request's SigV4 signature against its one key pair;
    // the gateway reads its keys from the environment, as a Lambda function's are given.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let s3 = runtime.block_on(S3Server::start());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../../manifests/sample.json");
    s3.put(
        "manifests",
        "sample.json",
        &std::fs::read_to_string(manifest).unwrap(),
    );
    let start = |secret: &str| {
        LocalServer::start(&[
            ("MCP_REGISTRY_SOURCE", "s3://manifests/sample.json"),
            ("MCP_PROFILE", "prod"),
            ("AWS_ENDPOINT_URL_S3", &s3.endpoint),
            ("AWS_REGION", "ap-northeast-2"),
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY),
            ("AWS_SECRET_ACCESS_KEY", secret),
        ])
    };
    let server = start(SECRET_KEY);
    let value = core_tools_list(&server);
    assert_eq!(
        value["result"]["tools"].as_array().unwrap().len(),
        3,
        "{value}"
    );
    // Another secret signs differently: the server refuses the read, and prod serves no
    // registry (CONTRACT R4).
    let refused = start("another-secret");
    let value = core_tools_list(&refused);
    assert_eq!(value["error"]["code"], -32603, "{value}");
    assert!(
        value["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("the tool registry is not loaded"),
        "{value}"
    );
}
