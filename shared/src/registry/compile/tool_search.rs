//! A route's `toolSearch` (CONTRACT S1): the search's mode and its default number of results.

use serde_json::Value;

use super::problems::{Problems, join};
use crate::registry::search::{DEFAULT_MAX_RESULTS, MAX_RESULTS, SearchMode};

/// The `toolSearch` of a route at `path` (CONTRACT S1): `{"mode": "add" | "only",
/// "maxResults": 1..50}`; `None` when absent or wrong (the problem added).
pub(super) fn compile_tool_search(
    value: Option<&Value>,
    path: &str,
    problems: &mut Problems,
) -> Option<(SearchMode, usize)> {
    let value = value?;
    let Some(object) = value.as_object() else {
        problems.add(path, "must be an object with the search's mode");
        return None;
    };
    let mode = match object.get("mode").and_then(Value::as_str) {
        Some("add") => Some(SearchMode::Add),
        Some("only") => Some(SearchMode::Only),
        _ => {
            problems.add(&join(path, "mode"), "must be \"add\" or \"only\"");
            None
        }
    };
    let max_results = match object.get("maxResults") {
        None => Some(DEFAULT_MAX_RESULTS),
        // A whole number written as 5, 5.0 or 5e0, as JSON Schema's integer (and
        // search_tools' limit) takes it.
        Some(value) => crate::text::whole_number(value, 1, 50)
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| (1..=MAX_RESULTS).contains(n))
            .or_else(|| {
                problems.add(
                    &join(path, "maxResults"),
                    "must be a whole number from 1 to 50",
                );
                None
            }),
    };
    Some((mode?, max_results?))
}
