//! Trace context in and out (CONTRACT O1–O3): the parent and baggage a request brings in
//! `params._meta` or its headers, read with the W3C propagators, and the values every Tool
//! Service call carries on.

use std::time::SystemTime;

use http::{HeaderMap, HeaderName, HeaderValue};
use opentelemetry::propagation::{Extractor, TextMapPropagator as _};
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt as _, TraceId};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use serde_json::{Map, Value};

/// The W3C header and `_meta` member names (MCP 2026-07-28 SEP-414).
pub const TRACEPARENT: &str = "traceparent";
/// See [`TRACEPARENT`].
pub const TRACESTATE: &str = "tracestate";
/// See [`TRACEPARENT`].
pub const BAGGAGE: &str = "baggage";
/// The X-Ray header a Lambda invocation's trace travels in (CONTRACT O2).
pub const X_AMZN_TRACE_ID: &str = "x-amzn-trace-id";

/// Longest `X-Amzn-Trace-Id` passed on, in bytes (CONTRACT O2).
const MAX_XRAY_BYTES: usize = 256;

/// Up to three trace values of one source, as text.
#[derive(Debug, Default, Clone, Copy)]
struct Fields<'a> {
    traceparent: Option<&'a str>,
    tracestate: Option<&'a str>,
    baggage: Option<&'a str>,
}

impl Extractor for Fields<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            TRACEPARENT => self.traceparent,
            TRACESTATE => self.tracestate,
            BAGGAGE => self.baggage,
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec![TRACEPARENT, TRACESTATE, BAGGAGE]
    }
}

/// Whether `value` has the exact W3C traceparent shape: `vv-<32 hex>-<16 hex>-ff` in lower-case
/// hex, exactly 55 characters for version `00`, a later version followed by `-` and more
/// (W3C Trace Context §3.2). The propagator checks the rest (version `ff`, all-zero ids).
fn has_traceparent_shape(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.len() < 55 {
        return false;
    }
    let hex = |range: std::ops::Range<usize>| {
        bytes[range]
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
    };
    let dashes = bytes[2] == b'-' && bytes[35] == b'-' && bytes[52] == b'-';
    let length = if &bytes[..2] == b"00" {
        bytes.len() == 55
    } else {
        bytes.len() == 55 || bytes[55] == b'-'
    };
    dashes && length && hex(0..2) && hex(3..35) && hex(36..52) && hex(53..55)
}

/// The remote parent of one source, `None` unless its traceparent is valid (CONTRACT O1). Its
/// tracestate is kept only when it is valid as a whole ([`super::w3c::tracestate_is_valid`]).
fn parent_of(fields: Fields<'_>) -> Option<SpanContext> {
    if !fields.traceparent.is_some_and(has_traceparent_shape) {
        return None;
    }
    let fields = Fields {
        tracestate: fields
            .tracestate
            .filter(|t| super::w3c::tracestate_is_valid(t)),
        ..fields
    };
    let context = TraceContextPropagator::new().extract(&fields);
    let span = context.span();
    let parent = span.span_context();
    parent.is_valid().then(|| parent.clone())
}

/// CONTRACT O2: printable ASCII (0x20–0x7E) without a leading or trailing space, so that no
/// value can splice or fold a header of the Tool Service call.
fn header_safe(value: &str) -> bool {
    !value.is_empty()
        && value.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && !value.starts_with(' ')
        && !value.ends_with(' ')
}

/// The trace facts of one request as the pipeline learns them (CONTRACT O1), then the ids
/// the gateway gives it ([`super::Tracing::decide`]).
#[derive(Debug, Clone)]
pub struct RequestTrace {
    /// When the request arrived (the server span's start).
    pub(super) started: SystemTime,
    /// The HTTP method, the span name when no JSON-RPC method was read (CONTRACT O4).
    pub(super) http_method: http::Method,
    /// The remote parent, when one source carried a valid traceparent.
    pub(super) parent: Option<SpanContext>,
    /// Whether the parent came from `params._meta` (else from headers).
    pub(super) parent_from_meta: bool,
    /// The caller's baggage, as the propagator writes it again.
    pub(super) baggage: Option<String>,
    /// The Lambda invocation's X-Ray header value, when header-safe (CONTRACT O1, O2).
    pub(super) xray: Option<String>,
    /// The JSON-RPC id as text, for `jsonrpc.request.id` (CONTRACT O4).
    pub(super) rpc_id: Option<String>,
    /// The ids and sampling decision, once made.
    pub(super) decision: Option<Decision>,
}

/// The server span's ids and the sampling decision (CONTRACT O4, O5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Decision {
    pub(super) trace_id: TraceId,
    pub(super) span_id: SpanId,
    pub(super) sampled: bool,
    /// Sampled and exported: the request's spans are built.
    pub(super) recorded: bool,
}

impl RequestTrace {
    /// A request's trace from its headers (CONTRACT O1): the `traceparent`/`tracestate` and
    /// `baggage` headers, and the Lambda invocation's X-Ray value.
    #[must_use]
    pub fn from_headers(
        headers: &HeaderMap,
        method: &http::Method,
        xray: Option<&str>,
        started: SystemTime,
    ) -> Self {
        let header = |name: &str| {
            // A repeated header is no single valid value.
            let mut values = headers.get_all(name).iter();
            let first = values.next()?.to_str().ok()?;
            values.next().is_none().then_some(first)
        };
        let fields = Fields {
            traceparent: header(TRACEPARENT),
            tracestate: header(TRACESTATE),
            baggage: header(BAGGAGE),
        };
        Self {
            started,
            http_method: method.clone(),
            parent: parent_of(fields),
            parent_from_meta: false,
            baggage: fields.baggage.and_then(super::w3c::baggage_of),
            xray: xray
                .filter(|v| v.len() <= MAX_XRAY_BYTES && v.bytes().all(|b| b.is_ascii_graphic()))
                .map(str::to_string),
            rpc_id: None,
            decision: None,
        }
    }

    /// Reads `params._meta` (CONTRACT O1): a valid `traceparent` there replaces the headers'
    /// parent (with `_meta.tracestate`), and a `baggage` string there replaces the header's.
    /// Anything else there is ignored.
    pub fn read_meta(&mut self, params: Option<&Map<String, Value>>) {
        let Some(Value::Object(meta)) = params.and_then(|p| p.get("_meta")) else {
            return;
        };
        let text = |name: &str| meta.get(name).and_then(Value::as_str);
        let fields = Fields {
            traceparent: text(TRACEPARENT),
            tracestate: text(TRACESTATE),
            baggage: text(BAGGAGE),
        };
        if let Some(parent) = parent_of(fields) {
            self.parent = Some(parent);
            self.parent_from_meta = true;
        }
        // A `_meta.baggage` that is not valid is ignored as if absent.
        if let Some(baggage) = fields.baggage.and_then(super::w3c::baggage_of) {
            self.baggage = Some(baggage);
        }
    }

    /// Records the JSON-RPC id for `jsonrpc.request.id`: a string as itself, a number as its
    /// JSON text, at most 128 bytes (CONTRACT O4).
    pub fn set_rpc_id(&mut self, id: &impl serde::Serialize) {
        let text = match serde_json::to_value(id) {
            Ok(Value::String(text)) => text,
            Ok(other) => other.to_string(),
            Err(_) => return,
        };
        self.rpc_id = Some(crate::text::prefix_within(&text, 128).to_string());
    }

    /// Whether this request's spans are recorded: decided, sampled, and exported (CONTRACT O5).
    /// Nothing is kept for spans otherwise.
    #[must_use]
    pub fn records(&self) -> bool {
        self.decision.is_some_and(|d| d.recorded)
    }

    /// The trace id as 32 lowercase hex digits, once decided (CONTRACT U3).
    #[must_use]
    pub fn trace_id(&self) -> Option<String> {
        self.decision.map(|d| d.trace_id.to_string())
    }

    /// The values a Tool Service call carries (CONTRACT O2, O3) when its client span is
    /// `client`: `traceparent`, then `tracestate`, `baggage` and `x-amzn-trace-id` when the
    /// request has them, each a valid header value. Empty before the decision.
    #[must_use]
    pub fn outbound(&self, client: SpanId) -> Vec<(HeaderName, HeaderValue)> {
        let Some(decision) = self.decision else {
            return Vec::new();
        };
        let mut written: Vec<(&'static str, String)> = Vec::with_capacity(4);
        // W3C Trace Context version 00, written here rather than by the propagator: no context
        // to build for each call (the propagator writes the same text).
        written.push((
            TRACEPARENT,
            format!(
                "00-{}-{}-{:02x}",
                decision.trace_id,
                client,
                u8::from(decision.sampled)
            ),
        ));
        if let Some(state) = self
            .parent
            .as_ref()
            .map(|p| p.trace_state().header())
            .filter(|state| !state.is_empty())
        {
            written.push((TRACESTATE, state));
        }
        if let Some(baggage) = &self.baggage {
            written.push((BAGGAGE, baggage.clone()));
        }
        if let Some(xray) = &self.xray {
            written.push((X_AMZN_TRACE_ID, xray.clone()));
        }
        written
            .into_iter()
            .filter(|(_, value)| header_safe(value))
            .filter_map(|(name, value)| {
                Some((
                    HeaderName::from_static(name),
                    HeaderValue::from_str(&value).ok()?,
                ))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn o1_only_the_exact_w3c_shape_is_a_traceparent() {
        assert!(has_traceparent_shape(PARENT));
        for bad in [
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-abc-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "",
        ] {
            assert!(!has_traceparent_shape(bad), "{bad}");
        }
        // A later version may carry more after the flags.
        assert!(has_traceparent_shape(
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more"
        ));
    }

    #[test]
    fn o1_zero_ids_and_version_ff_are_no_parent() {
        for bad in [
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            let fields = Fields {
                traceparent: Some(bad),
                ..Fields::default()
            };
            assert!(parent_of(fields).is_none(), "{bad}");
        }
    }

    #[test]
    fn o2_header_safe_values_splice_no_header() {
        assert!(!header_safe("a\r\nb"));
        assert!(!header_safe(" a"));
        assert!(header_safe("a b"));
    }
}
