//! Serving the gateway with axum/hyper: bodies read with the `MCP_MAX_REQUEST_BYTES` cap, each
//! request handled in its own task so its usage event is written even when the client goes away
//! (CONTRACT H7, U2), on one single-threaded runtime per serving thread ([`serve_threads`]).

use std::io;
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use axum::serve::Listener;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use mcp_gateway::invoke::ToolInvoker;
use mcp_gateway::telemetry;
use mcp_gateway::{Gateway, InvocationContext, RequestBody};
use tokio::sync::{mpsc, oneshot, watch};

/// A router that sends every path and method to the gateway (it answers 404/405 itself).
pub fn router<I: ToolInvoker>(gateway: Arc<Gateway<I>>) -> Router {
    Router::new().fallback(handle::<I>).with_state(gateway)
}

async fn handle<I: ToolInvoker>(
    State(gateway): State<Arc<Gateway<I>>>,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let limit = gateway.config().max_request_bytes;
    // CONTRACT H7: a body announced over the limit is refused before any of it is read, so a
    // client cannot hold the connection open by never sending what it announced.
    let announced = parts
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok());
    let body = if announced.is_some_and(|length| length > limit as u64) {
        RequestBody::TooLarge
    } else {
        read_body(body, limit).await
    };
    let request = http::Request::from_parts(parts, body);
    let task =
        tokio::spawn(async move { gateway.handle(request, InvocationContext::default()).await });
    match task.await {
        Ok(response) => response.map(Body::from),
        Err(_) => {
            let mut response = Response::new(Body::empty());
            *response.status_mut() = http::StatusCode::INTERNAL_SERVER_ERROR;
            response
        }
    }
}

/// The request body, at most `limit` bytes (CONTRACT H7).
async fn read_body(body: Body, limit: usize) -> RequestBody {
    match Limited::new(body, limit).collect().await {
        Ok(collected) => RequestBody::Full(collected.to_bytes()),
        Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => RequestBody::TooLarge,
        // The client broke off mid-body: what arrived is handled as sent.
        Err(_) => RequestBody::Full(bytes::Bytes::new()),
    }
}

/// An accepted connection handed to a serving thread: the socket (deregistered from the
/// accepting runtime) and the peer address.
type Handoff = (std::net::TcpStream, SocketAddr);

/// The connections one serving thread is handed, as an axum [`Listener`].
struct HandoffListener {
    connections: mpsc::UnboundedReceiver<Handoff>,
    local_addr: SocketAddr,
}

impl Listener for HandoffListener {
    type Io = tokio::net::TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Some((stream, peer)) = self.connections.recv().await else {
                // The acceptor has stopped: no more connections; shutdown ends this thread.
                return std::future::pending().await;
            };
            match tokio::net::TcpStream::from_std(stream) {
                Ok(io) => return (io, peer),
                Err(error) => tracing::warn!(%error, "accepted connection dropped"),
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local_addr)
    }
}

/// Serves on `listener` with `threads` serving threads, each a single-threaded tokio runtime
/// with a gateway of its own: the first thread `gateway`, each other thread a
/// [`Gateway::sibling`] of it with its own Tool Service connection pool, built by `invoker`.
/// The calling task accepts connections and hands them to the threads in turn, so
/// a connection, its requests and their Tool Service calls all run on one thread: no
/// cross-thread wake-ups on the request path.
///
/// Stops on the first message on `stop_requests` (a shutdown signal): the listener closes (new
/// connections are refused), idle connections close, and requests in flight get up to `grace`
/// to finish. A second message, or the end of `grace`, ends the wait at once: a client that
/// never finishes sending its request cannot hold the process.
///
/// # Errors
/// The invoker's error, or the OS error when a thread cannot be started or the listener's
/// address cannot be read.
pub async fn serve_threads<J, E>(
    listener: tokio::net::TcpListener,
    gateway: Gateway<J>,
    threads: NonZeroUsize,
    invoker: impl Fn() -> Result<J, E>,
    mut stop_requests: mpsc::UnboundedReceiver<()>,
    grace: Duration,
) -> Result<(), Box<dyn std::error::Error>>
where
    J: ToolInvoker + 'static,
    E: std::error::Error + 'static,
{
    let local_addr = listener.local_addr()?;
    let (stop, stopped) = watch::channel(false);
    let mut gateways = Vec::with_capacity(threads.get());
    for _ in 1..threads.get() {
        gateways.push(gateway.sibling(invoker()?));
    }
    gateways.insert(0, gateway);
    let mut senders = Vec::with_capacity(threads.get());
    let mut finished = Vec::with_capacity(threads.get());
    for (index, gateway) in gateways.into_iter().enumerate() {
        let gateway = Arc::new(gateway);
        let (sender, connections) = mpsc::unbounded_channel();
        let (done, finished_one) = oneshot::channel::<()>();
        let mut stopped = stopped.clone();
        // The thread's log lines are written together each time its runtime goes idle: one
        // write(2) per burst of requests instead of one per request.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .on_thread_park(telemetry::write_held_lines)
            .build()?;
        std::thread::Builder::new()
            .name(format!("mcp-serve-{index}"))
            .spawn(move || {
                telemetry::hold_lines();
                runtime.block_on(async move {
                    let listener = HandoffListener {
                        connections,
                        local_addr,
                    };
                    let served = axum::serve(listener, router(gateway))
                        .with_graceful_shutdown(async move {
                            let _ = stopped.wait_for(|stop| *stop).await;
                        })
                        .await;
                    if let Err(error) = served {
                        tracing::error!(%error, "serving thread stopped");
                    }
                });
                telemetry::write_held_lines();
                let _ = done.send(());
            })?;
        senders.push(sender);
        finished.push(finished_one);
    }

    let accept = async {
        let mut next = 0;
        loop {
            match listener.accept().await {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    match stream.into_std() {
                        Ok(stream) => {
                            let _ = senders[next].send((stream, peer));
                            next = (next + 1) % senders.len();
                        }
                        Err(error) => tracing::warn!(%error, "accepted connection dropped"),
                    }
                }
                Err(error) if is_connection_error(&error) => {}
                // Out of file descriptors and the like: wait instead of spinning (as axum does).
                Err(error) => {
                    tracing::error!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    };
    tokio::select! {
        () = accept => {}
        _ = stop_requests.recv() => {}
    }
    drop(listener);
    drop(senders);
    let _ = stop.send(true);
    let all_finished = async {
        for finished_one in finished {
            let _ = finished_one.await;
        }
    };
    tokio::select! {
        () = all_finished => {}
        () = tokio::time::sleep(grace) => {
            tracing::warn!(grace_s = grace.as_secs(), "requests still open after the shutdown grace period");
        }
        Some(()) = stop_requests.recv() => {}
    }
    Ok(())
}

fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}
