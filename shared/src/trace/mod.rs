//! Trace context and spans (CONTRACT O1–O5, U3).
//!
//! - [`RequestTrace`]: what one request brings (W3C traceparent, tracestate and baggage from
//!   `params._meta` or headers, the Lambda X-Ray value) and the values its Tool Service calls
//!   carry on.
//! - [`Tracing`]: the instance's sampler and span sink. It decides each request's ids and
//!   sampling and, at its end, hands the SERVER span and one CLIENT span per Tool Service call
//!   to the sink ([`export`] sends them with OTLP/HTTP). Without a sink nothing is built.
//! - `w3c`: the tracestate and baggage checks, linear and bounded (O1).

mod context;
pub mod export;
mod spans;
mod w3c;

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::SystemTime;

use opentelemetry::Context;
use opentelemetry::trace::{SpanId, SpanKind, TraceContextExt as _};
use opentelemetry_sdk::trace::{
    IdGenerator as _, RandomIdGenerator, SamplingDecision, ShouldSample as _,
};

use crate::usage::UsageEvent;
pub use context::{BAGGAGE, RequestTrace, TRACEPARENT, TRACESTATE, X_AMZN_TRACE_ID};
/// The four header names of trace context (CONTRACT O2): set by the gateway for each Tool
/// Service call, never from anything else.
pub const HEADER_NAMES: [&str; 4] = [TRACEPARENT, TRACESTATE, BAGGAGE, X_AMZN_TRACE_ID];

/// The SDK's sampler and span data, as [`Tracing::new`] and [`SpanSink::submit`] take them.
pub use opentelemetry_sdk::trace::{Sampler, SpanData};
pub use spans::{CallTarget, ToolCallSpan};

/// Where finished spans go (CONTRACT O5): [`export::OtlpSink`] in the functions.
pub trait SpanSink: Send + Sync + Debug {
    /// Takes the spans of one request; never waits on the network.
    fn submit(&self, spans: Vec<SpanData>);

    /// Sends what was submitted and waits for it, within the sink's time limit (on Lambda,
    /// before the invocation answers).
    fn flush(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

/// The instance's sampler and span sink (CONTRACT O5).
#[derive(Debug, Clone)]
pub struct Tracing {
    sampler: Sampler,
    sink: Option<Arc<dyn SpanSink>>,
}

impl Default for Tracing {
    /// `parentbased_always_on` and no sink: trace context travels (O2), nothing is exported.
    fn default() -> Self {
        Self::new(Sampler::ParentBased(Box::new(Sampler::AlwaysOn)), None)
    }
}

impl Tracing {
    /// Tracing with `sampler` and, when exporting, `sink`.
    #[must_use]
    pub fn new(sampler: Sampler, sink: Option<Arc<dyn SpanSink>>) -> Self {
        Self { sampler, sink }
    }

    /// Whether spans are exported.
    #[must_use]
    pub fn exports(&self) -> bool {
        self.sink.is_some()
    }

    /// Gives the request its trace id (the parent's, else a new random one), its server span
    /// id and the sampler's decision (CONTRACT O4, O5); a second call changes nothing.
    pub fn decide(&self, trace: &mut RequestTrace, method: Option<&str>) {
        if trace.decision.is_some() {
            return;
        }
        let ids = RandomIdGenerator::default();
        let trace_id = trace.parent.as_ref().map_or_else(
            || ids.new_trace_id(),
            opentelemetry::trace::SpanContext::trace_id,
        );
        let parent = trace
            .parent
            .clone()
            .map(|p| Context::new().with_remote_span_context(p));
        let result = self.sampler.should_sample(
            parent.as_ref(),
            trace_id,
            method.unwrap_or(trace.http_method.as_str()),
            &SpanKind::Server,
            &[],
            &[],
        );
        let sampled = result.decision == SamplingDecision::RecordAndSample;
        trace.decision = Some(context::Decision {
            trace_id,
            span_id: ids.new_span_id(),
            sampled,
            recorded: sampled && self.sink.is_some(),
        });
    }

    /// Ends the request's trace: decides it if nothing did yet, and when it is sampled and
    /// spans are exported, submits its SERVER span and the CLIENT span of its Tool Service
    /// call. Returns the trace id for the usage event (CONTRACT U3).
    pub fn finish(&self, trace: &mut RequestTrace, usage: &UsageEvent) -> Option<String> {
        self.decide(trace, usage.method.as_deref());
        let decision = trace.decision?;
        if let Some(sink) = self.sink.as_ref().filter(|_| decision.recorded) {
            let ended = SystemTime::now();
            let mut spans = Vec::with_capacity(2);
            if let Some(call) = &usage.tool.span {
                spans.push(spans::client_span(decision, call, usage.tool.decision));
            }
            spans.push(spans::server_span(trace, decision, usage, ended));
            sink.submit(spans);
        }
        trace.trace_id()
    }

    /// Sends the spans submitted so far and waits for them (CONTRACT O5); at once without a
    /// sink.
    pub async fn flush(&self) {
        if let Some(sink) = &self.sink {
            sink.flush().await;
        }
    }
}

/// A new span id for a Tool Service call's CLIENT span (CONTRACT O2).
#[must_use]
pub fn new_span_id() -> SpanId {
    RandomIdGenerator::default().new_span_id()
}
