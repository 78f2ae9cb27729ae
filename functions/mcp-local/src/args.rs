//! `mcp-local`'s command line: listen address, the sample Tool Service, log format, serving
//! threads, and the header-read and body-read timeouts.

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::time::Duration;

use clap::Parser;

/// Runs the MCP gateway locally.
#[derive(Debug, Parser)]
#[command(version, about)]
pub struct Args {
    /// Address to serve the gateway on.
    #[arg(long, default_value = "127.0.0.1:3000")]
    pub listen: SocketAddr,
    /// Address of the in-process sample Tool Service (used with the baked sample manifest;
    /// port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:3001")]
    pub sample_tool_service: SocketAddr,
    /// Do not start the sample Tool Service.
    #[arg(long)]
    pub no_sample_tool_service: bool,
    /// Write logs as JSON lines (as the Lambda functions do).
    #[arg(long)]
    pub log_json: bool,
    /// Serving threads, each with its own single-threaded runtime and Tool Service connection
    /// pool: 1 to 256 (default: the number of CPUs available to the process).
    #[arg(long, value_parser = serving_threads)]
    pub threads: Option<NonZeroUsize>,
    /// Seconds a connection may take to send a request's head, and may stay idle between
    /// requests, before it is closed: 1 to 3600 (default: 30).
    #[arg(long, value_name = "SECONDS", value_parser = timeout_seconds)]
    pub header_timeout: Option<Duration>,
    /// Seconds a request's body may take to arrive in full, counted from the end of its head;
    /// a connection whose body is still incomplete then is closed without an answer: 1 to 3600
    /// (default: 30).
    #[arg(long, value_name = "SECONDS", value_parser = timeout_seconds)]
    pub body_timeout: Option<Duration>,
}

/// Most serving threads `--threads` accepts: each holds a runtime, file descriptors and a
/// connection pool of its own.
const MAX_THREADS: usize = 256;

fn serving_threads(text: &str) -> Result<NonZeroUsize, String> {
    text.parse::<NonZeroUsize>()
        .ok()
        .filter(|n| n.get() <= MAX_THREADS)
        .ok_or_else(|| format!("expected a whole number from 1 to {MAX_THREADS}"))
}

/// Longest `--header-timeout` and `--body-timeout` in seconds: an hour.
const MAX_TIMEOUT_SECS: u64 = 3600;

/// `--header-timeout` and `--body-timeout`: a whole number of seconds from 1 to
/// [`MAX_TIMEOUT_SECS`].
fn timeout_seconds(text: &str) -> Result<Duration, String> {
    text.parse::<u64>()
        .ok()
        .filter(|secs| (1..=MAX_TIMEOUT_SECS).contains(secs))
        .map(Duration::from_secs)
        .ok_or_else(|| format!("expected a whole number of seconds from 1 to {MAX_TIMEOUT_SECS}"))
}
