//! `tools/list`: the route's pre-serialized public tool list, one page, cacheable in the modern
//! era (CONTRACT T1, T2, X8, N4).

use bytes::Bytes;
use serde_json::{Map, Value};

use super::{Call, MethodOutcome, result};
use crate::protocol::{ErrorObject, RequestId};
use crate::registry::snapshot::EmptyToolsList;

pub(super) fn handle(
    call: &Call<'_>,
    id: &RequestId,
    params: Option<&Map<String, Value>>,
) -> MethodOutcome {
    if params
        .and_then(|p| p.get("cursor"))
        .is_some_and(|c| !c.is_null())
    {
        return MethodOutcome::Error(ErrorObject::invalid_params("cursor is not supported"));
    }
    match call.route {
        Some(route) => {
            // The response is written around an empty list (the envelope and the era's fields:
            // a few hundred bytes), and the entries' texts into its place in one copy.
            let empty = call.encode(id, &EmptyToolsList, true);
            match route.tools_list_result().fill(&empty) {
                Some(body) => result(Bytes::from(body)),
                None => MethodOutcome::Error(ErrorObject::internal_error(
                    "the tools/list response could not be written",
                )),
            }
        }
        None => MethodOutcome::Error(ErrorObject::internal_error(call.unavailable_reason)),
    }
}
