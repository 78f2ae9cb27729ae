//! `--credential SCHEME=REF` (CONTRACT M3, M5): an OpenAPI security scheme, by its name in
//! `components.securitySchemes`, bound to a secret reference, as the `_meta.auth` the tools of
//! the operations it secures get ([`super::security`]).
//!
//! A REF is never shown in a message: a REF that is no reference may be the secret itself.

use std::cell::Cell;

use mcp_gateway::registry::{RESERVED_HEADERS, SecretRef};
use serde_json::{Map, Value, json};
use url::Url;

use super::document::redacted;
use super::parameters::is_token;
use super::refs;

/// The caller headers the gateway forwards to every Tool Service (CONTRACT X4): an apiKey
/// header may not be one of them.
const FORWARDED_HEADERS: [&str; 5] = [
    "guid",
    "x-request-id",
    "mcp-session-id",
    "employee-no",
    "virtual-employee-no",
];

/// What the secret references look like, for messages.
const REF_FORMS: &str = "arn:<partition>:secretsmanager:<region>:<account>:secret:<name>[#<jsonKey>], arn:<partition>:ssm:<region>:<account>:parameter/<name> or env:<NAME>";

/// One `--credential`: a scheme name and its secret reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Credential {
    /// The security scheme's name in `components.securitySchemes`.
    pub(crate) scheme: String,
    /// The secret reference (REF).
    pub(crate) secret: String,
}

/// The `--credential` arguments, each `SCHEME=REF` with a REF of one of the three forms.
///
/// # Errors
/// The first malformed argument, or a scheme given twice.
pub(crate) fn parse(arguments: &[String]) -> Result<Vec<Credential>, String> {
    let mut credentials: Vec<Credential> = Vec::new();
    for argument in arguments {
        let Some((scheme, secret)) = argument
            .split_once('=')
            .filter(|(scheme, _)| !scheme.is_empty())
        else {
            return Err(
                "--credential must be SCHEME=REF (the value given is not shown: it may hold a secret)"
                    .into(),
            );
        };
        if !is_secret_ref(secret) {
            return Err(format!(
                "--credential {scheme}: REF must be {REF_FORMS} (the REF given is not shown: it may be a secret itself)"
            ));
        }
        if credentials.iter().any(|c| c.scheme == scheme) {
            return Err(format!("--credential {scheme} is given twice"));
        }
        credentials.push(Credential {
            scheme: scheme.into(),
            secret: secret.into(),
        });
    }
    Ok(credentials)
}

/// Whether `reference` is a secret reference: a Secrets Manager secret ARN (optionally with
/// `#<jsonKey>`), an SSM parameter ARN or `env:<NAME>`, as the gateway's loader reads it
/// ([`SecretRef::parse`], CONTRACT M5).
pub(crate) fn is_secret_ref(reference: &str) -> bool {
    SecretRef::parse(reference).is_some()
}

/// The bound security schemes, each with its `_meta.auth`.
#[derive(Debug, Default)]
pub(crate) struct Bindings {
    schemes: Vec<Binding>,
}

#[derive(Debug)]
struct Binding {
    /// The scheme's name.
    name: String,
    /// Its `_meta.auth` (an OAuth2 one without the operation's scopes).
    auth: Map<String, Value>,
    /// Whether an operation's tool got it.
    used: Cell<bool>,
}

impl Bindings {
    /// The `_meta.auth` of scheme `name` for an operation that requires `scopes` of it (an OAuth2
    /// scheme's), if it is bound.
    pub(crate) fn auth(&self, name: &str, scopes: &Value) -> Option<Value> {
        let binding = self.schemes.iter().find(|b| b.name == name)?;
        binding.used.set(true);
        let mut auth = binding.auth.clone();
        let scopes: Vec<&Value> = scopes
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s.is_string())
            .collect();
        if auth["type"] == "oauth2ClientCredentials" && !scopes.is_empty() {
            auth.insert("scopes".into(), json!(scopes));
        }
        Some(Value::Object(auth))
    }

    /// Whether scheme `name` is bound.
    pub(crate) fn binds(&self, name: &str) -> bool {
        self.schemes.iter().any(|b| b.name == name)
    }

    /// The bound schemes no operation's tool got, in `--credential` order.
    pub(crate) fn unused(&self) -> impl Iterator<Item = &str> {
        self.schemes
            .iter()
            .filter(|b| !b.used.get())
            .map(|b| b.name.as_str())
    }
}

/// The `credentials` bound to the security schemes of `document`.
///
/// # Errors
/// A scheme the document does not have, or one the gateway cannot send credentials for: why.
pub(crate) fn bind(document: &Value, credentials: &[Credential]) -> Result<Bindings, String> {
    let schemes = document
        .pointer("/components/securitySchemes")
        .and_then(Value::as_object);
    let mut bindings = Bindings::default();
    for credential in credentials {
        let name = &credential.scheme;
        let Some(scheme) = schemes.and_then(|s| s.get(name)) else {
            let names: Vec<&str> = schemes
                .into_iter()
                .flatten()
                .map(|(n, _)| n.as_str())
                .collect();
            return Err(format!(
                "--credential {name}: the document has no security scheme '{name}' (components.securitySchemes: {})",
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            ));
        };
        let scheme = refs::follow(document, scheme, refs::Kind::SecurityScheme)
            .map_err(|e| format!("--credential {name}: security scheme {e}"))?;
        let auth = scheme_auth(scheme, &credential.secret)
            .map_err(|why| format!("--credential {name}: security scheme '{name}' {why}"))?;
        bindings.schemes.push(Binding {
            name: name.clone(),
            auth,
            used: Cell::new(false),
        });
    }
    Ok(bindings)
}

/// The `_meta.auth` of a Security Scheme Object with secret `secret`.
///
/// # Errors
/// Why the gateway cannot send it (the text follows the scheme's name).
fn scheme_auth(scheme: &Value, secret: &str) -> Result<Map<String, Value>, String> {
    let text = |field: &str| scheme.get(field).and_then(Value::as_str);
    let auth = match text("type") {
        Some("apiKey") => {
            let name = text("name")
                .filter(|n| !n.is_empty())
                .ok_or("is an apiKey without a name")?;
            match text("in") {
                Some("header") => {
                    if let Some(problem) = header_name_problem(name) {
                        return Err(problem);
                    }
                    json!({"type": "apiKey", "in": "header", "name": name, "secret": secret})
                }
                Some("query") => {
                    json!({"type": "apiKey", "in": "query", "name": name, "secret": secret})
                }
                Some("cookie") => {
                    return Err("is an apiKey in a cookie: the gateway sends no cookies".into());
                }
                other => {
                    return Err(format!(
                        "is an apiKey in {}, not in a header or the query",
                        other.map_or_else(|| "no place".into(), |o| format!("'{o}'"))
                    ));
                }
            }
        }
        Some("http") => match text("scheme").map(str::to_ascii_lowercase).as_deref() {
            Some("bearer") => json!({"type": "apiKey", "in": "header", "name": "Authorization",
                                     "prefix": "Bearer ", "secret": secret}),
            Some("basic") => json!({"type": "basic", "secret": secret}),
            other => {
                return Err(format!(
                    "is http {}: the gateway sends bearer and basic credentials only",
                    other.map_or_else(|| "without a scheme".into(), |o| format!("'{o}'"))
                ));
            }
        },
        Some("oauth2") => {
            let Some(flow) = scheme.pointer("/flows/clientCredentials") else {
                let flows: Vec<&str> = scheme
                    .get("flows")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .map(|(flow, _)| flow.as_str())
                    .collect();
                return Err(format!(
                    "is oauth2 without a clientCredentials flow ({}): the gateway gets tokens with client credentials only",
                    if flows.is_empty() {
                        "no flows".into()
                    } else {
                        flows.join(", ")
                    }
                ));
            };
            let token_url = flow
                .get("tokenUrl")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let parsed = Url::parse(token_url).ok().filter(|url| {
                matches!(url.scheme(), "http" | "https")
                    && url.has_host()
                    && url.username().is_empty()
                    && url.password().is_none()
            });
            if parsed.is_none() {
                return Err(format!(
                    "has the clientCredentials tokenUrl '{}', which is not an absolute http(s) URL without a user name or password",
                    redacted(token_url)
                ));
            }
            json!({"type": "oauth2ClientCredentials", "tokenUrl": token_url, "secret": secret})
        }
        Some("openIdConnect") => {
            return Err("is openIdConnect, which signs a user in: the gateway sends API keys, bearer tokens, basic credentials and OAuth2 client-credentials tokens only".into());
        }
        Some("mutualTLS") => {
            return Err("is mutualTLS: the gateway presents no client certificate".into());
        }
        other => {
            return Err(format!(
                "has type {}, which the gateway cannot send",
                other.map_or_else(|| "none".into(), |o| format!("'{o}'"))
            ));
        }
    };
    let Value::Object(auth) = auth else {
        unreachable!("json! of an object")
    };
    Ok(auth)
}

/// Why an apiKey header name cannot be sent, if it cannot: no HTTP token, a header the gateway
/// forwards from the caller or sets itself (`Authorization` is the credential's to set).
fn header_name_problem(name: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    if !is_token(name) {
        Some(format!(
            "is an apiKey in header '{name}', which is no HTTP header name"
        ))
    } else if FORWARDED_HEADERS.contains(&lower.as_str()) {
        Some(format!(
            "is an apiKey in header '{name}', which the gateway forwards from the caller"
        ))
    } else if RESERVED_HEADERS.contains(&lower.as_str()) && lower != "authorization" {
        Some(format!(
            "is an apiKey in header '{name}', which the gateway sets itself"
        ))
    } else {
        None
    }
}
