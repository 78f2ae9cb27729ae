//! `_meta.auth` at load (CONTRACT M5): what each type compiles to, and every refusal with its
//! JSON path and words, the same from the one-pass reading and from the full check.

use bytes::Bytes;
use http::HeaderName;
use serde_json::{Value, json};

use super::first_pass::compile_manifest_text;
use super::stream_tests::outcome;
use super::*;
use crate::registry::{KeyPlacement, OutboundAuth, SecretSource, ToolLookup};

const SM: &str = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tools/key-AbCdEf";
const SSM: &str = "arn:aws:ssm:eu-west-1:123456789012:parameter/tools/key";

/// A single-route manifest of one tool whose `_meta` gets `meta`'s fields.
fn document(meta: &Value) -> Value {
    let mut tool = json!({
        "name": "t",
        "inputSchema": {"type": "object", "properties": {
            "id": {"type": "string"}, "q": {"type": "string"}, "h": {"type": "string"}},
            "required": ["id"]},
        "_meta": {"endpoint": "http://127.0.0.1:9/t"}
    });
    for (k, v) in meta.as_object().unwrap() {
        tool["_meta"][k] = v.clone();
    }
    json!({"tools": [tool]})
}

/// Loads the manifest both ways, asserts they agree, and gives the tool's auth or the problems.
fn load(meta: &Value) -> Result<Option<OutboundAuth>, Vec<String>> {
    let document = document(meta);
    let by_document = compile_manifest(&document);
    let text = Bytes::from(serde_json::to_vec(&document).unwrap());
    let by_text = compile_manifest_text(&text).expect("a manifest's shape");
    assert_eq!(outcome(by_text), outcome(by_document), "{document}");
    let snapshot = compile_manifest(&document)
        .map_err(|p| p.iter().map(ToString::to_string).collect::<Vec<_>>())?;
    let route = snapshot.single.as_ref().unwrap();
    match route.tool("t") {
        Some(ToolLookup::Active(tool)) => Ok(tool.auth.as_deref().cloned()),
        _ => panic!("tool t"),
    }
}

fn refused(meta: &Value) -> Vec<String> {
    load(meta).expect_err("refused")
}

#[test]
fn m5_api_key_and_basic_compile_to_their_placement_and_secret() {
    let auth = load(
        &json!({"auth": {"type": "apiKey", "in": "header", "name": "X-Api-Key",
                                      "secret": format!("{SM}#api_key")}}),
    )
    .unwrap()
    .unwrap();
    let OutboundAuth::ApiKey {
        placement,
        prefix,
        secret,
    } = auth
    else {
        panic!("apiKey")
    };
    assert_eq!(
        placement,
        KeyPlacement::Header(HeaderName::from_static("x-api-key"))
    );
    assert_eq!(prefix, "");
    assert!(matches!(&secret.source, SecretSource::SecretsManager(a) if a.arn == SM));
    assert_eq!(secret.json_key.as_deref(), Some("api_key"));

    let bearer = load(
        &json!({"auth": {"type": "apiKey", "in": "header", "name": "Authorization",
                                        "prefix": "Bearer ", "secret": SSM}}),
    )
    .unwrap()
    .unwrap();
    assert!(matches!(bearer, OutboundAuth::ApiKey { ref prefix, .. } if prefix == "Bearer "));
    let query = load(
        &json!({"auth": {"type": "apiKey", "in": "query", "name": "api_key",
                                       "secret": "env:TOOL_KEY"}}),
    )
    .unwrap()
    .unwrap();
    assert!(
        matches!(query, OutboundAuth::ApiKey { placement: KeyPlacement::Query(ref n), .. } if n == "api_key")
    );
    let basic = load(&json!({"auth": {"type": "basic", "secret": SM}}))
        .unwrap()
        .unwrap();
    assert_eq!(basic.type_name(), "basic");
    assert_eq!(load(&json!({})).unwrap(), None);
}

#[test]
fn m5_shape_refusals_name_the_field() {
    let p = "tools[0]._meta.auth";
    let cases = [
        (
            json!("x"),
            vec![format!("{p}: must be an object with a \"type\"")],
        ),
        (
            json!({}),
            vec![format!(
                "{p}.type: must be one of \"apiKey\", \"basic\", \"oauth2ClientCredentials\", \"sigv4\""
            )],
        ),
        (
            json!({"type": "bearer", "secret": SM}),
            vec![format!(
                "{p}.type: must be one of \"apiKey\", \"basic\", \"oauth2ClientCredentials\", \"sigv4\""
            )],
        ),
        (
            json!({"type": "basic"}),
            vec![format!("{p}.secret: is required")],
        ),
        (
            json!({"type": "basic", "secret": 5}),
            vec![format!("{p}.secret: must be a string")],
        ),
        (
            json!({"type": "basic", "secret": "vault:x"}),
            vec![format!("{p}.secret: {}", auth::REF_PROBLEM)],
        ),
        (
            json!({"type": "basic", "secret": SM, "name": "x"}),
            vec![format!("{p}.name: is not a field of a 'basic' auth")],
        ),
        (
            json!({"type": "basic", "secret": format!("{SM}#user")}),
            vec![format!(
                "{p}.secret: must name the whole JSON secret (no #jsonKey): basic reads its \"username\" and \"password\""
            )],
        ),
        (
            json!({"type": "apiKey", "secret": SM}),
            vec![
                format!("{p}.in: is required"),
                format!("{p}.name: is required"),
            ],
        ),
        (
            json!({"type": "apiKey", "in": "cookie", "name": "k", "secret": SM}),
            vec![format!("{p}.in: must be \"header\" or \"query\"")],
        ),
        (
            json!({"type": "apiKey", "in": "header", "name": "bad name", "secret": SM}),
            vec![format!("{p}.name: must be an HTTP header name")],
        ),
        (
            json!({"type": "apiKey", "in": "query", "name": "", "secret": SM}),
            vec![format!("{p}.name: must not be empty")],
        ),
        (
            json!({"type": "apiKey", "in": "header", "name": "k", "prefix": "a\nb", "secret": SM}),
            vec![format!(
                "{p}.prefix: must be printable ASCII characters (spaces allowed)"
            )],
        ),
    ];
    for (auth, expected) in cases {
        assert_eq!(refused(&json!({"auth": auth})), expected, "{auth}");
    }
}

#[test]
fn m5_headers_the_gateway_or_a_parameter_sets_are_refused() {
    let p = "tools[0]._meta.auth.name";
    for name in [
        "guid",
        "X-Request-Id",
        "mcp-session-id",
        "employee-no",
        "virtual-employee-no",
        "Host",
        "content-type",
    ] {
        assert_eq!(
            refused(
                &json!({"auth": {"type": "apiKey", "in": "header", "name": name, "secret": SM}})
            ),
            vec![format!(
                "{p}: header name '{name}' is reserved by the gateway"
            )]
        );
    }
    let refusal = |meta: &Value| refused(meta);
    assert_eq!(
        refusal(&json!({"parameters": {"h": "header"},
                        "auth": {"type": "apiKey", "in": "header", "name": "h", "secret": SM}})),
        vec![format!(
            "{p}: header 'h' is also set by the header parameter 'h'"
        )]
    );
    assert_eq!(
        refusal(&json!({"parameters": {"q": "query"},
                        "auth": {"type": "apiKey", "in": "query", "name": "q", "secret": SM}})),
        vec![format!(
            "{p}: query name 'q' is also set by the query parameter 'q'"
        )]
    );
    // Another name, or the same name elsewhere, is fine.
    assert!(
        load(&json!({"parameters": {"q": "query"},
                         "auth": {"type": "apiKey", "in": "header", "name": "q", "secret": SM}}))
        .is_ok()
    );
    // `Authorization` is never a header parameter's (M2 reserves it), so a bearer key or a
    // basic credential cannot meet one.
    assert!(
        load(&json!({"parameters": {"h": "header"}, "auth": {"type": "basic", "secret": SM}}))
            .unwrap()
            .is_some()
    );
}

#[test]
fn m5_a_lambda_tool_takes_no_auth() {
    assert_eq!(
        refused(&json!({"endpoint": "arn:aws:lambda:eu-west-1:123456789012:function:f",
                        "auth": {"type": "basic", "secret": SM}})),
        vec!["tools[0]._meta.auth: does not apply to a Lambda function tool (it is invoked with the gateway's role)".to_string()]
    );
}

#[test]
fn m5_oauth2_client_credentials_and_sigv4_fields_are_checked() {
    let p = "tools[0]._meta.auth";
    let token_url = url::Url::parse("https://idp.example/oauth2/token").unwrap();
    assert_eq!(
        load(
            &json!({"auth": {"type": "oauth2ClientCredentials", "secret": SM,
            "tokenUrl": "https://idp.example/oauth2/token", "scopes": ["read", "write:all"],
            "audience": "https://api.example", "clientAuth": "body"}})
        ),
        Ok(Some(OutboundAuth::OAuth2 {
            token_url: token_url.clone(),
            secret: crate::registry::SecretRef::parse(SM).unwrap(),
            scopes: vec!["read".into(), "write:all".into()],
            audience: Some("https://api.example".into()),
            client_auth: crate::registry::ClientAuth::Body,
        }))
    );
    assert!(matches!(
        load(
            &json!({"auth": {"type": "oauth2ClientCredentials", "secret": SM,
            "tokenUrl": "https://idp.example/oauth2/token"}})
        ),
        Ok(Some(OutboundAuth::OAuth2 {
            client_auth: crate::registry::ClientAuth::Basic,
            ..
        }))
    ));
    assert_eq!(
        refused(
            &json!({"auth": {"type": "oauth2ClientCredentials", "secret": SM,
            "tokenUrl": "https://u:p@idp.example/t", "scopes": "read", "audience": 1,
            "clientAuth": "jwt"}})
        ),
        vec![
            format!(
                "{p}.tokenUrl: must be an absolute http(s) URL without a user name or password"
            ),
            format!("{p}.scopes: must be an array of strings (RFC 6749 scope tokens)"),
            format!("{p}.audience: must be a string"),
            format!("{p}.clientAuth: must be \"basic\" or \"body\""),
        ]
    );
    assert_eq!(
        refused(
            &json!({"auth": {"type": "oauth2ClientCredentials", "secret": format!("{SM}#id"),
            "tokenUrl": "/token", "scopes": ["a b"]}})
        ),
        vec![
            format!(
                "{p}.tokenUrl: must be an absolute http(s) URL without a user name or password"
            ),
            format!("{p}.scopes: must be an array of strings (RFC 6749 scope tokens)"),
            format!(
                "{p}.secret: must name the whole JSON secret (no #jsonKey): oauth2ClientCredentials reads its \"client_id\" and \"client_secret\""
            ),
        ]
    );
    assert_eq!(
        refused(&json!({"auth": {"type": "sigv4", "region": "Europe", "secret": SM}})),
        vec![
            format!("{p}.secret: is not a field of a 'sigv4' auth"),
            format!("{p}.service: is required"),
            format!("{p}.region: must be an AWS region such as \"eu-west-1\""),
        ]
    );
}

#[test]
fn m5_sigv4_signs_for_the_given_region_or_the_one_the_host_names() {
    let sigv4 = |service: &str, region: &str| OutboundAuth::SigV4 {
        service: service.into(),
        region: region.into(),
    };
    assert_eq!(
        load(&json!({"auth": {"type": "sigv4", "service": "execute-api", "region": "eu-west-1"}})),
        Ok(Some(sigv4("execute-api", "eu-west-1")))
    );
    assert_eq!(
        load(
            &json!({"endpoint": "https://a1b2c3.execute-api.eu-central-1.amazonaws.com/prod/t",
                     "auth": {"type": "sigv4", "service": "execute-api"}})
        ),
        Ok(Some(sigv4("execute-api", "eu-central-1")))
    );
    assert_eq!(
        refused(&json!({"auth": {"type": "sigv4", "service": "execute-api"}})),
        vec!["tools[0]._meta.auth.region: is required: the endpoint's host names no AWS region"]
    );
}
