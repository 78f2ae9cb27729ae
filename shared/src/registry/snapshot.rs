//! Snapshot types: routes, tools and their pre-computed public forms (CONTRACT P5, P7, T1, T3, X3).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;
use serde_json::value::RawValue;

use super::LazyValidator;
use crate::policy::HeaderParam;

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
    /// Boxed, as `rest`, `auth` and `task`: most tools have none, and a route keeps one `Tool`
    /// per tool for its life (296 bytes with the four boxed and the compiled validators and a
    /// Lambda endpoint boxed as well, 832 with none).
    pub output_schema: Option<Box<LazyValidator>>,
    /// How the Tool Service answers are read (`_meta.resultFormat`).
    pub result_format: ResultFormat,
    /// The `inputSchema` properties annotated `x-mcp-header`, whose values a modern
    /// `tools/call` repeats in `Mcp-Param-<Name>` headers (CONTRACT N2, N6).
    pub header_params: Vec<HeaderParam>,
    /// How a REST-shaped tool (one with `_meta.parameters`) places its arguments in the URL,
    /// headers and body (CONTRACT M2, X9); `None`: the whole `arguments` object is the body (X4).
    pub rest: Option<Box<crate::registry::RestCall>>,
    /// `_meta.auth`: the credential the calls present to the Tool Service (CONTRACT M5, X12).
    pub auth: Option<Box<crate::registry::OutboundAuth>>,
    /// `_meta.pinned`: listed beside `search_tools` when the route's `toolSearch` mode is
    /// `only` (CONTRACT S2).
    pub pinned: bool,
    /// `_meta.task`: whether calls may or must become tasks (CONTRACT K1).
    pub task: Option<Box<crate::tasks::TaskSupport>>,
}

impl Tool {
    /// How this tool's answers are read: its result format and compiled `outputSchema`.
    #[must_use]
    pub fn result_shape(&self) -> ResultShape<'_> {
        ResultShape {
            format: self.result_format,
            output_schema: self.output_schema.as_deref().map(LazyValidator::get),
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
    /// The route's tools by name; foldhash, as the names are the manifest's, not a caller's.
    pub(crate) tools: HashMap<String, ToolLookup, foldhash::fast::RandomState>,
    /// The listed tools' `tools/list` entries, in manifest order (CONTRACT T1, T3).
    #[expect(
        clippy::vec_box,
        reason = "each entry is written as its tool streams by and moved to the route: boxed, \
                  the growing vector of a load's tools and this one hold pointers, not entries"
    )]
    pub(crate) tools_list: Vec<Box<ListEntry>>,
    /// The list's digest, which its `tools/list` cursors are checked against (CONTRACT T2).
    pub(crate) list_digest: super::list_page::ListDigest,
    /// The route's `search_tools`, when its manifest enables `toolSearch` (CONTRACT S1).
    pub(crate) search: Option<super::search::ToolSearch>,
    /// The route's authorization policies, when its manifest has any (CONTRACT Z1).
    pub(crate) policies: Option<Arc<crate::authz::RoutePolicies>>,
}

impl Route {
    /// Resolves a tool name; `None` when unknown or without an active version (CONTRACT X2).
    #[must_use]
    pub fn tool(&self, name: &str) -> Option<&ToolLookup> {
        self.tools.get(name)
    }

    /// The route's tool search, when its manifest enables one (CONTRACT S1).
    #[must_use]
    pub fn search(&self) -> Option<&super::search::ToolSearch> {
        self.search.as_ref()
    }

    /// The route's authorization policies, when its manifest has any (CONTRACT Z1).
    #[must_use]
    pub fn policies(&self) -> Option<&crate::authz::RoutePolicies> {
        self.policies.as_deref()
    }

    /// The `tools/list` result `{"tools": [...]}` over the entries serialized at load
    /// (CONTRACT T1, T2).
    #[must_use]
    pub fn tools_list_result(&self) -> ToolsListResult<'_> {
        ToolsListResult(&self.tools_list)
    }
}

/// One tool's `tools/list` entry (CONTRACT T1, T4), written at load and copied out as it is.
#[derive(Debug)]
pub(crate) enum ListEntry {
    /// The whole entry's text, as serde_json writes the tool's public fields (a tool compiled
    /// by the full check).
    Text(Box<RawValue>),
    /// The entry in parts, the schemas as the manifest's own texts (a tool compiled by the one
    /// pass over the manifest's text, which the instance keeps): `head` is
    /// `{"name":…,"title":…,"description":…,"inputSchema":`, then the input schema's text,
    /// `,"outputSchema":` and its text when the tool has one, and `tail`, the remaining fields
    /// and the closing `}`.
    Parts {
        head: Box<str>,
        input_schema: Bytes,
        output_schema: Option<Bytes>,
        tail: Cow<'static, str>,
    },
}

/// Written between an entry's input and output schema texts.
const OUTPUT_SCHEMA_KEY: &[u8] = br#","outputSchema":"#;

impl ListEntry {
    /// The entry's text in pieces, to be written one after the other (empty ones unused).
    pub(super) fn pieces(&self) -> [&[u8]; 5] {
        match self {
            Self::Text(text) => [text.get().as_bytes(), &[], &[], &[], &[]],
            Self::Parts {
                head,
                input_schema,
                output_schema,
                tail,
            } => {
                let (key, output): (&[u8], &[u8]) = match output_schema {
                    Some(text) => (OUTPUT_SCHEMA_KEY, text),
                    None => (&[], &[]),
                };
                [head.as_bytes(), input_schema, key, output, tail.as_bytes()]
            }
        }
    }

    /// The length of the entry's text, in bytes.
    pub(super) fn len(&self) -> usize {
        self.pieces().iter().map(|piece| piece.len()).sum()
    }

    /// The tool's name: the string every entry's text starts with, `{"name":"…"` (CONTRACT T1).
    pub(super) fn name(&self) -> Option<String> {
        let head = std::str::from_utf8(self.pieces()[0]).ok()?;
        let rest = head.strip_prefix(r#"{"name":"#)?;
        serde_json::Deserializer::from_str(rest)
            .into_iter::<String>()
            .next()?
            .ok()
    }

    /// Appends the entry's text to `out`.
    pub(super) fn write_to(&self, out: &mut Vec<u8>) {
        for piece in self.pieces() {
            out.extend_from_slice(piece);
        }
    }
}

/// A route's `tools/list` result, `{"tools":[…]}`, with each entry's text written at load and
/// copied out as it is (CONTRACT T1, T2).
#[derive(Debug, Clone, Copy)]
pub struct ToolsListResult<'a>(&'a [Box<ListEntry>]);

/// Where a JSON-RPC response with the result `{"tools":[]}` has its empty list: the first
/// place this text stands (the `id` before it cannot hold it: a string escapes its quotes).
pub(super) const EMPTY_LIST_RESULT: &[u8] = br#""result":{"tools":[]"#;

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

    /// The tools from `start` to `end` (exclusive) of this list, as a list of their own.
    #[must_use]
    pub(crate) fn slice(&self, start: usize, end: usize) -> Self {
        ToolsListResult(&self.0[start..end])
    }

    /// How many entries from the first fit in `room` bytes with the commas between them, at
    /// most `most` (CONTRACT T2).
    #[must_use]
    pub(crate) fn fitting(&self, room: usize, most: usize) -> usize {
        let mut used = 0;
        let mut count = 0;
        for entry in self.0.iter().take(most) {
            used += entry.len() + usize::from(count > 0);
            if used > room {
                break;
            }
            count += 1;
        }
        count
    }

    /// The length of the entries' texts with the commas between them, in bytes.
    pub(crate) fn entries_len(&self) -> usize {
        let entries: usize = self.0.iter().map(|entry| entry.len()).sum();
        entries + self.0.len().saturating_sub(1)
    }

    /// Appends the entries' texts, separated by commas, to `out`.
    fn write_entries(&self, out: &mut Vec<u8>) {
        for (i, entry) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            entry.write_to(out);
        }
    }

    /// The result as JSON text, `{"tools":[…]}`.
    #[must_use]
    pub fn to_json(&self) -> String {
        let mut out = Vec::with_capacity(r#"{"tools":[]}"#.len() + self.entries_len());
        out.extend_from_slice(br#"{"tools":["#);
        self.write_entries(&mut out);
        out.extend_from_slice(b"]}");
        // Every entry is JSON text: the manifest's (checked as UTF-8 at load) or serde_json's.
        String::from_utf8(out).unwrap_or_default()
    }

    /// A JSON-RPC response whose result is this list: `response` is the same response written
    /// with the result `{"tools":[]}` (and the era's fields after it, CONTRACT N4), and the
    /// entries are written into its empty list. `None` when `response` has no such result.
    #[must_use]
    pub(crate) fn fill(&self, response: &[u8]) -> Option<Vec<u8>> {
        let at = response
            .windows(EMPTY_LIST_RESULT.len())
            .position(|window| window == EMPTY_LIST_RESULT)?
            + EMPTY_LIST_RESULT.len()
            - 1;
        let mut out = Vec::with_capacity(response.len() + self.entries_len());
        out.extend_from_slice(&response[..at]);
        self.write_entries(&mut out);
        out.extend_from_slice(&response[at..]);
        Some(out)
    }
}

/// The empty `tools/list` result, `{"tools":[]}`, or `{"tools":[],"nextCursor":"…"}` for a
/// page that has a next one (CONTRACT T2): the response [`ToolsListResult::fill`] fills.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct EmptyToolsList<'a> {
    pub next_cursor: Option<&'a str>,
}

impl Serialize for EmptyToolsList<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map =
            serializer.serialize_map(Some(1 + usize::from(self.next_cursor.is_some())))?;
        map.serialize_entry("tools", &[(); 0])?;
        if let Some(cursor) = self.next_cursor {
            map.serialize_entry("nextCursor", cursor)?;
        }
        map.end()
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

    /// Every route of the snapshot, unordered.
    pub(crate) fn routes(&self) -> impl Iterator<Item = &Route> {
        self.routes
            .values()
            .chain(self.single.iter())
            .map(AsRef::as_ref)
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
            json!({"name": "d", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}, "icons": []}),
        ];
        let manifest = Bytes::from_static(br#"{"type":"object"}"#);
        let entries: Vec<Box<ListEntry>> = values
            .iter()
            .map(|v| match v["name"].as_str() {
                Some("d") => Box::new(ListEntry::Parts {
                    head: r#"{"name":"d","inputSchema":"#.into(),
                    input_schema: manifest.clone(),
                    output_schema: Some(manifest.clone()),
                    tail: Cow::Borrowed(r#","icons":[]}"#),
                }),
                _ => Box::new(ListEntry::Text(serde_json::value::to_raw_value(v).unwrap())),
            })
            .collect();
        for n in 0..=entries.len() {
            let list = ToolsListResult(&entries[..n]);
            let expected = serde_json::to_string(&json!({"tools": values[..n]})).unwrap();
            assert_eq!(list.to_json(), expected);
            assert_eq!((list.len(), list.is_empty()), (n, n == 0));
            assert_eq!(list.entries_len() + r#"{"tools":[]}"#.len(), expected.len());
            for id in [json!(7), json!("\"result\":{\"tools\":[]")] {
                let empty = serde_json::to_vec(
                    &json!({"jsonrpc": "2.0", "id": id, "result": EmptyToolsList::default()}),
                )
                .unwrap();
                let filled = serde_json::to_vec(
                    &json!({"jsonrpc": "2.0", "id": id, "result": {"tools": values[..n]}}),
                )
                .unwrap();
                assert_eq!(list.fill(&empty).unwrap(), filled);
            }
        }
        assert_eq!(ToolsListResult(&entries).fill(br#"{"result":{}}"#), None);
    }
}
