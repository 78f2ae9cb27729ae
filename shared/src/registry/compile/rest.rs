//! A REST-shaped tool's `_meta.parameters` and endpoint template, checked at load (CONTRACT M2,
//! R5): every location one the gateway can honour, every placeholder a required path argument,
//! no header the gateway sets or forwards itself.

use http::{HeaderName, Method};
use serde_json::{Map, Value};

use super::problems::{Problems, join};
use super::token::is_token;
use crate::registry::{ArgumentLocation, EndpointTemplate, RestCall, TemplatePiece};

/// Header names a `header` argument may never take (CONTRACT M2): the caller headers the gateway
/// forwards (X4), the ones it sets itself, and hop-by-hop and credential headers.
pub const RESERVED_HEADERS: [&str; 23] = [
    "guid",
    "x-request-id",
    "employee-no",
    "virtual-employee-no",
    "mcp-session-id",
    "host",
    "content-length",
    "content-type",
    "accept",
    "user-agent",
    "authorization",
    "cookie",
    "connection",
    "transfer-encoding",
    "te",
    "upgrade",
    "trailer",
    "keep-alive",
    "proxy-authorization",
    // CONTRACT O2: the trace context of each call is the gateway's.
    "traceparent",
    "tracestate",
    "baggage",
    "x-amzn-trace-id",
];

/// Everything [`compile_rest`] reads of one tool.
pub(super) struct RestInput<'a> {
    pub parameters: &'a Value,
    pub endpoint: &'a str,
    pub method: &'a Method,
    pub input_schema: &'a Value,
    pub meta_path: &'a str,
}

/// The `{name}` placeholders and literal text of one path segment; `None` for unbalanced braces.
fn segment_pieces(segment: &str) -> Option<Vec<TemplatePiece>> {
    let mut pieces = Vec::new();
    let mut rest = segment;
    while let Some(open) = rest.find(['{', '}']) {
        if rest.as_bytes()[open] == b'}' {
            return None;
        }
        let close = rest[open + 1..].find(['{', '}'])? + open + 1;
        if rest.as_bytes()[close] == b'{' || close == open + 1 {
            return None;
        }
        if open > 0 {
            pieces.push(TemplatePiece::Literal(rest[..open].to_string()));
        }
        pieces.push(TemplatePiece::Placeholder(
            rest[open + 1..close].to_string(),
        ));
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        pieces.push(TemplatePiece::Literal(rest.to_string()));
    }
    Some(pieces)
}

/// Splits `endpoint` into origin, path segments and suffix (CONTRACT M2). The endpoint itself was
/// already checked as an absolute http(s) URL.
fn parse_template(endpoint: &str, at: &str, problems: &mut Problems) -> Option<EndpointTemplate> {
    let authority_start = endpoint.find("://")? + 3;
    let path_start = endpoint[authority_start..]
        .find(['/', '?', '#'])
        .map_or(endpoint.len(), |i| i + authority_start);
    let suffix_start = endpoint[path_start..]
        .find(['?', '#'])
        .map_or(endpoint.len(), |i| i + path_start);
    let (origin, path, suffix) = (
        &endpoint[..path_start],
        &endpoint[path_start..suffix_start],
        &endpoint[suffix_start..],
    );
    if origin.contains(['{', '}']) || suffix.contains(['{', '}']) {
        problems.add(at, "placeholders may only stand in the path");
        return None;
    }
    let mut segments = Vec::new();
    for segment in path.strip_prefix('/').unwrap_or(path).split('/') {
        let Some(pieces) = segment_pieces(segment) else {
            problems.add(at, "has an unbalanced '{' or '}'");
            return None;
        };
        segments.push(pieces);
    }
    Some(EndpointTemplate {
        origin: origin.to_string(),
        segments,
        suffix: suffix.to_string(),
    })
}

/// The `{name}` placeholders of `template`, in order.
fn placeholders(template: &EndpointTemplate) -> impl Iterator<Item = &str> {
    template
        .segments
        .iter()
        .flatten()
        .filter_map(|piece| match piece {
            TemplatePiece::Placeholder(name) => Some(name.as_str()),
            TemplatePiece::Literal(_) => None,
        })
}

/// CONTRACT M2: a legacy tool's endpoint (no `_meta.parameters`) may hold no `{name}`
/// placeholder, which would otherwise be sent percent-encoded as it is. A problem is reported at
/// `<meta_path>.endpoint`.
pub(super) fn check_no_placeholders(endpoint: &str, meta_path: &str, problems: &mut Problems) {
    if !endpoint.contains(['{', '}']) {
        return;
    }
    let at = join(meta_path, "endpoint");
    let mut scratch = Problems::default();
    if let Some(template) = parse_template(endpoint, &at, &mut scratch)
        && let Some(name) = placeholders(&template).next()
    {
        problems.add(
            &at,
            format!("placeholder '{{{name}}}' is not a path parameter"),
        );
    }
}

/// The JSON Schema types a property admits, `null` left out; empty when it names none.
fn declared_types(property: &Value) -> Vec<&str> {
    match property.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
    .into_iter()
    .filter(|kind| *kind != "null")
    .collect()
}

/// Whether the property's declared types are all among `kinds` (and it declares one).
fn only(property: &Value, kinds: &[&str]) -> bool {
    let types = declared_types(property);
    !types.is_empty() && types.iter().all(|kind| kinds.contains(kind))
}

/// The location of one `_meta.parameters` entry, or the problem with it.
fn location(name: &str, value: &Value, property: &Value) -> Result<ArgumentLocation, String> {
    let location = match value.as_str() {
        Some("path") => ArgumentLocation::Path,
        Some("query") => ArgumentLocation::Query,
        Some("header") => {
            if !is_token(name) {
                return Err(format!(
                    "header name '{name}' is not an HTTP header token (letters, digits and !#$%&'*+-.^_`|~)"
                ));
            }
            let lower = name.to_ascii_lowercase();
            if RESERVED_HEADERS.contains(&lower.as_str()) {
                return Err(format!("header name '{name}' is reserved by the gateway"));
            }
            ArgumentLocation::Header(
                HeaderName::from_bytes(lower.as_bytes()).map_err(|e| e.to_string())?,
            )
        }
        Some("body") => ArgumentLocation::Body,
        Some("wholeBody") => ArgumentLocation::WholeBody,
        _ => {
            return Err(format!(
                "must be one of {}",
                ArgumentLocation::NAMES
                    .map(|n| format!("\"{n}\""))
                    .join(", ")
            ));
        }
    };
    let (label, refused) = match location {
        ArgumentLocation::Path => ("path", &["object", "array"][..]),
        ArgumentLocation::Query => ("query", &["object"][..]),
        ArgumentLocation::Header(_) => ("header", &["object"][..]),
        ArgumentLocation::Body | ArgumentLocation::WholeBody => return Ok(location),
    };
    if only(property, &["object"]) {
        return Err(format!("a {label} parameter cannot be an object"));
    }
    if only(property, refused) {
        return Err(format!("a {label} parameter cannot be an array"));
    }
    Ok(location)
}

/// CONTRACT M2: compiles `_meta.parameters` and the endpoint template, adding every problem.
pub(super) fn compile_rest(input: &RestInput<'_>, problems: &mut Problems) -> Option<RestCall> {
    let before = problems.0.len();
    let parameters_path = join(input.meta_path, "parameters");
    let Some(parameters) = input.parameters.as_object() else {
        problems.add(
            &parameters_path,
            "must be an object mapping argument names to locations",
        );
        return None;
    };
    let empty = Map::new();
    let properties = input
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = input
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut arguments: Vec<(String, ArgumentLocation)> = Vec::new();
    for (name, value) in parameters {
        let at = join(&parameters_path, name);
        let Some(property) = properties.get(name) else {
            problems.add(&at, "names no property of the inputSchema");
            continue;
        };
        match location(name, value, property) {
            Ok(location) => arguments.push((name.clone(), location)),
            Err(message) => problems.add(&at, message),
        }
    }
    check_headers_unique(&arguments, &parameters_path, problems);
    let endpoint_path = join(input.meta_path, "endpoint");
    let template = parse_template(input.endpoint, &endpoint_path, problems);
    if let Some(template) = &template {
        check_path_arguments(template, &arguments, &required, &parameters_path, problems);
        check_placeholders(template, &arguments, &endpoint_path, problems);
    }
    let location_of = |name: &str| {
        arguments
            .iter()
            .find(|(argument, _)| argument == name)
            .map_or(&ArgumentLocation::Body, |(_, location)| location)
    };
    let body_members: Vec<&str> = properties
        .keys()
        .map(String::as_str)
        .filter(|name| *location_of(name) == ArgumentLocation::Body)
        .collect();
    let whole_bodies = arguments
        .iter()
        .filter(|(_, location)| *location == ArgumentLocation::WholeBody)
        .count();
    if matches!(*input.method, Method::GET | Method::HEAD) {
        for name in &body_members {
            problems.add(
                &join(&parameters_path, name),
                format!("a {} tool has no body", input.method),
            );
        }
        for (name, _) in arguments
            .iter()
            .filter(|(_, location)| *location == ArgumentLocation::WholeBody)
        {
            problems.add(
                &join(&parameters_path, name),
                format!("a {} tool has no body", input.method),
            );
        }
    } else if whole_bodies > 1 || (whole_bodies == 1 && !body_members.is_empty()) {
        problems.add(&parameters_path, "wholeBody must be the only body argument");
    }
    if problems.0.len() > before {
        return None;
    }
    Some(RestCall {
        template: template?,
        declares_members: !body_members.is_empty(),
        arguments,
    })
}

/// Two header arguments may not name the same header (case-insensitively).
fn check_headers_unique(
    arguments: &[(String, ArgumentLocation)],
    parameters_path: &str,
    problems: &mut Problems,
) {
    let headers: Vec<(&String, &HeaderName)> = arguments
        .iter()
        .filter_map(|(name, location)| match location {
            ArgumentLocation::Header(header) => Some((name, header)),
            _ => None,
        })
        .collect();
    for (i, (name, header)) in headers.iter().enumerate() {
        if headers[..i].iter().any(|(_, earlier)| earlier == header) {
            problems.add(
                &join(parameters_path, name),
                format!("header '{header}' is named twice (case-insensitively)"),
            );
        }
    }
}

/// Every `path` argument has its placeholder and is required by the `inputSchema`.
fn check_path_arguments(
    template: &EndpointTemplate,
    arguments: &[(String, ArgumentLocation)],
    required: &[&str],
    parameters_path: &str,
    problems: &mut Problems,
) {
    for (name, _) in arguments
        .iter()
        .filter(|(_, location)| *location == ArgumentLocation::Path)
    {
        let at = join(parameters_path, name);
        if !placeholders(template).any(|placeholder| placeholder == name) {
            problems.add(
                &at,
                format!("path parameter '{name}' has no placeholder in the endpoint"),
            );
        }
        if !required.contains(&name.as_str()) {
            problems.add(
                &at,
                format!("path parameter '{name}' must be required by the inputSchema"),
            );
        }
    }
}

/// Every placeholder names a `path` argument.
fn check_placeholders(
    template: &EndpointTemplate,
    arguments: &[(String, ArgumentLocation)],
    endpoint_path: &str,
    problems: &mut Problems,
) {
    for placeholder in placeholders(template) {
        let is_path = arguments
            .iter()
            .any(|(name, location)| name == placeholder && *location == ArgumentLocation::Path);
        if !is_path {
            problems.add(
                endpoint_path,
                format!("placeholder '{{{placeholder}}}' is not a path parameter"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(endpoint: &str) -> Result<EndpointTemplate, Vec<String>> {
        let mut problems = Problems::default();
        parse_template(endpoint, "endpoint", &mut problems)
            .ok_or_else(|| problems.0.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn m2_template_splits_origin_segments_and_suffix() {
        let t = template("https://api.test:8443/v1/pets/{petId}/photo.{format}?x=1#f").unwrap();
        assert_eq!(t.origin, "https://api.test:8443");
        assert_eq!(t.suffix, "?x=1#f");
        assert_eq!(
            t.segments,
            vec![
                vec![TemplatePiece::Literal("v1".into())],
                vec![TemplatePiece::Literal("pets".into())],
                vec![TemplatePiece::Placeholder("petId".into())],
                vec![
                    TemplatePiece::Literal("photo.".into()),
                    TemplatePiece::Placeholder("format".into())
                ],
            ]
        );
    }

    #[test]
    fn m2_placeholders_only_in_the_path_and_balanced() {
        for bad in [
            "https://{host}/x",
            "https://api.test/x?q={q}",
            "https://api.test/x#{f}",
        ] {
            assert_eq!(
                template(bad).unwrap_err(),
                vec!["endpoint: placeholders may only stand in the path"],
                "{bad}"
            );
        }
        for bad in [
            "https://api.test/{a",
            "https://api.test/a}",
            "https://api.test/{}",
            "https://api.test/{{a}}",
        ] {
            assert_eq!(
                template(bad).unwrap_err(),
                vec!["endpoint: has an unbalanced '{' or '}'"],
                "{bad}"
            );
        }
    }
}
