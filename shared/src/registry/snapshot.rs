//! Snapshot types: routes, tools and their pre-computed public forms (CONTRACT P5, P7, T1, T3, X3).

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;

use super::LazyValidator;

/// `serverInfo` of a route's `initialize` result (CONTRACT L1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerInfo {
    /// Programmatic name.
    pub name: String,
    /// Display title.
    pub title: String,
    /// Server version.
    pub version: String,
}

/// One executable tool: its compiled input validator and private execution metadata
/// (`_meta` in the manifest; never exposed, CONTRACT T1).
#[derive(Debug)]
pub struct Tool {
    /// The tool name (`params.name` of `tools/call`).
    pub name: String,
    /// The tool version from `_meta.version` (empty when the manifest gives none).
    pub version: String,
    /// The Tool Service: an absolute http(s) URL (CONTRACT X4) or a Lambda function ARN (M4,
    /// X10), parsed once at load.
    pub endpoint: crate::registry::Endpoint,
    /// The HTTP method of the Tool Service call, default `POST` (CONTRACT X4, M2).
    pub method: http::Method,
    /// `_meta.timeoutMs`, when the manifest sets one (CONTRACT X7).
    pub timeout_ms: Option<u64>,
    /// The `inputSchema` validator, checked at load and compiled on first use (CONTRACT R5, X2).
    pub input_schema: LazyValidator,
    /// The `outputSchema` validator, when the tool declares one: a successful result then
    /// carries `structuredContent` that matches it. Checked at load, compiled on first use.
    pub output_schema: Option<LazyValidator>,
    /// How the Tool Service answers are read (`_meta.resultFormat`).
    pub result_format: ResultFormat,
    /// The `inputSchema` properties annotated `x-mcp-header`, whose values a modern
    /// `tools/call` repeats in `Mcp-Param-<Name>` headers (CONTRACT N2, N6).
    pub header_params: Vec<HeaderParam>,
    /// How a REST-shaped tool (one with `_meta.parameters`) places its arguments in the URL,
    /// headers and body (CONTRACT M2, X9); `None`: the whole `arguments` object is the body (X4).
    pub rest: Option<crate::registry::RestCall>,
}

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

impl Tool {
    /// How this tool's answers are read: its result format and compiled `outputSchema`.
    #[must_use]
    pub fn result_shape(&self) -> ResultShape<'_> {
        ResultShape {
            format: self.result_format,
            output_schema: self.output_schema.as_ref().map(LazyValidator::get),
        }
    }
}

/// What a tool name resolves to on a route.
#[derive(Debug, Clone)]
pub enum ToolLookup {
    /// Exactly one active version.
    Active(Arc<Tool>),
    /// Two or more active versions: never resolved to an arbitrary one (CONTRACT T3, X3).
    Conflict {
        /// How many versions are active.
        active_versions: usize,
    },
}

/// One route: an independent MCP server with its own tools (CONTRACT P7).
#[derive(Debug)]
pub struct Route {
    /// The route key (`routeKey`), `None` for a single-route manifest that names none.
    pub key: Option<String>,
    /// `serverInfo` for `initialize`.
    pub server: ServerInfo,
    /// `instructions` for `initialize`, when the manifest gives them.
    pub instructions: Option<String>,
    pub(crate) tools: HashMap<String, ToolLookup>,
    /// The listed tools' `tools/list` entries, in manifest order (CONTRACT T1, T3).
    pub(crate) tools_list: Vec<Arc<Box<RawValue>>>,
}

impl Route {
    /// Resolves a tool name; `None` when unknown or without an active version (CONTRACT X2).
    #[must_use]
    pub fn tool(&self, name: &str) -> Option<&ToolLookup> {
        self.tools.get(name)
    }

    /// The `tools/list` result `{"tools": [...]}` over the entries serialized at load
    /// (CONTRACT T1, T2).
    #[must_use]
    pub fn tools_list_result(&self) -> ToolsListResult<'_> {
        ToolsListResult(&self.tools_list)
    }
}

/// A route's `tools/list` result: serializes as `{"tools":[…]}` with each entry's text, written
/// once at load, copied out as it is (CONTRACT T1, T2).
#[derive(Debug, Clone, Copy)]
pub struct ToolsListResult<'a>(&'a [Arc<Box<RawValue>>]);

impl ToolsListResult<'_> {
    /// How many tools the list has.
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the list is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The length of [`Self::to_json`]'s text, in bytes.
    #[must_use]
    pub fn text_len(&self) -> usize {
        let entries: usize = self.0.iter().map(|entry| entry.get().len()).sum();
        r#"{"tools":[]}"#.len() + entries + self.0.len().saturating_sub(1)
    }

    /// The result as JSON text, `{"tools":[…]}`.
    #[must_use]
    pub fn to_json(&self) -> String {
        // Raw entries and a map of one field cannot fail to serialize.
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl serde::Serialize for ToolsListResult<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("tools", &Entries(self.0))?;
        map.end()
    }
}

/// The entries of a `tools/list` result, each written as its text.
struct Entries<'a>(&'a [Arc<Box<RawValue>>]);

impl serde::Serialize for Entries<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|entry| &***entry))
    }
}

/// The immutable registry snapshot of one warm instance (CONTRACT R1).
#[derive(Debug)]
pub struct Snapshot {
    pub(crate) routes: HashMap<String, Arc<Route>>,
    pub(crate) single: Option<Arc<Route>>,
}

impl Snapshot {
    /// The route registered under `key` (hash lookup, no I/O: CONTRACT P5).
    #[must_use]
    pub fn route(&self, key: &str) -> Option<&Arc<Route>> {
        self.routes.get(key).or_else(|| {
            self.single
                .as_ref()
                .filter(|route| route.key.as_deref() == Some(key))
        })
    }

    /// The route a fixed deployment serves: the one keyed by the last segment of its endpoint
    /// path, or the single route of a single-route manifest (CONTRACT M).
    #[must_use]
    pub fn fixed_route(&self, last_segment: &str) -> Option<&Arc<Route>> {
        self.single
            .as_ref()
            .or_else(|| self.routes.get(last_segment))
    }

    /// Route keys in the snapshot, sorted: for messages that list them (CONTRACT M1).
    #[must_use]
    pub fn sorted_route_keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = self.route_keys().collect();
        keys.sort_unstable();
        keys
    }

    /// Route keys in the snapshot, unordered.
    pub fn route_keys(&self) -> impl Iterator<Item = &str> {
        self.routes
            .keys()
            .map(String::as_str)
            .chain(self.single.iter().filter_map(|r| r.key.as_deref()))
    }
}

/// How a tool's Tool Service answers are turned into a `tools/call` result (manifest
/// `_meta.resultFormat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResultFormat {
    /// `"json"` (default): any 2xx body becomes one text block (CONTRACT X5); with an
    /// `outputSchema`, a JSON object body is also the result's `structuredContent`.
    #[default]
    Json,
    /// `"mcp"`: the Tool Service answers with an MCP tool result object (`content` blocks,
    /// optional `structuredContent` and `isError`), passed through after a shape check.
    Mcp,
}

impl ResultFormat {
    /// Parses the manifest value `"json"` or `"mcp"`.
    #[must_use]
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "json" => Some(Self::Json),
            "mcp" => Some(Self::Mcp),
            _ => None,
        }
    }
}

/// What a tool's manifest entry says about its results, compiled at load.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResultShape<'a> {
    /// `_meta.resultFormat`.
    pub format: ResultFormat,
    /// The compiled `outputSchema`, when the tool declares one.
    pub output_schema: Option<&'a jsonschema::Validator>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn t1_the_tools_list_result_is_the_text_serde_json_writes_for_its_entries() {
        let values = [
            json!({"name": "a", "inputSchema": {"type": "object"}}),
            json!({"name": "검색", "description": "quote \" and \\ and \u{1}", "title": "😀"}),
            json!({"name": "c", "annotations": {"readOnlyHint": true}}),
        ];
        let entries: Vec<Arc<Box<RawValue>>> = values
            .iter()
            .map(|v| Arc::new(serde_json::value::to_raw_value(v).unwrap()))
            .collect();
        for n in 0..=entries.len() {
            let list = ToolsListResult(&entries[..n]);
            let expected = serde_json::to_string(&json!({"tools": values[..n]})).unwrap();
            assert_eq!(list.to_json(), expected);
            assert_eq!(serde_json::to_vec(&list).unwrap(), expected.as_bytes());
            assert_eq!((list.len(), list.is_empty()), (n, n == 0));
            assert_eq!(list.text_len(), expected.len());
        }
    }
}
