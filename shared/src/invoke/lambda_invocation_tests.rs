//! Unit tests of the client context, the Invoke API URL and answer classification (CONTRACT
//! X10, O3).

use super::*;

fn arn() -> FunctionArn {
    FunctionArn::parse("arn:aws:lambda:eu-west-1:123456789012:function:hr-tools:live").unwrap()
}

#[test]
fn x10_client_context_carries_the_tool_name_and_headers_as_strings() {
    let headers = [
        (
            HeaderName::from_static("guid"),
            HeaderValue::from_static("0b5e7c0a-1d2e-4f3a-9b8c-7d6e5f4a3b2c"),
        ),
        (
            HeaderName::from_static("employee-no"),
            HeaderValue::from_static("ENC(AbC+/==)"),
        ),
    ];
    let encoded = client_context("lookup_glossary", &headers, &[]).unwrap();
    let decoded: Value = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        decoded,
        serde_json::json!({"custom": {
            "bedrockAgentCoreToolName": "lookup_glossary",
            "mcpToolName": "lookup_glossary",
            "guid": "0b5e7c0a-1d2e-4f3a-9b8c-7d6e5f4a3b2c",
            "employee-no": "ENC(AbC+/==)"
        }})
    );
}

#[test]
fn x10_a_client_context_over_the_limit_is_refused() {
    let long = HeaderValue::from_str(&"E".repeat(2048)).unwrap();
    let headers = [
        (HeaderName::from_static("employee-no"), long.clone()),
        (HeaderName::from_static("virtual-employee-no"), long),
    ];
    assert_eq!(
        client_context("t", &headers, &[]),
        Err(InvokeError::ClientContextTooLarge)
    );
    let fits = HeaderValue::from_str(&"E".repeat(2048)).unwrap();
    assert!(client_context("t", &[(HeaderName::from_static("employee-no"), fits)], &[]).is_ok());
}

fn custom_keys(encoded: &str) -> Vec<String> {
    let decoded: Value = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap(),
    )
    .unwrap();
    decoded["custom"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[test]
fn o3_trace_keys_are_dropped_first_baggage_then_tracestate_then_xray_then_traceparent() {
    let trace = [
        (
            HeaderName::from_static("traceparent"),
            HeaderValue::from_static("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
        ),
        (
            HeaderName::from_static("tracestate"),
            HeaderValue::from_str(&format!("v={}", "s".repeat(400))).unwrap(),
        ),
        (
            HeaderName::from_static("baggage"),
            HeaderValue::from_str(&format!("k={}", "b".repeat(600))).unwrap(),
        ),
        (
            HeaderName::from_static("x-amzn-trace-id"),
            HeaderValue::from_static(
                "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
            ),
        ),
    ];
    let employee = |len: usize| {
        [(
            HeaderName::from_static("employee-no"),
            HeaderValue::from_str(&"E".repeat(len)).unwrap(),
        )]
    };
    let keys = |len| custom_keys(&client_context("t", &employee(len), &trace).unwrap());
    let all = keys(100);
    assert!(all.iter().any(|k| k == "baggage"), "{all:?}");
    // Room for everything but the baggage.
    let without_baggage = keys(1900);
    assert!(!without_baggage.contains(&"baggage".to_string()));
    assert!(without_baggage.contains(&"tracestate".to_string()));
    // Then without the tracestate.
    let smaller = keys(2300);
    assert!(!smaller.contains(&"tracestate".to_string()));
    assert!(smaller.contains(&"x-amzn-trace-id".to_string()));
    assert!(smaller.contains(&"traceparent".to_string()));
    // The X10 keys alone fit, none of the trace keys do.
    let bare = keys(2600);
    assert!(
        !bare.iter().any(
            |k| ["traceparent", "tracestate", "baggage", "x-amzn-trace-id"].contains(&k.as_str())
        ),
        "{bare:?}"
    );
    assert!(bare.contains(&"employee-no".to_string()));
    // Over the limit without any trace key: refused as before.
    assert_eq!(
        client_context("t", &employee(2680), &trace),
        Err(InvokeError::ClientContextTooLarge)
    );
}

#[test]
fn x10_invoke_url_encodes_the_arn_and_names_the_qualifier() {
    assert_eq!(
        invoke_url(None, &arn()),
        "https://lambda.eu-west-1.amazonaws.com/2015-03-31/functions/\
         arn%3Aaws%3Alambda%3Aeu-west-1%3A123456789012%3Afunction%3Ahr-tools/invocations?Qualifier=live"
    );
    assert_eq!(
        invoke_url(Some("http://127.0.0.1:9001"), &arn()),
        "http://127.0.0.1:9001/2015-03-31/functions/\
         arn%3Aaws%3Alambda%3Aeu-west-1%3A123456789012%3Afunction%3Ahr-tools/invocations?Qualifier=live"
    );
}

#[test]
fn x10_redaction_finds_arns_in_any_spelling() {
    let f = arn();
    for (message, shown) in [
        (
            "ARN:AWS:LAMBDA:EU-WEST-1:123456789012:FUNCTION:HR-TOOLS failed.",
            "<function> failed.",
        ),
        (
            "see Arn:aws:lambda:eu-west-1:123456789012:function:hr-tools:live, then",
            "see <function>, then",
        ),
        (
            "arn%3Aaws%3Alambda%3Aeu-west-1%3A123456789012%3Afunction%3Ahr-tools gone",
            "<function> gone",
        ),
        ("arn:\u{200b}aws:lambda:x:function:hr-tools", "<function>"),
        (
            "account 1234-5678-9012 region EU-WEST-1 (1234 5678 9012)",
            "account <account> region <region> (<account>)",
        ),
        ("no secrets here", "no secrets here"),
    ] {
        assert_eq!(redacted(message, &f), shown, "{message}");
    }
}

#[test]
fn x10_redaction_finds_the_bare_function_name_as_a_whole_word() {
    let f = arn();
    for (message, shown) in [
        ("hr-tools failed", "<function> failed"),
        (
            "HR-Tools:live timed out; Hr-tools:$LATEST and hr-tools:7 too",
            "<function> timed out; <function> and <function> too",
        ),
        (
            "log group /aws/lambda/hr-tools.",
            "log group /aws/lambda/<function>.",
        ),
        ("hr-tools: bad input", "<function>: bad input"),
        ("'hr-tools'에서 실패", "'<function>'에서 실패"),
        (
            "arn:aws:lambda:eu-west-1:123456789012:function:hr-tools:live calls hr-tools in \
             eu-west-1",
            "<function> calls <function> in <region>",
        ),
        // Part of a longer name: another function's, left as it is.
        (
            "hr-tools-v2, my-hr-tools, hr-tools_old and hr-toolsx stay",
            "hr-tools-v2, my-hr-tools, hr-tools_old and hr-toolsx stay",
        ),
    ] {
        assert_eq!(redacted(message, &f), shown, "{message}");
    }
}

#[test]
fn x10_redaction_never_rewrites_its_own_placeholders() {
    let named = |name: &str| {
        FunctionArn::parse(&format!(
            "arn:aws:lambda:eu-west-1:123456789012:function:{name}"
        ))
        .unwrap()
    };
    assert_eq!(
        redacted(
            "arn:aws:lambda:eu-west-1:123456789012:function:function failed in function",
            &named("function")
        ),
        "<function> failed in <function>"
    );
    assert_eq!(
        redacted("region eu-west-1 of account 123456789012", &named("region")),
        "<function> <region> of account <account>"
    );
    assert_eq!(
        redacted("no account in eu-west-1", &named("account")),
        "no <function> in <region>"
    );
}

#[test]
fn x10_names_under_three_characters_are_not_looked_for_on_their_own() {
    let named = |name: &str| {
        FunctionArn::parse(&format!(
            "arn:aws:lambda:us-east-1:123456789012:function:{name}"
        ))
        .unwrap()
    };
    // As whole words these are ordinary words and numbers: the message stays readable.
    assert_eq!(
        redacted("a timeout: a:live is a bug", &named("a")),
        "a timeout: a:live is a bug"
    );
    assert_eq!(
        redacted("go on, Go:42 went 42 ms", &named("go")),
        "go on, Go:42 went 42 ms"
    );
    assert_eq!(
        redacted(
            "a failed: arn:aws:lambda:us-east-1:123456789012:function:a",
            &named("a")
        ),
        "a failed: <function>",
        "its ARN is hidden whatever the name's length"
    );
    assert_eq!(
        redacted("hr1 failed, hr1:live too", &named("hr1")),
        "<function> failed, <function> too"
    );
    // Nor do they make every error type that holds their letters `unknown error`.
    assert_eq!(
        error_type(Some("AccessDeniedException"), None, &named("a")),
        "AccessDeniedException"
    );
    assert_eq!(
        error_type(Some("Hr1Error"), None, &named("hr1")),
        "unknown error"
    );
}

#[test]
fn x10_answers_are_classified_without_aws_messages() {
    let f = arn();
    let ok = classify(StatusCode::OK, false, None, b"\"hi\"".to_vec(), &f).unwrap();
    assert_eq!(ok.body, Bytes::from_static(b"\"hi\""));
    assert_eq!(
        classify(StatusCode::OK, false, None, b"not json".to_vec(), &f),
        Err(InvokeError::NotJson)
    );
    let message = br#"{"errorMessage":"no access to arn:aws:lambda:eu-west-1:123456789012:function:hr-tools:live","errorType":"Boom"}"#;
    assert_eq!(
        classify(StatusCode::OK, true, None, message.to_vec(), &f),
        Err(InvokeError::FunctionError {
            message: "no access to <function>".into()
        })
    );
    assert_eq!(
        classify(
            StatusCode::NOT_FOUND,
            false,
            Some("ResourceNotFoundException:http://internal.amazon.com/coral/"),
            br#"{"Type":"User","Message":"Function not found: arn:aws:lambda:eu-west-1:123456789012:function:hr-tools"}"#.to_vec(),
            &f
        ),
        Err(InvokeError::FunctionNotFound)
    );
    assert_eq!(
        classify(
            StatusCode::BAD_GATEWAY,
            false,
            None,
            br#"{"__type":"com.amazon#ServiceException"}"#.to_vec(),
            &f
        ),
        Err(InvokeError::InvokeFailed {
            status: 502,
            error_type: "ServiceException".into()
        })
    );
    assert_eq!(
        error_type(None, None, &f),
        "unknown error",
        "no type named: a fixed text"
    );
    for secret in ["hrtools123456789012", "EUWEST1Error", "Hr-Tools"] {
        assert_eq!(
            error_type(Some(secret), None, &f),
            "unknown error",
            "{secret}"
        );
    }
    // Only a 200 is a result: another 2xx is an invocation failure.
    assert_eq!(
        classify(StatusCode::CREATED, false, None, b"{}".to_vec(), &f),
        Err(InvokeError::InvokeFailed {
            status: 201,
            error_type: "unknown error".into()
        })
    );
}
