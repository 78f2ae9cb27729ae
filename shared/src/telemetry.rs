//! Log set-up for the binaries: `tracing` events as JSON lines (CloudWatch Logs Insights reads
//! them as fields) or as human text for local runs (CONTRACT U1).

use tracing_subscriber::EnvFilter;

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// One JSON object per line.
    Json,
    /// Human-readable text.
    Text,
}

/// Installs the global subscriber writing to stdout. The level comes from `RUST_LOG`
/// (default `info`). Calling it twice keeps the first subscriber.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stdout);
    let _already_set = match format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_ansi(false)
            .try_init(),
        LogFormat::Text => builder.with_ansi(false).try_init(),
    };
}
