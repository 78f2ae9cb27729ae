//! `sigv4` tools (CONTRACT M5, X12) against an independent signer: the Tool Service is
//! `support/sigv4_service.py`, which rebuilds each request from what arrived and checks its
//! SigV4 signature with botocore's `SigV4Auth` (not the `aws-sigv4` crate the gateway signs
//! with). It answers `{"verified": true, ...}`, so a verified call is an ordinary result, and
//! lists what it received with botocore's canonical query string and signed headers. Replays of
//! a verified request, altered after signing, show the check fails when it should.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use gateway_tests::auth::moto_python;
use gateway_tests::{Harness, manifest, rpc};
use mcp_gateway::invoke::HttpInvoker;
use mcp_gateway::registry::compile_manifest;
use mcp_gateway::{Config, Gateway};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Value, json};
use wiremock::MockServer;

use super::outbound_credentials::result_of;

/// The fixed credentials the gateway signs with, and `sigv4_service.py` checks with.
const ACCESS_KEY: &str = "AKIDEXAMPLE";
const SECRET_KEY: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

/// The caller headers X4 forwards (all signed, X12).
const FORWARDED: [(&str, &str); 4] = [
    ("guid", "0b5e7c0a-1d2e-4f3a-9b8c-7d6e5f4a3b2c"),
    ("x-request-id", "req-42"),
    ("employee-no", "ENC(AbC+/==)"),
    ("virtual-employee-no", "VENC:xyz"),
];

/// SigV4's URI encoding: every byte but `A-Za-z0-9-._~`.
const SIGV4_SET: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The service's own requests go straight to it, whatever proxy the environment names.
fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

fn encoded(text: &str) -> String {
    utf8_percent_encode(text, SIGV4_SET).to_string()
}

/// `support/sigv4_service.py` running in the repository's Python (`MOTO_PYTHON`, else `.venv`),
/// killed when dropped (and exiting by itself when the test process is gone: its stdin closes).
struct Sigv4Service {
    url: String,
    child: Child,
}

impl Sigv4Service {
    fn start() -> Self {
        let python = moto_python();
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("support/sigv4_service.py");
        let mut child = Command::new(&python)
            .arg(&script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "{} {} does not start: {e}",
                    python.display(),
                    script.display()
                )
            });
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the service's first line");
        let port: u16 = line.trim().parse().unwrap_or_else(|_| {
            panic!(
                "sigv4_service.py printed no port ({line:?}): does {} have botocore? \
                 Run tests/run.sh (it installs tests/requirements.txt into .venv) or set MOTO_PYTHON",
                python.display()
            )
        });
        Self {
            url: format!("http://127.0.0.1:{port}"),
            child,
        }
    }

    /// Calls `name` with `args` and the forwarded caller headers: the call's result must be
    /// botocore's verdict `verified` for `scope` (service, region).
    async fn verified(&self, h: &Harness, name: &str, args: Value, scope: (&str, &str)) {
        let body = rpc(
            json!(1),
            "tools/call",
            json!({"name": name, "arguments": args}),
        );
        let (is_error, text) = result_of(&h.post("/mcp/core", &body, &FORWARDED).await);
        let verdict: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let expected = json!({"verified": true, "service": scope.0, "region": scope.1});
        assert!(
            !is_error && verdict == expected,
            "{name}: {text}\nreceived: {:#}",
            self.requests().await.last().unwrap_or(&Value::Null)
        );
    }

    /// Sends `record`'s request again, its signature and signed headers (`edit` replacing
    /// one) to `target` with `body`: the service's status and verdict.
    async fn replay(
        &self,
        record: &Value,
        target: &str,
        body: &str,
        edit: Option<(&str, &str)>,
    ) -> (u16, Value) {
        let method = record["method"].as_str().unwrap().as_bytes();
        let mut request = client()
            .request(
                reqwest::Method::from_bytes(method).unwrap(),
                format!("{}{target}", self.url),
            )
            .body(body.to_string())
            .header("authorization", record["authorization"].as_str().unwrap());
        for pair in record["headers"].as_array().unwrap() {
            let name = pair[0].as_str().unwrap();
            let value = match edit {
                Some((edited, value)) if edited == name => value,
                _ => pair[1].as_str().unwrap(),
            };
            request = request.header(name, value);
        }
        let answer = request.send().await.expect("the service answers");
        let status = answer.status().as_u16();
        let verdict = serde_json::from_slice(&answer.bytes().await.unwrap()).expect("a verdict");
        (status, verdict)
    }

    /// Every request the service checked, in order, with its verdict.
    async fn requests(&self) -> Vec<Value> {
        let answer = client()
            .get(format!("{}/__requests", self.url))
            .send()
            .await
            .expect("the service lists its requests");
        serde_json::from_slice(&answer.bytes().await.unwrap()).expect("a JSON list")
    }
}

impl Drop for Sigv4Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A tool at `endpoint` signed with `auth`, taking `schema`, with the `_meta` fields of `meta`.
fn tool(name: &str, endpoint: &str, auth: &Value, schema: &Value, meta: &Value) -> Value {
    let mut tool = json!({"name": name, "description": format!("{name} at {endpoint}"),
                          "inputSchema": schema,
                          "_meta": {"endpoint": endpoint, "auth": auth}});
    for (key, value) in meta.as_object().unwrap() {
        tool["_meta"][key] = value.clone();
    }
    tool
}

/// An object schema of string property `q`.
fn q_schema() -> Value {
    json!({"type": "object", "properties": {"q": {"type": "string"}}})
}

/// A gateway whose route `core` also has `tools`, signing with the fixed credentials.
async fn harness(config: Config, base: &str, tools: Vec<Value>) -> Harness {
    let mut document = manifest(base);
    document["routes"][0]["tools"]
        .as_array_mut()
        .unwrap()
        .extend(tools);
    let snapshot = compile_manifest(&document).expect("test manifest compiles");
    let invoker = HttpInvoker::from_config(&config)
        .unwrap()
        .with_aws_credentials(ACCESS_KEY, SECRET_KEY);
    Harness {
        gateway: Arc::new(Gateway::new(config, Ok(snapshot), invoker)),
        tool_service: MockServer::start().await,
    }
}

/// The value of signed header `name` as `record` shows it.
fn signed<'a>(record: &'a Value, name: &str) -> Option<&'a str> {
    record["headers"]
        .as_array()?
        .iter()
        .find(|pair| pair[0] == name)
        .and_then(|pair| pair[1].as_str())
}

#[tokio::test]
async fn x12_botocore_verifies_the_signature_of_each_sigv4_call_over_what_arrived() {
    let service = Sigv4Service::start();
    let base = &service.url;
    let sigv4 = |service: &str, region: &str| json!({"type": "sigv4", "service": service, "region": region});
    let (eu, us, seoul) = (
        ("execute-api", "eu-west-1"),
        ("execute-api", "us-east-2"),
        ("lambda", "ap-northeast-2"),
    );
    let query_schema = json!({"type": "object", "properties": {
        "q": {"type": "string"}, "tag": {"type": "array", "items": {"type": "string"}},
        "limit": {"type": "integer"}, "verbose": {"type": "boolean"}}});
    let path_schema = json!({"type": "object", "properties": {
        "id": {"type": "string"}, "part": {"type": "string"},
        "X-Tenant": {"type": "string"}, "note": {"type": "string"}}, "required": ["id", "part"]});
    let tools = vec![
        tool(
            "post_json",
            &format!("{base}/prod/items?stage=1"),
            &sigv4(eu.0, eu.1),
            &json!({"type": "object", "properties": {"q": {}, "n": {"type": "number"}}}),
            &json!({}),
        ),
        tool(
            "get_query",
            &format!("{base}/prod/search?stage=beta"),
            &sigv4(us.0, us.1),
            &query_schema,
            &json!({"method": "GET", "parameters": {
                "q": "query", "tag": "query", "limit": "query", "verbose": "query"}}),
        ),
        tool(
            "put_part",
            &format!("{base}/prod/items/{{id}}/parts/{{part}}"),
            &sigv4(seoul.0, seoul.1),
            &path_schema,
            &json!({"method": "PUT",
                   "parameters": {"id": "path", "part": "path", "X-Tenant": "header"}}),
        ),
    ];
    let h = harness(Config::fixed_defaults(), base, tools).await;
    let post_body = json!({"q": "a b", "n": 1.50});
    service.verified(&h, "post_json", post_body, eu).await;
    let q = "연차 휴가 ä b*'()!~-_.+=&/?#%";
    let args = json!({"q": q, "tag": ["z y", "a", "M"], "limit": 2.0, "verbose": true});
    service.verified(&h, "get_query", args, us).await;
    let (id, part) = ("x/1 ä%", "a:b@c+d;e=f");
    let args = json!({"id": id, "part": part, "X-Tenant": "t-1;x=y", "note": "μ"});
    service.verified(&h, "put_part", args, seoul).await;

    let seen = service.requests().await;
    assert_eq!(seen.len(), 3, "{seen:#?}");
    assert!(seen.iter().all(|r| r["verified"] == true), "{seen:#?}");
    // Every request signs these headers, the forwarded ones included, with the values received.
    for record in &seen {
        let names: Vec<&str> = record["signed_headers"]
            .as_str()
            .unwrap()
            .split(';')
            .collect();
        for name in
            "accept host x-amz-date guid x-request-id employee-no virtual-employee-no".split(' ')
        {
            assert!(names.contains(&name), "{name} unsigned: {record:#}");
        }
        for (name, value) in FORWARDED {
            assert_eq!(signed(record, name), Some(value), "{record:#}");
        }
    }

    // POST with a JSON body: the body and its Content-Type are signed as sent.
    let post = &seen[0];
    assert_eq!(
        (&post["method"], &post["path"]),
        (&json!("POST"), &json!("/prod/items"))
    );
    assert_eq!(post["body"], r#"{"q":"a b","n":1.5}"#);
    assert_eq!(signed(post, "content-type"), Some("application/json"));
    assert_eq!(post["canonical_query"], "stage=1");

    // GET with query arguments: sent in argument order, each byte but A-Za-z0-9-._~ encoded,
    // which is SigV4's encoding; botocore's canonical query string sorts the pairs.
    let get = &seen[1];
    let sent = format!(
        "stage=beta&q={}&tag=z%20y&tag=a&tag=M&limit=2&verbose=true",
        encoded(q)
    );
    assert_eq!(get["query"], sent.as_str(), "{get:#}");
    let canonical = format!(
        "limit=2&q={}&stage=beta&tag=M&tag=a&tag=z%20y&verbose=true",
        encoded(q)
    );
    assert_eq!(get["canonical_query"], canonical.as_str(), "{get:#}");
    assert_eq!(
        (get["body"].as_str(), signed(get, "content-type")),
        (Some(""), None)
    );

    // A path of percent-encoded segments: SigV4 (not S3) encodes the URI path once more.
    let put = &seen[2];
    let (id, part) = (encoded(id), encoded(part));
    assert_eq!(
        put["path"],
        format!("/prod/items/{id}/parts/{part}").as_str()
    );
    let canonical_uri = format!("/prod/items/{}/parts/{}", encoded(&id), encoded(&part));
    let canonical_request = put["canonical_request"].as_str().unwrap();
    assert_eq!(
        canonical_request.lines().nth(1),
        Some(canonical_uri.as_str())
    );
    assert_eq!(signed(put, "x-tenant"), Some("t-1;x=y"));
    assert_eq!(put["body"], r#"{"note":"μ"}"#);

    // The negative controls: the same request sent again verifies; altered after signing (the
    // body, the query, a signed header) it does not.
    let (target, body) = ("/prod/items?stage=1", r#"{"q":"a b","n":1.5}"#);
    let (status, verdict) = service.replay(post, target, body, None).await;
    assert_eq!(
        (status, &verdict["verified"]),
        (200, &json!(true)),
        "{verdict:#}"
    );
    let tampered = [
        (target, r#"{"q":"a b","n":2.5}"#, None),
        ("/prod/items?stage=2", body, None),
        (target, body, Some(("employee-no", "ENC(other)"))),
    ];
    for (target, body, edit) in tampered {
        let (status, verdict) = service.replay(post, target, body, edit).await;
        assert_eq!(status, 403, "{target} {body} {edit:?}: {verdict:#}");
        assert_eq!(verdict["verified"], false);
        let why = verdict["why"].as_str().unwrap();
        assert!(why.contains("botocore computes"), "{why}");
    }
    assert_eq!(service.requests().await.len(), 7);
}

/// CONTRACT M5: a `sigv4` tool without `region` signs for the one its endpoint's AWS host
/// names. The service is the gateway's tool proxy (`MCP_TOOL_PROXY`), so a request for an
/// `execute-api` host reaches it on loopback with that host.
#[tokio::test]
async fn x12_botocore_verifies_the_region_an_amazonaws_host_names() {
    let service = Sigv4Service::start();
    let mut config = Config::fixed_defaults();
    config.tool_proxy = Some(service.url.clone());
    let auth = json!({"type": "sigv4", "service": "execute-api"});
    let hosts = [
        "a1b2c3.execute-api.eu-central-1.amazonaws.com",
        "d4e5f6.execute-api.cn-north-1.amazonaws.com.cn",
    ];
    let tools = (hosts.iter().enumerate())
        .map(|(i, host)| {
            let endpoint = format!("http://{host}/prod/hello?x=1");
            tool(&format!("t{i}"), &endpoint, &auth, &q_schema(), &json!({}))
        })
        .collect();
    let h = harness(config, &service.url, tools).await;
    for (i, host) in hosts.iter().enumerate() {
        let region = host.split('.').nth(2).unwrap();
        let scope = ("execute-api", region);
        service
            .verified(&h, &format!("t{i}"), json!({"q": "hi"}), scope)
            .await;
    }
    let seen = service.requests().await;
    assert_eq!(seen.len(), 2, "{seen:#?}");
    for (record, host) in seen.iter().zip(hosts) {
        assert_eq!(record["verified"], true, "{record:#}");
        assert_eq!(
            (&record["host"], signed(record, "host")),
            (&json!(host), Some(host))
        );
        assert_eq!(record["region"], host.split('.').nth(2).unwrap());
        assert_eq!(record["path"], "/prod/hello");
    }
}

/// CONTRACT X12: `aws-sigv4` signs the query's pairs in SigV4's encoding whatever the endpoint
/// spells, so the gateway sends them so; a query sent as the manifest writes it (`+`, `%7e`,
/// `:`) carried a signature botocore, checking what arrived, rejected.
#[tokio::test]
async fn x12_an_endpoint_query_is_sent_in_the_encoding_it_is_signed_in() {
    let service = Sigv4Service::start();
    let auth = json!({"type": "sigv4", "service": "execute-api", "region": "eu-west-1"});
    let written = "a=b+c&x=%7e&q=%2a&p=a;b:c@d$!'()*,/?&&flag&bad=%ZZ&e=%F0%9F%98%80&y=~";
    let endpoint = format!("{}/prod/x?{written}", service.url);
    let rest = json!({"method": "GET", "parameters": {"q": "query"}});
    let tools = vec![
        tool("written", &endpoint, &auth, &q_schema(), &json!({})),
        tool("with_args", &endpoint, &auth, &q_schema(), &rest),
    ];
    let h = harness(Config::fixed_defaults(), &service.url, tools).await;
    let scope = ("execute-api", "eu-west-1");
    service
        .verified(&h, "written", json!({"q": "x"}), scope)
        .await;
    service
        .verified(&h, "with_args", json!({"q": "a+b c"}), scope)
        .await;
    let sent = "a=b%20c&x=~&q=%2A&p=a%3Bb%3Ac%40d%24%21%27%28%29%2A%2C%2F%3F&flag&bad=%25ZZ\
                &e=%F0%9F%98%80&y=~";
    let seen = service.requests().await;
    assert_eq!(seen[0]["query"], sent, "{:#}", seen[0]);
    assert_eq!(seen[1]["query"], format!("{sent}&q=a%2Bb%20c").as_str());
}
