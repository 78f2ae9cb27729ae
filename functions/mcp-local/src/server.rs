//! Serving the gateway with axum/hyper: bodies read with the `MCP_MAX_REQUEST_BYTES` cap, each
//! request handled in its own task so its usage event is written even when the client goes away
//! (CONTRACT H7, U2).

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use mcp_gateway::invoke::ToolInvoker;
use mcp_gateway::{Gateway, InvocationContext, RequestBody};

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
    let body = match Limited::new(body, limit).collect().await {
        Ok(collected) => RequestBody::Full(collected.to_bytes()),
        Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => RequestBody::TooLarge,
        // The client broke off mid-body: what arrived is handled as sent.
        Err(_) => RequestBody::Full(bytes::Bytes::new()),
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
