//! Serving the gateway over hyper's HTTP/1.1 connections: bodies read with the
//! `MCP_MAX_REQUEST_BYTES` cap, each request handled in its own task so its usage event is
//! written even when the client goes away (CONTRACT H7, U2), request heads and bodies bounded in
//! time ([`DEFAULT_HEADER_READ_TIMEOUT`], [`DEFAULT_BODY_READ_TIMEOUT`]), on one
//! single-threaded runtime per serving thread ([`serve_threads`]).

use std::io;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use mcp_gateway::invoke::ToolInvoker;
use mcp_gateway::telemetry;
use mcp_gateway::{Gateway, InvocationContext, RequestBody};
use tokio::sync::{mpsc, oneshot, watch};

/// The default of how long a connection may take to send a request's head (request line and
/// headers), counted from when the server starts waiting for it, so also while a kept-alive
/// connection is idle between requests: 30 s. A client that connects and stays silent, or
/// stops halfway through its headers, is disconnected then instead of holding a file
/// descriptor for ever. The body has a timeout of its own, [`DEFAULT_BODY_READ_TIMEOUT`].
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The default of how long a request's body may take to arrive in full, counted from the end
/// of its head: 30 s. A client that sends a whole head and then stalls in its body (fewer
/// bytes than its `Content-Length`, or a chunked body without its last chunk) has its
/// connection closed then, without an answer (not a 408), as a stalled head is; the request
/// never reaches the gateway, so it has no usage event (CONTRACT U1), and a warning line names
/// the timeout instead. The body is also bounded in size (`MCP_MAX_REQUEST_BYTES`, CONTRACT
/// H7).
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a connection may take to send each part of a request before it is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadTimeouts {
    /// The request's head (request line and headers), and the idle time between requests
    /// (`--header-timeout`, [`DEFAULT_HEADER_READ_TIMEOUT`]).
    pub header: Duration,
    /// The request's body, from the end of its head to its last byte (`--body-timeout`,
    /// [`DEFAULT_BODY_READ_TIMEOUT`]).
    pub body: Duration,
}

/// A request whose body did not arrive in full within the body timeout: hyper closes its
/// connection without an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyTimedOut {
    /// The body timeout that ran out.
    pub timeout: Duration,
}

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "request body not received in full within {} s",
            self.timeout.as_secs()
        )
    }
}

impl std::error::Error for BodyTimedOut {}

/// One request through the gateway, whatever its path and method (the gateway answers 404 and
/// 405 itself): the body read up to `MCP_MAX_REQUEST_BYTES` within `body_timeout`, then handled
/// in a task of its own so the usage event is written even when the client goes away (CONTRACT
/// H7, U2).
///
/// # Errors
/// [`BodyTimedOut`] when the body has not arrived in full `body_timeout` after the head: the
/// request is not handled and its connection is to be closed without an answer.
pub async fn handle<I: ToolInvoker>(
    gateway: Arc<Gateway<I>>,
    request: http::Request<Incoming>,
    body_timeout: Duration,
) -> Result<http::Response<Full<Bytes>>, BodyTimedOut> {
    let (parts, mut body) = request.into_parts();
    let limit = gateway.config().max_request_bytes;
    // CONTRACT H7: a body announced over the limit is refused before any of it is read, so a
    // client cannot hold the connection open by never sending what it announced.
    let announced = parts
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok());
    let announced_over = announced.is_some_and(|length| length > limit as u64);
    let read = if announced_over {
        RequestBody::TooLarge
    } else {
        tokio::time::timeout(body_timeout, read_body(&mut body, limit))
            .await
            .map_err(|_| BodyTimedOut {
                timeout: body_timeout,
            })?
    };
    // A client that waits for `100 Continue` before a body announced over the limit has sent
    // none of it: reading would invite it.
    let awaits_continue = announced_over
        && parts
            .headers
            .get(http::header::EXPECT)
            .is_some_and(|value| value.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    if matches!(read, RequestBody::TooLarge) && !awaits_continue {
        // CONTRACT H7: answered before the body was read whole; the rest is read and dropped
        // while the answer goes out, so a client that sends its whole body first still reads
        // the 413 instead of a reset connection.
        tokio::spawn(linger(body));
    }
    let request = http::Request::from_parts(parts, read);
    let task =
        tokio::spawn(async move { gateway.handle(request, InvocationContext::default()).await });
    if let Ok(response) = task.await {
        Ok(response.map(Full::new))
    } else {
        let mut response = http::Response::new(Full::default());
        *response.status_mut() = http::StatusCode::INTERNAL_SERVER_ERROR;
        Ok(response)
    }
}

/// Most bytes of an early-answered body read and dropped after the answer (CONTRACT H7).
pub const LINGER_MAX_BYTES: usize = 64 * 1024 * 1024;
/// Longest an early-answered body is read and dropped after the answer (CONTRACT H7), as
/// nginx's lingering close: then the connection is closed.
pub const LINGER_TIME: Duration = Duration::from_secs(10);

/// Reads and drops what is left of `body`, at most [`LINGER_MAX_BYTES`] within
/// [`LINGER_TIME`]; the connection closes when it returns (CONTRACT H7).
async fn linger(mut body: Incoming) {
    let drain = async {
        let mut left = LINGER_MAX_BYTES;
        while let Some(Ok(frame)) = body.frame().await {
            let Some(data) = frame.data_ref() else {
                continue;
            };
            if data.len() >= left {
                return;
            }
            left -= data.len();
        }
    };
    let _ = tokio::time::timeout(LINGER_TIME, drain).await;
}

/// The request body, at most `limit` bytes (CONTRACT H7); past the limit the rest stays in
/// `body`.
async fn read_body(body: &mut Incoming, limit: usize) -> RequestBody {
    let mut collected = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            // The client broke off mid-body: what arrived is handled as sent.
            return RequestBody::Full(Bytes::new());
        };
        if let Some(data) = frame.data_ref() {
            if collected.len() + data.len() > limit {
                return RequestBody::TooLarge;
            }
            collected.extend_from_slice(data);
        }
    }
    RequestBody::Full(collected.freeze())
}

/// An accepted connection handed to a serving thread: the socket, deregistered from the
/// accepting runtime.
type Handoff = std::net::TcpStream;

/// Serves, with hyper's HTTP/1.1 connection and `timeouts` for each request's head and body,
/// each connection handed over on `connections`, until `stopped` turns true. Then no
/// connection is taken any more, idle ones close, and this returns once the requests in flight
/// are answered.
async fn serve_connections<I: ToolInvoker + 'static>(
    mut connections: mpsc::UnboundedReceiver<Handoff>,
    gateway: Arc<Gateway<I>>,
    mut stopped: watch::Receiver<bool>,
    timeouts: ReadTimeouts,
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(timeouts.header);
    let graceful = GracefulShutdown::new();
    loop {
        let handoff = tokio::select! {
            handoff = connections.recv() => handoff,
            _ = stopped.wait_for(|stop| *stop) => break,
        };
        let Some(stream) = handoff else {
            // The acceptor has stopped: no more connections; shutdown ends this thread.
            let _ = stopped.wait_for(|stop| *stop).await;
            break;
        };
        let io = match tokio::net::TcpStream::from_std(stream) {
            Ok(io) => io,
            Err(error) => {
                tracing::warn!(%error, "accepted connection dropped");
                continue;
            }
        };
        let gateway = Arc::clone(&gateway);
        let service = hyper::service::service_fn(move |request| {
            let gateway = Arc::clone(&gateway);
            handle(gateway, request, timeouts.body)
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(io), service));
        // A connection's end (the client closed it, reset it or timed out) is not an error of
        // the server's; a body that timed out is worth a line, as hyper closes the connection
        // without an answer.
        tokio::spawn(async move {
            if let Err(error) = connection.await
                && let Some(timed_out) = std::error::Error::source(&error)
                    .and_then(|source| source.downcast_ref::<BodyTimedOut>())
            {
                tracing::warn!(
                    body_timeout_s = timed_out.timeout.as_secs(),
                    "connection closed: {timed_out}"
                );
            }
        });
    }
    graceful.shutdown().await;
}

/// Serves on `listener` with `threads` serving threads, each a single-threaded tokio runtime
/// with a gateway of its own: the first thread `gateway`, each other thread a
/// [`Gateway::sibling`] of it with its own Tool Service connection pool, built by `invoker`.
/// The calling task accepts connections and hands them to the threads in turn, so
/// a connection, its requests and their Tool Service calls all run on one thread: no
/// cross-thread wake-ups on the request path. A connection that takes longer than
/// `timeouts.header` to send a request's head, or stays idle that long between requests, is
/// closed ([`DEFAULT_HEADER_READ_TIMEOUT`]), and so is one that takes longer than
/// `timeouts.body` to send a request's body after its head ([`DEFAULT_BODY_READ_TIMEOUT`]);
/// neither gets an answer.
///
/// Stops on the first message on `stop_requests` (a shutdown signal): the listener closes (new
/// connections are refused), idle connections close, and requests in flight get up to `grace`
/// to finish. A second message, or the end of `grace`, ends the wait at once: a client that
/// never finishes sending its request cannot hold the process.
///
/// # Errors
/// The invoker's error, or the OS error when a thread or its runtime cannot be started.
pub async fn serve_threads<J, E>(
    listener: tokio::net::TcpListener,
    gateway: Gateway<J>,
    threads: NonZeroUsize,
    invoker: impl Fn() -> Result<J, E>,
    mut stop_requests: mpsc::UnboundedReceiver<()>,
    grace: Duration,
    timeouts: ReadTimeouts,
) -> Result<(), Box<dyn std::error::Error>>
where
    J: ToolInvoker + 'static,
    E: std::error::Error + 'static,
{
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
        let stopped = stopped.clone();
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
                runtime.block_on(serve_connections(connections, gateway, stopped, timeouts));
                // Before `done`: the process may exit once every thread has reported, before
                // this thread's own end would write them.
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
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    match stream.into_std() {
                        Ok(stream) => {
                            let _ = senders[next].send(stream);
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
            tracing::warn!(
                grace_s = grace.as_secs(),
                "connections still open after the shutdown grace period: requests in flight, or clients still sending theirs"
            );
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
