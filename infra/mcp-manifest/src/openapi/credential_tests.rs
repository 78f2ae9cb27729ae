//! CONTRACT M3, M5: `--credential SCHEME=REF` binds a security scheme to a secret reference, and
//! the operations whose security requirement it meets get it as `_meta.auth`.

use serde_json::{Value, json};

use super::tests::{document, import, names, tool};
use super::*;

const KEY: &str = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:pets/key-AbCdEf";

/// A document whose `GET /things` (op) has `security`, with every kind of security scheme.
fn secured(security: &Value) -> Value {
    let mut document = document(&json!({"/things": {"get": {"operationId": "op",
        "security": security}}}));
    document["components"]["securitySchemes"] = json!({
        "header_key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"},
        "query_key": {"type": "apiKey", "in": "query", "name": "api_key"},
        "cookie_key": {"type": "apiKey", "in": "cookie", "name": "session"},
        "forwarded_key": {"type": "apiKey", "in": "header", "name": "Employee-No"},
        "bearer": {"type": "http", "scheme": "Bearer", "bearerFormat": "JWT"},
        "basic": {"type": "http", "scheme": "basic"},
        "digest": {"type": "http", "scheme": "digest"},
        "machine": {"type": "oauth2", "flows": {"clientCredentials": {
            "tokenUrl": "https://idp.example.test/oauth2/token",
            "scopes": {"pets:read": "read", "pets:write": "write"}}}},
        "relative_token": {"type": "oauth2", "flows": {"clientCredentials": {
            "tokenUrl": "/oauth2/token", "scopes": {}}}},
        "user": {"type": "oauth2", "flows": {
            "authorizationCode": {"authorizationUrl": "https://idp.example.test/a",
                                  "tokenUrl": "https://idp.example.test/t", "scopes": {}},
            "implicit": {"authorizationUrl": "https://idp.example.test/a", "scopes": {}}}},
        "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://idp.example.test/.well-known"},
        "mtls": {"type": "mutualTLS"},
        "aliased": {"$ref": "#/components/securitySchemes/header_key"}
    });
    document
}

/// `--credential` arguments checked and bound to `document`'s schemes.
fn bind(document: &Value, arguments: &[&str]) -> Result<credentials::Bindings, String> {
    let arguments: Vec<String> = arguments.iter().map(|a| (*a).to_string()).collect();
    credentials::bind(document, &credentials::parse(&arguments)?)
}

/// The import of `document` with `arguments` bound.
fn import_with(document: &Value, arguments: &[&str], skip_secured: bool) -> Outcome {
    let options = Options {
        bindings: bind(document, arguments).expect("the credentials bind"),
        skip_secured,
        ..Options::default()
    };
    import(document, &options)
}

/// The `_meta.auth` op gets when `security` is met with `arguments` bound, and the lines.
fn auth_of(security: &Value, arguments: &[&str]) -> (Option<Value>, Vec<String>) {
    let outcome = import_with(&secured(security), arguments, false);
    let auth = tool(&outcome, "op")["_meta"].get("auth").cloned();
    (auth, outcome.lines)
}

#[test]
fn m5_an_api_key_in_a_header_or_the_query_is_sent_by_its_name() {
    let (auth, lines) = auth_of(
        &json!([{"header_key": []}]),
        &[&format!("header_key={KEY}")],
    );
    assert_eq!(
        auth.unwrap(),
        json!({"type": "apiKey", "in": "header", "name": "X-Api-Key", "secret": KEY})
    );
    assert!(lines.is_empty(), "{lines:?}");
    let (auth, lines) = auth_of(&json!([{"query_key": []}]), &["query_key=env:PETS_KEY"]);
    assert_eq!(
        auth.unwrap(),
        json!({"type": "apiKey", "in": "query", "name": "api_key", "secret": "env:PETS_KEY"})
    );
    assert!(lines.is_empty(), "{lines:?}");
    // A scheme given as a $ref is the scheme it names.
    let (auth, _) = auth_of(&json!([{"aliased": []}]), &["aliased=env:K"]);
    assert_eq!(auth.unwrap()["name"], "X-Api-Key");
}

#[test]
fn m5_http_bearer_is_an_authorization_header_and_basic_is_basic() {
    let ssm = "arn:aws:ssm:eu-west-1:123456789012:parameter/pets/token";
    let (auth, _) = auth_of(&json!([{"bearer": []}]), &[&format!("bearer={ssm}")]);
    assert_eq!(
        auth.unwrap(),
        json!({"type": "apiKey", "in": "header", "name": "Authorization", "prefix": "Bearer ",
               "secret": ssm})
    );
    let (auth, _) = auth_of(&json!([{"basic": []}]), &[&format!("basic={KEY}#login")]);
    assert_eq!(
        auth.unwrap(),
        json!({"type": "basic", "secret": format!("{KEY}#login")})
    );
}

#[test]
fn m5_oauth2_client_credentials_take_the_operations_scopes() {
    let (auth, lines) = auth_of(
        &json!([{"machine": ["pets:read", "pets:write"]}]),
        &["machine=env:PETS_CLIENT"],
    );
    assert_eq!(
        auth.unwrap(),
        json!({"type": "oauth2ClientCredentials",
               "tokenUrl": "https://idp.example.test/oauth2/token",
               "secret": "env:PETS_CLIENT", "scopes": ["pets:read", "pets:write"]})
    );
    assert!(lines.is_empty(), "{lines:?}");
    let (auth, _) = auth_of(&json!([{"machine": []}]), &["machine=env:PETS_CLIENT"]);
    assert!(auth.unwrap().get("scopes").is_none());
}

#[test]
fn m5_an_alternative_of_one_bound_scheme_is_taken() {
    let either = json!([{"header_key": []}, {"bearer": []}]);
    let (auth, lines) = auth_of(&either, &["bearer=env:TOKEN"]);
    assert_eq!(auth.unwrap()["prefix"], "Bearer ");
    assert!(lines.is_empty(), "{lines:?}");
    // Both bound: the first alternative.
    let (auth, _) = auth_of(&either, &["bearer=env:TOKEN", "header_key=env:KEY"]);
    assert_eq!(auth.unwrap()["name"], "X-Api-Key");
    // An anonymous alternative: the bound one is still sent.
    let (auth, lines) = auth_of(&json!([{}, {"bearer": []}]), &["bearer=env:TOKEN"]);
    assert_eq!(auth.unwrap()["name"], "Authorization");
    assert!(lines.is_empty(), "{lines:?}");
}

#[test]
fn m5_two_schemes_at_once_cannot_be_one_credential_and_are_warned_or_skipped() {
    let both = json!([{"header_key": [], "bearer": []}]);
    let bound = ["header_key=env:KEY", "bearer=env:TOKEN"];
    let (auth, lines) = auth_of(&both, &bound);
    assert!(auth.is_none());
    assert_eq!(
        lines,
        [
            "warning: GET /things (op): secured by 'header_key', 'bearer': no alternative of its security requirement is one scheme bound with --credential, so the gateway sends it no credentials",
            "warning: --credential header_key: no imported operation's security requirement is met by security scheme 'header_key' alone",
            "warning: --credential bearer: no imported operation's security requirement is met by security scheme 'bearer' alone",
        ]
    );
    let outcome = import_with(&secured(&both), &bound, true);
    assert!(names(&outcome).is_empty());
    assert_eq!(
        outcome.lines[0],
        "skipped GET /things (op): secured by 'header_key', 'bearer' (--skip-secured)"
    );
    // Nothing bound: today's warning.
    let (auth, lines) = auth_of(&json!([{"header_key": []}]), &[]);
    assert!(auth.is_none());
    assert_eq!(
        lines,
        [
            "warning: GET /things (op): secured by 'header_key': no --credential binds it, so the gateway sends it no credentials"
        ]
    );
}

#[test]
fn m5_the_documents_security_applies_unless_the_operation_says_security_is_none() {
    let mut document = secured(&json!(null));
    document["paths"]["/things"]["get"]
        .as_object_mut()
        .unwrap()
        .shift_remove("security");
    document["paths"]["/open"] = json!({"get": {"operationId": "open", "security": []}});
    document["security"] = json!([{"query_key": []}]);
    let outcome = import_with(&document, &["query_key=env:KEY"], true);
    assert_eq!(names(&outcome), ["op", "open"]);
    assert_eq!(tool(&outcome, "op")["_meta"]["auth"]["in"], "query");
    assert!(tool(&outcome, "open")["_meta"].get("auth").is_none());
    assert!(outcome.lines.is_empty(), "{:?}", outcome.lines);
}

#[test]
fn m5_an_argument_the_credential_sets_is_left_out_of_the_tool() {
    let mut document = secured(&json!([{"header_key": []}]));
    document["paths"]["/things"]["get"]["parameters"] = json!([
        {"name": "x-api-key", "in": "header", "required": true, "schema": {"type": "string"}},
        {"name": "X-Api-Key", "in": "query", "schema": {"type": "string"}},
        {"name": "limit", "in": "query", "schema": {"type": "integer"}}
    ]);
    let outcome = import_with(&document, &["header_key=env:KEY"], false);
    let tool = tool(&outcome, "op");
    assert_eq!(
        tool["_meta"]["parameters"],
        json!({"X-Api-Key": "query", "limit": "query"})
    );
    assert!(tool["inputSchema"]["properties"].get("x-api-key").is_none());
    assert!(tool["inputSchema"].get("required").is_none(), "{tool}");
    assert_eq!(
        outcome.lines,
        [
            "warning: GET /things (op): header parameter 'x-api-key' left out: the credential of security scheme 'header_key' sets it"
        ]
    );
}

#[test]
fn m5_refs_of_the_three_forms_are_accepted_and_others_refused_unshown() {
    for good in [
        KEY,
        "arn:aws:secretsmanager:eu-west-1:123456789012:secret:pets/key-AbCdEf#apiKey",
        "arn:aws-cn:secretsmanager:cn-north-1:123456789012:secret:k",
        "arn:aws-us-gov:ssm:us-gov-west-1:123456789012:parameter/pets/token",
        "env:PETS_KEY",
        "env:_K1",
    ] {
        assert!(credentials::is_secret_ref(good), "{good}");
    }
    for bad in [
        "sk_live_51HxYz",
        "env:",
        "env:1KEY",
        "env:PETS-KEY",
        "arn:aws:secretsmanager:eu-west-1:123456789012:secret:",
        "arn:aws:secretsmanager:eu-west-1:123456789012:secret:k#",
        "arn:aws:secretsmanager:eu-west-1:1234:secret:k",
        "arn:aws:secretsmanager:cn-north-1:123456789012:secret:k",
        "arn:aws:secretsmanager:EU-west-1:123456789012:secret:k",
        "arn:aws:ssm:eu-west-1:123456789012:parameter/",
        "arn:aws:ssm:eu-west-1:123456789012:parameter:k",
        "arn:aws:s3:eu-west-1:123456789012:secret:k",
        "arn:other:ssm:eu-west-1:123456789012:parameter/k",
    ] {
        assert!(!credentials::is_secret_ref(bad), "{bad}");
    }
    let error = bind(&secured(&json!([])), &["bearer=sk_live_51HxYz"]).unwrap_err();
    assert_eq!(
        error,
        "--credential bearer: REF must be arn:<partition>:secretsmanager:<region>:<account>:secret:<name>[#<jsonKey>], arn:<partition>:ssm:<region>:<account>:parameter/<name> or env:<NAME> (the REF given is not shown: it may be a secret itself)"
    );
    let error = bind(&secured(&json!([])), &["sk_live_51HxYz"]).unwrap_err();
    assert!(!error.contains("sk_live"), "{error}");
    assert_eq!(
        bind(&secured(&json!([])), &["bearer=env:A", "bearer=env:B"]).unwrap_err(),
        "--credential bearer is given twice"
    );
}

#[test]
fn m5_a_scheme_the_document_lacks_is_refused() {
    let mut document = secured(&json!([]));
    assert!(
        bind(&document, &["nope=env:K"])
            .unwrap_err()
            .starts_with("--credential nope: the document has no security scheme 'nope' (components.securitySchemes: header_key, query_key, ")
    );
    document["components"]
        .as_object_mut()
        .unwrap()
        .shift_remove("securitySchemes");
    assert_eq!(
        bind(&document, &["nope=env:K"]).unwrap_err(),
        "--credential nope: the document has no security scheme 'nope' (components.securitySchemes: none)"
    );
}

#[test]
fn m5_a_scheme_the_gateway_cannot_send_is_refused_saying_why() {
    let document = secured(&json!([]));
    let refused = |scheme: &str| bind(&document, &[&format!("{scheme}=env:K")]).unwrap_err();
    assert_eq!(
        refused("oidc"),
        "--credential oidc: security scheme 'oidc' is openIdConnect, which signs a user in: the gateway sends API keys, bearer tokens, basic credentials and OAuth2 client-credentials tokens only"
    );
    assert_eq!(
        refused("mtls"),
        "--credential mtls: security scheme 'mtls' is mutualTLS: the gateway presents no client certificate"
    );
    assert_eq!(
        refused("user"),
        "--credential user: security scheme 'user' is oauth2 without a clientCredentials flow (authorizationCode, implicit): the gateway gets tokens with client credentials only"
    );
    assert_eq!(
        refused("cookie_key"),
        "--credential cookie_key: security scheme 'cookie_key' is an apiKey in a cookie: the gateway sends no cookies"
    );
    assert_eq!(
        refused("digest"),
        "--credential digest: security scheme 'digest' is http 'digest': the gateway sends bearer and basic credentials only"
    );
    assert_eq!(
        refused("forwarded_key"),
        "--credential forwarded_key: security scheme 'forwarded_key' is an apiKey in header 'Employee-No', which the gateway forwards from the caller"
    );
    assert_eq!(
        refused("relative_token"),
        "--credential relative_token: security scheme 'relative_token' has the clientCredentials tokenUrl '/oauth2/token', which is not an absolute http(s) URL without a user name or password"
    );
}

#[test]
fn m5_the_loader_check_leaves_auth_out_and_the_text_keeps_it() {
    let outcome = import_with(
        &secured(&json!([{"bearer": []}])),
        &["bearer=env:TOKEN"],
        false,
    );
    let manifest = manifest::single_route("pets", &json!({}), outcome.tools);
    let text = manifest::checked_text(&manifest, "pets", 1 << 20).unwrap();
    let written: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        written["routes"][0]["tools"][0]["_meta"]["auth"]["secret"],
        "env:TOKEN"
    );
}
