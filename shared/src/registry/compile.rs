//! Whole-manifest validation and compilation (CONTRACT R5, M, T1, T3).
//!
//! Every problem is collected with its JSON path (`routes[0].tools[3].inputSchema`); a manifest
//! with any problem is not served.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::snapshot::{Route, ServerInfo, Snapshot, Tool, ToolLookup};
use crate::invoke::ResultFormat;

/// Longest tool timeout a manifest may set, in ms (the Lambda maximum of 15 minutes).
pub const MAX_TOOL_TIMEOUT_MS: u64 = 900_000;

/// Public tool fields copied into `tools/list`, in this order (CONTRACT T1).
const PUBLIC_TOOL_FIELDS: [&str; 7] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "icons",
];

/// One manifest problem: the JSON path of the offending value and what is wrong (CONTRACT R5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestProblem {
    /// JSON path such as `routes[0].tools[3].inputSchema`; empty for the document root.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ManifestProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

#[derive(Default)]
struct Problems(Vec<ManifestProblem>);

impl Problems {
    fn add(&mut self, path: &str, message: impl Into<String>) {
        self.0.push(ManifestProblem {
            path: path.to_string(),
            message: message.into(),
        });
    }
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

/// Validates a manifest document (format version 1) and compiles it into a [`Snapshot`].
///
/// Accepts the multi-route form (`routes`) and the single-route form a Tool Service publishes
/// (top-level `tools`, optional `server` and `routeKey`).
///
/// # Errors
/// Every [`ManifestProblem`] found, each with its JSON path.
pub fn compile_manifest(document: &Value) -> Result<Snapshot, Vec<ManifestProblem>> {
    let mut problems = Problems::default();
    let Some(root) = document.as_object() else {
        problems.add("", "manifest must be a JSON object");
        return Err(problems.0);
    };
    match root.get("manifestVersion") {
        Some(Value::Number(n)) if n.as_u64() == Some(1) => {}
        None if root.contains_key("tools") => {}
        None => problems.add("manifestVersion", "is required (1)"),
        Some(_) => problems.add("manifestVersion", "must be 1"),
    }
    let mut snapshot = Snapshot {
        routes: HashMap::new(),
        single: None,
    };
    match (root.get("routes"), root.get("tools")) {
        (Some(_), Some(_)) => problems.add("", "give either 'routes' or 'tools', not both"),
        (None, None) => problems.add("", "'routes' (or 'tools' for a single route) is required"),
        (Some(Value::Array(routes)), None) => {
            let mut seen = HashSet::new();
            for (i, route) in routes.iter().enumerate() {
                let path = format!("routes[{i}]");
                let Some(route) = route.as_object() else {
                    problems.add(&path, "must be an object");
                    continue;
                };
                let key = match route.get("routeKey") {
                    Some(Value::String(key)) if is_route_key(key) => Some(key.clone()),
                    _ => {
                        problems.add(
                            &join(&path, "routeKey"),
                            "must be a string of 1-64 characters [A-Za-z0-9._-]",
                        );
                        None
                    }
                };
                if let Some(key) = &key
                    && !seen.insert(key.clone())
                {
                    problems.add(&join(&path, "routeKey"), format!("'{key}' is repeated"));
                }
                if let Some(compiled) = compile_route(route, key.clone(), &path, &mut problems)
                    && let Some(key) = key
                {
                    snapshot.routes.insert(key, Arc::new(compiled));
                }
            }
        }
        (Some(_), None) => problems.add("routes", "must be an array"),
        (None, Some(_)) => {
            let key = match root.get("routeKey") {
                None => None,
                Some(Value::String(key)) if is_route_key(key) => Some(key.clone()),
                Some(_) => {
                    problems.add(
                        "routeKey",
                        "must be a string of 1-64 characters [A-Za-z0-9._-]",
                    );
                    None
                }
            };
            snapshot.single = compile_route(root, key, "", &mut problems).map(Arc::new);
        }
    }
    if problems.0.is_empty() {
        Ok(snapshot)
    } else {
        Err(problems.0)
    }
}

/// `[A-Za-z0-9._-]{1,64}` (CONTRACT P3).
#[must_use]
pub fn is_route_key(key: &str) -> bool {
    (1..=64).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn is_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn optional_string(
    object: &Map<String, Value>,
    field: &str,
    path: &str,
    problems: &mut Problems,
) -> Option<String> {
    match object.get(field) {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            problems.add(&join(path, field), "must be a string");
            None
        }
    }
}

fn compile_route(
    route: &Map<String, Value>,
    key: Option<String>,
    path: &str,
    problems: &mut Problems,
) -> Option<Route> {
    let before = problems.0.len();
    let server = compile_server(
        route.get("server"),
        key.as_deref(),
        &join(path, "server"),
        problems,
    );
    let tools_path = join(path, "tools");
    let Some(tools) = route.get("tools").and_then(Value::as_array) else {
        problems.add(&tools_path, "must be an array");
        return None;
    };
    let mut versions_seen = HashSet::new();
    let mut active: Vec<(Arc<Tool>, &Value)> = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let tool_path = format!("{tools_path}[{i}]");
        if let Some((compiled, is_active)) = compile_tool(tool, &tool_path, problems) {
            if !versions_seen.insert((compiled.name.clone(), compiled.version.clone())) {
                problems.add(
                    &join(&tool_path, "_meta.version"),
                    format!(
                        "tool '{}' version '{}' is repeated",
                        compiled.name, compiled.version
                    ),
                );
            }
            if is_active {
                active.push((Arc::new(compiled), tool));
            }
        }
    }
    if problems.0.len() > before {
        return None;
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for (tool, _) in &active {
        *counts.entry(tool.name.as_str()).or_default() += 1;
    }
    let mut lookup = HashMap::new();
    let mut listed = Vec::new();
    for (tool, public) in &active {
        let n = counts[tool.name.as_str()];
        if n == 1 {
            lookup.insert(tool.name.clone(), ToolLookup::Active(Arc::clone(tool)));
            listed.push(PublicTool(public));
        } else {
            // CONTRACT T3: left out of the list, logged as a registry error at load.
            if !lookup.contains_key(&tool.name) {
                tracing::error!(
                    route = key.as_deref().unwrap_or(""),
                    tool = %tool.name,
                    active_versions = n,
                    "registry error: tool has several active versions; it is not listed and calls fail"
                );
            }
            lookup.insert(
                tool.name.clone(),
                ToolLookup::Conflict { active_versions: n },
            );
        }
    }
    // Serialized once from the manifest's own values, without copies (STYLE 10).
    let tools_list = serde_json::value::to_raw_value(&ToolsList { tools: listed }).ok()?;
    Some(Route {
        key,
        server,
        instructions: optional_string(route, "instructions", path, problems),
        tools: lookup,
        tools_list,
    })
}

fn compile_server(
    server: Option<&Value>,
    key: Option<&str>,
    path: &str,
    problems: &mut Problems,
) -> ServerInfo {
    let default_name = key.map_or_else(|| "mcp-gateway".to_string(), |k| format!("mcp-{k}"));
    let empty = Map::new();
    let object = match server {
        None => &empty,
        Some(Value::Object(object)) => object,
        Some(_) => {
            problems.add(path, "must be an object");
            &empty
        }
    };
    let name = optional_string(object, "name", path, problems).unwrap_or(default_name);
    let title = optional_string(object, "title", path, problems).unwrap_or_else(|| name.clone());
    let version = optional_string(object, "version", path, problems)
        .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_string());
    ServerInfo {
        name,
        title,
        version,
    }
}

fn compile_schema(
    schema: &Value,
    path: &str,
    problems: &mut Problems,
) -> Option<jsonschema::Validator> {
    let Some(object) = schema.as_object() else {
        problems.add(path, "must be a JSON Schema object");
        return None;
    };
    if object.get("type").is_some_and(|kind| kind != "object") {
        problems.add(path, "root must be \"type\": \"object\"");
        return None;
    }
    // Draft auto-detection: `$schema` when declared, JSON Schema 2020-12 otherwise.
    match jsonschema::validator_for(schema) {
        Ok(validator) => Some(validator),
        Err(error) => {
            problems.add(path, format!("does not compile: {error}"));
            None
        }
    }
}

fn compile_tool(tool: &Value, path: &str, problems: &mut Problems) -> Option<(Tool, bool)> {
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
    let input_validator = match object.get("inputSchema") {
        Some(schema) => compile_schema(schema, &join(path, "inputSchema"), problems),
        None => {
            problems.add(&join(path, "inputSchema"), "is required");
            None
        }
    };
    let output_validator = object
        .get("outputSchema")
        .and_then(|schema| compile_schema(schema, &join(path, "outputSchema"), problems));
    if object.get("annotations").is_some_and(|a| !a.is_object()) {
        problems.add(&join(path, "annotations"), "must be an object");
    }
    if object.get("icons").is_some_and(|a| !a.is_array()) {
        problems.add(&join(path, "icons"), "must be an array");
    }
    let meta_path = join(path, "_meta");
    let empty = Map::new();
    let meta = match object.get("_meta") {
        Some(Value::Object(meta)) => meta,
        _ => {
            problems.add(&meta_path, "must be an object with the tool's endpoint");
            &empty
        }
    };
    let version = optional_string(meta, "version", &meta_path, problems).unwrap_or_default();
    let active = match meta.get("active") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            problems.add(&join(&meta_path, "active"), "must be a boolean");
            true
        }
    };
    let endpoint = match meta.get("endpoint") {
        Some(Value::String(url)) if is_absolute_http_url(url) => url.clone(),
        _ if std::ptr::eq(meta, &empty) => String::new(),
        _ => {
            problems.add(
                &join(&meta_path, "endpoint"),
                "must be an absolute http(s) URL",
            );
            String::new()
        }
    };
    let method = match meta.get("method") {
        None => http::Method::POST,
        Some(Value::String(m)) => match m.to_ascii_uppercase().as_str() {
            "POST" => http::Method::POST,
            "PUT" => http::Method::PUT,
            "PATCH" => http::Method::PATCH,
            "GET" => http::Method::GET,
            "DELETE" => http::Method::DELETE,
            _ => {
                problems.add(
                    &join(&meta_path, "method"),
                    "must be one of POST, PUT, PATCH, GET, DELETE",
                );
                http::Method::POST
            }
        },
        Some(_) => {
            problems.add(&join(&meta_path, "method"), "must be a string");
            http::Method::POST
        }
    };
    let timeout_ms = match meta.get("timeoutMs") {
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
    let result_format = match meta.get("resultFormat") {
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
    if problems.0.len() > before {
        return None;
    }
    Some((
        Tool {
            name,
            version,
            endpoint,
            method,
            timeout_ms,
            input_validator: input_validator?,
            output_validator,
            result_format,
        },
        active,
    ))
}

/// A manifest tool as `tools/list` shows it: the public fields only, in a fixed order
/// (CONTRACT T1).
struct PublicTool<'a>(&'a Value);

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

#[derive(serde::Serialize)]
struct ToolsList<'a> {
    tools: Vec<PublicTool<'a>>,
}

fn is_absolute_http_url(url: &str) -> bool {
    reqwest::Url::parse(url).is_ok_and(|u| {
        matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(name: &str, version: &str, active: bool) -> Value {
        json!({
            "name": name,
            "inputSchema": {"type": "object"},
            "_meta": {"version": version, "active": active, "endpoint": "http://127.0.0.1:9/x"}
        })
    }

    #[test]
    fn r5_every_problem_is_reported_with_its_json_path() {
        let manifest = json!({
            "manifestVersion": 1,
            "routes": [{
                "routeKey": "core",
                "tools": [
                    {"name": "bad name!", "inputSchema": {"type": "string"},
                     "_meta": {"endpoint": "ftp://x", "timeoutMs": 0}},
                    {"name": "ok", "inputSchema": {"type": "object", "properties": {"a": {"type": 5}}},
                     "_meta": {"endpoint": "http://127.0.0.1:9/x"}}
                ]
            }, {"routeKey": "core", "tools": []}]
        });
        let problems: Vec<String> = compile_manifest(&manifest)
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect();
        let has = |prefix: &str| problems.iter().any(|p| p.starts_with(prefix));
        assert!(
            has("routes[0].tools[0].name: must be a string"),
            "{problems:?}"
        );
        assert!(
            has("routes[0].tools[0].inputSchema: root must be \"type\": \"object\""),
            "{problems:?}"
        );
        assert!(
            has("routes[0].tools[0]._meta.endpoint: must be an absolute http(s) URL"),
            "{problems:?}"
        );
        assert!(
            has("routes[0].tools[0]._meta.timeoutMs: must be a whole number"),
            "{problems:?}"
        );
        assert!(
            has("routes[0].tools[1].inputSchema: does not compile"),
            "{problems:?}"
        );
        assert!(
            has("routes[1].routeKey: 'core' is repeated"),
            "{problems:?}"
        );
    }

    #[test]
    fn r5_repeated_name_and_version_is_rejected() {
        let manifest = json!({"tools": [tool("a", "1", true), tool("a", "1", false)]});
        let problems = compile_manifest(&manifest).unwrap_err();
        assert_eq!(problems[0].path, "tools[1]._meta.version");
    }

    #[test]
    fn t3_two_active_versions_are_not_listed_and_resolve_to_a_conflict() {
        let manifest = json!({"tools": [tool("a", "1", true), tool("a", "2", true), tool("b", "1", true), tool("c", "1", false)]});
        let snapshot = compile_manifest(&manifest).unwrap();
        let route = snapshot.fixed_route("core").unwrap();
        let list: Value = serde_json::from_str(route.tools_list_result().get()).unwrap();
        assert_eq!(
            list,
            json!({"tools": [{"name": "b", "inputSchema": {"type": "object"}}]})
        );
        assert!(matches!(
            route.tool("a"),
            Some(ToolLookup::Conflict { active_versions: 2 })
        ));
        assert!(route.tool("c").is_none());
    }

    #[test]
    fn r5_result_format_is_json_or_mcp_and_output_schema_is_compiled_at_load() {
        let mut mcp = tool("m", "1", true);
        mcp["_meta"]["resultFormat"] = json!("mcp");
        mcp["outputSchema"] = json!({"type": "object", "required": ["n"]});
        let snapshot = compile_manifest(&json!({"tools": [mcp, tool("j", "1", true)]})).unwrap();
        let route = snapshot.fixed_route("core").unwrap();
        let Some(ToolLookup::Active(m)) = route.tool("m") else {
            panic!("m is active")
        };
        assert_eq!(m.result_format, ResultFormat::Mcp);
        assert!(
            m.output_validator
                .as_ref()
                .is_some_and(|v| !v.is_valid(&json!({})))
        );
        let Some(ToolLookup::Active(j)) = route.tool("j") else {
            panic!("j is active")
        };
        assert_eq!(j.result_format, ResultFormat::Json);
        assert!(j.output_validator.is_none());

        let mut bad = tool("b", "1", true);
        bad["_meta"]["resultFormat"] = json!("xml");
        bad["outputSchema"] = json!({"type": "array"});
        let problems: Vec<String> = compile_manifest(&json!({"tools": [bad]}))
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            problems,
            [
                "tools[0].outputSchema: root must be \"type\": \"object\"",
                "tools[0]._meta.resultFormat: must be \"json\" or \"mcp\""
            ]
        );
    }
}
