//! The Lambda invocation deadline caps tool timeouts (CONTRACT X7, X6): a Tool Service slower
//! than the remaining invocation time yields an `isError` result before the deadline, read from
//! the Lambda context of a real event through the gateway's Lambda adapter.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use gateway_tests::Harness;
use lambda_http::{Body, Context, RequestExt};
use mcp_gateway::lambda::handle_event;
use serde_json::{Value, json};
use wiremock::matchers::path;
use wiremock::{Mock, ResponseTemplate};

/// The HTTP API `$default` fixture (a `tools/call` of `search_documents`) with a Lambda context
/// whose deadline is `deadline_ms` (epoch milliseconds, as the Runtime API sends it).
fn tools_call_event(deadline_ms: u64) -> lambda_http::Request {
    let path = format!(
        "{}/events/apigw-v2-default-stage.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let event = lambda_http::request::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut context = Context::default();
    context.deadline = deadline_ms;
    event.with_lambda_context(context)
}

fn epoch_ms(at: SystemTime) -> u64 {
    u64::try_from(at.duration_since(UNIX_EPOCH).unwrap().as_millis()).unwrap()
}

fn body(response: &http::Response<Body>) -> Value {
    match response.body() {
        Body::Text(text) => serde_json::from_str(text).unwrap(),
        other => panic!("expected a text body, got {other:?}"),
    }
}

#[tokio::test]
async fn x7_tool_service_slower_than_the_remaining_invocation_time_yields_is_error_before_the_deadline()
 {
    let h = Harness::fixed().await;
    Mock::given(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(10)))
        .mount(&h.tool_service)
        .await;
    // 1.5 s left; the default margin (500 ms) leaves 1 s, below the tool's own 2 s timeout.
    let remaining = Duration::from_millis(1500);
    let deadline = Instant::now() + remaining;
    let event = tools_call_event(epoch_ms(SystemTime::now() + remaining));

    let response = handle_event(&h.gateway, event).await;
    let answered = Instant::now();
    assert!(
        answered < deadline,
        "answered before the invocation deadline"
    );
    assert_eq!(response.status(), 200);
    let body = body(&response);
    assert_eq!(body["result"]["isError"], true, "{body}");
    let text = body["result"]["content"][0]["text"].as_str().unwrap();
    let ms: u64 = text
        .strip_prefix("Tool Service did not answer within ")
        .and_then(|t| t.strip_suffix(" ms"))
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        ms <= 1000,
        "capped by the deadline minus the margin: {text}"
    );
}

#[tokio::test]
async fn x7_a_deadline_already_past_on_arrival_is_ignored_as_the_emulator_sends_one() {
    let h = Harness::fixed().await;
    Mock::given(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_millis(50)))
        .mount(&h.tool_service)
        .await;
    // `cargo lambda watch` sends `Lambda-Runtime-Deadline-Ms: 600000`: 1970, not in 10 minutes.
    let response = handle_event(&h.gateway, tools_call_event(600_000)).await;
    let body = body(&response);
    assert_eq!(body["result"]["isError"], false, "{body}");
    assert_eq!(body["id"], json!(5));
}
