//! `ping`: answers an empty result (CONTRACT L4).

use serde_json::{Map, Value};

use super::{MethodOutcome, result};
use crate::protocol::{RequestId, encode_response};

pub(super) fn handle(id: &RequestId) -> MethodOutcome {
    result(encode_response(id, &Value::Object(Map::new())))
}
