//! A tool's `x-mcp-header` annotations (CONTRACT N6): the arguments a modern `tools/call`
//! repeats in `Mcp-Param-<Name>` headers (N2), read from its `inputSchema`.

use serde_json::Value;

use super::problems::{Problems, join};
use super::token::is_token;
use crate::policy::HeaderParam;

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
