//! Mirrored headers of the modern era: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and
//! `Mcp-Param-<Name>` must repeat what the body says (CONTRACT N2; MCP 2026-07-28
//! basic/transports/streamable-http "Server Validation"). A tool's `Mcp-Param-<Name>` headers
//! are its [`HeaderParam`]s, which the manifest compiler reads from its `x-mcp-header`
//! annotations (CONTRACT N6).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::HeaderMap;
use serde_json::{Map, Value};

use crate::protocol::ErrorObject;

/// `Mcp-Method` (matched case-insensitively).
pub(crate) const METHOD_HEADER: &str = "mcp-method";
/// `Mcp-Name` (matched case-insensitively).
pub(crate) const NAME_HEADER: &str = "mcp-name";

/// One `x-mcp-header` annotation of a tool's `inputSchema` (CONTRACT N6; MCP 2026-07-28
/// server/tools "x-mcp-header").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// The top-level property (argument) name.
    pub property: String,
    /// The header name, lower case: `mcp-param-<name>`.
    pub header: String,
    /// The header name as the annotation spells it, for messages: `Mcp-Param-<Name>`.
    pub display: String,
}

impl HeaderParam {
    /// The header of `property` annotated `"x-mcp-header": "<name>"`.
    #[must_use]
    pub fn new(property: &str, name: &str) -> Self {
        Self {
            property: property.into(),
            header: format!("mcp-param-{}", name.to_ascii_lowercase()),
            display: format!("Mcp-Param-{name}"),
        }
    }
}

/// What a modern request's body says, for its mirrored headers to repeat.
#[derive(Debug, Clone, Copy)]
pub struct MirroredFields<'a> {
    /// `params._meta["io.modelcontextprotocol/protocolVersion"]`.
    pub version: &'a str,
    /// `method`.
    pub method: &'a str,
    /// `params.name` of a `tools/call`, when it is a string.
    pub tool_name: Option<&'a str>,
    /// The `x-mcp-header` arguments of the called tool and the call's `arguments`.
    pub params: Option<(&'a [HeaderParam], &'a Map<String, Value>)>,
}

/// CONTRACT N2: every mirrored header is present and equal to its body value, in the order
/// `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` (tools/call), `Mcp-Param-*` (tools/call).
///
/// Values are compared after trimming spaces and tabs; `=?base64?<b64>?=` is decoded first
/// (standard alphabet, padding required, UTF-8). A header sent more than once, or one that is
/// not visible ASCII, is a mismatch.
///
/// # Errors
/// `-32020 Header mismatch: <header> header is required` or `… does not match <body field>`;
/// never a header value.
pub fn check_mirrored_headers(
    headers: &HeaderMap,
    fields: &MirroredFields<'_>,
) -> Result<(), ErrorObject> {
    check_one(
        headers,
        super::http_checks::PROTOCOL_VERSION_HEADER,
        "MCP-Protocol-Version",
        "params._meta[\"io.modelcontextprotocol/protocolVersion\"]",
        |sent| sent == fields.version,
    )?;
    check_one(headers, METHOD_HEADER, "Mcp-Method", "method", |sent| {
        sent == fields.method
    })?;
    if let Some(name) = fields.tool_name {
        check_one(headers, NAME_HEADER, "Mcp-Name", "params.name", |sent| {
            sent == name
        })?;
    }
    let Some((params, arguments)) = fields.params else {
        return Ok(());
    };
    for param in params {
        // An absent or null argument expects no header; an object or array is left to the
        // inputSchema check (X2). A number, whatever its JSON form (`1`, `1.0`, `1e0`), needs
        // the header, compared numerically (MCP 2026-07-28 "Server Validation").
        let field = format!("arguments.{}", param.property);
        match arguments.get(&param.property) {
            Some(Value::String(text)) => {
                check_one(headers, &param.header, &param.display, &field, |sent| {
                    sent == text
                })?;
            }
            Some(Value::Bool(flag)) => {
                check_one(headers, &param.header, &param.display, &field, |sent| {
                    sent == if *flag { "true" } else { "false" }
                })?;
            }
            Some(Value::Number(number)) => {
                check_one(headers, &param.header, &param.display, &field, |sent| {
                    same_number(sent, number)
                })?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// CONTRACT K5: a `tasks/*` request's `Mcp-Name` is present and equals `params.taskId` (ext-tasks
/// "Streamable HTTP: Routing Headers"), compared as [`check_mirrored_headers`] compares.
///
/// # Errors
/// `-32020 Header mismatch: Mcp-Name header is required` or `… does not match params.taskId`.
pub fn check_task_name(headers: &HeaderMap, task_id: &str) -> Result<(), ErrorObject> {
    check_one(headers, NAME_HEADER, "Mcp-Name", "params.taskId", |sent| {
        sent == task_id
    })
}

/// Whether header text `sent` is a JSON number equal to `number`: its exact JSON text, or the
/// same value (`42.0` and `42`).
fn same_number(sent: &str, number: &serde_json::Number) -> bool {
    if sent == number.to_string() {
        return true;
    }
    match (
        serde_json::from_str::<serde_json::Number>(sent),
        number.as_f64(),
    ) {
        (Ok(parsed), Some(value)) => parsed.as_f64() == Some(value),
        _ => false,
    }
}

fn check_one(
    headers: &HeaderMap,
    name: &str,
    display: &str,
    field: &str,
    matches: impl Fn(&str) -> bool,
) -> Result<(), ErrorObject> {
    let mut values = headers.get_all(name).iter();
    let Some(value) = values.next() else {
        return Err(ErrorObject::header_mismatch(&format!(
            "{display} header is required"
        )));
    };
    let sent = if values.next().is_some() {
        None
    } else {
        value.to_str().ok().and_then(decoded)
    };
    if sent.as_deref().is_some_and(matches) {
        Ok(())
    } else {
        Err(ErrorObject::header_mismatch(&format!(
            "{display} header does not match {field}"
        )))
    }
}

/// A header value as text: trimmed, and decoded when it has the exact form `=?base64?…?=`;
/// `None` for malformed base64 or a decoded value that is not UTF-8.
fn decoded(value: &str) -> Option<String> {
    let value = value.trim_matches([' ', '\t']);
    match value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => String::from_utf8(STANDARD.decode(encoded).ok()?).ok(),
        None => Some(value.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;
    use serde_json::json;

    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        map
    }

    fn fields(method: &str) -> MirroredFields<'_> {
        MirroredFields {
            version: "2026-07-28",
            method,
            tool_name: None,
            params: None,
        }
    }

    fn message(result: Result<(), ErrorObject>) -> String {
        let error = result.unwrap_err();
        assert_eq!(error.code.0, -32020);
        error.message
    }

    #[test]
    fn n2_base64_sentinel_values_are_decoded_and_spaces_trimmed() {
        assert_eq!(decoded("  plain\t").as_deref(), Some("plain"));
        assert_eq!(
            decoded("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
            Some("Hello, 世界")
        );
        assert_eq!(
            decoded("=?base64?IHBhZGRlZCA=?=").as_deref(),
            Some(" padded ")
        );
        // Padding is required; a wrong alphabet or non-UTF-8 bytes are malformed.
        assert_eq!(decoded("=?base64?IHBhZGRlZCA?="), None);
        assert_eq!(decoded("=?base64?a_b-?="), None);
        assert_eq!(decoded("=?base64?/w==?="), None);
        // Only the exact form is decoded.
        assert_eq!(decoded("=?base64?abc").as_deref(), Some("=?base64?abc"));
    }

    #[test]
    fn n2_missing_duplicated_and_different_headers_are_mismatches_in_order() {
        let ok = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ]);
        assert_eq!(check_mirrored_headers(&ok, &fields("tools/list")), Ok(()));
        assert_eq!(
            message(check_mirrored_headers(
                &headers(&[("mcp-method", "tools/list")]),
                &fields("tools/list")
            )),
            "Header mismatch: MCP-Protocol-Version header is required"
        );
        assert_eq!(
            message(check_mirrored_headers(&ok, &fields("server/discover"))),
            "Header mismatch: Mcp-Method header does not match method"
        );
        let twice = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
            ("mcp-method", "tools/list"),
        ]);
        assert_eq!(
            message(check_mirrored_headers(&twice, &fields("tools/list"))),
            "Header mismatch: Mcp-Method header does not match method"
        );
        // Values are case-sensitive.
        let upper = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "Tools/List"),
        ]);
        assert!(check_mirrored_headers(&upper, &fields("tools/list")).is_err());
    }

    #[test]
    fn n2_param_headers_repeat_strings_integers_and_booleans_and_null_expects_none() {
        let params = [
            HeaderParam::new("region", "Region"),
            HeaderParam::new("count", "Count"),
            HeaderParam::new("dry", "Dry"),
        ];
        let arguments = json!({"region": "世界", "count": 42, "dry": false, "other": 1});
        let Value::Object(arguments) = arguments else {
            unreachable!()
        };
        let call = MirroredFields {
            tool_name: Some("t"),
            params: Some((&params, &arguments)),
            ..fields("tools/call")
        };
        let mut sent = vec![
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "t"),
            ("mcp-param-region", "=?base64?5LiW55WM?="),
            ("mcp-param-count", "42"),
            ("mcp-param-dry", "false"),
        ];
        assert_eq!(check_mirrored_headers(&headers(&sent), &call), Ok(()));
        // Numbers compare by value: 42.0 and 4.2e1 are 42.
        for same in ["42.0", "4.2e1"] {
            sent[4] = ("mcp-param-count", same);
            assert_eq!(check_mirrored_headers(&headers(&sent), &call), Ok(()));
        }
        for other in ["43", "042", "0x2a", "forty-two", ""] {
            sent[4] = ("mcp-param-count", other);
            assert_eq!(
                message(check_mirrored_headers(&headers(&sent), &call)),
                "Header mismatch: Mcp-Param-Count header does not match arguments.count",
                "{other:?}"
            );
        }
        // A float-valued integer in the body still needs its header.
        let Value::Object(float) = json!({"region": "a", "count": 1.0, "dry": true}) else {
            unreachable!()
        };
        let float_call = MirroredFields {
            params: Some((&params, &float)),
            ..call
        };
        let float_headers = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "t"),
            ("mcp-param-region", "a"),
            ("mcp-param-dry", "true"),
        ]);
        assert_eq!(
            message(check_mirrored_headers(&float_headers, &float_call)),
            "Header mismatch: Mcp-Param-Count header is required"
        );
        sent.remove(4);
        assert_eq!(
            message(check_mirrored_headers(&headers(&sent), &call)),
            "Header mismatch: Mcp-Param-Count header is required"
        );
        let Value::Object(nulls) = json!({"region": null}) else {
            unreachable!()
        };
        let call = MirroredFields {
            params: Some((&params, &nulls)),
            ..call
        };
        assert_eq!(check_mirrored_headers(&headers(&sent[..3]), &call), Ok(()));
    }
}
