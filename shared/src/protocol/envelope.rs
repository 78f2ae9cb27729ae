//! The JSON-RPC 2.0 envelope: parse a body into a request, a notification or a client's response
//! (CONTRACT E1, E2, E3, L3, P8).

use serde::Serialize;
use serde_json::{Map, Value};

use super::ErrorObject;
use super::version::META_PROTOCOL_VERSION;

/// Longest string id, in bytes as an answer writes it, escapes counted and quotes not
/// (CONTRACT E2): a longer one is `-32600` and is not echoed, so no answer (nor its error text)
/// grows with the id past the response budget (T2, E5).
pub const MAX_ID_BYTES: usize = 1024;

/// A JSON-RPC request id: a string or an integer, echoed exactly (CONTRACT E2).
///
/// `"1"` stays a string, `0` is valid, integers up to `u64::MAX` keep every digit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct RequestId(Value);

/// The bytes `text` takes in an answer, as serde_json writes it inside a JSON string: its
/// escapes counted (a control character as `\u00XX` is 6, a quote or backslash 2), the quotes
/// around it not (CONTRACT E2). A text over [`MAX_ID_BYTES`] unescaped is not measured further.
fn written_len(text: &str) -> usize {
    /// Counts what is written to it.
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    if text.len() > MAX_ID_BYTES {
        return text.len();
    }
    let mut count = Count(0);
    // A string always serializes, and a counter never fails a write.
    match serde_json::to_writer(&mut count, text) {
        Ok(()) => count.0.saturating_sub(2),
        Err(_) => usize::MAX,
    }
}

impl RequestId {
    /// Reads an id from a JSON value; `None` unless it is a string or an integer that fits
    /// `i64` or `u64` (fractions, booleans, objects and `null` are not ids).
    #[must_use]
    pub fn from_value(value: &Value) -> Option<Self> {
        match value {
            // CONTRACT E2, E5: an id longer than MAX_ID_BYTES as an answer writes it is never
            // echoed.
            Value::String(text) if written_len(text) > MAX_ID_BYTES => None,
            Value::String(_) => Some(Self(value.clone())),
            Value::Number(n) if n.is_i64() || n.is_u64() => Some(Self(value.clone())),
            _ => None,
        }
    }

    /// The id as a JSON value.
    #[must_use]
    pub fn as_value(&self) -> &Value {
        &self.0
    }
}

/// One parsed JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request: it has an id and expects a response.
    Request {
        /// The id to echo.
        id: RequestId,
        /// The method name.
        method: String,
        /// `params`, `None` when absent or `null`.
        params: Option<Map<String, Value>>,
    },
    /// A notification: no id, answered `202 Accepted` (CONTRACT L3, N2).
    Notification {
        /// The method name.
        method: String,
        /// `params`, `None` when absent or `null`: its `_meta` may make it modern (CONTRACT N1).
        params: Option<Map<String, Value>>,
    },
    /// A JSON-RPC response sent by the client (it has `result` or `error` and no `method`),
    /// answered `202 Accepted` (CONTRACT L3).
    Response,
}

/// Why a body is not an acceptable JSON-RPC message, with the id to echo (CONTRACT E5, P8).
#[derive(Debug, Clone, PartialEq)]
pub struct EnvelopeError {
    /// The error object to answer with.
    pub error: Box<ErrorObject>,
    /// The request id when one could be read, else `None` (answered as `null`).
    pub id: Option<RequestId>,
    /// Whether the body's `params._meta` names a protocol version, which makes the request
    /// modern (CONTRACT N1).
    pub declares_version: bool,
}

/// Parses a request body.
///
/// # Errors
/// - `-32600 Invalid Request: message holds …` when the body crosses a limit of
///   [`super::bounds`] (CONTRACT E6), before it is parsed;
/// - `-32700 Parse error` when the body is not JSON (CONTRACT E1);
/// - `-32600 Invalid Request: batch requests are not supported` for an array (CONTRACT E3);
/// - `-32600 Invalid Request: <detail>` for any other envelope violation (CONTRACT E2).
pub fn parse_message(body: &[u8]) -> Result<Message, EnvelopeError> {
    // CONTRACT E6: counted before anything is built.
    if let Err(over) = super::bounds::check(body) {
        return Err(invalid(None, &over.detail()));
    }
    let value: Value = serde_json::from_slice(body).map_err(|_| EnvelopeError {
        error: Box::new(ErrorObject::parse_error()),
        id: None,
        declares_version: false,
    })?;
    let mut object = match value {
        Value::Object(object) => object,
        Value::Array(_) => return Err(invalid(None, "batch requests are not supported")),
        _ => return Err(invalid(None, "message must be a JSON object")),
    };
    let raw_id = object.get("id");
    let id = raw_id.and_then(RequestId::from_value);
    let invalid = |id: Option<RequestId>, detail: &str| EnvelopeError {
        declares_version: declared_version(object.get("params").and_then(Value::as_object))
            .is_some(),
        ..invalid(id, detail)
    };

    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid(id, "'jsonrpc' must be \"2.0\""));
    }
    let Some(method) = object.get("method") else {
        if object.contains_key("result") || object.contains_key("error") {
            return Ok(Message::Response);
        }
        return Err(invalid(id, "'method' is required"));
    };
    let Value::String(method) = method else {
        return Err(invalid(id, "'method' must be a string"));
    };
    match object.get("params") {
        None | Some(Value::Null | Value::Object(_)) => {}
        Some(_) => return Err(invalid(id, "'params' must be an object")),
    }
    let method = method.clone();
    let has_id = raw_id.is_some();
    let id_was_string = matches!(raw_id, Some(Value::String(_)));
    // Moved out, not copied: `params` may hold most of the body (CONTRACT O1).
    let params = match object.swap_remove("params") {
        Some(Value::Object(params)) => Some(params),
        _ => None,
    };
    match (has_id, id) {
        (false, _) => Ok(Message::Notification { method, params }),
        (true, Some(id)) => Ok(Message::Request { id, method, params }),
        (true, None) => {
            let detail = if id_was_string {
                format!("'id' must be at most {MAX_ID_BYTES} bytes")
            } else {
                "'id' must be a string or an integer".to_string()
            };
            Err(EnvelopeError {
                error: Box::new(ErrorObject::invalid_request(&detail)),
                id: None,
                declares_version: declared_version(params.as_ref()).is_some(),
            })
        }
    }
}

fn invalid(id: Option<RequestId>, detail: &str) -> EnvelopeError {
    EnvelopeError {
        error: Box::new(ErrorObject::invalid_request(detail)),
        id,
        declares_version: false,
    }
}

/// `params._meta["io.modelcontextprotocol/protocolVersion"]` when `params` carries one, of any
/// JSON type: its presence makes a request modern (CONTRACT N1).
#[must_use]
pub fn declared_version(params: Option<&Map<String, Value>>) -> Option<&Value> {
    params?.get("_meta")?.get(META_PROTOCOL_VERSION)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(body: &str) -> EnvelopeError {
        parse_message(body.as_bytes()).unwrap_err()
    }

    #[test]
    fn e2_string_id_stays_a_string_and_zero_is_valid() {
        let m = parse_message(br#"{"jsonrpc":"2.0","id":"1","method":"ping"}"#).unwrap();
        assert!(matches!(m, Message::Request { ref id, .. } if id.as_value() == &Value::from("1")));
        let m = parse_message(br#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#).unwrap();
        assert!(matches!(m, Message::Request { ref id, .. } if id.as_value() == &Value::from(0)));
    }

    /// CONTRACT E2, E5: the 1,024 bytes are the id as an answer writes it, escapes counted: a
    /// control character is 6 bytes there, a quote or a backslash 2, a Hangul syllable 3.
    #[test]
    fn e2_an_id_is_measured_as_an_answer_writes_it() {
        let id_of = |text: String| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{},"method":"ping"}}"#,
                Value::String(text)
            )
        };
        let at = [
            "\u{1}".repeat(170) + "abcd",
            "\"".repeat(512),
            "\\".repeat(512),
            "한".repeat(341) + "a",
            "\n".repeat(512),
        ];
        for text in at {
            let Message::Request { id, .. } =
                parse_message(id_of(text.clone()).as_bytes()).unwrap()
            else {
                panic!("{text:?} is an id");
            };
            assert_eq!(serde_json::to_string(id.as_value()).unwrap().len(), 1026);
        }
        let over = [
            "\u{1}".repeat(171),
            "\"".repeat(513),
            "\\".repeat(512) + "a",
            "\u{1f}".repeat(200),
            "\t".repeat(513),
        ];
        for text in over {
            let e = err(&id_of(text));
            assert_eq!(e.id, None);
            assert_eq!(
                e.error.message,
                "Invalid Request: 'id' must be at most 1024 bytes"
            );
        }
    }

    /// CONTRACT E2, E5: a string id over 1,024 bytes is `-32600` and never echoed.
    #[test]
    fn e2_an_id_over_1024_bytes_is_invalid_and_not_echoed() {
        let at = format!(
            r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#,
            "i".repeat(1024)
        );
        assert!(matches!(
            parse_message(at.as_bytes()).unwrap(),
            Message::Request { .. }
        ));
        let over = format!(
            r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#,
            "i".repeat(1025)
        );
        let e = err(&over);
        assert_eq!(e.id, None);
        assert_eq!(
            e.error.message,
            "Invalid Request: 'id' must be at most 1024 bytes"
        );
        // Not echoed by an earlier check either.
        let early = format!(
            r#"{{"jsonrpc":"1.0","id":"{}","method":"ping"}}"#,
            "i".repeat(5000)
        );
        assert_eq!(err(&early).id, None);
    }

    #[test]
    fn e2_large_integer_ids_keep_every_digit() {
        let m = parse_message(br#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#)
            .unwrap();
        let Message::Request { id, .. } = m else {
            panic!("not a request")
        };
        assert_eq!(serde_json::to_string(&id).unwrap(), "9223372036854775808");
    }

    #[test]
    fn e2_fractional_boolean_null_and_object_ids_are_invalid_with_null_id() {
        for id in ["1.5", "true", "null", "{}", "[]"] {
            let e = err(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
            assert_eq!(
                e.error.message,
                "Invalid Request: 'id' must be a string or an integer"
            );
            assert_eq!(e.id, None);
        }
    }

    #[test]
    fn e2_params_null_counts_as_absent() {
        let m =
            parse_message(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#).unwrap();
        assert!(matches!(m, Message::Request { params: None, .. }));
    }

    #[test]
    fn l3_client_response_is_recognised() {
        let m = parse_message(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#).unwrap();
        assert_eq!(m, Message::Response);
    }
}
