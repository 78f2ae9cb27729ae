//! A tool's `_meta.auth` (CONTRACT M5): the outbound credential's type, its fields and its
//! secret reference, checked against where the tool's own arguments go (M2).

use http::HeaderName;
use serde_json::{Map, Value};

use super::problems::{Problems, join};
use super::rest::RESERVED_HEADERS;
use super::token::is_token;
use crate::registry::outbound_auth::{is_region, region_of_host};
use crate::registry::{
    ArgumentLocation, ClientAuth, KeyPlacement, OutboundAuth, RestCall, SecretRef, SecretSource,
};

/// The problem of an `env:` REF that names one of the gateway's own variables (CONTRACT M5).
pub(crate) const GATEWAY_ENV_PROBLEM: &str = "must not name one of the gateway's own variables (AWS_, OTEL_ or MCP_): they hold its AWS credentials, its exporter's headers and its settings, which no Tool Service may receive";

/// Whether `name` is one of the gateway's own variables, in any letter case (CONTRACT M5):
/// `AWS_` (the function's credentials, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, and the
/// files and endpoints that lead to them), `OTEL_` (the exporter's headers may hold a
/// collector's key) and `MCP_` (the gateway's settings, a proxy's password among them).
pub(crate) fn is_gateway_variable(name: &str) -> bool {
    ["AWS_", "OTEL_", "MCP_"].iter().any(|prefix| {
        name.get(..prefix.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(prefix))
    })
}

/// The problem of a `secret` that is none of the three REF forms (CONTRACT M5).
pub(super) const REF_PROBLEM: &str = "must be a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>[#<jsonKey>]), an SSM parameter ARN (arn:aws:ssm:<region>:<account>:parameter/<name>) or env:<NAME>";

/// The problem of an unknown or missing `type`.
const TYPE_PROBLEM: &str =
    "must be one of \"apiKey\", \"basic\", \"oauth2ClientCredentials\", \"sigv4\"";

/// The fields each type has, `type` included.
fn fields_of(kind: &str) -> &'static [&'static str] {
    match kind {
        "apiKey" => &["type", "in", "name", "prefix", "secret"],
        "basic" => &["type", "secret"],
        "oauth2ClientCredentials" => &[
            "type",
            "tokenUrl",
            "secret",
            "scopes",
            "audience",
            "clientAuth",
        ],
        _ => &["type", "service", "region"],
    }
}

/// What a tool compiles `_meta.auth` against.
pub(super) struct AuthInput<'a> {
    pub auth: &'a Value,
    pub meta_path: &'a str,
    pub is_lambda: bool,
    pub rest: Option<&'a RestCall>,
    /// The host of an http(s) endpoint.
    pub host: Option<&'a str>,
}

/// Compiles `_meta.auth` (CONTRACT M5); `None` when a problem was found (added to `problems`).
pub(super) fn compile_auth(input: &AuthInput<'_>, problems: &mut Problems) -> Option<OutboundAuth> {
    let path = join(input.meta_path, "auth");
    let before = problems.0.len();
    if input.is_lambda {
        problems.add(
            &path,
            "does not apply to a Lambda function tool (it is invoked with the gateway's role)",
        );
        return None;
    }
    let Value::Object(auth) = input.auth else {
        problems.add(&path, "must be an object with a \"type\"");
        return None;
    };
    let kind = match auth.get("type") {
        Some(Value::String(kind)) if is_type(kind) => kind.as_str(),
        _ => {
            problems.add(&join(&path, "type"), TYPE_PROBLEM);
            return None;
        }
    };
    let allowed = fields_of(kind);
    for field in auth.keys() {
        if !allowed.contains(&field.as_str()) {
            problems.add(
                &join(&path, field),
                format!("is not a field of a '{kind}' auth"),
            );
        }
    }
    let text = |field: &str, required: bool, problems: &mut Problems| -> Option<String> {
        match auth.get(field) {
            Some(Value::String(value)) => Some(value.clone()),
            None if !required => None,
            None => {
                problems.add(&join(&path, field), "is required");
                None
            }
            Some(_) => {
                problems.add(&join(&path, field), "must be a string");
                None
            }
        }
    };
    let secret = if kind == "sigv4" {
        None
    } else {
        text("secret", true, problems).and_then(|reference| {
            let parsed = SecretRef::parse(&reference);
            match &parsed {
                None => problems.add(&join(&path, "secret"), REF_PROBLEM),
                Some(SecretRef {
                    source: SecretSource::Env(name),
                    ..
                }) if is_gateway_variable(name) => {
                    problems.add(&join(&path, "secret"), GATEWAY_ENV_PROBLEM);
                    return None;
                }
                Some(_) => {}
            }
            parsed
        })
    };
    let compiled = match kind {
        "apiKey" => api_key(auth, &path, input.rest, secret, problems),
        "basic" => basic(&path, secret, problems),
        "oauth2ClientCredentials" => oauth2(auth, &path, secret, problems),
        _ => sigv4(auth, &path, input.host, problems),
    };
    if problems.0.len() > before {
        return None;
    }
    compiled
}

fn is_type(kind: &str) -> bool {
    matches!(
        kind,
        "apiKey" | "basic" | "oauth2ClientCredentials" | "sigv4"
    )
}

fn api_key(
    auth: &Map<String, Value>,
    path: &str,
    rest: Option<&RestCall>,
    secret: Option<SecretRef>,
    problems: &mut Problems,
) -> Option<OutboundAuth> {
    let string = |field: &str, problems: &mut Problems| match auth.get(field) {
        Some(Value::String(value)) => Some(value.as_str()),
        None => {
            if field != "prefix" {
                problems.add(&join(path, field), "is required");
            }
            None
        }
        Some(_) => {
            problems.add(&join(path, field), "must be a string");
            None
        }
    };
    let location = string("in", problems);
    let name = string("name", problems);
    let prefix = string("prefix", problems).unwrap_or_default();
    if !prefix.bytes().all(|b| b == b' ' || b.is_ascii_graphic()) {
        problems.add(
            &join(path, "prefix"),
            "must be printable ASCII characters (spaces allowed)",
        );
    }
    let arguments = rest.map_or(&[][..], |rest| &rest.arguments[..]);
    let name_path = join(path, "name");
    let placement = match (location, name) {
        (Some("header"), Some(name)) => {
            let lower = name.to_ascii_lowercase();
            if !is_token(name) {
                problems.add(&name_path, "must be an HTTP header name");
                None
            } else if lower != "authorization" && RESERVED_HEADERS.contains(&lower.as_str()) {
                problems.add(
                    &name_path,
                    format!("header name '{name}' is reserved by the gateway"),
                );
                None
            } else {
                for (argument, location) in arguments {
                    if matches!(location, ArgumentLocation::Header(h) if h.as_str() == lower) {
                        problems.add(
                            &name_path,
                            format!(
                                "header '{name}' is also set by the header parameter '{argument}'"
                            ),
                        );
                    }
                }
                HeaderName::from_bytes(lower.as_bytes())
                    .ok()
                    .map(KeyPlacement::Header)
            }
        }
        (Some("query"), Some(name)) => {
            if name.is_empty() {
                problems.add(&name_path, "must not be empty");
            }
            for (argument, location) in arguments {
                if *location == ArgumentLocation::Query && argument == name {
                    problems.add(
                        &name_path,
                        format!(
                            "query name '{name}' is also set by the query parameter '{argument}'"
                        ),
                    );
                }
            }
            Some(KeyPlacement::Query(name.to_owned()))
        }
        (Some(_), _) => {
            problems.add(&join(path, "in"), "must be \"header\" or \"query\"");
            None
        }
        (None, _) => None,
    };
    Some(OutboundAuth::ApiKey {
        placement: placement?,
        prefix: prefix.to_owned(),
        secret: secret?,
    })
}

fn basic(path: &str, secret: Option<SecretRef>, problems: &mut Problems) -> Option<OutboundAuth> {
    let secret = whole_secret(secret?, path, "basic", "username", "password", problems)?;
    Some(OutboundAuth::Basic { secret })
}

/// A secret of two fields must be the whole JSON secret, without `#jsonKey`.
fn whole_secret(
    secret: SecretRef,
    path: &str,
    kind: &str,
    first: &str,
    second: &str,
    problems: &mut Problems,
) -> Option<SecretRef> {
    if secret.json_key.is_some() {
        problems.add(
            &join(path, "secret"),
            format!("must name the whole JSON secret (no #jsonKey): {kind} reads its \"{first}\" and \"{second}\""),
        );
        return None;
    }
    Some(secret)
}

/// `oauth2ClientCredentials` (CONTRACT M5).
fn oauth2(
    auth: &Map<String, Value>,
    path: &str,
    secret: Option<SecretRef>,
    problems: &mut Problems,
) -> Option<OutboundAuth> {
    let token_url = match auth.get("tokenUrl") {
        None => {
            problems.add(&join(path, "tokenUrl"), "is required");
            None
        }
        Some(Value::String(url)) => url::Url::parse(url).ok().filter(|u| {
            matches!(u.scheme(), "http" | "https")
                && u.host_str().is_some_and(|h| !h.is_empty())
                && u.username().is_empty()
                && u.password().is_none()
        }),
        Some(_) => None,
    };
    if token_url.is_none() && auth.contains_key("tokenUrl") {
        problems.add(
            &join(path, "tokenUrl"),
            "must be an absolute http(s) URL without a user name or password",
        );
    }
    let mut scopes = Vec::new();
    if let Some(given) = auth.get("scopes") {
        let words = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
        };
        match given.as_array() {
            Some(items) if items.iter().all(|i| i.as_str().is_some_and(words)) => {
                scopes = items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect();
            }
            _ => problems.add(
                &join(path, "scopes"),
                "must be an array of strings (RFC 6749 scope tokens)",
            ),
        }
    }
    let audience = match auth.get("audience") {
        None => None,
        Some(Value::String(audience)) => Some(audience.clone()),
        Some(_) => {
            problems.add(&join(path, "audience"), "must be a string");
            None
        }
    };
    let client_auth = match auth.get("clientAuth").map(Value::as_str) {
        None | Some(Some("basic")) => ClientAuth::Basic,
        Some(Some("body")) => ClientAuth::Body,
        Some(_) => {
            problems.add(&join(path, "clientAuth"), "must be \"basic\" or \"body\"");
            ClientAuth::Basic
        }
    };
    let secret = whole_secret(
        secret?,
        path,
        "oauth2ClientCredentials",
        "client_id",
        "client_secret",
        problems,
    )?;
    Some(OutboundAuth::OAuth2 {
        token_url: token_url?,
        secret,
        scopes,
        audience,
        client_auth,
    })
}

/// `sigv4`'s own fields (CONTRACT M5); the region, when not given, from the endpoint's host.
fn sigv4(
    auth: &Map<String, Value>,
    path: &str,
    host: Option<&str>,
    problems: &mut Problems,
) -> Option<OutboundAuth> {
    let service_ok = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    let service = match auth.get("service") {
        None => {
            problems.add(&join(path, "service"), "is required");
            None
        }
        Some(Value::String(service)) if service_ok(service) => Some(service.clone()),
        Some(_) => {
            problems.add(
                &join(path, "service"),
                "must be an AWS service name such as \"execute-api\"",
            );
            None
        }
    };
    let region = match auth.get("region") {
        Some(Value::String(region)) if is_region(region) => Some(region.clone()),
        Some(_) => {
            problems.add(
                &join(path, "region"),
                "must be an AWS region such as \"eu-west-1\"",
            );
            None
        }
        None => {
            let named = host.and_then(region_of_host).map(str::to_owned);
            if named.is_none() && host.is_some() {
                problems.add(
                    &join(path, "region"),
                    "is required: the endpoint's host names no AWS region",
                );
            }
            named
        }
    };
    Some(OutboundAuth::SigV4 {
        service: service?,
        region: region?,
    })
}
