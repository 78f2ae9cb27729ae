//! Real API Gateway event JSON through `lambda_http::request::from_str` into the gateway's Lambda
//! adapter (CONTRACT P9, P6, H1, H8): the stage prefix is not part of the public path, base64
//! bodies parse like plain ones.

use gateway_tests::Harness;
use serde_json::Value;

fn event(name: &str) -> lambda_http::Request {
    let path = format!("{}/events/{name}", env!("CARGO_MANIFEST_DIR"));
    lambda_http::request::from_str(&std::fs::read_to_string(path).unwrap()).expect("event parses")
}

fn text(body: &lambda_http::Body) -> String {
    match body {
        lambda_http::Body::Text(text) => text.clone(),
        lambda_http::Body::Binary(bytes) => String::from_utf8(bytes.clone()).unwrap(),
        _ => String::new(),
    }
}

#[tokio::test]
async fn p9_http_api_named_stage_with_base64_body_reaches_the_route() {
    let h = Harness::fixed().await;
    let response =
        mcp_gateway::lambda::handle_event(&h.gateway, event("apigw-v2-named-stage-base64.json"))
            .await;
    assert_eq!(response.status(), 200);
    let body: Value = serde_json::from_str(&text(response.body())).unwrap();
    assert_eq!(body["id"], 1);
    assert!(body["result"]["tools"].is_array(), "{body}");
    assert_eq!(
        response.headers()["guid"],
        "0b5e7c0a-1d2e-4f3a-9b8c-7d6e5f4a3b2c"
    );
}

#[tokio::test]
async fn p9_rest_api_stage_get_is_405_not_404_or_redirect() {
    let h = Harness::fixed().await;
    let response =
        mcp_gateway::lambda::handle_event(&h.gateway, event("apigw-v1-stage-get.json")).await;
    assert_eq!(response.status(), 405);
    assert_eq!(response.headers()["allow"], "POST");
    let body: Value = serde_json::from_str(&text(response.body())).unwrap();
    assert_eq!(body["error"], "method_not_allowed");
}
