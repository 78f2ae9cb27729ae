//! `oauth2ClientCredentials` tools (CONTRACT M5, X12): the client's JSON secret in moto's Secrets
//! Manager, a recording token endpoint on loopback, and the recording Tool Service that receives
//! the bearer token: one token request for concurrent first calls, in either client
//! authentication, kept for its lifetime, obtained anew after a 401; and what a token endpoint
//! that refuses or is down gives.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use mcp_gateway::Config;
use serde_json::{Value, json};
use wiremock::matchers::{any, header, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use super::outbound_credentials::{harness, new_secret, received, result_of, tool_with};

fn token(value: &str, expires_in: u64) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(
        json!({"access_token": value, "token_type": "Bearer", "expires_in": expires_in}),
    )
}

fn oauth_tool(name: &str, idp: &MockServer, secret: &str, extra: &Value) -> Value {
    let mut auth = json!({"type": "oauth2ClientCredentials", "tokenUrl": format!("{}/token", idp.uri()),
        "secret": secret});
    for (k, v) in extra.as_object().unwrap() {
        auth[k] = v.clone();
    }
    tool_with(name, &format!("/{name}"), auth, &json!({}))
}

fn form_of(request: &Request) -> String {
    String::from_utf8(request.body.clone()).unwrap()
}

fn bearer_of(request: &Request) -> String {
    request.headers["authorization"]
        .to_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn x12_one_token_request_serves_concurrent_calls_in_both_client_auths() {
    let idp = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(token("at-1", 3600).set_delay(Duration::from_millis(200)))
        .mount(&idp)
        .await;
    let client = new_secret(r#"{"client_id": "app 1", "client_secret": "s3:cr&t"}"#).await;
    let tools = vec![
        oauth_tool(
            "in_basic",
            &idp,
            &client,
            &json!({"scopes": ["read", "write:all"],
            "audience": "https://api.example"}),
        ),
        oauth_tool("in_body", &idp, &client, &json!({"clientAuth": "body"})),
    ];
    let h = Arc::new(harness(Config::fixed_defaults(), tools, &[]).await);
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_string("ok"))
        .mount(&h.tool_service)
        .await;
    let calls: Vec<_> = (0..6)
        .map(|_| {
            let h = h.clone();
            tokio::spawn(async move { h.call_tool("in_basic", json!({})).await })
        })
        .collect();
    for call in calls {
        assert_eq!(result_of(&call.await.unwrap()), (false, "ok".into()));
    }
    assert_eq!(
        result_of(&h.call_tool("in_body", json!({})).await),
        (false, "ok".into())
    );
    let asked = idp.received_requests().await.unwrap();
    assert_eq!(
        asked.len(),
        2,
        "one token request per client authentication"
    );
    assert_eq!(
        asked[0].headers["content-type"].to_str().unwrap(),
        "application/x-www-form-urlencoded"
    );
    assert_eq!(
        form_of(&asked[0]),
        "grant_type=client_credentials&scope=read+write%3Aall&audience=https%3A%2F%2Fapi.example"
    );
    let basic = base64::engine::general_purpose::STANDARD.encode("app+1:s3%3Acr%26t");
    assert_eq!(bearer_of(&asked[0]), format!("Basic {basic}"));
    assert_eq!(
        form_of(&asked[1]),
        "grant_type=client_credentials&client_id=app+1&client_secret=s3%3Acr%26t"
    );
    assert!(asked[1].headers.get("authorization").is_none());
    let seen = received(&h).await;
    assert_eq!(seen.len(), 7);
    assert!(seen.iter().all(|r| bearer_of(r) == "Bearer at-1"));
}

#[tokio::test]
async fn x12_a_refused_token_is_replaced_once_and_a_token_is_kept_for_its_lifetime() {
    let idp = MockServer::start().await;
    Mock::given(path("/token"))
        .respond_with(token("at-1", 3600))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&idp)
        .await;
    Mock::given(path("/token"))
        .respond_with(token("at-2", 61))
        .mount(&idp)
        .await;
    let client = new_secret(r#"{"client_id": "app", "client_secret": "s"}"#).await;
    let h = harness(
        Config::fixed_defaults(),
        vec![oauth_tool("api", &idp, &client, &json!({}))],
        &[],
    )
    .await;
    Mock::given(header("authorization", "Bearer at-1"))
        .respond_with(ResponseTemplate::new(401))
        .mount(&h.tool_service)
        .await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_string("ok"))
        .mount(&h.tool_service)
        .await;
    assert_eq!(
        result_of(&h.call_tool("api", json!({})).await),
        (false, "ok".into())
    );
    let tokens: Vec<String> = received(&h).await.iter().map(bearer_of).collect();
    assert_eq!(tokens, ["Bearer at-1", "Bearer at-2"]);
    assert_eq!(idp.received_requests().await.unwrap().len(), 2);
    // at-2 lives 61 s: kept for one second (its lifetime less a minute), then replaced.
    h.call_tool("api", json!({})).await;
    assert_eq!(idp.received_requests().await.unwrap().len(), 2);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    h.call_tool("api", json!({})).await;
    assert_eq!(idp.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn x12_a_token_endpoint_that_refuses_or_is_down_is_a_result() {
    let refusing = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(401).set_body_json(
            json!({"error": "invalid_client", "error_description": "client app secret s wrong"}),
        ))
        .mount(&refusing)
        .await;
    let tokenless = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"token_type": "Bearer"})))
        .mount(&tokenless)
        .await;
    // A 200 longer than the gateway reads, and one whose token cannot be a header value.
    let oversized = MockServer::start().await;
    Mock::given(any())
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"access_token": "t", "padding": "x".repeat(70 * 1024)})),
        )
        .mount(&oversized)
        .await;
    let unsendable = MockServer::start().await;
    Mock::given(any())
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"access_token": "t\r\nX-Evil: 1"})),
        )
        .mount(&unsendable)
        .await;
    let down_uri = format!("http://127.0.0.1:{}", gateway_tests::auth::free_port());
    let client = new_secret(r#"{"client_id": "app", "client_secret": "s"}"#).await;
    let wrong = new_secret(r#"{"id": "app"}"#).await;
    let tool = |name: &str, url: &str, secret: &str| {
        tool_with(
            name,
            "/t",
            json!({"type": "oauth2ClientCredentials",
            "tokenUrl": format!("{url}/token"), "secret": secret}),
            &json!({}),
        )
    };
    let tools = vec![
        tool("refused", &refusing.uri(), &client),
        tool("tokenless", &tokenless.uri(), &client),
        tool("down", &down_uri, &client),
        tool("oversized", &oversized.uri(), &client),
        tool("unsendable", &unsendable.uri(), &client),
        tool("no_client", &refusing.uri(), &wrong),
    ];
    let h = harness(Config::fixed_defaults(), tools, &[]).await;
    for (name, text) in [
        (
            "refused",
            "Tool 'refused': the access token could not be obtained (the token endpoint answered HTTP 401, invalid_client)",
        ),
        (
            "tokenless",
            "Tool 'tokenless': the access token could not be obtained (the token endpoint's answer holds no bearer access_token)",
        ),
        (
            "down",
            "Tool 'down': the access token could not be obtained (the token endpoint is unreachable)",
        ),
        (
            "oversized",
            "Tool 'oversized': the access token could not be obtained (the token endpoint's answer exceeds 65536 bytes)",
        ),
        (
            "unsendable",
            "Tool 'unsendable': the access token could not be obtained (the token endpoint's access_token is not a valid header value)",
        ),
        (
            "no_client",
            "Tool 'no_client': the credential could not be read (the secret has no string fields 'client_id' and 'client_secret')",
        ),
    ] {
        let answer = h.call_tool(name, json!({})).await;
        assert_eq!(result_of(&answer), (true, text.to_string()), "{name}");
        assert!(!String::from_utf8_lossy(&answer.body).contains("wrong"));
    }
    assert!(received(&h).await.is_empty());
}
