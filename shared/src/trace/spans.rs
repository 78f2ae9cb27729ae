//! The spans of one request as OpenTelemetry span data (CONTRACT O4): the SERVER span named and
//! attributed as the OpenTelemetry MCP conventions say (semantic-conventions-genai
//! `docs/gen-ai/mcp.md`), and one CLIENT span per Tool Service call.

use std::borrow::Cow;
use std::time::SystemTime;

use opentelemetry::trace::{
    Link, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};

use super::context::{Decision, RequestTrace};
use crate::protocol::methods;
use crate::text::prefix_within;
use crate::usage::{MAX_LOGGED_NAME_BYTES, Outcome, UsageEvent};

/// Where a Tool Service call went, as its CLIENT span names it (CONTRACT O4): never a URL,
/// path, query or account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallTarget {
    /// An HTTP Tool Service.
    Http {
        /// The HTTP method.
        method: String,
        /// The endpoint's host.
        host: String,
        /// The endpoint's port (the scheme's default when the URL names none).
        port: u16,
    },
    /// A Lambda function (CONTRACT X10).
    Lambda {
        /// The function name, without account or qualifier.
        name: String,
        /// The function's region.
        region: String,
    },
}

/// One Tool Service call, recorded for its CLIENT span (CONTRACT O4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallSpan {
    /// The span's id: the parent id of the call's `traceparent` (CONTRACT O2).
    pub span_id: SpanId,
    /// When the call started.
    pub started: SystemTime,
    /// When it ended.
    pub ended: SystemTime,
    /// Where it went.
    pub target: CallTarget,
    /// The HTTP status of the answer, when there was one.
    pub status: Option<u16>,
    /// `error.type` when the call failed: the status text of an error answer, or the failure
    /// (`timeout`, `connect`, `function_error` …).
    pub error: Option<Cow<'static, str>>,
}

fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("mcp-gateway")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build()
}

fn span_context(decision: Decision, span_id: SpanId, trace_state: TraceState) -> SpanContext {
    SpanContext::new(
        decision.trace_id,
        span_id,
        TraceFlags::SAMPLED,
        false,
        trace_state,
    )
}

/// The X-Ray trace of a Lambda invocation as a W3C span context: `Root=1-<8 hex>-<24 hex>` and
/// `Parent=<16 hex>` (CONTRACT O1); `None` when either is missing or malformed.
fn xray_link(value: &str) -> Option<Link> {
    let mut root = None;
    let mut parent = None;
    for part in value.split(';') {
        match part.split_once('=') {
            Some(("Root", v)) => root = Some(v),
            Some(("Parent", v)) => parent = Some(v),
            _ => {}
        }
    }
    let root = root?;
    let (epoch, unique) = root.strip_prefix("1-")?.split_once('-')?;
    let hex =
        |text: &str, len: usize| text.len() == len && text.bytes().all(|b| b.is_ascii_hexdigit());
    let parent = parent?;
    if !(hex(epoch, 8) && hex(unique, 24) && hex(parent, 16)) {
        return None;
    }
    let trace_id = TraceId::from_hex(&format!("{epoch}{unique}")).ok()?;
    let span_id = SpanId::from_hex(parent).ok()?;
    let context = SpanContext::new(
        trace_id,
        span_id,
        TraceFlags::default(),
        true,
        TraceState::default(),
    );
    context.is_valid().then(|| {
        Link::new(
            context,
            vec![KeyValue::new("aws.xray.trace_id", root.to_string())],
            0,
        )
    })
}

/// The SERVER span of a request (CONTRACT O4).
pub(super) fn server_span(
    trace: &RequestTrace,
    decision: Decision,
    usage: &UsageEvent,
    ended: SystemTime,
) -> SpanData {
    // Client-chosen texts are cut as the usage log cuts them (CONTRACT U1).
    let cut = |text: &str| prefix_within(text, MAX_LOGGED_NAME_BYTES).to_string();
    let method = usage.method.as_deref();
    let tool = usage
        .tool
        .name
        .as_deref()
        .filter(|_| method == Some(methods::TOOLS_CALL))
        .map(cut);
    let method = method.map(cut);
    let method = method.as_deref();
    let tool = tool.as_deref();
    let name: Cow<'static, str> = match (method, tool) {
        (Some(method), Some(tool)) => format!("{method} {tool}").into(),
        (Some(method), None) => method.to_string().into(),
        (None, _) => trace.http_method.as_str().to_string().into(),
    };
    let mut attributes = Vec::with_capacity(12);
    if let Some(method) = method {
        attributes.push(KeyValue::new("mcp.method.name", method.to_string()));
    }
    if let Some(id) = &trace.rpc_id {
        attributes.push(KeyValue::new("jsonrpc.request.id", id.clone()));
    }
    if let Some(version) = &usage.protocol_version {
        attributes.push(KeyValue::new("mcp.protocol.version", cut(version)));
    }
    if let Some(tool) = tool {
        attributes.push(KeyValue::new("gen_ai.tool.name", tool.to_string()));
        attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
    }
    if let (Some(route), true) = (&usage.route, usage.route_checked) {
        attributes.push(KeyValue::new("mcp_gateway.route", route.clone()));
    }
    // CONTRACT Z10: the policies' decision on a route with policies.
    if let Some(authz) = usage.tool.decision {
        attributes.push(KeyValue::new(AUTHZ_DECISION, authz));
    }
    attributes.push(KeyValue::new("network.transport", "tcp"));
    attributes.push(KeyValue::new("network.protocol.name", "http"));
    attributes.push(KeyValue::new(
        "http.response.status_code",
        i64::from(usage.status),
    ));
    let error: Option<String> = match usage.outcome {
        Outcome::Ok => None,
        Outcome::ToolError => Some("tool_error".into()),
        Outcome::RpcError(code) => {
            attributes.push(KeyValue::new("rpc.response.status_code", code.to_string()));
            Some(code.to_string())
        }
        Outcome::HttpError => Some(usage.status.to_string()),
    };
    let status = match error {
        Some(error) => {
            attributes.push(KeyValue::new("error.type", error));
            Status::error("")
        }
        None => Status::Unset,
    };
    let trace_state = trace
        .parent
        .as_ref()
        .map(|p| p.trace_state().clone())
        .unwrap_or_default();
    let mut links = SpanLinks::default();
    links
        .links
        .extend(trace.xray.as_deref().and_then(xray_link));
    SpanData {
        span_context: span_context(decision, decision.span_id, trace_state),
        parent_span_id: trace
            .parent
            .as_ref()
            .map_or(SpanId::INVALID, SpanContext::span_id),
        parent_span_is_remote: trace.parent.is_some(),
        span_kind: SpanKind::Server,
        name,
        start_time: trace.started,
        end_time: ended,
        attributes,
        dropped_attributes_count: 0,
        events: SpanEvents::default(),
        links,
        status,
        instrumentation_scope: scope(),
    }
}

/// The span attribute of a policies' decision (CONTRACT Z10).
const AUTHZ_DECISION: &str = "mcp_gateway.authorization.decision";

/// The CLIENT span of one Tool Service call, a child of the SERVER span (CONTRACT O4), with the
/// decision that let it through on a route with policies (Z10).
pub(super) fn client_span(
    decision: Decision,
    call: &ToolCallSpan,
    authz: Option<&'static str>,
) -> SpanData {
    let mut attributes = Vec::with_capacity(9);
    if let Some(authz) = authz {
        attributes.push(KeyValue::new(AUTHZ_DECISION, authz));
    }
    let name: Cow<'static, str> = match &call.target {
        CallTarget::Http { method, host, port } => {
            attributes.push(KeyValue::new("http.request.method", method.clone()));
            attributes.push(KeyValue::new("server.address", host.clone()));
            attributes.push(KeyValue::new("server.port", i64::from(*port)));
            method.clone().into()
        }
        CallTarget::Lambda { name, region } => {
            attributes.push(KeyValue::new("rpc.system", "aws-api"));
            attributes.push(KeyValue::new("rpc.service", "Lambda"));
            attributes.push(KeyValue::new("rpc.method", "Invoke"));
            attributes.push(KeyValue::new("faas.invoked_provider", "aws"));
            attributes.push(KeyValue::new("faas.invoked_name", name.clone()));
            attributes.push(KeyValue::new("faas.invoked_region", region.clone()));
            "Lambda.Invoke".into()
        }
    };
    if let Some(status) = call.status {
        attributes.push(KeyValue::new(
            "http.response.status_code",
            i64::from(status),
        ));
    }
    let status = match &call.error {
        Some(error) => {
            attributes.push(KeyValue::new("error.type", error.clone()));
            Status::error("")
        }
        None => Status::Unset,
    };
    SpanData {
        span_context: span_context(decision, call.span_id, TraceState::default()),
        parent_span_id: decision.span_id,
        parent_span_is_remote: false,
        span_kind: SpanKind::Client,
        name,
        start_time: call.started,
        end_time: call.ended,
        attributes,
        dropped_attributes_count: 0,
        events: SpanEvents::default(),
        links: SpanLinks::default(),
        status,
        instrumentation_scope: scope(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn o1_the_lambda_xray_trace_becomes_a_link() {
        let link =
            xray_link("Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1")
                .expect("a link");
        assert_eq!(
            link.span_context.trace_id().to_string(),
            "5759e988bd862e3fe1be46a994272793"
        );
        assert_eq!(link.span_context.span_id().to_string(), "53995c3f42cd8ad8");
        for bad in [
            "Root=1-5759e988-bd862e3fe1be46a994272793",
            "Root=2-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8",
            "Root=1-5759e988-bd86;Parent=53995c3f42cd8ad8",
            "garbage",
        ] {
            assert!(xray_link(bad).is_none(), "{bad}");
        }
    }
}
