//! A tool's `_meta` (CONTRACT M, M2, M4, R5): its version, whether it is active, its endpoint
//! (an http(s) URL or a Lambda function ARN), method, timeout, result format and, for a
//! REST-shaped tool, its `parameters` ([`super::rest`]), and its outbound credential
//! (`auth`, [`super::auth`], CONTRACT M5).

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::auth::{AuthInput, compile_auth};
use super::origins::Origins;
use super::problems::{Problems, join, string_field};
use super::rest::{RestInput, check_no_placeholders, compile_rest};
use super::strict::Strict;
use crate::registry::{Endpoint, FunctionArn, ResultFormat};

/// The problem of an `_meta.endpoint` that is neither an http(s) URL nor a function ARN
/// (CONTRACT R5, M4).
const ENDPOINT_PROBLEM: &str = "must be an absolute http(s) URL or a Lambda function ARN (arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>])";

/// Longest tool timeout a manifest may set, in ms (the Lambda maximum of 15 minutes).
pub const MAX_TOOL_TIMEOUT_MS: u64 = 900_000;

/// A tool's `_meta` compiled (CONTRACT M, M2, M4): everything of the
/// [`Tool`](crate::registry::Tool) but its name and schemas, and whether it is active.
pub(super) struct MetaParts {
    pub(super) version: String,
    pub(super) active: bool,
    pub(super) endpoint: Endpoint,
    pub(super) method: http::Method,
    pub(super) timeout_ms: Option<u64>,
    pub(super) result_format: ResultFormat,
    pub(super) rest: Option<crate::registry::RestCall>,
    pub(super) auth: Option<crate::registry::OutboundAuth>,
    /// `_meta.pinned`: listed beside `search_tools` in a route whose `toolSearch` mode is
    /// `only` (CONTRACT S2); `false` when absent.
    pub(super) pinned: bool,
    /// `_meta.task` (CONTRACT K1).
    pub(super) task: Option<crate::tasks::TaskSupport>,
}

/// A tool's `_meta` as the one pass over a manifest's text reads it: an object's members in
/// their order, each value a `Value`, with no map built (a name given twice: its last value
/// counts, as in a `Value` parse's map); `None` for anything but an object, read as strictly as
/// a `Value` parse reads it.
pub(super) struct MetaMembers<'de>(pub(super) Option<Vec<(Cow<'de, str>, Value)>>);

impl<'de> Deserialize<'de> for MetaMembers<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MetaMembersVisitor)
    }
}

struct MetaMembersVisitor;

impl<'de> Visitor<'de> for MetaMembersVisitor {
    type Value = MetaMembers<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(4));
        while let Some(crate::text::Key(key)) = map.next_key()? {
            members.push((key, map.next_value()?));
        }
        Ok(MetaMembers(Some(members)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Strict::drain_seq(seq).map(|()| MetaMembers(None))
    }

    scalars_are!(MetaMembers(None));
}

/// The `_meta` a compilation reads: the object of a tool parsed as a `Value` (the full check),
/// or the members the one pass read ([`MetaMembers`]).
#[derive(Clone, Copy)]
pub(super) enum MetaInput<'a> {
    /// `_meta` of a tool parsed as a `Value`.
    Object(&'a Map<String, Value>),
    /// `_meta`'s members as the one pass read them.
    Members(&'a [(Cow<'a, str>, Value)]),
}

impl<'a> MetaInput<'a> {
    /// Each member's name and value, in order.
    fn members(self) -> Box<dyn Iterator<Item = (&'a str, &'a Value)> + 'a> {
        match self {
            Self::Object(object) => Box::new(object.iter().map(|(k, v)| (k.as_str(), v))),
            Self::Members(members) => Box::new(members.iter().map(|(k, v)| (k.as_ref(), v))),
        }
    }
}

/// Compiles the `_meta` of the tool at `path` (CONTRACT M, M2, M4, R5), `None` when absent or
/// not an object; `input_schema` is the tool's, which a REST-shaped tool's `parameters` are
/// checked against; an http(s) endpoint is parsed through the load's `origins`. `None` when a
/// problem was found (added to `problems`).
pub(super) fn compile_meta(
    meta: Option<MetaInput<'_>>,
    input_schema: Option<&Value>,
    path: &str,
    problems: &mut Problems,
    origins: &mut Origins,
) -> Option<MetaParts> {
    let before = problems.0.len();
    let meta_path = join(path, "_meta");
    if meta.is_none() {
        problems.add(&meta_path, "must be an object with the tool's endpoint");
    }
    let fields = meta.map(MetaFields::of).unwrap_or_default();
    let version = string_field(fields.version, "version", &meta_path, problems).unwrap_or_default();
    let active = match fields.active {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            problems.add(&join(&meta_path, "active"), "must be a boolean");
            true
        }
    };
    let pinned = match fields.pinned {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            problems.add(&join(&meta_path, "pinned"), "must be a boolean");
            false
        }
    };
    let endpoint = match fields.endpoint {
        Some(Value::String(text)) if let Some(url) = absolute_http_url(origins.parse(text)) => {
            if let Some(problem) = endpoint_url_problem(text, &url) {
                problems.add(&join(&meta_path, "endpoint"), problem);
            }
            Some(Endpoint::Http(url))
        }
        Some(Value::String(arn)) if let Ok(function) = FunctionArn::parse(arn) => {
            Some(Endpoint::Lambda(Box::new(function)))
        }
        _ if meta.is_none() => None,
        _ => {
            problems.add(&join(&meta_path, "endpoint"), ENDPOINT_PROBLEM);
            None
        }
    };
    if matches!(endpoint, Some(Endpoint::Lambda(_))) {
        for (field, value) in [("method", fields.method), ("parameters", fields.parameters)] {
            if value.is_some() {
                problems.add(
                    &join(&meta_path, field),
                    "does not apply to a Lambda function tool",
                );
            }
        }
    }
    let method = match fields.method {
        None => http::Method::POST,
        Some(Value::String(m)) => match m.to_ascii_uppercase().as_str() {
            "GET" => http::Method::GET,
            "HEAD" => http::Method::HEAD,
            "POST" => http::Method::POST,
            "PUT" => http::Method::PUT,
            "PATCH" => http::Method::PATCH,
            "DELETE" => http::Method::DELETE,
            _ => {
                problems.add(
                    &join(&meta_path, "method"),
                    "must be one of GET, HEAD, POST, PUT, PATCH, DELETE",
                );
                http::Method::POST
            }
        },
        Some(_) => {
            problems.add(&join(&meta_path, "method"), "must be a string");
            http::Method::POST
        }
    };
    let timeout_ms = match fields.timeout_ms {
        None => None,
        Some(v) => match v.as_u64() {
            Some(ms) if (1..=MAX_TOOL_TIMEOUT_MS).contains(&ms) => Some(ms),
            _ => {
                problems.add(
                    &join(&meta_path, "timeoutMs"),
                    format!("must be a whole number of ms from 1 to {MAX_TOOL_TIMEOUT_MS}"),
                );
                None
            }
        },
    };
    let result_format = match fields.result_format {
        None => Some(ResultFormat::Json),
        Some(Value::String(format)) => ResultFormat::parse(format),
        Some(_) => None,
    }
    .unwrap_or_else(|| {
        problems.add(
            &join(&meta_path, "resultFormat"),
            "must be \"json\" or \"mcp\"",
        );
        ResultFormat::Json
    });
    let is_http = matches!(endpoint, Some(Endpoint::Http(_)));
    let rest = match (fields.parameters, fields.endpoint) {
        (Some(parameters), Some(Value::String(url))) if is_http => compile_rest(
            &RestInput {
                parameters,
                endpoint: url,
                method: &method,
                input_schema: input_schema.unwrap_or(&Value::Null),
                meta_path: &meta_path,
            },
            problems,
        ),
        (None, Some(Value::String(url))) if is_http => {
            check_no_placeholders(url, &meta_path, problems);
            None
        }
        _ => None,
    };
    // CONTRACT M5: the outbound credential, checked against where the arguments go.
    let auth = fields.auth.and_then(|auth| {
        compile_auth(
            &AuthInput {
                auth,
                meta_path: &meta_path,
                is_lambda: matches!(endpoint, Some(Endpoint::Lambda(_))),
                rest: rest.as_ref(),
                host: match &endpoint {
                    Some(Endpoint::Http(url)) => url.host_str(),
                    _ => None,
                },
            },
            problems,
        )
    });
    // CONTRACT K1: whether calls may or must become tasks.
    let task = fields.task.and_then(|task| {
        super::task_meta::compile_task(
            task,
            &meta_path,
            matches!(endpoint, Some(Endpoint::Lambda(_))),
            problems,
        )
    });
    if problems.0.len() > before {
        return None;
    }
    Some(MetaParts {
        version,
        active,
        endpoint: endpoint?,
        method,
        timeout_ms,
        result_format,
        rest,
        auth,
        pinned,
        task,
    })
}

/// The `_meta` fields the gateway reads, found in one walk over the object (no key is hashed).
#[derive(Default)]
struct MetaFields<'a> {
    version: Option<&'a Value>,
    active: Option<&'a Value>,
    endpoint: Option<&'a Value>,
    method: Option<&'a Value>,
    timeout_ms: Option<&'a Value>,
    result_format: Option<&'a Value>,
    parameters: Option<&'a Value>,
    auth: Option<&'a Value>,
    pinned: Option<&'a Value>,
    task: Option<&'a Value>,
}

impl<'a> MetaFields<'a> {
    fn of(meta: MetaInput<'a>) -> Self {
        let mut fields = Self::default();
        for (key, value) in meta.members() {
            let field = match key {
                "version" => &mut fields.version,
                "active" => &mut fields.active,
                "endpoint" => &mut fields.endpoint,
                "method" => &mut fields.method,
                "timeoutMs" => &mut fields.timeout_ms,
                "resultFormat" => &mut fields.result_format,
                "parameters" => &mut fields.parameters,
                "auth" => &mut fields.auth,
                "pinned" => &mut fields.pinned,
                "task" => &mut fields.task,
                _ => continue,
            };
            *field = Some(value);
        }
        fields
    }
}

/// CONTRACT R5, M2: what an http(s) endpoint may not carry. User info would make the HTTP client
/// send `Authorization: Basic` (a Tool Service credential is `_meta.auth`, M5), and a `.` or
/// `..` segment would be resolved away before the call, silently calling another path.
fn endpoint_url_problem(text: &str, url: &url::Url) -> Option<&'static str> {
    if !url.username().is_empty() || url.password().is_some() {
        return Some("must not carry a user name or password (a credential goes in _meta.auth)");
    }
    let after_scheme = text.split_once("://").map_or(text, |(_, rest)| rest);
    let path = after_scheme
        .find('/')
        .map_or("", |start| &after_scheme[start..]);
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let dot_segment = path.split('/').any(is_dot_segment);
    dot_segment.then_some("must not hold '.' or '..' path segments")
}

/// `.`, `..` and their percent-encoded forms, in any case (`%2e`, `.%2E`, `%2e%2e`, ...): the
/// WHATWG URL standard's single- and double-dot path segments.
fn is_dot_segment(segment: &str) -> bool {
    let s = segment.as_bytes();
    match s.len() {
        1 => s == b".",
        2 => s == b"..",
        3 => s.eq_ignore_ascii_case(b"%2e"),
        4 => s.eq_ignore_ascii_case(b".%2e") || s.eq_ignore_ascii_case(b"%2e."),
        6 => s.eq_ignore_ascii_case(b"%2e%2e"),
        _ => false,
    }
}

fn absolute_http_url(url: Option<url::Url>) -> Option<url::Url> {
    url.filter(|u| {
        matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::is_dot_segment;

    /// CONTRACT R5, M2: the dot segments an endpoint may not hold, as the URL standard spells
    /// them, and segments that only look like them.
    #[test]
    fn r5_dot_segments_are_the_url_standards_in_any_case() {
        for segment in [
            ".", "..", "%2e", "%2E", ".%2e", ".%2E", "%2e.", "%2E.", "%2e%2e", "%2E%2e", "%2e%2E",
            "%2E%2E",
        ] {
            assert!(is_dot_segment(segment), "{segment:?}");
        }
        for segment in [
            "",
            "...",
            ".a",
            "a.",
            "%2f",
            "%2e%2f",
            "%2e%2e.",
            "%2e%2",
            "tools",
            "%2e%2e%2e",
            "%e2",
            ". ",
            "%2e.%2e",
        ] {
            assert!(!is_dot_segment(segment), "{segment:?}");
        }
    }
}
