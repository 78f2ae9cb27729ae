//! Tool result formats against a real Tool Service on loopback (CONTRACT X5, X6, T1, M and
//! docs/routes.md "Tool results"): `structuredContent` from an `outputSchema`, MCP-native answers, that
//! the execution-failure rules of X6 hold for both, and that the manifest JSON Schema describes
//! `_meta.resultFormat` as the loader reads it.

use std::path::PathBuf;

use gateway_tests::{Harness, manifest, rpc};
use mcp_gateway::Config;
use mcp_gateway::registry::compile_manifest;
use serde_json::{Value, json};
use wiremock::matchers::path;
use wiremock::{Mock, ResponseTemplate};

fn call(name: &str) -> Value {
    rpc(
        json!(7),
        "tools/call",
        json!({"name": name, "arguments": {}}),
    )
}

async fn answer_with(h: &Harness, at: &str, template: ResponseTemplate) {
    Mock::given(path(at))
        .respond_with(template)
        .expect(1)
        .mount(&h.tool_service)
        .await;
}

#[tokio::test]
async fn t1_tools_list_shows_output_schema_and_never_the_result_format() {
    let h = Harness::fixed().await;
    let answer = h
        .post("/mcp/core", &rpc(json!(1), "tools/list", Value::Null), &[])
        .await;
    let raw = String::from_utf8_lossy(&answer.body).into_owned();
    assert!(!raw.contains("resultFormat"), "{raw}");
    assert!(!raw.contains("\"mcp\""), "{raw}");
    let tools = answer.json()["result"]["tools"].clone();
    let count = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "count_documents")
        .unwrap()
        .clone();
    assert_eq!(
        count["outputSchema"]["required"],
        json!(["total", "departments"])
    );
}

#[tokio::test]
async fn x6_a_non_2xx_answer_of_an_mcp_native_tool_is_an_is_error_result_quoting_its_message() {
    let h = Harness::fixed().await;
    answer_with(
        &h,
        "/chart",
        ResponseTemplate::new(502).set_body_json(json!({"message": "renderer is down"})),
    )
    .await;
    let body = h.post("/mcp/core", &call("render_chart"), &[]).await.json();
    assert_eq!(body["result"]["isError"], true, "{body}");
    assert_eq!(
        body["result"]["content"][0]["text"],
        "Tool Service returned HTTP 502: renderer is down"
    );
    assert!(body["result"].get("structuredContent").is_none(), "{body}");
}

#[tokio::test]
async fn x6_a_non_2xx_answer_of_a_tool_with_output_schema_carries_no_structured_content() {
    let h = Harness::fixed().await;
    answer_with(
        &h,
        "/count",
        ResponseTemplate::new(400).set_body_json(json!({"total": 0, "departments": []})),
    )
    .await;
    let body = h
        .post("/mcp/core", &call("count_documents"), &[])
        .await
        .json();
    assert_eq!(body["result"]["isError"], true, "{body}");
    assert!(body["result"].get("structuredContent").is_none(), "{body}");
}

#[tokio::test]
async fn x6_an_mcp_native_answer_over_the_response_limit_is_an_is_error_result() {
    let mut config = Config::fixed_defaults();
    config.max_response_bytes = 4096;
    let h = Harness::with_config(config).await;
    let big = "A".repeat(8192);
    answer_with(
        &h,
        "/chart",
        ResponseTemplate::new(200).set_body_json(json!({
            "content": [{"type": "image", "data": big, "mimeType": "image/png"}]
        })),
    )
    .await;
    let answer = h.post("/mcp/core", &call("render_chart"), &[]).await;
    assert!(answer.body.len() <= 4096, "{}", answer.body.len());
    let body = answer.json();
    assert_eq!(body["result"]["isError"], true, "{body}");
    assert_eq!(
        body["result"]["content"][0]["text"],
        "Tool Service response is too large: the tool result would exceed the gateway's 4096-byte response limit"
    );
}

#[tokio::test]
async fn x6_an_mcp_native_answer_that_is_plain_text_is_an_is_error_result() {
    let h = Harness::fixed().await;
    answer_with(
        &h,
        "/chart",
        ResponseTemplate::new(200).set_body_string("chart rendered"),
    )
    .await;
    let body = h.post("/mcp/core", &call("render_chart"), &[]).await.json();
    assert_eq!(body["result"]["isError"], true, "{body}");
    assert_eq!(
        body["result"]["content"][0]["text"],
        "Tool Service answer is not a valid MCP tool result: the body is not JSON"
    );
}

#[tokio::test]
async fn x5_structured_content_keeps_the_tools_number_text_and_key_order() {
    let h = Harness::fixed().await;
    answer_with(
        &h,
        "/count",
        ResponseTemplate::new(200).set_body_raw(
            r#"{"departments": ["IT"], "total": 18446744073709551616, "ratio": 1.50}"#,
            "application/json",
        ),
    )
    .await;
    let answer = h.post("/mcp/core", &call("count_documents"), &[]).await;
    let raw = String::from_utf8_lossy(&answer.body).into_owned();
    // 2^64 does not fit a u64, yet it is an integer for the schema and keeps every digit.
    assert!(
        raw.contains(
            r#""structuredContent":{"departments":["IT"],"total":18446744073709551616,"ratio":1.50}"#
        ),
        "{raw}"
    );
}

fn format_schema() -> jsonschema::Validator {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../manifests/manifest.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).expect("the manifest schema compiles")
}

#[test]
fn m_the_manifest_schema_and_the_loader_agree_on_result_format() {
    let schema = format_schema();
    for (format, valid) in [
        (json!("json"), true),
        (json!("mcp"), true),
        (json!("xml"), false),
        (json!("MCP"), false),
        (json!(true), false),
    ] {
        let document = json!({"tools": [{
            "name": "t",
            "inputSchema": {"type": "object"},
            "_meta": {"endpoint": "https://tools.example/t", "resultFormat": format}
        }]});
        assert_eq!(schema.is_valid(&document), valid, "schema on {format}");
        assert_eq!(
            compile_manifest(&document).is_ok(),
            valid,
            "loader on {format}"
        );
    }
}

#[test]
fn m_the_test_manifest_with_output_schemas_and_result_formats_matches_the_format_schema() {
    let document = manifest("http://127.0.0.1:9");
    let errors: Vec<String> = format_schema()
        .iter_errors(&document)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}
