//! Portability warnings: what common MCP clients reject although the spec allows it
//! (CONTRACT R5). Warnings never stop a manifest from loading; the validation command prints
//! them.

use serde_json::Value;

use super::ManifestProblem;

fn warn(out: &mut Vec<ManifestProblem>, path: String, message: &str) {
    out.push(ManifestProblem {
        path,
        message: message.into(),
    });
}

fn is_portable_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
}

fn untyped_properties(schema: &Value, path: &str, tool: &str, out: &mut Vec<ManifestProblem>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        let property_path = format!("{path}.properties.{name}");
        let typed = ["type", "$ref", "enum", "const", "anyOf", "oneOf", "allOf"]
            .iter()
            .any(|k| property.get(*k).is_some());
        if !typed {
            warn(
                out,
                property_path.clone(),
                &format!("{tool}property has no \"type\"; some clients reject or mistype it"),
            );
        }
        untyped_properties(property, &property_path, tool, out);
    }
}

/// Every warning of a tool names it (`tool 'x': …`), so that a long manifest's report can be
/// read without counting array indexes.
fn tool_warnings(tool: &Value, path: &str, out: &mut Vec<ManifestProblem>) {
    let name = tool.get("name").and_then(Value::as_str);
    let label = name.map(|n| format!("tool '{n}': ")).unwrap_or_default();
    if let Some(name) = name.filter(|name| !is_portable_name(name)) {
        warn(
            out,
            format!("{path}.name"),
            &format!(
                "tool '{name}': name is outside [A-Za-z0-9_-]{{1,64}}; some clients reject it"
            ),
        );
    }
    if tool
        .get("description")
        .and_then(Value::as_str)
        .is_none_or(|d| d.trim().is_empty())
    {
        warn(
            out,
            format!("{path}.description"),
            &format!("{label}description is missing; models choose tools by it"),
        );
    }
    if let Some(schema) = tool.get("inputSchema") {
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            warn(
                out,
                format!("{path}.inputSchema"),
                &format!("{label}root has no \"type\": \"object\"; some clients reject it"),
            );
        }
        untyped_properties(schema, &format!("{path}.inputSchema"), &label, out);
    }
}

/// The portability warnings of a manifest document, each with its JSON path.
#[must_use]
pub fn portability_warnings(document: &Value) -> Vec<ManifestProblem> {
    let mut out = Vec::new();
    let mut routes = Vec::new();
    if let Some(list) = document.get("routes").and_then(Value::as_array) {
        routes.extend(
            list.iter()
                .enumerate()
                .map(|(i, r)| (r, format!("routes[{i}]."))),
        );
    } else {
        routes.push((document, String::new()));
    }
    for (route, prefix) in routes {
        if let Some(tools) = route.get("tools").and_then(Value::as_array) {
            for (i, tool) in tools.iter().enumerate() {
                tool_warnings(tool, &format!("{prefix}tools[{i}]"), &mut out);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn r5_portability_warnings_name_each_path_and_tool() {
        let doc = json!({"routes": [{"tools": [{
            "name": "search.v2",
            "inputSchema": {"properties": {"q": {"description": "x"}, "n": {"type": "integer"}}},
        }]}]});
        let warnings: Vec<String> = portability_warnings(&doc)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            warnings,
            [
                "routes[0].tools[0].name: tool 'search.v2': name is outside [A-Za-z0-9_-]{1,64}; some clients reject it",
                "routes[0].tools[0].description: tool 'search.v2': description is missing; models choose tools by it",
                "routes[0].tools[0].inputSchema: tool 'search.v2': root has no \"type\": \"object\"; some clients reject it",
                "routes[0].tools[0].inputSchema.properties.q: tool 'search.v2': property has no \"type\"; some clients reject or mistype it",
            ]
        );
    }
}
