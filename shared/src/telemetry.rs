//! Log set-up for the binaries: `tracing` events as JSON lines (CloudWatch Logs Insights reads
//! them as fields) or as human text for local runs (CONTRACT U1).
//!
//! In JSON mode the usage event of each request is written by
//! [`UsageMetricsLayer`](crate::usage::UsageMetricsLayer) as a CloudWatch Embedded Metric Format
//! document (the same fields, plus metrics); every other event by the JSON formatter.

use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{Layer as _, fmt};

use crate::usage::{DEFAULT_NAMESPACE, USAGE_TARGET, UsageMetricsLayer};

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// One JSON object per line; usage events are EMF documents.
    Json,
    /// Human-readable text.
    Text,
}

/// The CloudWatch namespace of the usage metrics: `MCP_METRICS_NAMESPACE` when it is 1–255
/// printable ASCII characters, else [`DEFAULT_NAMESPACE`].
#[must_use]
pub fn metrics_namespace(value: Option<&str>) -> String {
    match value.map(str::trim) {
        Some(name)
            if (1..=255).contains(&name.len())
                && name.bytes().all(|b| b.is_ascii_graphic() || b == b' ') =>
        {
            name.to_string()
        }
        _ => DEFAULT_NAMESPACE.to_string(),
    }
}

/// Crates whose debug and trace events print request and response contents (a delegation
/// item's key, a Tool Service body): kept at `info` whatever `RUST_LOG` says (CONTRACT C6, A11).
const CONTENT_LOGGING_TARGETS: &[&str] = &[
    "aws_smithy_runtime",
    "aws_smithy_runtime_api",
    "aws_smithy_http_client",
    "aws_sdk_dynamodb",
    "aws_sdk_s3",
    "aws_sdk_sts",
    "aws_config",
    "reqwest",
    "hyper",
    "hyper_util",
    "h2",
];

/// `RUST_LOG` (default `info`) with [`CONTENT_LOGGING_TARGETS`] capped at `info`.
fn log_filter() -> EnvFilter {
    let mut filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    for target in CONTENT_LOGGING_TARGETS {
        if let Ok(directive) = format!("{target}=info").parse() {
            filter = filter.add_directive(directive);
        }
    }
    filter
}

/// Installs the global subscriber writing to stdout. The level comes from `RUST_LOG`
/// (default `info`; crates that would log request contents stay at `info`), the metrics
/// namespace from `MCP_METRICS_NAMESPACE` (default `McpGateway`). Calling it twice keeps the
/// first subscriber.
pub fn init(format: LogFormat) {
    let filter = log_filter();
    let _already_set = match format {
        LogFormat::Json => {
            let namespace =
                metrics_namespace(std::env::var("MCP_METRICS_NAMESPACE").ok().as_deref());
            let lines = fmt::layer()
                .json()
                .flatten_event(true)
                .with_current_span(false)
                .with_ansi(false)
                .with_writer(std::io::stdout)
                .with_filter(filter_fn(|metadata| metadata.target() != USAGE_TARGET));
            tracing_subscriber::registry()
                .with(filter)
                .with(lines)
                .with(UsageMetricsLayer::new(&namespace, std::io::stdout))
                .try_init()
        }
        LogFormat::Text => tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stdout)
            .with_ansi(false)
            .finish()
            .try_init(),
    };
}

#[cfg(test)]
mod tests {
    use super::metrics_namespace;

    #[test]
    fn u1_metrics_namespace_defaults_when_unset_or_malformed() {
        assert_eq!(metrics_namespace(None), "McpGateway");
        assert_eq!(metrics_namespace(Some("")), "McpGateway");
        assert_eq!(metrics_namespace(Some("bad\nname")), "McpGateway");
        assert_eq!(metrics_namespace(Some(&"n".repeat(256))), "McpGateway");
        assert_eq!(metrics_namespace(Some(" Team/MCP ")), "Team/MCP");
    }
}
