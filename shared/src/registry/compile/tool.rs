//! One manifest tool (CONTRACT M, R5, T1): its name, schemas (compiled to validators), `_meta`
//! (endpoint, method, timeout, result format, version, active) and its public `tools/list` entry.

use serde_json::{Map, Value};

use super::problems::{Problems, join, optional_string, string_field};
use super::rest::{RestInput, check_no_placeholders, compile_rest};
use super::token::is_token;
use crate::registry::{Endpoint, FunctionArn, HeaderParam, LazyValidator, ResultFormat, Tool};

/// The problem of an `_meta.endpoint` that is neither an http(s) URL nor a function ARN
/// (CONTRACT R5, M4).
const ENDPOINT_PROBLEM: &str = "must be an absolute http(s) URL or a Lambda function ARN (arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>])";

/// Longest tool timeout a manifest may set, in ms (the Lambda maximum of 15 minutes).
pub const MAX_TOOL_TIMEOUT_MS: u64 = 900_000;

/// Public tool fields copied into `tools/list`, in this order (CONTRACT T1).
pub(super) const PUBLIC_TOOL_FIELDS: [&str; 7] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "icons",
];

pub(super) fn is_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// CONTRACT R5: a tool schema is an object with a root of `"type": "object"` (when it names a
/// type) that its meta-schema accepts and that compiles; the validator itself is compiled on
/// first use ([`LazyValidator`]). Draft auto-detection: `$schema` when declared, JSON Schema
/// 2020-12 otherwise.
fn check_schema(schema: &Value, path: &str, problems: &mut Problems) -> Option<LazyValidator> {
    let Some(object) = schema.as_object() else {
        problems.add(path, "must be a JSON Schema object");
        return None;
    };
    if object.get("type").is_some_and(|kind| kind != "object") {
        problems.add(path, "root must be \"type\": \"object\"");
        return None;
    }
    match LazyValidator::check(schema) {
        Ok(validator) => Some(validator),
        Err(error) => {
            problems.add(path, format!("does not compile: {error}"));
            None
        }
    }
}

/// The annotation that mirrors an argument into `Mcp-Param-<Name>` (MCP 2026-07-28).
const X_MCP_HEADER: &str = "x-mcp-header";

/// Longest `x-mcp-header` name: `mcp-param-` and it within the header names a CORS preflight
/// admits (CONTRACT N6, H9).
const MAX_X_MCP_HEADER_BYTES: usize =
    crate::policy::MAX_REQUESTED_HEADER_BYTES - crate::policy::MCP_PARAM_PREFIX.len();

/// Keywords whose values are data, not schemas: an `x-mcp-header` key inside them is no
/// annotation.
const DATA_KEYWORDS: [&str; 4] = ["const", "enum", "default", "examples"];

/// CONTRACT N6: the `x-mcp-header` annotations of an `inputSchema`. Each is a non-empty HTTP
/// token (RFC 9110 `tchar`), unique in the tool case-insensitively, on a top-level property of
/// type `string`, `integer` or `boolean`; an annotation anywhere else is a problem.
pub(super) fn header_params(
    schema: &Value,
    path: &str,
    problems: &mut Problems,
) -> Vec<HeaderParam> {
    let mut params: Vec<HeaderParam> = Vec::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, property) in properties.into_iter().flatten() {
        let Some(annotation) = property.get(X_MCP_HEADER) else {
            continue;
        };
        let at = join(&join(&join(path, "properties"), name), X_MCP_HEADER);
        let Some(header) = annotation.as_str().filter(|h| is_token(h)) else {
            problems.add(
                &at,
                "must be a non-empty HTTP header token (letters, digits and !#$%&'*+-.^_`|~)",
            );
            continue;
        };
        if header.len() > MAX_X_MCP_HEADER_BYTES {
            problems.add(
                &at,
                format!(
                    "must be at most {MAX_X_MCP_HEADER_BYTES} characters, so that a browser's preflight admits Mcp-Param-<Name> (H9)"
                ),
            );
            continue;
        }
        if !matches!(
            property.get("type").and_then(Value::as_str),
            Some("string" | "integer" | "boolean")
        ) {
            problems.add(
                &at,
                "may only annotate a property of type string, integer or boolean",
            );
            continue;
        }
        let param = HeaderParam::new(name, header);
        if params.iter().any(|p| p.header == param.header) {
            problems.add(
                &at,
                format!("'{header}' is used twice in this tool (case-insensitively)"),
            );
            continue;
        }
        params.push(param);
    }
    misplaced_annotations(schema, path, true, problems);
    params
}

/// Reports every `x-mcp-header` that does not sit on a top-level property (CONTRACT N6).
fn misplaced_annotations(schema: &Value, path: &str, top: bool, problems: &mut Problems) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object {
                let at = join(path, key);
                if DATA_KEYWORDS.contains(&key.as_str()) {
                    continue;
                }
                if key == X_MCP_HEADER {
                    problems.add(
                        &at,
                        "may only annotate a top-level property of the inputSchema",
                    );
                } else if key == "properties"
                    && let Value::Object(properties) = value
                {
                    for (name, property) in properties {
                        let at = join(&at, name);
                        match property {
                            // The annotation itself belongs here: check what lies below it.
                            Value::Object(inner) if top => {
                                for (key, value) in inner {
                                    if key != X_MCP_HEADER && !DATA_KEYWORDS.contains(&key.as_str())
                                    {
                                        misplaced_annotations(
                                            value,
                                            &join(&at, key),
                                            false,
                                            problems,
                                        );
                                    }
                                }
                            }
                            _ => misplaced_annotations(property, &at, false, problems),
                        }
                    }
                } else {
                    misplaced_annotations(value, &at, false, problems);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                misplaced_annotations(item, &join(path, &i.to_string()), false, problems);
            }
        }
        _ => {}
    }
}

pub(super) fn compile_tool(
    tool: &Value,
    path: &str,
    problems: &mut Problems,
) -> Option<(Tool, bool)> {
    let Some(object) = tool.as_object() else {
        problems.add(path, "must be an object");
        return None;
    };
    let before = problems.0.len();
    let name = match object.get("name") {
        Some(Value::String(name)) if is_tool_name(name) => name.clone(),
        _ => {
            problems.add(
                &join(path, "name"),
                "must be a string of 1-128 characters [A-Za-z0-9_.-]",
            );
            String::new()
        }
    };
    optional_string(object, "title", path, problems);
    optional_string(object, "description", path, problems);
    let input_schema = if let Some(schema) = object.get("inputSchema") {
        check_schema(schema, &join(path, "inputSchema"), problems)
    } else {
        problems.add(&join(path, "inputSchema"), "is required");
        None
    };
    let header_params = object
        .get("inputSchema")
        .map(|schema| header_params(schema, &join(path, "inputSchema"), problems))
        .unwrap_or_default();
    let output_schema = object
        .get("outputSchema")
        .and_then(|schema| check_schema(schema, &join(path, "outputSchema"), problems));
    if object.get("annotations").is_some_and(|a| !a.is_object()) {
        problems.add(&join(path, "annotations"), "must be an object");
    }
    if object.get("icons").is_some_and(|a| !a.is_array()) {
        problems.add(&join(path, "icons"), "must be an array");
    }
    let meta = compile_meta(
        object.get("_meta"),
        object.get("inputSchema"),
        path,
        problems,
    );
    if problems.0.len() > before {
        return None;
    }
    let meta = meta?;
    Some((
        Tool {
            name,
            version: meta.version,
            endpoint: meta.endpoint,
            method: meta.method,
            timeout_ms: meta.timeout_ms,
            input_schema: input_schema?,
            output_schema,
            result_format: meta.result_format,
            header_params,
            rest: meta.rest,
        },
        meta.active,
    ))
}

/// A tool's `_meta` compiled (CONTRACT M, M2, M4): everything of the [`Tool`] but its name and
/// schemas, and whether it is active.
pub(super) struct MetaParts {
    pub(super) version: String,
    pub(super) active: bool,
    pub(super) endpoint: Endpoint,
    pub(super) method: http::Method,
    pub(super) timeout_ms: Option<u64>,
    pub(super) result_format: ResultFormat,
    pub(super) rest: Option<crate::registry::RestCall>,
}

/// Compiles the `_meta` of the tool at `path` (CONTRACT M, M2, M4, R5); `input_schema` is the
/// tool's, which a REST-shaped tool's `parameters` are checked against. `None` when a problem
/// was found (added to `problems`).
pub(super) fn compile_meta(
    meta: Option<&Value>,
    input_schema: Option<&Value>,
    path: &str,
    problems: &mut Problems,
) -> Option<MetaParts> {
    let before = problems.0.len();
    let meta_path = join(path, "_meta");
    let empty = Map::new();
    let meta = if let Some(Value::Object(meta)) = meta {
        meta
    } else {
        problems.add(&meta_path, "must be an object with the tool's endpoint");
        &empty
    };
    let fields = MetaFields::of(meta);
    let version = string_field(fields.version, "version", &meta_path, problems).unwrap_or_default();
    let active = match fields.active {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            problems.add(&join(&meta_path, "active"), "must be a boolean");
            true
        }
    };
    let endpoint = match fields.endpoint {
        Some(Value::String(text)) if let Some(url) = absolute_http_url(text) => {
            if let Some(problem) = endpoint_url_problem(text, &url) {
                problems.add(&join(&meta_path, "endpoint"), problem);
            }
            Some(Endpoint::Http(url))
        }
        Some(Value::String(arn)) if let Ok(function) = FunctionArn::parse(arn) => {
            Some(Endpoint::Lambda(function))
        }
        _ if std::ptr::eq(meta, &raw const empty) => None,
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
}

impl<'a> MetaFields<'a> {
    fn of(meta: &'a Map<String, Value>) -> Self {
        let mut fields = Self::default();
        for (key, value) in meta {
            let field = match key.as_str() {
                "version" => &mut fields.version,
                "active" => &mut fields.active,
                "endpoint" => &mut fields.endpoint,
                "method" => &mut fields.method,
                "timeoutMs" => &mut fields.timeout_ms,
                "resultFormat" => &mut fields.result_format,
                "parameters" => &mut fields.parameters,
                _ => continue,
            };
            *field = Some(value);
        }
        fields
    }
}

/// A manifest tool as `tools/list` shows it: the public fields only, in a fixed order
/// (CONTRACT T1).
pub(super) struct PublicTool<'a>(pub(super) &'a Value);

impl serde::Serialize for PublicTool<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let fields: Vec<(&str, &Value)> = PUBLIC_TOOL_FIELDS
            .iter()
            .filter_map(|field| self.0.get(*field).map(|v| (*field, v)))
            .collect();
        let mut map = serializer.serialize_map(Some(fields.len()))?;
        for (field, value) in fields {
            map.serialize_entry(field, value)?;
        }
        map.end()
    }
}

/// CONTRACT R5, M2: what an http(s) endpoint may not carry. User info would make the HTTP client
/// send `Authorization: Basic` (the gateway sends no credentials to Tool Services), and a `.` or
/// `..` segment would be resolved away before the call, silently calling another path.
fn endpoint_url_problem(text: &str, url: &url::Url) -> Option<&'static str> {
    if !url.username().is_empty() || url.password().is_some() {
        return Some("must not carry a user name or password (the gateway sends no credentials)");
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

fn absolute_http_url(url: &str) -> Option<url::Url> {
    url::Url::parse(url).ok().filter(|u| {
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
