//! The manifest the import writes (CONTRACT M): a `routes` manifest of one route, or an existing
//! manifest with this route's imported tools merged in (`--merge`); checked as `validate` checks
//! (R5, M1) and against the size limit before anything is written.

use mcp_gateway::registry::compile_manifest;
use serde_json::{Value, json};

/// What `--merge` changed in the existing manifest.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct MergeCount {
    /// Imported tools that replaced the active entries of their name.
    pub(crate) replaced: usize,
    /// Imported tools added.
    pub(crate) added: usize,
    /// Inactive entries (`_meta.active: false`, kept for rollback) of the imported tools' names
    /// left as they were.
    pub(crate) inactive_kept: usize,
}

/// A `routes` manifest of one route: `key`, a server from the document's `info`, `tools`.
pub(crate) fn single_route(key: &str, info: &Value, tools: Vec<Value>) -> Value {
    let title = info
        .get("title")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .unwrap_or(key);
    json!({
        "manifestVersion": 1,
        "routes": [{
            "routeKey": key,
            "server": {
                "name": server_name(title, key),
                "title": title,
                "version": info_version(info),
            },
            "tools": Value::Array(tools),
        }],
    })
}

/// `info.version` as text (a YAML number such as `1.0` included); `0.0.0` without one.
pub(crate) fn info_version(info: &Value) -> String {
    match info.get("version") {
        Some(Value::String(version)) if !version.trim().is_empty() => version.trim().to_string(),
        Some(Value::Number(version)) => version.to_string(),
        _ => "0.0.0".into(),
    }
}

/// The server name: the title as a lower-case slug (`Swagger Petstore` → `swagger-petstore`),
/// or `mcp-<KEY>` when nothing of it is left.
fn server_name(title: &str, key: &str) -> String {
    let mut name = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c.to_ascii_lowercase());
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    let name = name.trim_end_matches('-');
    if name.is_empty() {
        format!("mcp-{key}")
    } else {
        name.chars().take(64).collect()
    }
}

/// `existing` with the imported route merged in: in a `routes` manifest, the route `key`'s active
/// tools of the same names replaced (inactive versions kept) and the others added (a route it lacks is added whole); in a
/// single-route `tools` manifest, its tools likewise.
///
/// # Errors
/// Why `existing` is no manifest to merge into.
pub(crate) fn merge(
    mut existing: Value,
    key: &str,
    mut imported: Value,
) -> Result<(Value, MergeCount), String> {
    let Some(object) = existing.as_object_mut() else {
        return Err("it is not a JSON object".into());
    };
    let mut imported_route = imported
        .get_mut("routes")
        .and_then(|routes| routes.get_mut(0))
        .map(Value::take)
        .unwrap_or_default();
    let tools = match imported_route.get_mut("tools").map(Value::take) {
        Some(Value::Array(tools)) => tools,
        _ => Vec::new(),
    };
    if let Some(Value::Array(routes)) = object.get_mut("routes") {
        let route = routes
            .iter_mut()
            .find(|route| route.get("routeKey").and_then(Value::as_str) == Some(key));
        if let Some(route) = route {
            let count = merge_tools(route_tools(route)?, tools);
            return Ok((existing, count));
        }
        let added = tools.len();
        imported_route["tools"] = Value::Array(tools);
        routes.push(imported_route);
        return Ok((
            existing,
            MergeCount {
                added,
                ..MergeCount::default()
            },
        ));
    }
    if object.contains_key("tools") {
        let count = merge_tools(route_tools(&mut existing)?, tools);
        return Ok((existing, count));
    }
    Err("it has neither 'routes' nor 'tools'".into())
}

/// A route's (or a single-route manifest's) `tools` array.
fn route_tools(route: &mut Value) -> Result<&mut Vec<Value>, String> {
    let Some(object) = route.as_object_mut() else {
        return Err("a route is not an object".into());
    };
    match object
        .entry("tools")
        .or_insert_with(|| Value::Array(Vec::new()))
    {
        Value::Array(tools) => Ok(tools),
        _ => Err("a route's 'tools' is not an array".into()),
    }
}

/// Whether a tool entry is an inactive version (`_meta.active: false`), kept for rollback.
fn is_inactive(tool: &Value) -> bool {
    tool.pointer("/_meta/active") == Some(&Value::Bool(false))
}

/// Each imported tool replaces the active entries of its name (in the first one's place), and
/// an inactive one of its own version (a manifest holds each version of a name once); inactive
/// versions of other versions are kept. A tool that replaces nothing is added after the
/// entries of its name, or at the end.
fn merge_tools(existing: &mut Vec<Value>, imported: Vec<Value>) -> MergeCount {
    let mut count = MergeCount::default();
    for tool in imported {
        let name = tool.get("name").cloned();
        let version = tool.pointer("/_meta/version").cloned();
        let same_name = |t: &Value| t.get("name") == name.as_ref();
        let replaced = |t: &Value| {
            same_name(t) && (!is_inactive(t) || t.pointer("/_meta/version") == version.as_ref())
        };
        count.inactive_kept += existing
            .iter()
            .filter(|t| same_name(t) && !replaced(t))
            .count();
        if let Some(first) = existing.iter().position(replaced) {
            let mut i = 0;
            existing.retain(|t| {
                i += 1;
                i - 1 == first || !replaced(t)
            });
            existing[first] = tool;
            count.replaced += 1;
        } else {
            let at = existing
                .iter()
                .rposition(same_name)
                .map_or(existing.len(), |last| last + 1);
            existing.insert(at, tool);
            count.added += 1;
        }
    }
    count
}

/// The manifest's text, once the gateway's own load checks accept it (CONTRACT R5, M1) and it
/// is within `max_bytes`.
///
/// # Errors
/// One line per problem.
pub(crate) fn checked_text(
    manifest: &Value,
    key: &str,
    max_bytes: usize,
) -> Result<String, Vec<String>> {
    let snapshot = compile_manifest(manifest).map_err(|problems| {
        problems
            .into_iter()
            .map(|p| {
                format!(
                    "the manifest does not validate (an importer bug if it is not a --merge manifest's): {p}"
                )
            })
            .collect::<Vec<_>>()
    })?;
    if let Some(problem) = crate::route_problem(&snapshot, key) {
        return Err(vec![format!(
            "the manifest does not serve the route: {problem}"
        )]);
    }
    let mut text = serde_json::to_string_pretty(manifest).map_err(|e| vec![e.to_string()])?;
    text.push('\n');
    if text.len() > max_bytes {
        return Err(vec![format!(
            "the manifest would be {} bytes, over the limit of {max_bytes} bytes (--max-bytes)",
            text.len()
        )]);
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(tools: &[Value]) -> Vec<&str> {
        tools.iter().filter_map(|t| t["name"].as_str()).collect()
    }

    fn tool(name: &str, description: &str) -> Value {
        json!({"name": name, "description": description, "inputSchema": {"type": "object"},
               "_meta": {"endpoint": "https://x.test/a"}})
    }

    #[test]
    fn merge_replaces_same_names_and_keeps_other_tools_and_routes() {
        let existing = json!({"manifestVersion": 1, "routes": [
            {"routeKey": "other", "tools": [tool("a", "other route")]},
            {"routeKey": "pets", "server": {"name": "mine"},
             "tools": [tool("keep", "kept"), tool("getPet", "old"), tool("getPet", "old v2")]}
        ]});
        let imported = single_route(
            "pets",
            &json!({"title": "T", "version": "2"}),
            vec![tool("getPet", "new"), tool("addPet", "new")],
        );
        let (merged, count) = merge(existing, "pets", imported).unwrap();
        assert_eq!(
            count,
            MergeCount {
                replaced: 1,
                added: 1,
                inactive_kept: 0
            }
        );
        assert_eq!(
            merged["routes"][0]["tools"][0]["description"],
            "other route"
        );
        let tools = merged["routes"][1]["tools"].as_array().unwrap();
        assert_eq!(names(tools), ["keep", "getPet", "addPet"]);
        assert_eq!(tools[1]["description"], "new");
        assert_eq!(merged["routes"][1]["server"]["name"], "mine");
    }

    #[test]
    fn merge_adds_a_missing_route_and_merges_a_single_route_manifest() {
        let imported = || {
            single_route(
                "pets",
                &json!({"title": "Pet Store!"}),
                vec![tool("t", "new")],
            )
        };
        let (merged, count) = merge(
            json!({"routes": [{"routeKey": "other", "tools": []}]}),
            "pets",
            imported(),
        )
        .unwrap();
        assert_eq!(count.added, 1);
        assert_eq!(merged["routes"][1]["routeKey"], "pets");
        assert_eq!(merged["routes"][1]["server"]["name"], "pet-store");
        assert_eq!(merged["routes"][1]["tools"][0]["name"], "t");

        let (merged, count) = merge(
            json!({"tools": [tool("t", "old"), tool("u", "old")]}),
            "pets",
            imported(),
        )
        .unwrap();
        assert_eq!(count.replaced, 1);
        assert_eq!(names(merged["tools"].as_array().unwrap()), ["t", "u"]);
        assert!(merge(json!({"x": 1}), "pets", imported()).is_err());
    }

    #[test]
    fn merge_keeps_inactive_versions_and_replaces_only_active_ones() {
        let versioned = |name: &str, version: &str, active: bool, description: &str| {
            json!({"name": name, "description": description, "inputSchema": {"type": "object"},
                   "_meta": {"version": version, "active": active, "endpoint": "https://x.test/a"}})
        };
        let existing = json!({"manifestVersion": 1, "routes": [{"routeKey": "pets", "tools": [
            versioned("getPet", "1.0.0", false, "rollback"),
            versioned("getPet", "2.0.0", true, "current"),
            versioned("addPet", "1.0.0", false, "old only"),
            versioned("delPet", "3.0.0", false, "same version, inactive"),
            versioned("other", "1.0.0", true, "kept")
        ]}]});
        let imported = single_route(
            "pets",
            &json!({"version": "3.0.0"}),
            vec![
                versioned("getPet", "3.0.0", true, "new"),
                versioned("addPet", "3.0.0", true, "new"),
                versioned("delPet", "3.0.0", true, "new"),
            ],
        );
        let (merged, count) = merge(existing, "pets", imported).unwrap();
        assert_eq!(
            count,
            MergeCount {
                replaced: 2,
                added: 1,
                inactive_kept: 2
            }
        );
        let tools = merged["routes"][0]["tools"].as_array().unwrap();
        let summary: Vec<(&str, &str, &str)> = tools
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap(),
                    t["_meta"]["version"].as_str().unwrap(),
                    t["description"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("getPet", "1.0.0", "rollback"),
                ("getPet", "3.0.0", "new"),
                ("addPet", "1.0.0", "old only"),
                ("addPet", "3.0.0", "new"),
                ("delPet", "3.0.0", "new"),
                ("other", "1.0.0", "kept"),
            ]
        );
        assert!(checked_text(&merged, "pets", 1 << 20).is_ok());
    }

    #[test]
    fn the_text_is_refused_over_the_size_limit() {
        let manifest = single_route("pets", &json!({}), vec![tool("t", "x")]);
        assert!(checked_text(&manifest, "pets", 1 << 20).is_ok());
        let error = checked_text(&manifest, "pets", 10).unwrap_err();
        assert!(
            error[0].ends_with("over the limit of 10 bytes (--max-bytes)"),
            "{error:?}"
        );
    }
}
