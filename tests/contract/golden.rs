//! Golden exchanges (CONTRACT L1, L2, L3, T1, X2, X5, X6, H4, N3, N4, and the tool result formats of
//! docs/routes.md: `structuredContent` from an `outputSchema`, MCP-native results): each
//! `tests/golden/*.json` holds a request, what the Tool Service answers, and the expected
//! response, compared as JSON values.
//! Volatile values are normalized: `guid`, `x-request-id` and `mcp-session-id` to `"<uuid>"`,
//! `searchTime` to `"<ms>"` (after checking their shape). `UPDATE_GOLDEN=1` rewrites the files.

use std::path::{Path, PathBuf};

use gateway_tests::{Harness, request};
use serde_json::{Map, Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

const COMPARED_HEADERS: [&str; 5] = [
    "content-type",
    "allow",
    "mcp-session-id",
    "guid",
    "x-request-id",
];

fn normalize(value: &mut Value) {
    match value {
        Value::Object(object) => {
            for (key, v) in object.iter_mut() {
                match (key.as_str(), &*v) {
                    ("guid", Value::String(s)) => {
                        assert!(uuid_like(s), "guid is a UUID: {s}");
                        *v = json!("<uuid>");
                    }
                    ("searchTime", Value::Number(n)) => {
                        assert!(n.is_u64(), "searchTime is a whole number of ms: {n}");
                        *v = json!("<ms>");
                    }
                    _ => normalize(v),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize),
        _ => {}
    }
}

fn uuid_like(s: &str) -> bool {
    s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4
}

async fn run(file: &Path) {
    let text = std::fs::read_to_string(file).unwrap();
    let mut fixture: Value = serde_json::from_str(&text).unwrap();
    let harness = Harness::fixed().await;
    if let Some(service) = fixture.get("toolService") {
        let body = &service["body"];
        let template =
            ResponseTemplate::new(u16::try_from(service["status"].as_u64().unwrap()).unwrap());
        let template = match body {
            Value::String(text) => template.set_body_string(text.clone()),
            other => template.set_body_raw(other.to_string(), "application/json"),
        };
        Mock::given(method("POST"))
            .and(path(service["path"].as_str().unwrap()))
            .respond_with(template)
            .expect(1)
            .mount(&harness.tool_service)
            .await;
    }
    let req = &fixture["request"];
    let headers: Vec<(String, String)> = req["headers"]
        .as_object()
        .map(|h| {
            h.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect()
        })
        .unwrap_or_default();
    let header_refs: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let answer = harness
        .send(request(
            req["method"].as_str().unwrap(),
            req["path"].as_str().unwrap(),
            &header_refs,
            req["body"].to_string(),
        ))
        .await;

    let mut actual_headers = Map::new();
    for name in COMPARED_HEADERS {
        if let Some(value) = answer.header(name) {
            let value = if matches!(name, "guid" | "x-request-id" | "mcp-session-id") {
                assert!(uuid_like(value), "{name} is a UUID: {value}");
                "<uuid>".to_string()
            } else {
                value.to_string()
            };
            actual_headers.insert(name.into(), json!(value));
        }
    }
    let mut body = if answer.body.is_empty() {
        Value::Null
    } else {
        answer.json()
    };
    normalize(&mut body);
    let actual = json!({"status": answer.status.as_u16(), "headers": actual_headers, "body": body});

    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        fixture["response"] = actual;
        std::fs::write(file, serde_json::to_string_pretty(&fixture).unwrap() + "\n").unwrap();
        return;
    }
    assert_eq!(
        actual,
        fixture["response"],
        "golden mismatch in {}",
        file.display()
    );
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("golden")
}

macro_rules! golden {
    ($($name:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $name() {
                run(&golden_dir().join(concat!(stringify!($name), ".json"))).await;
            }
        )*
        /// The golden exchanges that have a test, by file stem.
        const GOLDEN_TESTS: &[&str] = &[$(stringify!($name)),*];
    };
}

golden!(
    initialize_answers_server_info_and_a_fresh_session_id,
    initialized_notification_is_accepted_with_an_empty_body,
    tools_list_shows_public_fields_only,
    tools_call_success_is_compact_json_text_with_search_time,
    tools_call_execution_failure_is_an_is_error_result,
    tools_call_missing_required_argument_is_invalid_params,
    missing_protocol_version_is_http_400_with_supported_versions,
    tools_call_with_output_schema_carries_structured_content_beside_the_text,
    tools_call_answer_breaking_the_output_schema_is_an_is_error_result_naming_the_pointer,
    tools_call_non_object_answer_of_a_tool_with_output_schema_is_an_is_error_result,
    tools_call_mcp_native_blocks_pass_through_with_search_time_on_the_first,
    tools_call_mcp_native_is_error_result_passes_through,
    tools_call_mcp_native_malformed_answer_is_an_is_error_result,
    tools_call_mcp_native_structured_content_matching_the_output_schema_passes_through,
    tools_call_mcp_native_answer_without_structured_content_for_an_output_schema_is_an_is_error_result,
    modern_server_discover_answers_versions_capabilities_and_server_info,
    modern_tools_list_adds_result_type_server_info_and_cache_fields,
    modern_tools_call_is_one_request_with_the_legacy_result_and_modern_fields,
);

#[test]
fn every_golden_file_has_a_test() {
    let mut files: Vec<String> = std::fs::read_dir(golden_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut tests: Vec<String> = GOLDEN_TESTS.iter().map(|t| format!("{t}.json")).collect();
    tests.sort();
    assert_eq!(files, tests);
}
