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
/// tracestate is kept only when it is valid as a whole ([`tracestate_is_valid`]).
fn parent_of(fields: Fields<'_>) -> Option<SpanContext> {
    if !fields.traceparent.is_some_and(has_traceparent_shape) {
        return None;
    }
    let fields = Fields {
        tracestate: fields.tracestate.filter(|t| tracestate_is_valid(t)),
        ..fields
    };
    let context = TraceContextPropagator::new().extract(&fields);
    let span = context.span();
    let parent = span.span_context();
    parent.is_valid().then(|| parent.clone())
}

/// W3C Trace Context §3.3: at most 32 list members of `key=value`, every value non-empty, no key
/// twice (the propagator's own parser takes duplicates and empty values). The work is linear in
/// the text and bounded (CONTRACT O1): a text over [`MAX_TRACESTATE_BYTES`] is refused before it
/// is split, and the split stops at the 33rd member.
fn tracestate_is_valid(text: &str) -> bool {
    if text.len() > MAX_TRACESTATE_BYTES {
        return false;
    }
    let mut keys: Vec<&str> = Vec::with_capacity(MAX_TRACESTATE_MEMBERS);
    for member in text.split(',').map(str::trim).filter(|m| !m.is_empty()) {
        // The limit is enforced while counting: at most 32 keys are ever compared.
        if keys.len() == MAX_TRACESTATE_MEMBERS {
            return false;
        }
        let Some((key, value)) = member.split_once('=') else {
            return false;
        };
        if key.is_empty() || value.is_empty() || keys.contains(&key) {
            return false;
        }
        keys.push(key);
    }
    true
}

/// Longest tracestate read, in bytes: 32 members of W3C's longest key (256) and value (256)
/// with their `=` and `,` separators and some optional white space (CONTRACT O1).
const MAX_TRACESTATE_BYTES: usize = 32 * (256 + 1 + 256 + 2);
/// W3C Trace Context's limit on tracestate list members.
const MAX_TRACESTATE_MEMBERS: usize = 32;
/// W3C Baggage's limits (§3.3.1): the whole header's bytes and its list members.
const MAX_BAGGAGE_BYTES: usize = 8192;
/// See [`MAX_BAGGAGE_BYTES`].
const MAX_BAGGAGE_MEMBERS: usize = 64;

/// An RFC 7230 `tchar`, of which a baggage key is made.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// W3C Baggage's `baggage-octet` (%x21 / %x23-2B / %x2D-3A / %x3C-5B / %x5D-7E): printable ASCII
/// but space, `"`, `,`, `;` and `\`; `%` starts a percent-encoded octet.
fn is_baggage_octet(b: u8) -> bool {
    matches!(b, 0x21 | 0x23..=0x2B | 0x2D..=0x3A | 0x3C..=0x5B | 0x5D..=0x7E)
}

/// One `key OWS "=" OWS value` of a list member or property.
fn key_value_is_valid(text: &str, value_required: bool) -> bool {
    let text = text.trim_matches([' ', '\t']);
    match text.split_once('=') {
        Some((key, value)) => {
            let key = key.trim_end_matches([' ', '\t']);
            let value = value.trim_start_matches([' ', '\t']);
            !key.is_empty() && key.bytes().all(is_tchar) && value.bytes().all(is_baggage_octet)
        }
        None => !value_required && !text.is_empty() && text.bytes().all(is_tchar),
    }
}

/// The caller's baggage as received (trimmed), when the whole value is valid W3C Baggage within
/// its limits (8,192 bytes, 64 list members), else `None` (CONTRACT O1, O2). It is passed on as
/// it came, never decoded and written again: what reaches a Tool Service is exactly what the
/// caller sent, and a percent-encoded `,` or line break stays encoded.
fn baggage_of(text: &str) -> Option<String> {
    let text = text.trim_matches([' ', '\t']);
    if text.is_empty() || text.len() > MAX_BAGGAGE_BYTES {
        return None;
    }
    for (members, member) in text.split(',').enumerate() {
        // Counted while splitting: the 65th member ends the walk.
        if members == MAX_BAGGAGE_MEMBERS {
            return None;
        }
        let mut parts = member.split(';');
        if !parts.next().is_some_and(|kv| key_value_is_valid(kv, true)) {
            return None;
        }
        if !parts.all(|property| key_value_is_valid(property, false)) {
            return None;
        }
    }
    Some(text.to_string())
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
            baggage: fields.baggage.and_then(baggage_of),
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
        if let Some(baggage) = fields.baggage.and_then(baggage_of) {
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
    fn o2_valid_baggage_goes_on_as_it_came_and_invalid_baggage_not_at_all() {
        for valid in [
            "userId=alice, serverNode = DF28",
            "token=YWJj==,a=b",
            "k=v;p%2Cinjected=evil",
            "k=v;prop;other=1",
            "k=",
        ] {
            assert_eq!(baggage_of(valid).as_deref(), Some(valid), "{valid}");
        }
        assert_eq!(baggage_of("  a=1  ").as_deref(), Some("a=1"));
        for invalid in [
            "=nokey",
            "novalue",
            "k=v,",
            "k=\"quoted\"",
            "k=a b",
            "k=é",
            "k=v;p\r\nx",
            "k=v\\",
            "",
        ] {
            assert_eq!(baggage_of(invalid), None, "{invalid:?}");
        }
        // W3C's limits: 64 members, 8,192 bytes.
        let members = |n: usize| vec!["k=v"; n].join(",");
        assert!(baggage_of(&members(64)).is_some());
        assert_eq!(baggage_of(&members(65)), None);
        assert_eq!(baggage_of(&format!("k={}", "v".repeat(8191))), None);
        assert!(baggage_of(&format!("k={}", "v".repeat(8190))).is_some());
        assert!(!header_safe("a\r\nb"));
        assert!(!header_safe(" a"));
        assert!(header_safe("a b"));
    }

    #[test]
    fn o1_a_tracestate_with_a_key_twice_or_an_empty_value_is_none() {
        assert!(tracestate_is_valid(
            "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"
        ));
        assert!(tracestate_is_valid(""));
        assert!(!tracestate_is_valid("a=1,a=2"));
        assert!(!tracestate_is_valid("k="));
        assert!(!tracestate_is_valid("novalue"));
        let many: Vec<String> = (0..33).map(|i| format!("k{i}=v")).collect();
        assert!(!tracestate_is_valid(&many.join(",")));
        assert!(tracestate_is_valid(&many[..32].join(",")));
    }

    /// CONTRACT O1: the 33rd member drops the value however many follow, and a text over the
    /// byte limit is refused before it is split.
    #[test]
    fn o1_the_33rd_tracestate_member_or_the_byte_limit_drops_the_value() {
        let members: Vec<String> = (0..140_000).map(|i| format!("k{i}=v")).collect();
        let huge = members.join(",");
        assert!(huge.len() > MAX_TRACESTATE_BYTES);
        assert!(!tracestate_is_valid(&huge));
        // Within the byte limit, still refused at the 33rd member.
        let thirty_three = members[..33].join(",");
        assert!(thirty_three.len() < MAX_TRACESTATE_BYTES);
        assert!(!tracestate_is_valid(&thirty_three));
        // The longest valid one: 32 members of 256-byte keys and values.
        let longest: Vec<String> = (0..32)
            .map(|i| format!("{}{i:02}={}", "k".repeat(254), "v".repeat(256)))
            .collect();
        let longest = longest.join(",");
        assert!(longest.len() <= MAX_TRACESTATE_BYTES);
        assert!(tracestate_is_valid(&longest));
        assert!(!tracestate_is_valid(&format!(
            "{longest}{}",
            " ".repeat(MAX_TRACESTATE_BYTES)
        )));
    }
}
