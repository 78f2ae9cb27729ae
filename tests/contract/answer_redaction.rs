//! Secrets never come back and one timeout covers a call (CONTRACT X12, X7): Tool Services on
//! loopback that echo their request (headers and URL) and quote the credential they refuse get
//! every secret value the gateway sent replaced by `[redacted]` in the answer built for that
//! call, in both result formats, with `structuredContent` checked after the redaction; a 401
//! whose retry cannot start in time is reported as the 401.

use std::time::Duration;

use base64::Engine as _;
use mcp_gateway::Config;
use serde_json::{Map, Value, json};
use wiremock::matchers::{any, header, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::outbound_credentials::{EU_ARN, harness, new_secret, received, result_of, tool_with};

/// Answers with what arrived: `{"url": "<path and query>", "headers": {name: value}}`.
struct Echo;

impl Respond for Echo {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let headers: Map<String, Value> = request
            .headers
            .iter()
            .map(|(name, value)| {
                (
                    name.to_string(),
                    Value::from(String::from_utf8_lossy(value.as_bytes()).into_owned()),
                )
            })
            .collect();
        let url = match request.url.query() {
            Some(query) => format!("{}?{query}", request.url.path()),
            None => request.url.path().to_string(),
        };
        ResponseTemplate::new(200).set_body_json(json!({"url": url, "headers": headers}))
    }
}

/// The raw answer text, which must hold none of `secrets`.
#[track_caller]
fn assert_holds_none(body: &[u8], secrets: &[&str]) -> String {
    let raw = String::from_utf8_lossy(body).into_owned();
    for secret in secrets {
        assert!(!raw.contains(secret), "{secret} came back: {raw}");
    }
    raw
}

const KEY: &str = "sk-live-7f3a/9+b";
const PASSWORD: &str = "pw-Secret-9";
const TOKEN: &str = "at-secret-4c1d";

/// Every secret value a call sends, in the forms it travels in.
fn sent_forms() -> Vec<String> {
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("svc:{PASSWORD}"));
    vec![
        KEY.to_string(),
        // The query form of the key.
        "sk-live-7f3a%2F9%2Bb".to_string(),
        PASSWORD.to_string(),
        basic,
        TOKEN.to_string(),
    ]
}

#[tokio::test]
async fn x12_secrets_a_call_sent_never_come_back_in_its_answer() {
    let idp = MockServer::start().await;
    Mock::given(path("/token"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"access_token": TOKEN, "expires_in": 3600})),
        )
        .mount(&idp)
        .await;
    let keys = new_secret(&json!({"api_key": KEY}).to_string()).await;
    let login = new_secret(&json!({"username": "svc", "password": PASSWORD}).to_string()).await;
    let client = new_secret(r#"{"client_id": "app", "client_secret": "cs"}"#).await;
    let tools = vec![
        tool_with(
            "in_header",
            "/h",
            json!({"type": "apiKey", "in": "header", "name": "X-Api-Key",
                   "secret": format!("{keys}#api_key")}),
            &json!({}),
        ),
        tool_with(
            "in_query",
            "/q",
            json!({"type": "apiKey", "in": "query", "name": "key",
                   "secret": format!("{keys}#api_key")}),
            &json!({}),
        ),
        tool_with(
            "basic",
            "/b",
            json!({"type": "basic", "secret": login}),
            &json!({}),
        ),
        tool_with(
            "oauth",
            "/o",
            json!({"type": "oauth2ClientCredentials",
                   "tokenUrl": format!("{}/token", idp.uri()), "secret": client}),
            &json!({}),
        ),
    ];
    let h = harness(Config::fixed_defaults(), tools, &[]).await;
    Mock::given(any())
        .respond_with(Echo)
        .mount(&h.tool_service)
        .await;
    let forms = sent_forms();
    let forms: Vec<&str> = forms.iter().map(String::as_str).collect();
    for (name, redacted_at) in [
        ("in_header", "x-api-key"),
        ("in_query", ""),
        ("basic", "authorization"),
        ("oauth", "authorization"),
    ] {
        let answer = h.call_tool(name, json!({"q": "x"})).await;
        assert_holds_none(&answer.body, &forms);
        let (is_error, text) = result_of(&answer);
        assert!(!is_error, "{name}: {text}");
        let echoed: Value = serde_json::from_str(&text).unwrap();
        match redacted_at {
            "" => assert_eq!(echoed["url"], "/q?key=[redacted]", "{name}"),
            "x-api-key" => assert_eq!(echoed["headers"][redacted_at], "[redacted]"),
            _ => {
                let value = echoed["headers"][redacted_at].as_str().unwrap();
                assert!(value.ends_with(" [redacted]"), "{name}: {value}");
            }
        }
    }
    // What arrived was the real credential.
    let seen = received(&h).await;
    assert_eq!(seen[0].headers["x-api-key"].to_str().unwrap(), KEY);
}

#[tokio::test]
async fn x12_a_refused_credential_quoted_in_an_error_is_redacted() {
    let keys = new_secret(&json!({"api_key": KEY}).to_string()).await;
    let login = new_secret(&json!({"username": "svc", "password": PASSWORD}).to_string()).await;
    let tools = vec![
        tool_with(
            "keyed",
            "/keyed",
            json!({"type": "apiKey", "in": "header", "name": "X-Api-Key",
                   "secret": format!("{keys}#api_key")}),
            &json!({}),
        ),
        tool_with(
            "basic",
            "/basic",
            json!({"type": "basic", "secret": login}),
            &json!({}),
        ),
    ];
    let h = harness(Config::fixed_defaults(), tools, &[]).await;
    Mock::given(path("/keyed"))
        .respond_with(
            ResponseTemplate::new(401)
                .set_body_json(json!({"message": format!("invalid key {KEY}")})),
        )
        .mount(&h.tool_service)
        .await;
    Mock::given(path("/basic"))
        .respond_with(
            ResponseTemplate::new(403)
                .set_body_string(format!("user svc with password {PASSWORD} may not")),
        )
        .mount(&h.tool_service)
        .await;
    let answer = h.call_tool("keyed", json!({})).await;
    assert_eq!(
        result_of(&answer),
        (
            true,
            "Tool Service denied the call (HTTP 401): invalid key [redacted]".into()
        )
    );
    let answer = h.call_tool("basic", json!({})).await;
    assert_eq!(
        result_of(&answer),
        (
            true,
            "Tool Service denied the call (HTTP 403): user svc with password [redacted] may not"
                .into()
        )
    );
}

#[tokio::test]
async fn x12_structured_content_is_checked_against_the_redacted_answer_in_both_formats() {
    let keys = new_secret(&json!({"api_key": KEY}).to_string()).await;
    let auth = json!({"type": "apiKey", "in": "header", "name": "X-Api-Key",
                      "secret": format!("{keys}#api_key")});
    // The key is 16 characters; `[redacted]` is 10: only the redacted object matches.
    let output_schema = json!({"type": "object", "properties": {
        "key": {"type": "string", "maxLength": 10}}, "required": ["key"]});
    let mut structured = tool_with("structured", "/s", auth.clone(), &json!({}));
    structured["outputSchema"] = output_schema.clone();
    let mut native = tool_with("native", "/n", auth, &json!({"resultFormat": "mcp"}));
    native["outputSchema"] = output_schema;
    let h = harness(Config::fixed_defaults(), vec![structured, native], &[]).await;
    Mock::given(path("/s"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_string(format!(r#"{{"key": "{}"}}"#, KEY.replace('/', "\\/"))),
        )
        .mount(&h.tool_service)
        .await;
    Mock::given(path("/n"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "content": [{"type": "text", "text": format!("the key is {KEY}")}],
            "structuredContent": {"key": KEY}
        })))
        .mount(&h.tool_service)
        .await;
    for name in ["structured", "native"] {
        let answer = h.call_tool(name, json!({})).await;
        assert_holds_none(&answer.body, &[KEY, "sk-live-7f3a\\/9+b"]);
        let body = answer.json();
        assert_eq!(body["result"]["isError"], false, "{name}: {body}");
        assert_eq!(
            body["result"]["structuredContent"],
            json!({"key": "[redacted]"}),
            "{name}"
        );
    }
    let body = h.call_tool("native", json!({})).await.json();
    assert_eq!(
        body["result"]["content"][0]["text"],
        "the key is [redacted]"
    );
}

/// CONTRACT X7, X12: a 401 that leaves too little time for the retry's credential read is
/// answered as the 401, not as a credential timeout.
#[tokio::test]
async fn x7_x12_a_401_whose_retry_cannot_start_in_time_is_reported_as_the_401() {
    let store = MockServer::start().await;
    // The first read answers at once; the one after the 401 only after the call's time.
    Mock::given(method("POST"))
        .and(header("x-amz-target", "secretsmanager.GetSecretValue"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"SecretString": "k-1"})))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&store)
        .await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_delay(Duration::from_secs(5))
                .set_body_json(json!({"SecretString": "k-2"})),
        )
        .mount(&store)
        .await;
    let mut config = Config::fixed_defaults();
    config.secrets_manager_endpoint = Some(store.uri());
    let tools = vec![tool_with(
        "keyed",
        "/keyed",
        json!({"type": "apiKey", "in": "header", "name": "X-Api-Key", "secret": EU_ARN}),
        &json!({"timeoutMs": 800}),
    )];
    let h = harness(config, tools, &[]).await;
    Mock::given(path("/keyed"))
        .respond_with(
            ResponseTemplate::new(401)
                .set_delay(Duration::from_millis(200))
                .set_body_json(json!({"message": "key expired"})),
        )
        .mount(&h.tool_service)
        .await;
    assert_eq!(
        result_of(&h.call_tool("keyed", json!({})).await),
        (
            true,
            "Tool Service denied the call (HTTP 401): key expired".into()
        )
    );
    assert_eq!(received(&h).await.len(), 1, "the retry was never sent");
    assert_eq!(store.received_requests().await.unwrap().len(), 2);
}
