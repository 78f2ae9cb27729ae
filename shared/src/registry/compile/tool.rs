//! One manifest tool (CONTRACT M, R5, T1): its name, schemas (compiled to validators), `_meta`
//! (endpoint, method, timeout, result format, version, active; [`super::meta`]), its
//! `x-mcp-header` annotations ([`super::header_params`]) and its public `tools/list` entry.

use serde_json::Value;

use super::header_params::header_params;
use super::meta::{MetaInput, compile_meta};
use super::problems::{Problems, join, optional_string};
use crate::registry::{LazyValidator, Tool};

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
        object
            .get("_meta")
            .and_then(Value::as_object)
            .map(MetaInput::Object),
        object.get("inputSchema"),
        path,
        problems,
        &mut super::origins::Origins::default(),
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
            output_schema: output_schema.map(Box::new),
            result_format: meta.result_format,
            header_params,
            rest: meta.rest.map(Box::new),
            auth: meta.auth.map(Box::new),
            pinned: meta.pinned,
            task: meta.task.map(Box::new),
        },
        meta.active,
    ))
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
