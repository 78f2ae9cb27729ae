//! Lambda function tools end to end (CONTRACT M4, X10, X4, X6, X7, C4, C6): the gateway invokes
//! the real `sample-lambda-tool` function (functions/sample-lambda-tool), which `cargo lambda
//! watch` builds and runs, through the Lambda Invoke API at `AWS_ENDPOINT_URL_LAMBDA` = the test
//! relay (`relay.rs`), which bridges the emulator's differences from AWS and records what the
//! gateway sent. Two gateways: the real `mcp-local` binary, and the `mcp-core` function under the
//! same `cargo lambda watch` (reached through its function URL emulation).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::relay::{Recorded, Relay};
use super::{
    FIRST_ANSWER, LATER_ANSWER, Scratch, Session, Watch, without_test_env, workspace_root,
};

/// The sample function's ARN: account, region and the name the emulator knows.
const FUNCTION_ARN: &str = "arn:aws:lambda:us-east-1:123456789012:function:sample-lambda-tool";
const ACCOUNT: &str = "123456789012";
const REGION: &str = "us-east-1";
const ACCESS_KEY: &str = "AKIDEXAMPLE";

/// The caller headers every tools/call carries (CONTRACT C1–C4), forwarded unchanged (X4, X10).
const EMPLOYEE_NO: &str = "ENC(AbC+/==)";
const VIRTUAL_EMPLOYEE_NO: &str = "VENC(Zx9/+w==)";
const GUID: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";
const REQUEST_ID: &str = "lambda-watch.req-42";
const SESSION_ID: &str = "lambda-watch-session-7";
const CALLER_HEADERS: [(&str, &str); 5] = [
    ("employee-no", EMPLOYEE_NO),
    ("virtual-employee-no", VIRTUAL_EMPLOYEE_NO),
    ("guid", GUID),
    ("x-request-id", REQUEST_ID),
    ("mcp-session-id", SESSION_ID),
];

/// A single-route manifest (`core`) of the sample function's tools; `list_glossary_terms` calls
/// the `live` alias, `slow_lookup` gives up after 500 ms.
fn lambda_manifest() -> Value {
    let term = json!({"type": "string", "minLength": 1});
    let tool = |name: &str, endpoint: String, schema: Value, extra: Value| {
        let mut meta = json!({"version": "1.0.0", "endpoint": endpoint, "timeoutMs": 30000});
        if let (Value::Object(meta), Value::Object(extra)) = (&mut meta, extra) {
            meta.extend(extra);
        }
        json!({"name": name, "title": name, "description": format!("The sample function's {name}."),
               "inputSchema": schema, "_meta": meta})
    };
    let arn = || FUNCTION_ARN.to_string();
    let empty = || json!({"type": "object", "properties": {}});
    json!({
        "manifestVersion": 1,
        "routes": [{
            "routeKey": "core",
            "server": {"name": "core-tools", "title": "Core tools", "version": "1.0.0"},
            "tools": [
                tool("lookup_glossary", arn(), json!({"type": "object",
                    "properties": {"term": term, "language": {"type": "string", "enum": ["ko", "en"]}},
                    "required": ["term"]}), json!({})),
                tool("list_glossary_terms", format!("{FUNCTION_ARN}:live"), empty(), json!({})),
                tool("define_term", arn(), json!({"type": "object",
                    "properties": {"term": term}, "required": ["term"]}), json!({})),
                tool("echo_client_context", arn(), empty(), json!({})),
                tool("fail_hard", arn(), empty(), json!({})),
                tool("slow_lookup", arn(), json!({"type": "object",
                    "properties": {"term": term, "delayMs": {"type": "integer", "minimum": 0}},
                    "required": ["term", "delayMs"]}), json!({"timeoutMs": 500})),
            ]
        }]
    })
}

/// The AWS settings of the gateway: the relay as the Lambda endpoint, dummy static credentials.
fn aws_env(relay: &Relay) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ENDPOINT_URL_LAMBDA", relay.endpoint()),
        ("AWS_REGION", REGION.to_string()),
        ("AWS_ACCESS_KEY_ID", ACCESS_KEY.to_string()),
        (
            "AWS_SECRET_ACCESS_KEY",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".to_string(),
        ),
        ("AWS_EC2_METADATA_DISABLED", "true".to_string()),
    ]
}

/// A scratch folder of its own (the two tests run side by side), with the manifest written.
fn scratch(label: &str) -> (Scratch, PathBuf) {
    let dir = std::env::temp_dir().join(format!("mcp-lambda-tools-{}-{label}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = dir.join("manifest.json");
    std::fs::write(&manifest, lambda_manifest().to_string()).unwrap();
    (Scratch(dir), manifest)
}

/// `cargo lambda watch` with the function variables in `env`, the functions' Runtime API
/// through `relay`, and `relay` forwarding to it; the sample function built and started.
async fn watch_through(relay: &Relay, dir: &Path, env: &[(&str, String)]) -> Watch {
    let env_file = dir.join("functions.env");
    let mut lines = String::from("RUST_LOG=info\n");
    for (name, value) in env {
        lines.extend([name, "=", value.as_str(), "\n"]);
    }
    std::fs::write(&env_file, lines).unwrap();
    let runner = relay.write_runner(dir);
    let watch = Watch::start_with_env(&env_file, dir.join("watch.log"), &[runner]);
    relay.forward_to(watch.port);
    warm_up(&watch).await;
    watch
}

/// One invocation straight at the emulator (its own form: the bare name, the client context as
/// JSON), which builds and starts the function before the gateway's calls, whose timeouts are
/// shorter than a build.
async fn warm_up(watch: &Watch) {
    let answer = reqwest::Client::new()
        .post(format!(
            "http://127.0.0.1:{}/2015-03-31/functions/sample-lambda-tool/invocations",
            watch.port
        ))
        .header(
            "lambda-runtime-client-context",
            r#"{"custom":{"mcpToolName":"list_glossary_terms"}}"#,
        )
        .body("{}")
        .timeout(FIRST_ANSWER)
        .send()
        .await
        .unwrap_or_else(|e| panic!("the sample function did not answer: {e}\n{}", watch.log()));
    let status = answer.status();
    let body = answer.text().await.unwrap();
    assert_eq!(
        (status.as_u16(), body.as_str()),
        (200, r#"["휴가","SLA","OTP"]"#),
        "{}",
        watch.log()
    );
}

/// `tools/call` with the caller headers; returns the result.
async fn call(session: &Session<'_>, name: &str, arguments: &Value) -> Value {
    let mut request = session
        .client
        .post(&session.url)
        .timeout(LATER_ANSWER)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("MCP-Protocol-Version", "2025-11-25");
    for (header, value) in CALLER_HEADERS {
        request = request.header(header, value);
    }
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}});
    let response = request
        .body(body.to_string())
        .send()
        .await
        .unwrap_or_else(|e| panic!("{name}: no answer: {e}\n{}", session.watch.log()));
    assert_eq!(response.status(), 200);
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).expect("JSON");
    assert_eq!(body["id"], 7, "{body}");
    let result = body["result"].clone();
    assert!(result.is_object(), "{name}: not a result: {body}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    // X10: the text never names the function, the account or the region.
    for secret in [ACCOUNT, REGION, "arn:"] {
        assert!(!text.contains(secret), "{name}: '{secret}' in {text}");
    }
    result
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().expect("a text block")
}

fn last_record(relay: &Relay) -> Recorded {
    relay.recorded().pop().expect("the relay saw an invocation")
}

/// What the gateway sent for one call (X10): the Invoke API request, signed with SigV4 for
/// `lambda` in the ARN's region, the arguments as the payload, the client context with the tool
/// name and the forwarded caller headers.
fn assert_invocation(record: &Recorded, tool: &str, arguments: &Value, qualifier: Option<&str>) {
    assert_eq!(record.method, "POST");
    let path = record.path_and_query.split('?').next().unwrap_or_default();
    let segment = path
        .strip_prefix("/2015-03-31/functions/")
        .and_then(|rest| rest.strip_suffix("/invocations"))
        .unwrap_or_else(|| panic!("not an Invoke API path: {}", record.path_and_query));
    assert!(!segment.contains('/'), "one path segment: {segment}");
    let decoded = percent_encoding::percent_decode_str(segment).decode_utf8_lossy();
    assert!(
        decoded == FUNCTION_ARN
            || decoded == "sample-lambda-tool"
            || decoded == format!("{FUNCTION_ARN}:{}", qualifier.unwrap_or_default()),
        "the function: {decoded}"
    );
    assert_eq!(record.function, "sample-lambda-tool");
    assert_eq!(
        record.qualifier.as_deref(),
        qualifier,
        "{}",
        record.path_and_query
    );
    if let Some(qualifier) = qualifier {
        assert!(
            record
                .path_and_query
                .ends_with(&format!("?Qualifier={qualifier}")),
            "{}",
            record.path_and_query
        );
    }
    assert_eq!(
        record.header("x-amz-invocation-type"),
        Some("RequestResponse")
    );
    let authorization = record.header("authorization").expect("SigV4 authorization");
    assert!(
        authorization.starts_with(&format!("AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/")),
        "{authorization}"
    );
    assert!(
        authorization.contains(&format!("/{REGION}/lambda/aws4_request")),
        "{authorization}"
    );
    assert!(authorization.contains("SignedHeaders="), "{authorization}");
    assert!(authorization.contains("Signature="), "{authorization}");
    let date = record.header("x-amz-date").expect("x-amz-date");
    assert!(
        date.len() == 16 && date.ends_with('Z') && date.as_bytes()[8] == b'T',
        "{date}"
    );
    assert!(
        authorization.contains(&format!("/{}/", &date[..8])),
        "{authorization} {date}"
    );
    let payload: Value = serde_json::from_slice(&record.body).expect("a JSON payload");
    assert_eq!(&payload, arguments);
    let raw_context = record
        .header("x-amz-client-context")
        .expect("X-Amz-Client-Context");
    assert!(raw_context.len() <= 3583, "{raw_context}");
    let expected = json!({"custom": {
        "bedrockAgentCoreToolName": tool,
        "mcpToolName": tool,
        "guid": GUID,
        "x-request-id": REQUEST_ID,
        "mcp-session-id": SESSION_ID,
        "employee-no": EMPLOYEE_NO,
        "virtual-employee-no": VIRTUAL_EMPLOYEE_NO,
    }});
    let mut context = record.client_context.clone().expect("base64 of JSON");
    // CONTRACT O3: the call's traceparent, a new trace's as the client sent none.
    let traceparent = context["custom"]
        .as_object_mut()
        .and_then(|custom| custom.remove("traceparent"))
        .expect("a traceparent");
    assert_eq!(
        traceparent.as_str().map(str::len),
        Some(55),
        "{traceparent}"
    );
    // And, from mcp-core under the emulator, the invocation's X-Ray trace (O2).
    strip_xray(&mut context["custom"]);
    let context = &context;
    // Same members and values; every value a string; nothing else.
    let as_map = |value: &Value| {
        value["custom"]
            .as_object()
            .expect("custom")
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    assert_eq!(as_map(context), as_map(&expected), "{context}");
    assert_eq!(context.as_object().map(serde_json::Map::len), Some(1));
}

/// Removes the `x-amzn-trace-id` a gateway under the Lambda emulator passes on from its
/// invocation (CONTRACT O2, O3), checking its form; the local server has none to pass on.
fn strip_xray(custom: &mut Value) {
    if let Some(xray) = custom
        .as_object_mut()
        .and_then(|custom| custom.remove("x-amzn-trace-id"))
    {
        assert!(
            xray.as_str().is_some_and(|x| x.starts_with("Root=1-")),
            "{xray}"
        );
    }
}

/// The cases of the brief, through one gateway whose MCP endpoint `session` names; `logs`
/// reads everything the gateway and the emulator logged so far.
async fn lambda_tools_answer(session: &Session<'_>, relay: &Relay, logs: &dyn Fn() -> String) {
    assert_eq!(session.initialize().await["name"], "core-tools");
    let names = session.tool_names().await;
    for tool in [
        "lookup_glossary",
        "list_glossary_terms",
        "define_term",
        "echo_client_context",
        "fail_hard",
        "slow_lookup",
    ] {
        assert!(names.iter().any(|n| n == tool), "{tool} in {names:?}");
    }

    // A JSON object: its compact JSON (X5 via X10).
    let arguments = json!({"term": "SLA"});
    let result = call(session, "lookup_glossary", &arguments).await;
    assert_eq!(result["isError"], false, "{result}\n{}", logs());
    assert_eq!(
        text(&result),
        json!({"term": "SLA", "definition": "서비스 수준 협약: 서비스 제공자가 보장하는 가용성과 응답 시간."})
            .to_string()
    );
    assert!(
        result["content"][0]["_meta"]["searchTime"].is_u64(),
        "{result}"
    );
    assert_invocation(&last_record(relay), "lookup_glossary", &arguments, None);

    // An array, through the `live` alias (?Qualifier=live).
    let result = call(session, "list_glossary_terms", &json!({})).await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(text(&result), r#"["휴가","SLA","OTP"]"#);
    assert_invocation(
        &last_record(relay),
        "list_glossary_terms",
        &json!({}),
        Some("live"),
    );

    // A JSON string: its JSON text, quotes included.
    let result = call(session, "define_term", &json!({"term": "OTP"})).await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(text(&result), r#""일회용 비밀번호.""#);

    // A handled error: the function's own message.
    let result = call(session, "lookup_glossary", &json!({"term": "nope"})).await;
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        text(&result),
        "Tool Service function failed: term 'nope' is not in the glossary"
    );

    // A panic: an unhandled error.
    let result = call(session, "fail_hard", &json!({})).await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text(&result).starts_with("Tool Service function failed: "),
        "{result}"
    );

    // The client context the function received: the tool name under both keys and the caller
    // headers, unchanged.
    let result = call(session, "echo_client_context", &json!({})).await;
    assert_eq!(result["isError"], false, "{result}");
    let mut echoed: Value = serde_json::from_str(text(&result)).expect("an object");
    // CONTRACT O3: the function's runtime hands it the call's traceparent too.
    let traceparent = echoed
        .as_object_mut()
        .and_then(|custom| custom.remove("traceparent"))
        .expect("a traceparent in the function's client context");
    assert!(
        traceparent
            .as_str()
            .is_some_and(|t| t.len() == 55 && t.starts_with("00-")),
        "{traceparent}"
    );
    strip_xray(&mut echoed);
    assert_eq!(
        echoed,
        json!({
            "bedrockAgentCoreToolName": "echo_client_context",
            "mcpToolName": "echo_client_context",
            "guid": GUID,
            "x-request-id": REQUEST_ID,
            "mcp-session-id": SESSION_ID,
            "employee-no": EMPLOYEE_NO,
            "virtual-employee-no": VIRTUAL_EMPLOYEE_NO,
        }),
        "{result}"
    );
    let echo = last_record(relay);
    assert_invocation(&echo, "echo_client_context", &json!({}), None);

    // A timeout shorter than the function's run (X7, X6's text).
    let started = Instant::now();
    let result = call(
        session,
        "slow_lookup",
        &json!({"term": "OTP", "delayMs": 3000}),
    )
    .await;
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(text(&result), "Tool Service did not answer within 500 ms");
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "{:?}",
        started.elapsed()
    );

    // C4, C6: no employee number (nor the client context that carries them) in any log.
    let encoded_context = echo.header("x-amz-client-context").unwrap().to_string();
    // The gateway's usage lines are written when a serving thread is idle: give them a moment.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let logged = logs();
    assert!(!logged.is_empty());
    for secret in [EMPLOYEE_NO, VIRTUAL_EMPLOYEE_NO, encoded_context.as_str()] {
        assert!(!logged.contains(secret), "'{secret}' logged:\n{logged}");
    }
}

/// The real `mcp-local` binary (built like the functions, by cargo), its standard output and
/// error collected.
struct LocalGateway {
    child: Child,
    url: String,
    lines: Arc<Mutex<Vec<String>>>,
}

impl LocalGateway {
    fn start(manifest: &Path, env: &[(&str, String)]) -> Self {
        let mut build = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        build
            .args(["build", "--bin", "mcp-local"])
            .current_dir(workspace_root());
        without_test_env(&mut build);
        assert!(build.status().expect("cargo build").success());
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map_or_else(|| workspace_root().join("target"), PathBuf::from);
        let mut command = Command::new(target.join("debug/mcp-local"));
        command
            .args([
                "--listen",
                "127.0.0.1:0",
                "--no-sample-tool-service",
                "--log-json",
            ])
            .env(
                "MCP_REGISTRY_SOURCE",
                format!("file:{}", manifest.display()),
            )
            .env("RUST_LOG", "info")
            .env_remove("AWS_PROFILE")
            .env_remove("AWS_SESSION_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        without_test_env(&mut command);
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("mcp-local starts");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().unwrap();
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        let stderr = child.stderr.take().unwrap();
        let sink = Arc::clone(&lines);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("mcp-local: MCP endpoint ") {
                    let _ = tx.send(rest.split(' ').next().unwrap_or_default().to_string());
                }
                sink.lock().unwrap().push(line);
            }
        });
        let url = rx.recv_timeout(Duration::from_mins(1)).unwrap_or_else(|_| {
            panic!(
                "mcp-local did not start:\n{}",
                lines.lock().unwrap().join("\n")
            )
        });
        Self { child, url, lines }
    }

    fn log(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }
}

impl Drop for LocalGateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_local_calls_lambda_tools_through_the_invoke_api() {
    let (scratch, manifest) = scratch("local");
    let relay = Relay::start().await;
    let watch = watch_through(&relay, &scratch.0, &[]).await;
    let gateway = LocalGateway::start(&manifest, &aws_env(&relay));
    let session = Session {
        watch: &watch,
        client: reqwest::Client::new(),
        url: gateway.url.clone(),
    };
    let logs = || format!("{}\n{}", gateway.log(), watch.log());
    lambda_tools_answer(&session, &relay, &logs).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_core_calls_lambda_tools_through_the_invoke_api() {
    let (scratch, manifest) = scratch("core");
    let relay = Relay::start().await;
    let mut env = aws_env(&relay);
    env.push((
        "MCP_REGISTRY_SOURCE",
        format!("file:{}", manifest.display()),
    ));
    let watch = watch_through(&relay, &scratch.0, &env).await;
    let session = Session {
        watch: &watch,
        client: reqwest::Client::new(),
        url: watch.url("mcp-core", "/mcp/core"),
    };
    let logs = || watch.log();
    lambda_tools_answer(&session, &relay, &logs).await;
}
