//! Whole-manifest validation and compilation (CONTRACT R5, M, T1, T3): the document's form
//! (`routes` or the single-route `tools`), each route's key, server info and tools, and each
//! route's `tools/list` entries and lookup by name.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use foldhash::fast::RandomState as FastHash;
use serde_json::{Map, Value};

use super::authorization::compile_authorization;
use super::problems::{ManifestProblem, Problems, join, optional_string};
use super::threads::{CompiledTool, ToolsInput, compile_tools};
use super::tool_search::compile_tool_search;
use crate::registry::search::{EntryAt, SEARCH_TOOL_NAME, SearchMode, ToolSearch};
use crate::registry::snapshot::ListEntry;
use crate::registry::{Route, ServerInfo, Snapshot, ToolLookup};
use crate::routing::is_route_key;

/// Validates a manifest document (format version 1) and compiles it into a [`Snapshot`].
///
/// Accepts the multi-route form (`routes`) and the single-route form a Tool Service publishes
/// (top-level `tools`, optional `server` and `routeKey`).
///
/// # Errors
/// Every [`ManifestProblem`] found, each with its JSON path.
pub fn compile_manifest(document: &Value) -> Result<Snapshot, Vec<ManifestProblem>> {
    compile_manifest_with(document, CompiledTools::default())
}

/// Each `tools` array's tools, compiled (their places in the document hold empty arrays): per
/// route of `routes`, and of the single-route form.
#[derive(Default)]
pub(super) struct CompiledTools {
    pub(super) routes: Vec<Option<Vec<CompiledTool>>>,
    pub(super) single: Option<Vec<CompiledTool>>,
}

pub(super) fn compile_manifest_with(
    document: &Value,
    mut compiled: CompiledTools,
) -> Result<Snapshot, Vec<ManifestProblem>> {
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
                if let Some(compiled) = compile_route(
                    route,
                    compiled.routes.get_mut(i).and_then(Option::take),
                    key.clone(),
                    &path,
                    &mut problems,
                ) && let Some(key) = key
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
            snapshot.single =
                compile_route(root, compiled.single.take(), key, "", &mut problems).map(Arc::new);
        }
    }
    if problems.0.is_empty() {
        Ok(snapshot)
    } else {
        Err(problems.0)
    }
}

fn compile_route(
    route: &Map<String, Value>,
    compiled: Option<Vec<CompiledTool>>,
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
    let mut outcomes = match (compiled, route.get("tools").and_then(Value::as_array)) {
        (Some(compiled), _) => compiled,
        (None, Some(parsed)) => compile_tools(ToolsInput::Parsed(parsed), &tools_path),
        (None, None) => {
            problems.add(&tools_path, "must be an array");
            return None;
        }
    };
    let mut versions_seen = HashSet::with_capacity_and_hasher(outcomes.len(), FastHash::default());
    // The active tools with a `tools/list` entry, as indices into `outcomes`.
    let mut active: Vec<usize> = Vec::with_capacity(outcomes.len());
    for (i, outcome) in outcomes.iter_mut().enumerate() {
        problems.0.append(&mut outcome.problems);
        let outcome = &*outcome;
        if let Some((compiled, is_active)) = &outcome.tool {
            if !versions_seen.insert((compiled.name.as_str(), compiled.version.as_str())) {
                problems.add(
                    &format!("{tools_path}[{i}]._meta.version"),
                    format!(
                        "tool '{}' version '{}' is repeated",
                        compiled.name, compiled.version
                    ),
                );
            }
            if *is_active && outcome.public.is_some() {
                active.push(i);
            }
        }
    }
    // CONTRACT S1: the route's search tool, whose name no tool of the route may take.
    let search_path = join(path, "toolSearch");
    let search = compile_tool_search(route.get("toolSearch"), &search_path, problems);
    if search.is_some()
        && outcomes.iter().any(|outcome| {
            (outcome.tool.as_ref()).is_some_and(|(tool, _)| tool.name == SEARCH_TOOL_NAME)
        })
    {
        problems.add(
            &search_path,
            format!(
                "the route has a tool named '{SEARCH_TOOL_NAME}', the name of its search tool: \
                 rename that tool or leave toolSearch out"
            ),
        );
    }
    if problems.0.len() > before {
        return None;
    }
    let tool_at = |i: usize| outcomes[i].tool.as_ref().map(|(tool, _)| tool);
    // One lookup per name: the active tool, or, for a name with several active versions, the
    // conflict (CONTRACT T3).
    let mut lookup: HashMap<String, ToolLookup, FastHash> =
        HashMap::with_capacity_and_hasher(active.len(), FastHash::default());
    let mut conflicts = false;
    for tool in active.iter().filter_map(|&i| tool_at(i)) {
        match lookup.entry(tool.name.clone()) {
            Entry::Vacant(entry) => {
                entry.insert(ToolLookup::Active(Arc::clone(tool)));
            }
            Entry::Occupied(mut entry) => {
                conflicts = true;
                let active_versions = match entry.get() {
                    ToolLookup::Active(_) => 2,
                    ToolLookup::Conflict { active_versions } => active_versions + 1,
                };
                entry.insert(ToolLookup::Conflict { active_versions });
            }
        }
    }
    if conflicts {
        let mut logged = HashSet::new();
        active.retain(|&i| {
            let Some(tool) = tool_at(i) else { return false };
            match &lookup[&tool.name] {
                ToolLookup::Active(_) => true,
                // CONTRACT T3: left out of the list, logged as a registry error at load.
                ToolLookup::Conflict { active_versions } => {
                    if logged.insert(tool.name.as_str()) {
                        tracing::error!(
                            route = key.as_deref().unwrap_or(""),
                            tool = %tool.name,
                            active_versions,
                            "registry error: tool has several active versions; it is not listed and calls fail"
                        );
                    }
                    false
                }
            }
        });
    }
    // CONTRACT Z1, Z8: the policies against the schema of the tools callable on the route.
    let policies = compile_authorization(route, key.as_deref(), path, &active, &outcomes, problems);
    if problems.0.len() > before {
        return None;
    }
    // Each listed tool's entry was written once, when it was compiled (STYLE 10): its schemas
    // as the manifest's own texts; the route keeps the entries and `tools/list` writes them out
    // in turn. Joined into one text here, they would be copied once more into fresh memory,
    // which a cold start pays for in page faults.
    let (tools_list, search) = match search {
        None => {
            let list = active
                .iter()
                .filter_map(|&i| outcomes[i].public.take())
                .collect();
            (list, None)
        }
        Some(search) => searched_list(search, &active, &mut outcomes),
    };
    Some(Route {
        key,
        server,
        instructions: optional_string(route, "instructions", path, problems),
        tools: lookup,
        tools_list,
        list_digest: crate::registry::list_page::ListDigest::default(),
        search,
        policies,
    })
}

/// CONTRACT S2: the list of a route with a search tool, `search_tools` first, then every tool
/// (mode `add`) or the pinned ones (mode `only`); and the search over all of them, in manifest
/// order.
#[expect(
    clippy::vec_box,
    reason = "each entry stays in the box its tool's compilation wrote it in (STYLE 10)"
)]
fn searched_list(
    search: (SearchMode, usize),
    active: &[usize],
    outcomes: &mut [CompiledTool],
) -> (Vec<Box<ListEntry>>, Option<ToolSearch>) {
    let mut list = Vec::with_capacity(active.len() + 1);
    list.push(Box::new(ToolSearch::list_entry()));
    let mut unlisted = Vec::new();
    let mut documents = Vec::with_capacity(active.len());
    for &i in active {
        let pinned = (outcomes[i].tool.as_ref()).is_some_and(|(tool, _)| tool.pinned);
        let Some(entry) = outcomes[i].public.take() else {
            continue;
        };
        let index = |entries: &[Box<ListEntry>]| u32::try_from(entries.len()).unwrap_or(u32::MAX);
        let at = if search.0 == SearchMode::Add || pinned {
            let at = EntryAt::Listed(index(&list));
            list.push(entry);
            at
        } else {
            let at = EntryAt::Unlisted(index(&unlisted));
            unlisted.push(entry);
            at
        };
        documents.push((at, outcomes[i].searched.take()));
    }
    let search = ToolSearch::new(search, unlisted, documents);
    (list, Some(search))
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
