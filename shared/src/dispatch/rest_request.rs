//! Building a REST-shaped tool's request from validated arguments (CONTRACT X9): path segments,
//! query pairs, headers and the JSON body. Pure: no I/O, every refusal a `-32602` detail.

use std::fmt::Write as _;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value};

use super::sent_arguments::{Member, write_members};
use crate::policy::is_forwardable_header_value;
use crate::registry::{ArgumentLocation, RestCall, TemplatePiece};

/// Every byte but RFC 3986's unreserved characters (`A-Za-z0-9-._~`) is percent-encoded in a
/// path segment, a query name or a query value (CONTRACT X9): a value can never add a segment,
/// a query or a fragment, and a space is `%20`.
pub(super) const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The parts of one REST-shaped request (CONTRACT X9).
#[derive(Debug)]
pub(super) struct RestRequest {
    /// The endpoint with its path arguments and query pairs.
    pub endpoint: url::Url,
    /// The `header` arguments.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// The JSON body; empty when the request has none.
    pub body: Bytes,
}

/// Integers up to this magnitude are exact as `f64`.
const MAX_EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

/// A scalar's text: a string as it is, a number or boolean as its JSON text. A number written
/// with a fraction or exponent whose value is a whole number (`2.0`, `1e2`, `-0`) is written as
/// that whole number, so that an id reaches the path as `/pets/2`, not `/pets/2.0`.
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(match number.as_f64() {
            Some(float)
                if number.is_f64() && float.fract() == 0.0 && float.abs() <= MAX_EXACT_INTEGER =>
            {
                #[expect(
                    clippy::cast_possible_truncation,
                    reason = "a whole number within 2^53: exact"
                )]
                let whole = float as i64;
                whole.to_string()
            }
            _ => number.to_string(),
        }),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

/// Builds the request of `rest` for `arguments`, which passed the `inputSchema` (CONTRACT X9).
/// `sent` holds the same members as the request wrote them, in the same order: the body is
/// written from them, so that every number keeps its text (CONTRACT X11).
///
/// # Errors
/// The `-32602` detail (without the `Invalid params: ` prefix) of the first argument that cannot
/// be placed.
pub(super) fn build(
    rest: &RestCall,
    method: &Method,
    arguments: &Map<String, Value>,
    sent: &[Member<'_>],
) -> Result<RestRequest, String> {
    let mut query = String::new();
    let mut headers = Vec::new();
    let mut members: Vec<(usize, &String, &Value)> = Vec::new();
    let mut whole_body: Option<(usize, &Value)> = None;
    let has_body = !matches!(*method, Method::GET | Method::HEAD);
    for (i, (name, value)) in arguments.iter().enumerate() {
        match rest.location_of(name) {
            ArgumentLocation::Path => {}
            ArgumentLocation::Query => add_query(&mut query, name, value)?,
            ArgumentLocation::Header(header) => {
                if let Some(value) = header_value(name, value)? {
                    headers.push((header.clone(), value));
                }
            }
            ArgumentLocation::Body | ArgumentLocation::WholeBody if !has_body => {
                return Err(format!(
                    "argument '{name}' has no place in a {method} request"
                ));
            }
            ArgumentLocation::Body => members.push((i, name, value)),
            ArgumentLocation::WholeBody => whole_body = Some((i, value)),
        }
    }
    let endpoint = endpoint(rest, arguments, &query)?;
    // The sent members line up with the parsed ones (both keep a key's first place); should
    // they not, the parsed values are written instead.
    let lined_up = sent.len() == arguments.len()
        && sent
            .iter()
            .zip(arguments.keys())
            .all(|(m, key)| m.key == key.as_str());
    let mut body = Vec::new();
    match whole_body {
        Some((i, _)) if lined_up => sent[i].value.write(&mut body),
        Some((_, value)) => body = serde_json::to_vec(value).unwrap_or_default(),
        None if has_body && (rest.declares_members || !members.is_empty()) => {
            if lined_up {
                write_members(members.iter().map(|&(i, _, _)| &sent[i]), &mut body);
            } else {
                let parsed: Map<String, Value> = members
                    .iter()
                    .map(|&(_, name, value)| (name.clone(), value.clone()))
                    .collect();
                body = serde_json::to_vec(&parsed).unwrap_or_default();
            }
        }
        None => {}
    }
    Ok(RestRequest {
        endpoint,
        headers,
        body: Bytes::from(body),
    })
}

/// The endpoint with each placeholder replaced by its argument, encoded as one segment, and the
/// query pairs after the endpoint's own query.
fn endpoint(
    rest: &RestCall,
    arguments: &Map<String, Value>,
    query: &str,
) -> Result<url::Url, String> {
    let template = &rest.template;
    let mut url = template.origin.clone();
    for segment in &template.segments {
        url.push('/');
        let mut text = String::new();
        let mut first_placeholder = None;
        for piece in segment {
            match piece {
                TemplatePiece::Literal(literal) => text.push_str(literal),
                TemplatePiece::Placeholder(name) => {
                    let value = path_value(name, arguments.get(name))?;
                    first_placeholder.get_or_insert(name);
                    text.extend(utf8_percent_encode(&value, COMPONENT));
                }
            }
        }
        if let Some(name) = first_placeholder
            && matches!(text.as_str(), "." | "..")
        {
            return Err(dot_segment(name));
        }
        url.push_str(&text);
    }
    url.push_str(&template.suffix);
    let mut url =
        url::Url::parse(&url).map_err(|_| "the endpoint URL cannot be built".to_string())?;
    if !query.is_empty() {
        let combined = match url.query() {
            Some(own) if !own.is_empty() => format!("{own}&{query}"),
            _ => query.to_string(),
        };
        url.set_query(Some(&combined));
    }
    Ok(url)
}

fn dot_segment(name: &str) -> String {
    format!("path argument '{name}' must not be empty, '.' or '..'")
}

/// A path argument's text: a non-empty scalar other than `.` and `..`.
fn path_value(name: &str, value: Option<&Value>) -> Result<String, String> {
    let text = value
        .and_then(scalar_text)
        .ok_or_else(|| format!("path argument '{name}' must be a string, number or boolean"))?;
    if matches!(text.as_str(), "" | "." | "..") {
        return Err(dot_segment(name));
    }
    Ok(text)
}

/// Appends `name=value` pairs: one per array item (`form` style, `explode: true`); a null or an
/// empty array adds nothing.
fn add_query(query: &mut String, name: &str, value: &Value) -> Result<(), String> {
    let refused =
        || format!("query argument '{name}' must be a string, number, boolean or an array of them");
    let items: Vec<&Value> = match value {
        Value::Null => Vec::new(),
        Value::Array(items) => items.iter().filter(|item| !item.is_null()).collect(),
        Value::Object(_) => return Err(refused()),
        scalar => vec![scalar],
    };
    for item in items {
        let text = scalar_text(item).ok_or_else(refused)?;
        if !query.is_empty() {
            query.push('&');
        }
        let _ = write!(
            query,
            "{}={}",
            utf8_percent_encode(name, COMPONENT),
            utf8_percent_encode(&text, COMPONENT)
        );
    }
    Ok(())
}

/// A header argument's value (`simple` style: array items joined by `,`) after C4's check; `None`
/// for null.
fn header_value(name: &str, value: &Value) -> Result<Option<HeaderValue>, String> {
    let refused = || {
        format!("header argument '{name}' must be 1-2048 printable ASCII characters without spaces")
    };
    let text = match value {
        Value::Null => return Ok(None),
        Value::Array(items) => items
            .iter()
            .map(scalar_text)
            .collect::<Option<Vec<String>>>()
            .ok_or_else(refused)?
            .join(","),
        Value::Object(_) => return Err(refused()),
        scalar => scalar_text(scalar).ok_or_else(refused)?,
    };
    if !is_forwardable_header_value(text.as_bytes()) {
        return Err(refused());
    }
    HeaderValue::from_str(&text)
        .map(Some)
        .map_err(|_| refused())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::dispatch::sent_arguments::Sent;
    use crate::registry::EndpointTemplate;

    fn rest(segments: &[&[TemplatePiece]], arguments: &[(&str, ArgumentLocation)]) -> RestCall {
        RestCall {
            template: EndpointTemplate {
                origin: "https://api.test".into(),
                segments: segments.iter().map(|s| s.to_vec()).collect(),
                suffix: String::new(),
            },
            arguments: arguments
                .iter()
                .map(|(n, l)| ((*n).to_string(), l.clone()))
                .collect(),
            declares_members: false,
        }
    }

    /// Builds from the parsed arguments alone (no sent text: the body is `serde_json`'s).
    fn parsed(
        call: &RestCall,
        method: &Method,
        arguments: &Map<String, Value>,
    ) -> Result<RestRequest, String> {
        build(call, method, arguments, &[])
    }

    #[test]
    fn x11_body_members_and_a_whole_body_keep_the_numbers_as_sent() {
        let text =
            r#"{ "id" : 1e2, "n": 12345678901234567890123, "q": -0, "f": 1.0, "s": "\u00e9" }"#;
        let arguments: Map<String, Value> = serde_json::from_str(text).unwrap();
        let Some(Sent::Object(sent)) = Sent::read(text) else {
            panic!("an object")
        };
        let call = rest(
            &[&[ph("id")]],
            &[
                ("id", ArgumentLocation::Path),
                ("n", ArgumentLocation::Body),
                ("q", ArgumentLocation::Body),
                ("f", ArgumentLocation::Query),
                ("s", ArgumentLocation::Body),
            ],
        );
        let built = build(&call, &Method::POST, &arguments, &sent).unwrap();
        assert_eq!(built.endpoint.as_str(), "https://api.test/100?f=1");
        assert_eq!(
            std::str::from_utf8(&built.body).unwrap(),
            r#"{"n":12345678901234567890123,"q":-0,"s":"\u00e9"}"#
        );
        let whole = rest(
            &[&[ph("id")]],
            &[
                ("id", ArgumentLocation::Path),
                ("n", ArgumentLocation::WholeBody),
            ],
        );
        let built = build(&whole, &Method::PUT, &arguments, &sent).unwrap();
        assert_eq!(&built.body[..], b"12345678901234567890123");
    }

    fn lit(text: &str) -> TemplatePiece {
        TemplatePiece::Literal(text.into())
    }

    fn ph(name: &str) -> TemplatePiece {
        TemplatePiece::Placeholder(name.into())
    }

    fn args(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => panic!("arguments must be an object"),
        }
    }

    #[test]
    fn x9_adjacent_placeholders_cannot_make_a_dot_segment() {
        let call = rest(
            &[&[ph("a"), ph("b")]],
            &[("a", ArgumentLocation::Path), ("b", ArgumentLocation::Path)],
        );
        let err = parsed(&call, &Method::GET, &args(json!({"a": ".", "b": "x"}))).unwrap_err();
        assert_eq!(err, "path argument 'a' must not be empty, '.' or '..'");
        let ok = parsed(&call, &Method::GET, &args(json!({"a": "x", "b": "y"}))).unwrap();
        assert_eq!(ok.endpoint.as_str(), "https://api.test/xy");
    }

    #[test]
    fn x9_whole_numbers_are_written_without_a_fraction() {
        let call = rest(
            &[&[ph("id")]],
            &[
                ("id", ArgumentLocation::Path),
                ("n", ArgumentLocation::Query),
            ],
        );
        let arguments: Map<String, Value> =
            serde_json::from_str(r#"{"id": 2.0, "n": [1e2, -0.0, 2.5, 12345678901234567890]}"#)
                .unwrap();
        let built = parsed(&call, &Method::GET, &arguments).unwrap();
        assert_eq!(built.endpoint.path(), "/2");
        assert_eq!(
            built.endpoint.query(),
            Some("n=100&n=0&n=2.5&n=12345678901234567890")
        );
    }

    #[test]
    fn x9_path_values_must_be_scalars() {
        let call = rest(&[&[ph("id")]], &[("id", ArgumentLocation::Path)]);
        for value in [json!(null), json!({"a": 1}), json!([1])] {
            let err = parsed(&call, &Method::DELETE, &args(json!({ "id": value }))).unwrap_err();
            assert_eq!(
                err,
                "path argument 'id' must be a string, number or boolean"
            );
        }
        let err = parsed(&call, &Method::DELETE, &args(json!({}))).unwrap_err();
        assert_eq!(
            err,
            "path argument 'id' must be a string, number or boolean"
        );
    }

    #[test]
    fn x9_segment_encoding_keeps_every_value_in_its_segment() {
        let call = rest(
            &[&[lit("items")], &[ph("id")]],
            &[("id", ArgumentLocation::Path)],
        );
        for (value, path) in [
            ("a/b", "/items/a%2Fb"),
            ("..%2f", "/items/..%252f"),
            ("%2e%2e", "/items/%252e%252e"),
            ("x?y#z", "/items/x%3Fy%23z"),
            ("a\\b", "/items/a%5Cb"),
            ("홍 길", "/items/%ED%99%8D%20%EA%B8%B8"),
        ] {
            let built = parsed(&call, &Method::GET, &args(json!({ "id": value }))).unwrap();
            assert_eq!(built.endpoint.path(), path, "{value}");
            assert_eq!(built.endpoint.host_str(), Some("api.test"));
            assert_eq!(built.endpoint.query(), None);
        }
    }
}
