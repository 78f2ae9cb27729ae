//! `tools/list`: the route's public tool list written from the entries serialized at load, in
//! pages that fit `MCP_MAX_RESPONSE_BYTES` (and `MCP_LIST_PAGE_SIZE`), cacheable in the modern
//! era (CONTRACT T1, T2, X8, N4).

use bytes::Bytes;
use serde_json::{Map, Value};

use super::{Call, MethodOutcome, result};
use crate::protocol::{ErrorObject, RequestId};
use crate::registry::Route;
use crate::registry::list_filter::FilteredList;
use crate::registry::list_page::CURSOR_LEN;
use crate::registry::snapshot::EmptyToolsList;

/// CONTRACT T2: the text of `-32602` for a `cursor` this list did not issue.
const UNKNOWN_CURSOR: &str = "cursor is not one this tool list issued";
/// CONTRACT T2: the text of `-32602` for a `cursor` that is not a string.
const CURSOR_NOT_STRING: &str = "cursor must be a string";

pub(super) fn handle(
    call: &Call<'_>,
    id: &RequestId,
    params: Option<&Map<String, Value>>,
) -> MethodOutcome {
    let Some(route) = call.route else {
        return MethodOutcome::Error(ErrorObject::internal_error(call.unavailable_reason));
    };
    let start = match params.and_then(|p| p.get("cursor")) {
        None | Some(Value::Null) => 0,
        Some(Value::String(cursor)) => match route.list_cursor_start(cursor) {
            Some(start) => start,
            None => return MethodOutcome::Error(ErrorObject::invalid_params(UNKNOWN_CURSOR)),
        },
        Some(_) => return MethodOutcome::Error(ErrorObject::invalid_params(CURSOR_NOT_STRING)),
    };
    // CONTRACT Z4: on a route with policies, only the tools this caller could call.
    let written = match super::authorize::view(call, route) {
        Some(view) => {
            let mut listed = route.listed_from(start);
            let mut visible = view.visible_mask(listed.names()).into_iter();
            listed.retain(|_| visible.next().unwrap_or(false));
            filtered_page(call, id, route, &listed)
        }
        None => page(call, id, route, start),
    };
    match written {
        Some(body) => result(Bytes::from(body)),
        None => MethodOutcome::Error(ErrorObject::internal_error(
            "the tools/list response could not be written",
        )),
    }
}

/// [`page`] over the visible tools of a route with policies (CONTRACT Z4, T2): the cursor
/// names the whole list's index of the first tool not written.
fn filtered_page(
    call: &Call<'_>,
    id: &RequestId,
    route: &Route,
    rest: &FilteredList<'_>,
) -> Option<Vec<u8>> {
    let budget = call.config.max_response_bytes;
    let most = call.config.list_page_size.unwrap_or(usize::MAX);
    let whole = call.encode(id, &EmptyToolsList::default(), true);
    if rest.len() <= most && whole.len() + rest.entries_len(rest.len()) <= budget {
        return rest.fill(&whole, rest.len());
    }
    let stand_in = "A".repeat(CURSOR_LEN);
    let sized = call.encode(
        id,
        &EmptyToolsList {
            next_cursor: Some(&stand_in),
        },
        true,
    );
    let count = rest.fitting(budget.checked_sub(sized.len())?, most);
    if count == 0 {
        return None;
    }
    let Some(next) = rest.next_start(count) else {
        return rest.fill(&whole, count);
    };
    let cursor = route.list_cursor(next)?;
    let empty = call.encode(
        id,
        &EmptyToolsList {
            next_cursor: Some(&cursor),
        },
        true,
    );
    rest.fill(&empty, count)
}

/// The response with the page of the list that starts at its `start`th tool (CONTRACT T2):
/// the rest of the list when it fits the budget and the page size, without `nextCursor`; else
/// as many whole tools as fit with a `nextCursor` to the next one. `None` when not even one
/// tool fits, which the load check keeps from happening: it leaves room on every page for the
/// longest `id` E2 lets through ([`crate::registry::LIST_ENVELOPE_BYTES`]).
fn page(call: &Call<'_>, id: &RequestId, route: &Route, start: usize) -> Option<Vec<u8>> {
    let list = route.tools_list_result();
    let rest = list.slice(start, list.len());
    let budget = call.config.max_response_bytes;
    let most = call.config.list_page_size.unwrap_or(usize::MAX);
    // The response is written around an empty list (the envelope and the era's fields: a few
    // hundred bytes), and the entries' texts into its place in one copy.
    let whole = call.encode(id, &EmptyToolsList::default(), true);
    if rest.len() <= most && whole.len() + rest.entries_len() <= budget {
        return rest.fill(&whole);
    }
    // Every cursor has the same length: the page is measured with a stand-in of it.
    let stand_in = "A".repeat(CURSOR_LEN);
    let sized = call.encode(
        id,
        &EmptyToolsList {
            next_cursor: Some(&stand_in),
        },
        true,
    );
    let count = rest.fitting(budget.checked_sub(sized.len())?, most);
    if count == 0 {
        return None;
    }
    let end = start + count;
    let cursor = route.list_cursor(end)?;
    let empty = call.encode(
        id,
        &EmptyToolsList {
            next_cursor: Some(&cursor),
        },
        true,
    );
    list.slice(start, end).fill(&empty)
}
