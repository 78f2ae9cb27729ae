//! Encoding JSON-RPC responses: one JSON object per HTTP response (CONTRACT H2, E5).

use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;

use super::{ErrorObject, RequestId};

/// What a JSON-RPC response carries: a `result` or an `error`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ResponsePayload<'a, R: Serialize> {
    /// A successful result.
    Result(&'a R),
    /// An error object.
    Error(&'a ErrorObject),
}

#[derive(Serialize)]
struct Envelope<'a, R: Serialize> {
    jsonrpc: &'static str,
    id: &'a Value,
    #[serde(flatten)]
    payload: ResponsePayload<'a, R>,
}

static NULL: Value = Value::Null;

fn encode<R: Serialize>(id: Option<&RequestId>, payload: ResponsePayload<'_, R>) -> Bytes {
    let envelope = Envelope {
        jsonrpc: "2.0",
        id: id.map_or(&NULL, RequestId::as_value),
        payload,
    };
    let mut body = Vec::with_capacity(128);
    // Serializing plain JSON values and strings cannot fail.
    if serde_json::to_writer(&mut body, &envelope).is_err() {
        body.clear();
    }
    Bytes::from(body)
}

/// Encodes `{"jsonrpc":"2.0","id":<id>,"result":<result>}`.
#[must_use]
pub fn encode_response<R: Serialize>(id: &RequestId, result: &R) -> Bytes {
    encode(Some(id), ResponsePayload::Result(result))
}

/// Encodes `{"jsonrpc":"2.0","id":<id or null>,"error":<error>}` (CONTRACT E5, P8).
#[must_use]
pub fn encode_error(id: Option<&RequestId>, error: &ErrorObject) -> Bytes {
    encode::<()>(id, ResponsePayload::Error(error))
}
