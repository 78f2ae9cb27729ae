//! Outbound credentials (CONTRACT M5, X12) with real parts: secrets in moto's Secrets Manager
//! and SSM (the shared moto server) or a recording stand-in for Secrets Manager, and a recording
//! Tool Service on loopback that shows where each credential arrives. Failures, redaction and
//! load-time refusals are in `outbound_credential_failures`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use gateway_tests::auth::moto_url;
use gateway_tests::{Answer, Harness, manifest};
use mcp_gateway::invoke::HttpInvoker;
use mcp_gateway::registry::compile_manifest;
use mcp_gateway::{Config, Gateway};
use serde_json::{Value, json};
use wiremock::matchers::{any, header, method};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// An AWS JSON 1.1 call to the shared moto server (moto reads the service from the signature's
/// credential scope and does not check the signature).
pub(crate) async fn moto_call(service: &str, target: &str, body: Value) -> Value {
    let scope = format!(
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/{service}/aws4_request, SignedHeaders=host, Signature=0"
    );
    // The first reqwest client of a run filtered to these tests may be this one.
    mcp_gateway::tls::install_crypto_provider();
    let answer = reqwest::Client::new()
        .post(format!("{}/", moto_url()))
        .header("content-type", "application/x-amz-json-1.1")
        .header("x-amz-target", target)
        .header("authorization", scope)
        .body(body.to_string())
        .send()
        .await
        .expect("moto answers");
    assert!(
        answer.status().is_success(),
        "{target}: {}",
        answer.status()
    );
    serde_json::from_slice(&answer.bytes().await.unwrap()).unwrap()
}

/// A new Secrets Manager secret holding `value`; its ARN.
pub(crate) async fn new_secret(value: &str) -> String {
    let name = format!("tools/{}", uuid::Uuid::new_v4());
    let created = moto_call(
        "secretsmanager",
        "secretsmanager.CreateSecret",
        json!({"Name": name, "SecretString": value}),
    )
    .await;
    created["ARN"].as_str().unwrap().to_string()
}

/// Rotates the secret at `arn` to `value`.
pub(crate) async fn rotate(arn: &str, value: &str) {
    moto_call(
        "secretsmanager",
        "secretsmanager.PutSecretValue",
        json!({"SecretId": arn, "SecretString": value}),
    )
    .await;
}

/// A new SSM SecureString parameter holding `value`; its ARN.
async fn new_parameter(value: &str) -> String {
    let name = format!("/tools/{}", uuid::Uuid::new_v4());
    moto_call(
        "ssm",
        "AmazonSSM.PutParameter",
        json!({"Name": name, "Value": value, "Type": "SecureString"}),
    )
    .await;
    format!("arn:aws:ssm:us-east-1:123456789012:parameter{name}")
}

/// A tool on the Tool Service's `path` with `_meta.auth` `auth` (and `extra` `_meta` fields).
pub(crate) fn tool_with(name: &str, path: &str, auth: Value, extra: &Value) -> Value {
    let mut meta = json!({"endpoint": format!("{{base}}{path}")});
    meta["auth"] = auth;
    for (k, v) in extra.as_object().unwrap() {
        meta[k] = v.clone();
    }
    json!({
        "name": name,
        "description": format!("{name} with a credential"),
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
        "_meta": meta
    })
}

/// A gateway whose route `core` also has `tools` (`{base}` in an endpoint is the recording Tool
/// Service), reading secrets from moto unless `config` says otherwise, with fixed AWS
/// credentials and `env` as its environment.
pub(crate) async fn harness(
    mut config: Config,
    tools: Vec<Value>,
    env: &[(&str, &str)],
) -> Harness {
    let tool_service = MockServer::start().await;
    let mut document = manifest(&tool_service.uri());
    let list = document["routes"][0]["tools"].as_array_mut().unwrap();
    for tool in tools {
        let text = tool.to_string().replace("{base}", &tool_service.uri());
        list.push(serde_json::from_str(&text).unwrap());
    }
    let snapshot = compile_manifest(&document).expect("test manifest compiles");
    config.secrets_manager_endpoint.get_or_insert_with(moto_url);
    config.ssm_endpoint.get_or_insert_with(moto_url);
    let env: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect();
    let invoker = HttpInvoker::from_config(&config)
        .unwrap()
        .with_aws_credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
        .with_env_lookup(Arc::new(move |name: &str| env.get(name).cloned()));
    Harness {
        gateway: Arc::new(Gateway::new(config, Ok(snapshot), invoker)),
        tool_service,
    }
}

/// The requests the Tool Service received since it was last reset.
pub(crate) async fn received(h: &Harness) -> Vec<Request> {
    h.tool_service.received_requests().await.unwrap_or_default()
}

/// The result text of a `tools/call` answer, and whether it is an error.
pub(crate) fn result_of(answer: &Answer) -> (bool, String) {
    let body = answer.json();
    let text = body["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a result: {body}"))
        .to_string();
    (body["result"]["isError"] == true, text)
}

fn header_of(request: &Request, name: &str) -> Option<String> {
    request
        .headers
        .get(name)
        .map(|v| v.to_str().unwrap().to_string())
}

async fn ok_everywhere(h: &Harness) {
    h.tool_service.reset().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"ok": true})))
        .mount(&h.tool_service)
        .await;
}

#[tokio::test]
async fn x12_api_keys_bearer_tokens_and_basic_arrive_where_the_manifest_says() {
    let keys = new_secret(r#"{"api_key": "k-1/2 +&=", "token": "tok-9"}"#).await;
    let login = new_secret(r#"{"username": "svc", "password": "p:ss wörd"}"#).await;
    let tools = vec![
        tool_with(
            "keyed",
            "/keyed",
            json!({"type": "apiKey", "in": "header",
            "name": "X-Api-Key", "secret": format!("{keys}#api_key")}),
            &json!({}),
        ),
        tool_with(
            "prefixed",
            "/prefixed",
            json!({"type": "apiKey", "in": "header",
            "name": "X-Api-Key", "prefix": "Key ", "secret": format!("{keys}#token")}),
            &json!({}),
        ),
        tool_with(
            "bearer",
            "/bearer",
            json!({"type": "apiKey", "in": "header",
            "name": "Authorization", "prefix": "Bearer ", "secret": format!("{keys}#token")}),
            &json!({}),
        ),
        tool_with(
            "queried",
            "/queried?v=2",
            json!({"type": "apiKey", "in": "query",
            "name": "api key", "secret": format!("{keys}#api_key")}),
            &json!({"method": "GET", "parameters": {"q": "query"}}),
        ),
        tool_with(
            "basic",
            "/basic",
            json!({"type": "basic", "secret": login}),
            &json!({}),
        ),
    ];
    let h = harness(Config::fixed_defaults(), tools, &[]).await;
    ok_everywhere(&h).await;
    for name in [
        "keyed",
        "prefixed",
        "bearer",
        "queried",
        "basic",
        "search_documents",
    ] {
        let arguments = if name == "search_documents" {
            json!({"query": "x"})
        } else {
            json!({"q": "a b"})
        };
        let answer = h
            .post(
                "/mcp/core",
                &gateway_tests::rpc(
                    json!(1),
                    "tools/call",
                    json!({"name": name, "arguments": arguments}),
                ),
                &[("authorization", "Bearer caller-own-token")],
            )
            .await;
        assert_eq!(
            result_of(&answer),
            (false, r#"{"ok":true}"#.into()),
            "{name}"
        );
    }
    let seen = received(&h).await;
    assert_eq!(seen.len(), 6);
    assert_eq!(
        header_of(&seen[0], "x-api-key").as_deref(),
        Some("k-1/2 +&=")
    );
    assert_eq!(header_of(&seen[0], "authorization"), None);
    assert_eq!(
        header_of(&seen[1], "x-api-key").as_deref(),
        Some("Key tok-9")
    );
    assert_eq!(
        header_of(&seen[2], "authorization").as_deref(),
        Some("Bearer tok-9")
    );
    // X9's encoding, after the endpoint's own query and the arguments'.
    assert_eq!(seen[3].url.path(), "/queried");
    assert_eq!(
        seen[3].url.query(),
        Some("v=2&q=a%20b&api%20key=k-1%2F2%20%2B%26%3D")
    );
    assert_eq!(header_of(&seen[3], "x-api-key"), None);
    let expected = format!(
        "Basic {}",
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, "svc:p:ss wörd")
    );
    assert_eq!(header_of(&seen[4], "authorization"), Some(expected));
    // The caller's own Authorization is never forwarded (X4), with or without a credential.
    assert_eq!(header_of(&seen[5], "authorization"), None);
}

#[tokio::test]
async fn x12_ssm_secure_strings_and_env_variables() {
    let parameter = new_parameter("ssm-key-1").await;
    let tools = vec![
        tool_with(
            "from_ssm",
            "/ssm",
            json!({"type": "apiKey", "in": "header",
            "name": "X-Api-Key", "secret": parameter}),
            &json!({}),
        ),
        tool_with(
            "from_env",
            "/env",
            json!({"type": "apiKey", "in": "header",
            "name": "X-Api-Key", "secret": "env:TOOL_KEY"}),
            &json!({}),
        ),
    ];
    let h = harness(
        Config::fixed_defaults(),
        tools,
        &[("TOOL_KEY", "env-key-1")],
    )
    .await;
    ok_everywhere(&h).await;
    for name in ["from_ssm", "from_env"] {
        assert!(!result_of(&h.call_tool(name, json!({})).await).0, "{name}");
    }
    let seen = received(&h).await;
    assert_eq!(
        header_of(&seen[0], "x-api-key").as_deref(),
        Some("ssm-key-1")
    );
    assert_eq!(
        header_of(&seen[1], "x-api-key").as_deref(),
        Some("env-key-1")
    );
}

/// A stand-in for Secrets Manager that records each `GetSecretValue` and answers `value` after
/// `delay`.
pub(crate) async fn secrets_manager(value: &str, delay: Duration) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(header("x-amz-target", "secretsmanager.GetSecretValue"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_delay(delay)
                .set_body_json(json!({"SecretString": value, "Name": "x"})),
        )
        .mount(&server)
        .await;
    server
}

pub(crate) const EU_ARN: &str =
    "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tools/key-AbCdEf";

#[tokio::test]
async fn x12_concurrent_first_calls_read_the_secret_once_signed_for_its_region() {
    let store = secrets_manager("k", Duration::from_millis(200)).await;
    let mut config = Config::fixed_defaults();
    config.secrets_manager_endpoint = Some(store.uri());
    let tools = vec![tool_with(
        "keyed",
        "/keyed",
        json!({"type": "apiKey", "in": "header",
        "name": "X-Api-Key", "secret": EU_ARN}),
        &json!({}),
    )];
    let h = Arc::new(harness(config, tools, &[]).await);
    ok_everywhere(&h).await;
    let calls: Vec<_> = (0..8)
        .map(|_| {
            let h = h.clone();
            tokio::spawn(async move { h.call_tool("keyed", json!({})).await })
        })
        .collect();
    for call in calls {
        assert!(!result_of(&call.await.unwrap()).0);
    }
    let reads = store.received_requests().await.unwrap();
    assert_eq!(reads.len(), 1, "one GetSecretValue for eight first calls");
    let read = &reads[0];
    assert_eq!(read.url.path(), "/");
    assert_eq!(
        header_of(read, "content-type").as_deref(),
        Some("application/x-amz-json-1.1")
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&read.body).unwrap(),
        json!({"SecretId": EU_ARN})
    );
    let signature = header_of(read, "authorization").unwrap();
    assert!(
        signature.starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"),
        "{signature}"
    );
    assert!(
        signature.contains("/eu-west-1/secretsmanager/aws4_request"),
        "{signature}"
    );
    assert!(header_of(read, "x-amz-date").is_some());
    assert_eq!(received(&h).await.len(), 8);
}

#[tokio::test]
async fn x12_a_401_reads_the_rotated_secret_and_sends_once_more_never_in_a_loop() {
    let arn = new_secret("v1").await;
    let tools = vec![tool_with(
        "keyed",
        "/keyed",
        json!({"type": "apiKey", "in": "header",
        "name": "X-Api-Key", "secret": arn}),
        &json!({}),
    )];
    let h = harness(Config::fixed_defaults(), tools, &[]).await;
    let accept = |key: &'static str| {
        let h = &h;
        async move {
            h.tool_service.reset().await;
            Mock::given(header("x-api-key", key))
                .respond_with(ResponseTemplate::new(200).set_body_string("ok"))
                .with_priority(1)
                .mount(&h.tool_service)
                .await;
            Mock::given(any())
                .respond_with(ResponseTemplate::new(401).set_body_string("bad key"))
                .mount(&h.tool_service)
                .await;
        }
    };
    accept("v1").await;
    assert_eq!(
        result_of(&h.call_tool("keyed", json!({})).await),
        (false, "ok".into())
    );
    rotate(&arn, "v2").await;
    accept("v2").await;
    assert_eq!(
        result_of(&h.call_tool("keyed", json!({})).await),
        (false, "ok".into())
    );
    let keys: Vec<_> = received(&h)
        .await
        .iter()
        .map(|r| header_of(r, "x-api-key").unwrap())
        .collect();
    assert_eq!(keys, ["v1", "v2"]);
    accept("v2").await;
    assert!(!result_of(&h.call_tool("keyed", json!({})).await).0);
    assert_eq!(received(&h).await.len(), 1, "the fresh secret is kept");
    accept("v3").await;
    let (is_error, _) = result_of(&h.call_tool("keyed", json!({})).await);
    assert!(is_error, "a second 401 is the result");
    assert_eq!(received(&h).await.len(), 2, "one more try, no loop");
}

#[tokio::test]
async fn x12_a_secret_is_read_again_after_its_ttl() {
    let arn = new_secret("t1").await;
    let mut config = Config::fixed_defaults();
    // Long enough that a loaded machine still makes the second call within it.
    config.secret_ttl_s = 5;
    let tools = vec![tool_with(
        "keyed",
        "/keyed",
        json!({"type": "apiKey", "in": "header",
        "name": "X-Api-Key", "secret": arn}),
        &json!({}),
    )];
    let h = harness(config, tools, &[]).await;
    ok_everywhere(&h).await;
    h.call_tool("keyed", json!({})).await;
    rotate(&arn, "t2").await;
    h.call_tool("keyed", json!({})).await;
    tokio::time::sleep(Duration::from_millis(5100)).await;
    h.call_tool("keyed", json!({})).await;
    let keys: Vec<_> = received(&h)
        .await
        .iter()
        .map(|r| header_of(r, "x-api-key").unwrap())
        .collect();
    assert_eq!(keys, ["t1", "t1", "t2"]);
}
