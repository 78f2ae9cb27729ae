//! Snapshot types: routes, tools and their pre-computed public forms (CONTRACT P5, P7, T1, T3, X3).

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;

use crate::invoke::{ResultFormat, ResultShape};

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
    /// The Tool Service URL, absolute http(s) (CONTRACT X4), parsed once at load.
    pub endpoint: reqwest::Url,
    /// The HTTP method of the Tool Service call, default `POST` (CONTRACT X4).
    pub method: http::Method,
    /// `_meta.timeoutMs`, when the manifest sets one (CONTRACT X7).
    pub timeout_ms: Option<u64>,
    /// The compiled `inputSchema` validator (CONTRACT X2).
    pub input_validator: jsonschema::Validator,
    /// The compiled `outputSchema` validator, when the tool declares one: a successful result
    /// then carries `structuredContent` that matches it.
    pub output_validator: Option<jsonschema::Validator>,
    /// How the Tool Service answers are read (`_meta.resultFormat`).
    pub result_format: ResultFormat,
}

impl Tool {
    /// How this tool's answers are read: its result format and compiled `outputSchema`.
    #[must_use]
    pub fn result_shape(&self) -> ResultShape<'_> {
        ResultShape {
            format: self.result_format,
            output_schema: self.output_validator.as_ref(),
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
    pub(crate) tools_list: Box<RawValue>,
}

impl Route {
    /// Resolves a tool name; `None` when unknown or without an active version (CONTRACT X2).
    #[must_use]
    pub fn tool(&self, name: &str) -> Option<&ToolLookup> {
        self.tools.get(name)
    }

    /// The pre-serialized `tools/list` result `{"tools": [...]}` (CONTRACT T1, T2).
    #[must_use]
    pub fn tools_list_result(&self) -> &RawValue {
        &self.tools_list
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

    /// Route keys in the snapshot, unordered.
    pub fn route_keys(&self) -> impl Iterator<Item = &str> {
        self.routes
            .keys()
            .map(String::as_str)
            .chain(self.single.iter().filter_map(|r| r.key.as_deref()))
    }
}
