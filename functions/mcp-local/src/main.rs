//! `mcp-local`: the gateway on loopback with the same `MCP_*` variables as the Lambda functions,
//! the `local` profile, loopback `Host` names (CONTRACT H6) and, for the baked sample manifest,
//! the in-process sample Tool Service.

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::time::Duration;

use clap::Parser;
use mcp_gateway::auth::Authenticator;
use mcp_gateway::invoke::HttpInvoker;
use mcp_gateway::registry::{RegistryError, baked_manifest, compile_bytes, load_snapshot};
use mcp_gateway::telemetry::{LogFormat, init};
use mcp_gateway::{Config, Gateway, Profile, RegistrySource};
use mcp_local::sample_tool_service::{self, SAMPLE_ORIGIN};
use mcp_local::server;

/// Runs the MCP gateway locally.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Address to serve the gateway on.
    #[arg(long, default_value = "127.0.0.1:3000")]
    listen: SocketAddr,
    /// Address of the in-process sample Tool Service (used with the baked sample manifest;
    /// port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:3001")]
    sample_tool_service: SocketAddr,
    /// Do not start the sample Tool Service.
    #[arg(long)]
    no_sample_tool_service: bool,
    /// Write logs as JSON lines (as the Lambda functions do).
    #[arg(long)]
    log_json: bool,
    /// Serving threads, each with its own single-threaded runtime and Tool Service connection
    /// pool: 1 to 256 (default: the number of CPUs available to the process).
    #[arg(long, value_parser = serving_threads)]
    threads: Option<NonZeroUsize>,
    /// Seconds a connection may take to send a request's head, and may stay idle between
    /// requests, before it is closed: 1 to 3600 (default: 30).
    #[arg(long, value_name = "SECONDS", value_parser = header_timeout)]
    header_timeout: Option<Duration>,
}

fn local_defaults() -> Config {
    Config {
        profile: Profile::Local,
        allowed_hosts: Some(vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()]),
        ..Config::fixed_defaults()
    }
}

/// mimalloc: cold-start manifest compilation and each request's JSON trees are many small
/// allocations, which glibc's allocator serves markedly slower.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The main thread's runtime loads the registry, runs the sample Tool Service and accepts
/// connections; requests are served on [`server::serve_threads`]' threads.
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Overlaps argument parsing, configuration and the manifest's fetch.
    mcp_gateway::registry::prepare_schema_checks();
    let args = Args::parse();
    init(if args.log_json {
        LogFormat::Json
    } else {
        LogFormat::Text
    });
    let config = Config::from_env(local_defaults())?;
    // Bound before the registry loads: a client that connects during the load waits in the
    // backlog for its answer instead of being refused.
    let listener = listen(args.listen)?;
    let addr = listener.local_addr()?;
    let is_sample = config.registry_source == RegistrySource::Baked("sample".into());
    // The local profile may fall back to the sample manifest, which calls the sample service.
    let uses_sample = is_sample || config.profile == Profile::Local;

    let mut sample_origin = None;
    if uses_sample && !args.no_sample_tool_service {
        let listener = tokio::net::TcpListener::bind(args.sample_tool_service).await?;
        let addr = listener.local_addr()?;
        sample_origin = Some(format!("http://{addr}"));
        tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, sample_tool_service::router()).await {
                tracing::error!(%error, "sample Tool Service stopped");
            }
        });
    }

    // The sample manifest names 127.0.0.1:3001; point it at the port actually bound.
    let snapshot = match &sample_origin {
        Some(origin) if origin != SAMPLE_ORIGIN && is_sample => rebased_sample(origin),
        _ => load_snapshot(&config.registry_source, config.profile).await,
    };
    if let Err(error) = &snapshot {
        tracing::error!(%error, "registry snapshot not loaded; tool methods answer -32603");
    }
    let mut gateway = Gateway::new(config.clone(), snapshot, HttpInvoker::from_config(&config)?);
    // MCP_AUTH=token|oauth|token+oauth: the same authenticator as the Lambda functions.
    if let Some(auth) = Authenticator::from_config(&config).await {
        eprintln!(
            "mcp-local: inbound authentication {} (table {})",
            auth.mode().label(),
            config.auth.table.as_deref().unwrap_or("-")
        );
        gateway = gateway.with_auth(auth);
    }
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN));

    eprintln!(
        "mcp-local: MCP endpoint http://{addr}{} ({} routing, registry {})",
        config.endpoint_path,
        match config.routing {
            mcp_gateway::RoutingMode::Fixed => "fixed",
            mcp_gateway::RoutingMode::Dynamic => "dynamic",
        },
        config.registry_source,
    );
    if let Some(origin) = &sample_origin {
        eprintln!("mcp-local: sample Tool Service {origin}");
    }
    server::serve_threads(
        listener,
        gateway,
        threads,
        || HttpInvoker::from_config(&config),
        shutdown_signals()?,
        SHUTDOWN_GRACE,
        args.header_timeout
            .unwrap_or(server::DEFAULT_HEADER_READ_TIMEOUT),
    )
    .await
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

/// Longest `--header-timeout` in seconds: an hour.
const MAX_HEADER_TIMEOUT_SECS: u64 = 3600;

fn header_timeout(text: &str) -> Result<Duration, String> {
    text.parse::<u64>()
        .ok()
        .filter(|secs| (1..=MAX_HEADER_TIMEOUT_SECS).contains(secs))
        .map(Duration::from_secs)
        .ok_or_else(|| {
            format!("expected a whole number of seconds from 1 to {MAX_HEADER_TIMEOUT_SECS}")
        })
}

/// How long requests in flight may take to finish after a shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// The listening socket, with a backlog of 1,024 pending connections (the kernel may cap it
/// lower) so that a burst of new clients is not turned away.
fn listen(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

/// One message per shutdown signal: Ctrl-C (SIGINT) and, on Unix, SIGTERM.
fn shutdown_signals() -> std::io::Result<tokio::sync::mpsc::UnboundedReceiver<()>> {
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    #[cfg(unix)]
    {
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        let sender = sender.clone();
        tokio::spawn(async move {
            while terminate.recv().await.is_some() {
                if sender.send(()).is_err() {
                    break;
                }
            }
        });
    }
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if sender.send(()).is_err() {
                break;
            }
        }
    });
    Ok(receiver)
}

fn rebased_sample(origin: &str) -> Result<mcp_gateway::registry::Snapshot, RegistryError> {
    let text = baked_manifest("sample")
        .unwrap_or_default()
        .replace(SAMPLE_ORIGIN, origin);
    compile_bytes("baked:sample", text.as_bytes())
}
