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

fn untyped_properties(schema: &Value, path: &str, out: &mut Vec<ManifestProblem>) {
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
                "property has no \"type\"; some clients reject or mistype it",
            );
        }
        untyped_properties(property, &property_path, out);
    }
}

fn tool_warnings(tool: &Value, path: &str, out: &mut Vec<ManifestProblem>) {
    if tool
        .get("name")
        .and_then(Value::as_str)
        .is_some_and(|name| !is_portable_name(name))
    {
        warn(
            out,
            format!("{path}.name"),
            "name is outside [A-Za-z0-9_-]{1,64}; some clients reject it",
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
            "description is missing; models choose tools by it",
        );
    }
    if let Some(schema) = tool.get("inputSchema") {
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            warn(
                out,
                format!("{path}.inputSchema"),
                "root has no \"type\": \"object\"; some clients reject it",
            );
        }
        untyped_properties(schema, &format!("{path}.inputSchema"), out);
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
    fn r5_portability_warnings_name_each_path() {
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
                "routes[0].tools[0].name: name is outside [A-Za-z0-9_-]{1,64}; some clients reject it",
                "routes[0].tools[0].description: description is missing; models choose tools by it",
                "routes[0].tools[0].inputSchema: root has no \"type\": \"object\"; some clients reject it",
                "routes[0].tools[0].inputSchema.properties.q: property has no \"type\"; some clients reject or mistype it",
            ]
        );
    }
}
