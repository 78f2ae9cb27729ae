//! Log set-up for the binaries: `tracing` events as JSON lines (CloudWatch Logs Insights reads
//! them as fields) or as human text for local runs (CONTRACT U1).
//!
//! In JSON mode the usage event of each request is written by
//! [`crate::usage::UsageMetricsLayer`] as a CloudWatch Embedded Metric Format
//! document (the same fields, plus metrics); every other event by the JSON formatter.
//!
//! Lines go to stdout through [`Stdout`]: at once, one `write(2)` per line, except on a thread
//! that called [`hold_lines`], which keeps its lines and writes them together at
//! [`write_held_lines`] (the local server's serving threads, when their runtime goes idle).

use std::cell::RefCell;
use std::io::{self, Write as _};

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
                .with_writer(Stdout)
                .with_filter(filter_fn(|metadata| metadata.target() != USAGE_TARGET));
            tracing_subscriber::registry()
                .with(filter)
                .with(lines)
                .with(UsageMetricsLayer::new(&namespace, Stdout))
                .try_init()
        }
        LogFormat::Text => tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(Stdout)
            .with_ansi(false)
            .finish()
            .try_init(),
    };
}

/// Bytes of held lines at which a thread writes them without waiting for
/// [`write_held_lines`]: 16 KiB, about sixteen usage documents.
pub const HELD_LINES_LIMIT: usize = 16 * 1024;

thread_local! {
    /// This thread's held lines; `None` until [`hold_lines`].
    static HELD: RefCell<Option<HeldLines>> = const { RefCell::new(None) };
}

/// Lines held on one thread and where they go, written when the thread ends should nobody
/// have written them before.
struct HeldLines {
    lines: Vec<u8>,
    sink: fn(&[u8]),
}

impl HeldLines {
    fn write_out(&mut self) {
        if !self.lines.is_empty() {
            (self.sink)(&self.lines);
            self.lines.clear();
        }
    }
}

impl Drop for HeldLines {
    fn drop(&mut self) {
        self.write_out();
    }
}

fn to_stdout(lines: &[u8]) {
    // A log line that cannot be written has nowhere else to go.
    let _ = io::stdout().lock().write_all(lines);
}

/// From now on, log lines written on this thread through [`Stdout`] are held in order and
/// written together, with one `write_all` to stdout, by [`write_held_lines`] or once they reach
/// [`HELD_LINES_LIMIT`] bytes, and at the latest when the thread ends. Lines are never split:
/// each event's line is one write. For a thread that serves many requests at once (the local
/// server's runtime threads, which call [`write_held_lines`] each time they go idle), this turns
/// one `write(2)` per request into one per burst of requests (CONTRACT U1 still holds: every
/// request's line is written, once). A runtime that stays busy without going idle writes at
/// the limit, so a line waits at most for the next fifteen or so. A process that aborts loses
/// the lines it holds.
pub fn hold_lines() {
    hold_lines_for(to_stdout);
}

fn hold_lines_for(sink: fn(&[u8])) {
    HELD.with_borrow_mut(|held| {
        held.get_or_insert_with(|| HeldLines {
            lines: Vec::with_capacity(HELD_LINES_LIMIT * 2),
            sink,
        });
    });
}

/// Writes this thread's held lines to stdout now (nothing when it holds none, or never called
/// [`hold_lines`]). Meant for tokio's `on_thread_park`: it runs before the thread waits for I/O.
pub fn write_held_lines() {
    HELD.with_borrow_mut(|held| {
        if let Some(held) = held {
            held.write_out();
        }
    });
}

/// The [`MakeWriter`](tracing_subscriber::fmt::MakeWriter) of every log line: stdout, or this
/// thread's held lines after [`hold_lines`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Stdout;

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Stdout {
    type Writer = Stdout;

    fn make_writer(&'a self) -> Self::Writer {
        Stdout
    }
}

impl io::Write for Stdout {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.write_all(bytes)?;
        Ok(bytes.len())
    }

    /// Holds `bytes` on a thread that holds lines, else writes them to stdout under one lock.
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        let held = HELD.with_borrow_mut(|held| match held {
            Some(held) => {
                held.lines.extend_from_slice(bytes);
                if held.lines.len() >= HELD_LINES_LIMIT {
                    held.write_out();
                }
                true
            }
            None => false,
        });
        if held {
            Ok(())
        } else {
            io::stdout().lock().write_all(bytes)
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        write_held_lines();
        io::stdout().flush()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::io::Write as _;

    use super::{HELD_LINES_LIMIT, Stdout, hold_lines_for, metrics_namespace, write_held_lines};

    thread_local! {
        /// What the held lines' sink received on this thread, one entry per write.
        static WRITES: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
    }

    fn record(lines: &[u8]) {
        WRITES.with_borrow_mut(|writes| writes.push(lines.to_vec()));
    }

    fn writes() -> Vec<Vec<u8>> {
        WRITES.with_borrow(Clone::clone)
    }

    #[test]
    fn u1_held_lines_are_written_together_in_order_when_the_thread_goes_idle() {
        std::thread::spawn(|| {
            hold_lines_for(record);
            Stdout.write_all(b"{\"n\":1}\n").unwrap();
            Stdout.write_all(b"{\"n\":2}\n").unwrap();
            assert!(writes().is_empty(), "held until written");
            write_held_lines();
            assert_eq!(writes(), [b"{\"n\":1}\n{\"n\":2}\n".to_vec()]);
            write_held_lines();
            assert_eq!(writes().len(), 1, "nothing held, nothing written");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn u1_held_lines_reaching_the_limit_are_written_at_once_and_never_split() {
        std::thread::spawn(|| {
            hold_lines_for(record);
            let line = format!("{{\"pad\":\"{}\"}}\n", "x".repeat(1000));
            let lines_to_limit = HELD_LINES_LIMIT.div_ceil(line.len());
            for _ in 0..lines_to_limit - 1 {
                Stdout.write_all(line.as_bytes()).unwrap();
            }
            assert!(writes().is_empty(), "under the limit, still held");
            Stdout.write_all(line.as_bytes()).unwrap();
            let written = writes();
            assert_eq!(
                written.len(),
                1,
                "the line that reaches the limit writes them all"
            );
            assert_eq!(written[0], line.repeat(lines_to_limit).into_bytes());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn u1_lines_still_held_are_written_when_the_thread_ends() {
        static ENDED: std::sync::Mutex<Vec<u8>> = std::sync::Mutex::new(Vec::new());
        fn at_end(lines: &[u8]) {
            ENDED.lock().unwrap().extend_from_slice(lines);
        }
        std::thread::spawn(|| {
            hold_lines_for(at_end);
            Stdout.write_all(b"{\"last\":true}\n").unwrap();
        })
        .join()
        .unwrap();
        assert_eq!(*ENDED.lock().unwrap(), b"{\"last\":true}\n");
    }

    #[test]
    fn u1_metrics_namespace_defaults_when_unset_or_malformed() {
        assert_eq!(metrics_namespace(None), "McpGateway");
        assert_eq!(metrics_namespace(Some("")), "McpGateway");
        assert_eq!(metrics_namespace(Some("bad\nname")), "McpGateway");
        assert_eq!(metrics_namespace(Some(&"n".repeat(256))), "McpGateway");
        assert_eq!(metrics_namespace(Some(" Team/MCP ")), "Team/MCP");
    }
}
