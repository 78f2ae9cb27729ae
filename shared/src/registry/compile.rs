//! Whole-manifest validation and compilation (CONTRACT R5, M, T1, T3).
//!
//! Every problem is collected with its JSON path (`routes[0].tools[3].inputSchema`); a manifest
//! with any problem is not served.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
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

/// Starts building, on a thread of its own, the JSON Schema 2020-12 meta-schema validator that
/// checks every `inputSchema` and `outputSchema` before it compiles (CONTRACT R5). Built on
/// first use, it would hold up the first tool's compilation at each cold start by about 1 ms
/// (0.7-1.7 ms measured); started early it overlaps the process start and the manifest's fetch
/// and first pass. Once per process: later calls return at once. A thread that cannot be
/// started changes nothing: the validator is then built on first use, as before.
pub fn prepare_schema_checks() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new()
            .name("schema-checks".into())
            .spawn(|| {
                // Any schema but `{}` or a boolean, which are valid without the meta-schema.
                let _ = jsonschema::meta::is_valid(&serde_json::json!({"type": "object"}));
            });
    });
}

/// Validates a manifest document (format version 1) and compiles it into a [`Snapshot`].
///
/// Accepts the multi-route form (`routes`) and the single-route form a Tool Service publishes
/// (top-level `tools`, optional `server` and `routeKey`).
///
/// # Errors
/// Every [`ManifestProblem`] found, each with its JSON path.
pub fn compile_manifest(document: &Value) -> Result<Snapshot, Vec<ManifestProblem>> {
    compile_manifest_with(document, &RawTools::default())
}

/// The `tools` arrays a first pass over the manifest text kept as raw JSON texts (their places
/// in the document hold empty arrays): per route of `routes`, and of the single-route form.
#[derive(Default)]
struct RawTools<'a> {
    routes: Vec<Option<Vec<&'a RawValue>>>,
    single: Option<Vec<&'a RawValue>>,
}

/// A manifest's text compiled with its tools parsed on the compiling threads: one pass over
/// the text parses the document with each `tools` array's elements kept as raw JSON text, so
/// that parsing, compiling and freeing the tools (nearly all of a large manifest) run in
/// parallel (see `compile_tools`). `None` when the text is not JSON or does not have the shape
/// of a manifest (an object, `routes` an array of objects): the caller then parses and
/// compiles it whole, which gives the same problems in the same words.
pub(crate) fn compile_manifest_text(
    bytes: &[u8],
) -> Option<Result<Snapshot, Vec<ManifestProblem>>> {
    let IfObject(Some(root)) = serde_json::from_slice::<IfObject<Fields<'_, true>>>(bytes).ok()?
    else {
        return None;
    };
    let Fields {
        mut document,
        tools: single,
        routes,
    } = root;
    let mut raw = RawTools {
        single,
        ..RawTools::default()
    };
    match routes {
        None => {}
        Some(IfArray(Some(routes))) => {
            let mut parsed = Vec::with_capacity(routes.len());
            for route in routes {
                let IfObject(Some(route)) = route else {
                    return None;
                };
                parsed.push(Value::Object(route.document));
                raw.routes.push(route.tools);
            }
            document.insert("routes".into(), Value::Array(parsed));
        }
        Some(IfArray(None)) => return None,
    }
    Some(compile_manifest_with(&Value::Object(document), &raw))
}

/// An object of a manifest text (the root, or a route of `routes`) as the one pass reads it:
/// its fields parsed, except a `tools` array, kept as its elements' raw texts (its place in
/// `document` holds an empty array), and at the root `routes`. A `tools` that is not an array
/// is kept as `null`: the compiler reads only that it is there and not an array. A field given
/// twice keeps its last value, as `serde_json::Value` does.
struct Fields<'a, const ROOT: bool> {
    document: Map<String, Value>,
    tools: Option<Vec<&'a RawValue>>,
    /// The root's `routes`; always `None` in a route.
    routes: Option<IfArray<IfObject<Fields<'a, false>>>>,
}

impl<'de, const ROOT: bool> Fields<'de, ROOT> {
    fn read<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut fields = Fields {
            document: Map::new(),
            tools: None,
            routes: None,
        };
        while let Some(key) = map.next_key::<String>()? {
            if key == "tools" {
                let IfArray(tools) = map.next_value::<IfArray<&'de RawValue>>()?;
                let placeholder = if tools.is_some() {
                    Value::Array(Vec::new())
                } else {
                    Value::Null
                };
                fields.tools = tools;
                fields.document.insert(key, placeholder);
            } else if ROOT && key == "routes" {
                fields.routes = Some(map.next_value()?);
            } else {
                let value = map.next_value::<Value>()?;
                fields.document.insert(key, value);
            }
        }
        Ok(fields)
    }
}

/// `Some` when the JSON value is an object (read as [`Fields`]), `None` (the value skipped)
/// when it is anything else.
struct IfObject<T>(Option<T>);

/// `Some` of the elements when the JSON value is an array, `None` (the value skipped) when it is
/// anything else.
struct IfArray<T>(Option<Vec<T>>);

/// The scalar `visit_*` methods of a visitor that answers `$none` for every scalar.
macro_rules! scalars_are {
    ($none:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($none)
        }
    };
}

/// The manifest root (`ROOT`, the only object with `routes`) or a route of `routes`.
impl<'de, const ROOT: bool> Deserialize<'de> for IfObject<Fields<'de, ROOT>> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<const ROOT: bool>;
        impl<'de, const ROOT: bool> Visitor<'de> for ObjectVisitor<ROOT> {
            type Value = IfObject<Fields<'de, ROOT>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                Fields::read(map).map(|fields| IfObject(Some(fields)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(IfObject(None))
            }
            scalars_are!(IfObject(None));
        }
        deserializer.deserialize_any(ObjectVisitor::<ROOT>)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for IfArray<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ArrayVisitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ArrayVisitor<T> {
            type Value = IfArray<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut elements = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(element) = seq.next_element()? {
                    elements.push(element);
                }
                Ok(IfArray(Some(elements)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(IfArray(None))
            }
            scalars_are!(IfArray(None));
        }
        deserializer.deserialize_any(ArrayVisitor(std::marker::PhantomData))
    }
}

fn compile_manifest_with(
    document: &Value,
    raw: &RawTools<'_>,
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
                    raw.routes.get(i).and_then(Option::as_deref),
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
                compile_route(root, raw.single.as_deref(), key, "", &mut problems).map(Arc::new);
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
    raw_tools: Option<&[&RawValue]>,
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
    let tools = match (raw_tools, route.get("tools").and_then(Value::as_array)) {
        (Some(raw), _) => ToolsInput::Raw(raw),
        (None, Some(parsed)) => ToolsInput::Parsed(parsed),
        (None, None) => {
            problems.add(&tools_path, "must be an array");
            return None;
        }
    };
    let mut outcomes = compile_tools(tools, &tools_path);
    let mut versions_seen = HashSet::with_capacity(outcomes.len());
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
    if problems.0.len() > before {
        return None;
    }
    let tool_at = |i: usize| outcomes[i].tool.as_ref().map(|(tool, _)| tool);
    // One lookup per name: the active tool, or, for a name with several active versions, the
    // conflict (CONTRACT T3).
    let mut lookup: HashMap<String, ToolLookup> = HashMap::with_capacity(active.len());
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
    // Each listed tool was serialized once, from the manifest's own values, on the thread that
    // compiled it (STYLE 10); the route keeps those texts and `tools/list` writes them out in
    // turn. Joined into one text here, they would be copied once more into fresh memory, which
    // a cold start pays for in page faults.
    let tools_list: Vec<Box<RawValue>> = active
        .iter()
        .filter_map(|&i| outcomes[i].public.take())
        .collect();
    Some(Route {
        key,
        server,
        instructions: optional_string(route, "instructions", path, problems),
        tools: lookup,
        tools_list,
    })
}

/// Fewest tools for which compiling on more than one thread pays for starting the threads.
const PARALLEL_COMPILE_MIN_TOOLS: usize = 64;
/// Most threads a route's tools are compiled on.
const MAX_COMPILE_THREADS: usize = 4;

/// A route's tools as the loader hands them over: the elements of a parsed `tools` array, or
/// each element's raw JSON text, parsed on the thread that compiles it.
#[derive(Clone, Copy)]
enum ToolsInput<'a> {
    Parsed(&'a [Value]),
    Raw(&'a [&'a RawValue]),
}

/// One tool after compilation: the tool with whether it is active, the problems found in it,
/// and for an active tool its `tools/list` entry (public fields, CONTRACT T1) as JSON text.
struct CompiledTool {
    tool: Option<(Arc<Tool>, bool)>,
    problems: Vec<ManifestProblem>,
    public: Option<Box<RawValue>>,
}

fn compile_one(tool: &Value, path: &str) -> CompiledTool {
    let mut found = Problems::default();
    let compiled = compile_tool(tool, path, &mut found);
    let public = match &compiled {
        Some((_, true)) => serde_json::value::to_raw_value(&PublicTool(tool)).ok(),
        _ => None,
    };
    CompiledTool {
        tool: compiled.map(|(tool, is_active)| (Arc::new(tool), is_active)),
        problems: found.0,
        public,
    }
}

fn compile_at(tools: ToolsInput<'_>, i: usize, tools_path: &str) -> CompiledTool {
    let path = format!("{tools_path}[{i}]");
    match tools {
        ToolsInput::Parsed(tools) => compile_one(&tools[i], &path),
        // Raw text was checked as JSON by the first pass; it parses.
        ToolsInput::Raw(tools) => match serde_json::from_str::<Value>(tools[i].get()) {
            Ok(tool) => compile_one(&tool, &path),
            Err(error) => CompiledTool {
                tool: None,
                problems: vec![ManifestProblem {
                    path,
                    message: format!("is not JSON: {error}"),
                }],
                public: None,
            },
        },
    }
}

/// Tools a compiling thread takes at a time.
const COMPILE_BATCH: usize = 16;

/// Compiles every tool of a route, in manifest order. Parsing and schema compilation are most
/// of a cold start's load, so a large route is compiled on scoped threads (as many as the
/// instance has CPUs, at most [`MAX_COMPILE_THREADS`], the calling thread one of them): each
/// thread takes the next [`COMPILE_BATCH`] tools until none are left, and parses, compiles,
/// serializes and frees its own. Taking batches as they come keeps every thread busy to the
/// end, where fixed shares would leave the thread that started first waiting on the others.
/// Results and problems keep the manifest's order either way.
fn compile_tools(tools: ToolsInput<'_>, tools_path: &str) -> Vec<CompiledTool> {
    let count = match tools {
        ToolsInput::Parsed(tools) => tools.len(),
        ToolsInput::Raw(tools) => tools.len(),
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(MAX_COMPILE_THREADS);
    if threads < 2 || count < PARALLEL_COMPILE_MIN_TOOLS {
        return (0..count)
            .map(|i| compile_at(tools, i, tools_path))
            .collect();
    }
    let next = AtomicUsize::new(0);
    // The batches one thread compiled, each with the index of its first tool.
    let take_batches = || {
        let mut batches = Vec::new();
        loop {
            let start = next.fetch_add(COMPILE_BATCH, Ordering::Relaxed);
            if start >= count {
                return batches;
            }
            let batch: Vec<CompiledTool> = (start..count.min(start + COMPILE_BATCH))
                .map(|i| compile_at(tools, i, tools_path))
                .collect();
            batches.push((start, batch));
        }
    };
    let mut batches = std::thread::scope(|scope| {
        let workers: Vec<_> = (1..threads).map(|_| scope.spawn(take_batches)).collect();
        let mut batches = take_batches();
        for worker in workers {
            // A panic on a worker goes on as it would have without threads.
            batches.extend(
                worker
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            );
        }
        batches
    });
    batches.sort_unstable_by_key(|(start, _)| *start);
    let mut all = Vec::with_capacity(count);
    for (_, batch) in batches {
        all.extend(batch);
    }
    all
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
        Some(Value::String(url)) if let Some(url) = absolute_http_url(url) => Some(url),
        _ if std::ptr::eq(meta, &empty) => None,
        _ => {
            problems.add(
                &join(&meta_path, "endpoint"),
                "must be an absolute http(s) URL",
            );
            None
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
            endpoint: endpoint?,
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

fn absolute_http_url(url: &str) -> Option<reqwest::Url> {
    reqwest::Url::parse(url).ok().filter(|u| {
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

    /// What a load made of a manifest: per route key, its serverInfo, instructions,
    /// `tools/list` text and tool lookups; or the problems.
    fn outcome(
        compiled: Result<Snapshot, Vec<ManifestProblem>>,
    ) -> Result<Vec<String>, Vec<String>> {
        let snapshot =
            compiled.map_err(|p| p.iter().map(ToString::to_string).collect::<Vec<_>>())?;
        let mut routes: Vec<_> = snapshot
            .routes
            .iter()
            .map(|(k, r)| (Some(k.clone()), r))
            .chain(snapshot.single.iter().map(|r| (None, r)))
            .map(|(k, r)| {
                let mut lookups: Vec<String> = r
                    .tools
                    .iter()
                    .map(|(name, lookup)| match lookup {
                        ToolLookup::Active(t) => {
                            format!(
                                "{name}={}@{} {} {:?}",
                                t.version, t.endpoint, t.method, t.timeout_ms
                            )
                        }
                        ToolLookup::Conflict { active_versions } => {
                            format!("{name}!{active_versions}")
                        }
                    })
                    .collect();
                lookups.sort();
                format!(
                    "{k:?} {:?} {:?} {:?} {} {lookups:?}",
                    r.key,
                    r.server,
                    r.instructions,
                    r.tools_list_result().to_json()
                )
            })
            .collect();
        routes.sort();
        Ok(routes)
    }

    #[test]
    fn r5_the_text_loader_and_the_document_loader_agree_on_every_manifest() {
        let many: Vec<Value> = (0..150)
            .map(|i| {
                let mut t = tool(&format!("t{}", i % 140), &format!("{i}"), i % 7 != 0);
                t["description"] = json!(format!("tool {i} \u{00e9} \"quoted\""));
                t["annotations"] = json!({"readOnlyHint": true});
                t["_hidden"] = json!(i);
                t
            })
            .collect();
        let mut broken = many.clone();
        broken[3]["inputSchema"] = json!({"type": "object", "properties": {"a": {"type": 5}}});
        broken[90]["_meta"]["endpoint"] = json!("ftp://x");
        broken[120] = json!("not a tool");
        let cases = [
            json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": many.clone(),
                   "server": {"name": "core", "version": "2"}, "instructions": "use it"},
                   {"routeKey": "small", "tools": [tool("a", "1", true), tool("a", "2", true)]}]}),
            json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": broken.clone()}]}),
            json!({"tools": many.clone(), "routeKey": "one"}),
            json!({"tools": broken}),
            json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": "nope"}]}),
            json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": many}], "tools": []}),
            json!({"manifestVersion": 2, "routes": []}),
            json!({"manifestVersion": 1, "routes": [{"routeKey": "bad key!", "tools": []}, "x"]}),
            json!({"manifestVersion": 1, "routes": {"core": {}}}),
            json!({"manifestVersion": 1}),
            json!([1, 2]),
        ];
        for (n, case) in cases.iter().enumerate() {
            let text = serde_json::to_vec(case).unwrap();
            let by_document = outcome(compile_manifest(case));
            let by_text = match compile_manifest_text(&text) {
                Some(compiled) => outcome(compiled),
                None => by_document.clone(),
            };
            assert_eq!(by_text, by_document, "case {n}");
        }
        // The shapes that take the text path do take it.
        for n in [0, 1, 2, 3, 4, 5, 6] {
            assert!(
                compile_manifest_text(&serde_json::to_vec(&cases[n]).unwrap()).is_some(),
                "case {n}"
            );
        }
        assert!(outcome(compile_manifest(&cases[0])).is_ok());
        assert!(outcome(compile_manifest(&cases[1])).unwrap_err().len() == 3);

        // Texts a `Value` cannot write: repeated fields keep their last value on both paths.
        let a = tool("a", "1", true).to_string();
        let b = tool("b", "1", true).to_string();
        let texts = [
            format!(
                r#"{{"manifestVersion":1,"routes":[{{"routeKey":"x","tools":[{a}]}}],"routes":[{{"routeKey":"y","tools":[{b}]}}]}}"#
            ),
            format!(r#"{{"tools":[{a}],"tools":"x"}}"#),
            format!(r#"{{"tools":"x","tools":[{a},{b}]}}"#),
            r#"{"tools":{"a":1}}"#.to_string(),
            format!(
                r#"{{"manifestVersion":1,"routes":[{{"routeKey":"x","routes":5,"tools":[{a}],"tools":[{b}]}}]}}"#
            ),
            format!(r#"{{"manifestVersion":1,"routes":[{{"routeKey":"x","tools":[{a}]}},[]]}}"#),
            format!(
                r#"{{"manifestVersion":1,"routes":[{{"routeKey":"x","tools":[{a}]}}],"routes":7}}"#
            ),
            format!(r#"{{"tools":[{a}]"#),
        ];
        for (n, text) in texts.iter().enumerate() {
            let by_text = compile_manifest_text(text.as_bytes()).map(outcome);
            let Ok(document) = serde_json::from_str::<Value>(text) else {
                assert!(by_text.is_none(), "text {n}: not JSON, not compiled");
                continue;
            };
            let by_document = outcome(compile_manifest(&document));
            assert_eq!(
                by_text.unwrap_or_else(|| by_document.clone()),
                by_document,
                "text {n}"
            );
        }
        assert!(compile_manifest_text(texts[0].as_bytes()).is_some_and(|r| r.is_ok()));
        assert!(compile_manifest_text(texts[5].as_bytes()).is_none());
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
        let list: Value = serde_json::from_str(&route.tools_list_result().to_json()).unwrap();
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
