//! Outbound credentials that cannot be made (CONTRACT X12): each failure is an `isError` result
//! naming the tool and what failed, never the secret, its ARN, the account or the region, and
//! nothing is sent to the Tool Service; and `_meta.auth` refused at load (M5).

use std::time::Duration;

use gateway_tests::auth::free_port;
use gateway_tests::{Answer, manifest};
use mcp_gateway::Config;
use mcp_gateway::registry::compile_manifest;
use serde_json::json;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::outbound_credentials::{
    EU_ARN, harness, new_secret, received, result_of, secrets_manager, tool_with,
};

/// Asserts an `isError` result that names no ARN, account or region; its text.
#[track_caller]
fn failure(answer: &Answer) -> String {
    let raw = String::from_utf8_lossy(&answer.body).into_owned();
    for hidden in [
        "arn:",
        "123456789012",
        "us-east-1",
        "eu-west-1",
        "secretsmanager:",
    ] {
        assert!(!raw.contains(hidden), "{hidden} in {raw}");
    }
    let (is_error, text) = result_of(answer);
    assert!(is_error, "{text}");
    text
}

fn key_tool(name: &str, secret: &str) -> serde_json::Value {
    tool_with(
        name,
        "/keyed",
        json!({"type": "apiKey", "in": "header", "name": "X-Api-Key",
        "secret": secret}),
        &json!({}),
    )
}

#[tokio::test]
async fn x12_unreadable_secrets_are_results_that_say_what_failed() {
    let plain = new_secret("not json").await;
    let keyed = new_secret(r#"{"other": "x", "n": 1}"#).await;
    let missing = "arn:aws:secretsmanager:us-east-1:123456789012:secret:tools/none-AbCdEf";
    let tools = vec![
        key_tool("gone", missing),
        key_tool("plain_key", &format!("{plain}#api_key")),
        key_tool("no_field", &format!("{keyed}#api_key")),
        key_tool("number_field", &format!("{keyed}#n")),
        tool_with(
            "plain_basic",
            "/basic",
            json!({"type": "basic", "secret": plain}),
            &json!({}),
        ),
        tool_with(
            "half_basic",
            "/basic",
            json!({"type": "basic", "secret": keyed}),
            &json!({}),
        ),
        key_tool("unset", "env:NOT_SET"),
        key_tool("newline", "env:BROKEN"),
    ];
    let h = harness(Config::fixed_defaults(), tools, &[("BROKEN", "a\nb")]).await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200))
        .mount(&h.tool_service)
        .await;
    let cases = [
        ("gone", "not found"),
        ("plain_key", "the secret is not a JSON object"),
        ("no_field", "the secret has no string field 'api_key'"),
        ("number_field", "the secret has no string field 'n'"),
        ("plain_basic", "the secret is not a JSON object"),
        (
            "half_basic",
            "the secret has no string fields 'username' and 'password'",
        ),
        ("unset", "the environment variable is not set"),
        ("newline", "the secret is not a valid header value"),
    ];
    for (name, what) in cases {
        assert_eq!(
            failure(&h.call_tool(name, json!({})).await),
            format!("Tool '{name}': the credential could not be read ({what})")
        );
    }
    assert!(
        received(&h).await.is_empty(),
        "nothing is sent without a credential"
    );
}

#[tokio::test]
async fn x12_a_secret_store_that_refuses_fails_or_is_down_is_a_result() {
    let refusing = MockServer::start().await;
    let body = json!({"__type": "AccessDeniedException",
        "Message": format!("User arn:aws:iam::123456789012:role/x is not authorized on {EU_ARN}")});
    Mock::given(any())
        .respond_with(ResponseTemplate::new(400).set_body_json(body))
        .mount(&refusing)
        .await;
    let broken = MockServer::start().await;
    Mock::given(any())
        .respond_with(
            ResponseTemplate::new(500).set_body_json(json!({"__type": "InternalServiceError"})),
        )
        .mount(&broken)
        .await;
    for (endpoint, what) in [
        (refusing.uri(), "access denied".to_string()),
        (
            broken.uri(),
            "the secret store answered HTTP 500".to_string(),
        ),
        (
            format!("http://127.0.0.1:{}", free_port()),
            "the secret store is unreachable".to_string(),
        ),
    ] {
        let mut config = Config::fixed_defaults();
        config.secrets_manager_endpoint = Some(endpoint);
        let h = harness(config, vec![key_tool("keyed", EU_ARN)], &[]).await;
        assert_eq!(
            failure(&h.call_tool("keyed", json!({})).await),
            format!("Tool 'keyed': the credential could not be read ({what})")
        );
        assert!(received(&h).await.is_empty());
    }
}

/// CONTRACT X7, X12: a hanging secret store is cut off within the tool's own time limit.
#[tokio::test]
async fn x12_a_hanging_secret_store_is_cut_off_within_the_tools_timeout() {
    let hanging = secrets_manager("k", Duration::from_secs(30)).await;
    let mut config = Config::fixed_defaults();
    config.secrets_manager_endpoint = Some(hanging.uri());
    let tools = vec![tool_with(
        "slow_key",
        "/keyed",
        json!({"type": "apiKey", "in": "header",
        "name": "X-Api-Key", "secret": EU_ARN}),
        &json!({"timeoutMs": 300}),
    )];
    let h = harness(config, tools, &[]).await;
    let started = std::time::Instant::now();
    assert_eq!(
        failure(&h.call_tool("slow_key", json!({})).await),
        "Tool 'slow_key': the credential could not be read (no answer within 300 ms)"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn m5_auth_refusals_at_load_have_paths_and_words() {
    let mut document = manifest("http://127.0.0.1:9");
    let tools = document["routes"][0]["tools"].as_array_mut().unwrap();
    let first = tools.len();
    tools.push(json!({"name": "fn_tool", "inputSchema": {"type": "object"},
        "_meta": {"endpoint": "arn:aws:lambda:eu-west-1:123456789012:function:f",
                  "auth": {"type": "basic", "secret": EU_ARN}}}));
    tools.push(json!({"name": "clash", "inputSchema": {"type": "object",
            "properties": {"X-Api-Key": {"type": "string"}, "key": {"type": "string"}}},
        "_meta": {"endpoint": "http://127.0.0.1:9/c", "parameters": {"X-Api-Key": "header", "key": "query"},
                  "auth": {"type": "apiKey", "in": "header", "name": "x-api-key", "secret": EU_ARN}}}));
    tools.push(
        json!({"name": "clash_query", "inputSchema": {"type": "object",
            "properties": {"key": {"type": "string"}}},
        "_meta": {"endpoint": "http://127.0.0.1:9/c", "parameters": {"key": "query"},
                  "auth": {"type": "apiKey", "in": "query", "name": "key", "secret": "env:K"}}}),
    );
    tools.push(json!({"name": "forwarded", "inputSchema": {"type": "object"},
        "_meta": {"endpoint": "http://127.0.0.1:9/c",
                  "auth": {"type": "apiKey", "in": "header", "name": "Employee-No", "secret": "env:K"}}}));
    tools.push(json!({"name": "oauth", "inputSchema": {"type": "object"},
        "_meta": {"endpoint": "http://127.0.0.1:9/c",
                  "auth": {"type": "oauth2ClientCredentials", "tokenUrl": "https://idp.example/t",
                           "secret": format!("{EU_ARN}#client")}}}));
    let problems: Vec<String> = compile_manifest(&document)
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect();
    let at = |i: usize| format!("routes[0].tools[{}]._meta.auth", first + i);
    assert_eq!(
        problems,
        [
            format!(
                "{}: does not apply to a Lambda function tool (it is invoked with the gateway's role)",
                at(0)
            ),
            format!(
                "{}.name: header 'x-api-key' is also set by the header parameter 'X-Api-Key'",
                at(1)
            ),
            format!(
                "{}.name: query name 'key' is also set by the query parameter 'key'",
                at(2)
            ),
            format!(
                "{}.name: header name 'Employee-No' is reserved by the gateway",
                at(3)
            ),
            format!(
                "{}.secret: must name the whole JSON secret (no #jsonKey): oauth2ClientCredentials reads its \"client_id\" and \"client_secret\"",
                at(4)
            ),
        ]
    );
}

/// CONTRACT M5: an `env:` REF naming one of the gateway's own variables (`AWS_`, `OTEL_`,
/// `MCP_`) fails the load in every profile, with the field's path and why.
#[test]
fn m5_an_env_reference_to_an_aws_variable_fails_the_load() {
    for name in [
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "Aws_Access_Key_Id",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "MCP_TOOL_PROXY",
    ] {
        let mut document = manifest("http://127.0.0.1:9");
        let tools = document["routes"][0]["tools"].as_array_mut().unwrap();
        let at = tools.len();
        let mut tool = key_tool("stolen", &format!("env:{name}"));
        tool["_meta"]["endpoint"] = json!("http://127.0.0.1:9/keyed");
        tools.push(tool);
        let problems: Vec<String> = compile_manifest(&document)
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            problems,
            [format!(
                "routes[0].tools[{at}]._meta.auth.secret: must not name one of the gateway's own \
                 variables (AWS_, OTEL_ or MCP_): they hold its AWS credentials, its exporter's \
                 headers and its settings, which no Tool Service may receive"
            )]
        );
    }
}

/// CONTRACT M5: under the Lambda runtime any `env:` REF fails the load (the source chain of a
/// Lambda function refuses them), naming the route and the tool; elsewhere it loads.
#[tokio::test]
async fn m5_env_references_fail_the_load_under_the_lambda_runtime() {
    use mcp_gateway::registry::{FileSource, LoadLimits, SourceChain};

    let mut document = manifest("http://127.0.0.1:9");
    document["routes"][0]["tools"]
        .as_array_mut()
        .unwrap()
        .push(key_tool("local_key", "env:TOOL_KEY"));
    let tools = document["routes"][0]["tools"].as_array_mut().unwrap();
    tools.last_mut().unwrap()["_meta"]["endpoint"] = json!("http://127.0.0.1:9/keyed");
    let path = std::env::temp_dir().join(format!("m5-env-{}.json", std::process::id()));
    std::fs::write(&path, document.to_string()).unwrap();
    let limits = LoadLimits {
        timeout: Duration::from_secs(5),
        max_bytes: 1 << 20,
        max_response_bytes: 5 << 20,
    };
    let chain = || {
        SourceChain::new(
            Box::new(FileSource(path.display().to_string())),
            None,
            limits,
        )
    };
    assert!(chain().load().await.is_ok());
    let error = chain().refusing_env_secrets().load().await.unwrap_err();
    assert!(
        error.to_string().contains(
            "route 'core': tool 'local_key': _meta.auth.secret: an env: reference is read only \
             outside Lambda (mcp-local); a Lambda function reads its secrets from a Secrets \
             Manager or SSM ARN"
        ),
        "{error}"
    );
    std::fs::remove_file(&path).unwrap();
}
