//! The usage log and metrics: exactly one structured event per request (CONTRACT U1, U2, C6).
//!
//! Only `guid` and `x-request-id` appear as correlation values; no bodies, arguments, tool
//! outputs, employee numbers or session ids are ever logged.
//!
//! - [`UsageEvent`]: the facts of one request, written as one `tracing` event.
//! - [`UsageMetricsLayer`]: in JSON mode, writes that event as a CloudWatch Embedded Metric
//!   Format document, so the same line is queried in Logs Insights and becomes metrics.

mod event;
mod layer;
mod metrics;
mod record;

pub use event::{MAX_LOGGED_NAME_BYTES, Outcome, ToolUse, USAGE_TARGET, UsageEvent};
pub use layer::UsageMetricsLayer;
pub use metrics::{
    DEFAULT_NAMESPACE, EmfFormatter, POLICY_METRICS, REQUEST_DIMENSIONS, REQUEST_METRICS,
    ROUTE_DIMENSIONS, ROUTE_METRICS, TOOL_DIMENSIONS, TOOL_METRICS,
};
pub use record::UsageRecord;
