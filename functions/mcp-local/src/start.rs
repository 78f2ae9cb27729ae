//! `mcp-local`'s start-up: configuration from the same `MCP_*` variables as the Lambda functions
//! over the `local` profile and loopback `Host` names (CONTRACT H6), the registry loaded as the
//! functions load it (with the R4 retry), the in-process sample Tool Service for the baked sample
//! manifest, then the serving threads until a shutdown signal.

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::time::Duration;

use mcp_gateway::build::load_registry;
use mcp_gateway::registry::{Registry, RegistryError, Snapshot, baked_manifest, compile_manifest};
use mcp_gateway::telemetry::{LogFormat, init};
use mcp_gateway::{Config, Gateway, Profile, RegistrySource, RoutingMode};
use serde_json::Value;

use crate::args::Args;
use crate::sample_tool_service::{self, SAMPLE_ORIGIN};
use crate::server;

fn local_defaults() -> Config {
    Config {
        profile: Profile::Local,
        allowed_hosts: Some(vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()]),
        ..Config::fixed_defaults()
    }
}

/// Runs the local server until a shutdown signal (Ctrl-C or SIGTERM) and the grace period
/// after it. The port is bound before the registry loads: a client that connects during the
/// load waits in the backlog for its answer instead of being refused.
///
/// # Errors
/// A configuration variable that is malformed ([`mcp_gateway::ConfigError`]), a port that
/// cannot be bound, or an HTTP client that cannot be built.
pub async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    init(if args.log_json {
        LogFormat::Json
    } else {
        LogFormat::Text
    });
    let config = Config::from_env(local_defaults())?;
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
    let registry = match &sample_origin {
        Some(origin) if origin != SAMPLE_ORIGIN && is_sample => match rebased_sample(origin) {
            Ok(snapshot) => Registry::loaded(snapshot),
            Err(error) => {
                tracing::error!(%error, "registry snapshot not loaded; tool methods answer -32603");
                Registry::unavailable(mcp_gateway::service::NOT_LOADED)
            }
        },
        _ => load_registry(&config).await,
    };
    let gateway = Gateway::from_registry(config.clone(), registry).await?;
    // CONTRACT K3: without MCP_TASK_KEY, a key of this process (its task ids open here only).
    let gateway = if config.task_key.is_none() {
        gateway.with_task_keys(mcp_gateway::tasks::TaskKeys::random())
    } else {
        gateway
    };
    if let Some(auth) = gateway.authenticator() {
        eprintln!(
            "mcp-local: inbound authentication {} (table {})",
            auth.mode().label(),
            config.auth.table.as_deref().unwrap_or("-")
        );
    }
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN));

    eprintln!(
        "mcp-local: MCP endpoint http://{addr}{} ({} routing, registry {})",
        config.endpoint_path,
        match config.routing {
            RoutingMode::Fixed => "fixed",
            RoutingMode::Dynamic => "dynamic",
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
        || mcp_gateway::invoke::HttpInvoker::for_process(&config),
        shutdown_signals()?,
        SHUTDOWN_GRACE,
        server::ReadTimeouts {
            header: args
                .header_timeout
                .unwrap_or(server::DEFAULT_HEADER_READ_TIMEOUT),
            body: args
                .body_timeout
                .unwrap_or(server::DEFAULT_BODY_READ_TIMEOUT),
        },
    )
    .await
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

/// The baked sample manifest with every tool endpoint on [`SAMPLE_ORIGIN`] moved to `origin`,
/// patched in the parsed document (`_meta.endpoint` of each tool), then compiled.
fn rebased_sample(origin: &str) -> Result<Snapshot, RegistryError> {
    let source_name = "baked:sample";
    let text = baked_manifest("sample").unwrap_or_default();
    let mut document: Value =
        serde_json::from_str(text).map_err(|error| RegistryError::NotJson {
            source_name: source_name.into(),
            reason: error.to_string(),
        })?;
    rebase_endpoints(&mut document, origin);
    compile_manifest(&document).map_err(|problems| RegistryError::Invalid {
        source_name: source_name.into(),
        problems,
    })
}

/// Replaces the [`SAMPLE_ORIGIN`] prefix of every string `endpoint` under a tool's `_meta`, in
/// both manifest forms (`tools` at the top, or in each of `routes`).
fn rebase_endpoints(document: &mut Value, origin: &str) {
    let routes: Vec<&mut Value> = match document.get_mut("routes") {
        Some(Value::Array(routes)) => routes.iter_mut().collect(),
        _ => vec![document],
    };
    for route in routes {
        let Some(Value::Array(tools)) = route.get_mut("tools") else {
            continue;
        };
        for tool in tools {
            if let Some(Value::String(endpoint)) = tool.pointer_mut("/_meta/endpoint")
                && let Some(path) = endpoint.strip_prefix(SAMPLE_ORIGIN)
            {
                *endpoint = format!("{origin}{path}");
            }
        }
    }
}
