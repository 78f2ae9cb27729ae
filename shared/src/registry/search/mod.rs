//! A route's `search_tools` (CONTRACT S1–S4): what its manifest's `toolSearch` says, the tools
//! it searches, and their ranking (`index`, built the first time the route is searched).

mod entry_fields;
mod index;
mod spans;
mod tokens;

use std::sync::OnceLock;

use serde_json::value::RawValue;

use self::index::{SearchIndex, Text};
use self::spans::Field;
pub(crate) use self::spans::{FieldSpans, Span};
use super::snapshot::{ListEntry, Route};

/// The search tool's name (CONTRACT S2).
pub const SEARCH_TOOL_NAME: &str = "search_tools";

/// The search tool's `inputSchema`, exactly (CONTRACT S2).
pub const SEARCH_INPUT_SCHEMA: &str = r#"{"type":"object","properties":{"query":{"type":"string","minLength":1,"maxLength":500},"limit":{"type":"integer","minimum":1,"maximum":50}},"required":["query"],"additionalProperties":false}"#;

/// The search tool's `outputSchema` (CONTRACT S3): `{"tools": [...]}`, entries as `tools/list`
/// writes them.
pub const SEARCH_OUTPUT_SCHEMA: &str = r#"{"type":"object","properties":{"tools":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"inputSchema":{"type":"object"}},"required":["name","inputSchema"]}}},"required":["tools"]}"#;

/// The search tool's description in `tools/list`.
const SEARCH_DESCRIPTION: &str = "Finds this server's tools for a task: give what you want to do in a few words (any language); the answer lists the best matching tools, best first, each with its name, description and inputSchema, ready to call.";

/// `toolSearch.maxResults` when absent (CONTRACT S1).
pub const DEFAULT_MAX_RESULTS: usize = 5;
/// The largest `toolSearch.maxResults` and `limit` (CONTRACT S1, S2).
pub const MAX_RESULTS: usize = 50;

/// What `tools/list` shows beside `search_tools` (CONTRACT S2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    /// `"add"`: every tool, after `search_tools`.
    Add,
    /// `"only"`: the tools whose `_meta.pinned` is `true`, after `search_tools`.
    Only,
}

/// Where a searched tool's `tools/list` entry is kept.
#[derive(Debug, Clone, Copy)]
pub(crate) enum EntryAt {
    /// In the route's list, at this index.
    Listed(u32),
    /// Among the tools the list leaves out (mode `only`), at this index.
    Unlisted(u32),
}

/// A route's tool search (CONTRACT S1): its mode, its default number of results, the entries of
/// the tools `tools/list` leaves out, and the index, built on the first search.
#[derive(Debug)]
pub struct ToolSearch {
    /// What `tools/list` shows beside `search_tools`.
    pub mode: SearchMode,
    /// How many tools a search returns when its `limit` is absent, 1 to 50.
    pub max_results: usize,
    /// The entries of the route's tools that `tools/list` does not show.
    #[expect(
        clippy::vec_box,
        reason = "the entries are moved here from the load's boxes, as the route's list keeps them"
    )]
    pub(crate) unlisted: Vec<Box<ListEntry>>,
    /// Every searched tool's entry, in manifest order, with where its searched texts lie
    /// when the load noted them (else the first search reads them from the entry's JSON).
    pub(crate) documents: Vec<(EntryAt, Option<FieldSpans>)>,
    index: OnceLock<SearchIndex>,
}

impl ToolSearch {
    #[expect(
        clippy::vec_box,
        reason = "the entries are moved here from the load's boxes, as the route's list keeps them"
    )]
    pub(crate) fn new(
        (mode, max_results): (SearchMode, usize),
        unlisted: Vec<Box<ListEntry>>,
        documents: Vec<(EntryAt, Option<FieldSpans>)>,
    ) -> Self {
        Self {
            mode,
            max_results,
            unlisted,
            documents,
            index: OnceLock::new(),
        }
    }

    /// The `tools/list` entry of `search_tools` (CONTRACT S2), first in the route's list.
    pub(crate) fn list_entry() -> ListEntry {
        let text = format!(
            r#"{{"name":"{SEARCH_TOOL_NAME}","title":"Search tools","description":{},"inputSchema":{SEARCH_INPUT_SCHEMA},"outputSchema":{SEARCH_OUTPUT_SCHEMA},"annotations":{{"readOnlyHint":true,"openWorldHint":false}}}}"#,
            serde_json::to_string(SEARCH_DESCRIPTION).unwrap_or_default()
        );
        let raw = RawValue::from_string(text).unwrap_or_else(|_| {
            RawValue::from_string("{}".into()).unwrap_or_else(|_| unreachable!())
        });
        ListEntry::Text(raw)
    }

    fn entry<'a>(&'a self, route: &'a Route, at: EntryAt) -> Option<&'a ListEntry> {
        match at {
            EntryAt::Listed(i) => route.tools_list.get(i as usize).map(AsRef::as_ref),
            EntryAt::Unlisted(i) => self.unlisted.get(i as usize).map(AsRef::as_ref),
        }
    }

    /// Gives each searched text of document `doc` to `out`, in the entry's order (CONTRACT
    /// S4): read where the load noted them, else from the entry's JSON, written into `buffer`.
    fn each_field<'a>(
        &'a self,
        route: &'a Route,
        doc: usize,
        buffer: &mut Vec<u8>,
        out: &mut dyn FnMut(Field, Text<'a, '_>),
    ) {
        let Some((at, spans)) = self.documents.get(doc) else {
            return;
        };
        let Some(entry) = self.entry(route, *at) else {
            return;
        };
        if let (Some(spans), [head, schema, ..]) = (spans, entry.pieces()) {
            spans.each(head, schema, out);
        } else {
            write_searched(entry, buffer);
            entry_fields::each_field(buffer, out);
        }
    }

    /// The result `{"tools":[…]}` of a search of `route` for `query`: at most `limit` entries,
    /// best first, each as `tools/list` writes it (CONTRACT S3, S4). The index is built on the
    /// first search of the instance. With `keep`, only the tools it accepts (by name) are
    /// results, `limit` counted over them (CONTRACT Z4).
    #[must_use]
    pub(crate) fn results(
        &self,
        route: &Route,
        query: &str,
        limit: usize,
        keep: Option<&dyn Fn(&str) -> bool>,
    ) -> Vec<u8> {
        let index = self.index.get_or_init(|| {
            SearchIndex::build(self.documents.len(), |doc, buffer, out| {
                self.each_field(route, doc, buffer, out);
            })
        });
        let mut out = Vec::with_capacity(1024);
        out.extend_from_slice(br#"{"tools":["#);
        let ranked = index.search(query, if keep.is_some() { usize::MAX } else { limit });
        let entries = ranked
            .into_iter()
            .filter_map(|doc| {
                self.documents
                    .get(doc)
                    .and_then(|&(at, _)| self.entry(route, at))
            })
            .filter(|entry| keep.is_none_or(|keep| entry.name().is_some_and(|name| keep(&name))))
            .take(limit);
        for (n, entry) in entries.enumerate() {
            if n > 0 {
                out.push(b',');
            }
            entry.write_to(&mut out);
        }
        out.extend_from_slice(b"]}");
        out
    }
}

/// Appends to `out` the fields of `entry` up to and with its `inputSchema`, and the closing
/// `}`: the fields a search reads (CONTRACT S4), without the output schema, annotations and
/// icons (a whole entry when it is kept as one text, whose later pieces are empty).
fn write_searched(entry: &ListEntry, out: &mut Vec<u8>) {
    let [head, input_schema, ..] = entry.pieces();
    out.extend_from_slice(head);
    if !input_schema.is_empty() {
        out.extend_from_slice(input_schema);
        out.push(b'}');
    }
}

#[cfg(test)]
mod spans_tests;
