//! `tools/list`: the route's pre-serialized public tool list, one page, cacheable in the modern
//! era (CONTRACT T1, T2, X8, N4).

use serde_json::{Map, Value};

use super::{Call, MethodOutcome, result};
use crate::protocol::{ErrorObject, RequestId};

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
            let list = route.tools_list_result();
            // The envelope and the era's fields around the list: a few hundred bytes.
            result(call.encode_sized(id, &list, true, list.text_len() + 512))
        }
        None => MethodOutcome::Error(ErrorObject::internal_error(call.unavailable_reason)),
    }
}
