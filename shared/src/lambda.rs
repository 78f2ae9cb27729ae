//! The AWS Lambda adapter: `lambda_http` events in, the gateway service, `lambda_http` responses
//! out (CONTRACT P9, X7; aws-lambda-rust-runtime `http-shared-resource`).

use std::time::{Instant, SystemTime};

use bytes::Bytes;
use lambda_http::request::RequestContext;
use lambda_http::{Body, RequestExt};

use crate::invoke::ToolInvoker;
use crate::service::{Gateway, InvocationContext, RequestBody};

/// The public path the client called (CONTRACT P9): without the API Gateway stage prefix (REST
/// and HTTP API named stages; `$default` has none) and without the local emulator's
/// `/lambda-url/<function>` prefix.
#[must_use]
pub fn public_path<'a>(path: &'a str, stage: Option<&str>) -> &'a str {
    let mut path = path;
    if let Some(rest) = stage
        .filter(|s| !s.is_empty() && *s != "$default")
        .and_then(|stage| path.strip_prefix('/')?.strip_prefix(stage))
        .filter(|rest| rest.is_empty() || rest.starts_with('/'))
    {
        path = if rest.is_empty() { "/" } else { rest };
    }
    if let Some(rest) = path.strip_prefix("/lambda-url/") {
        path = rest.find('/').map_or("/", |i| &rest[i..]);
    }
    path
}

fn stage(request: &lambda_http::Request) -> Option<String> {
    match request.request_context_ref()? {
        RequestContext::ApiGatewayV1(context) => context.stage.clone(),
        RequestContext::ApiGatewayV2(context) => context.stage.clone(),
        _ => None,
    }
}

fn deadline(request: &lambda_http::Request) -> Option<Instant> {
    let context = request.lambda_context_ref()?;
    let remaining = context
        .deadline()
        .duration_since(SystemTime::now())
        .unwrap_or_default();
    Some(Instant::now() + remaining)
}

/// Serves one Lambda HTTP event with the gateway.
pub async fn handle_event<I: ToolInvoker>(
    gateway: &Gateway<I>,
    request: lambda_http::Request,
) -> http::Response<Body> {
    let deadline = deadline(&request);
    let stage = stage(&request);
    let (mut parts, body) = request.into_parts();
    let path = public_path(parts.uri.path(), stage.as_deref()).to_string();
    if path != parts.uri.path() {
        let path_and_query = match parts.uri.query() {
            Some(query) => format!("{path}?{query}"),
            None => path,
        };
        let mut uri = http::uri::Parts::from(parts.uri.clone());
        if let Ok(pq) = path_and_query.parse() {
            uri.path_and_query = Some(pq);
            if let Ok(rebuilt) = http::Uri::from_parts(uri) {
                parts.uri = rebuilt;
            }
        }
    }
    let body = match body {
        Body::Empty => Bytes::new(),
        Body::Text(text) => Bytes::from(text),
        Body::Binary(bytes) => Bytes::from(bytes),
        _ => Bytes::new(),
    };
    let request = http::Request::from_parts(parts, RequestBody::Full(body));
    let response = gateway
        .handle(request, InvocationContext { deadline })
        .await;
    response.map(|bytes| {
        if bytes.is_empty() {
            Body::Empty
        } else {
            match String::from_utf8(bytes.to_vec()) {
                Ok(text) => Body::Text(text),
                Err(e) => Body::Binary(e.into_bytes()),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::public_path;

    #[test]
    fn p9_stage_and_emulator_prefixes_are_removed() {
        assert_eq!(public_path("/prod/mcp/core", Some("prod")), "/mcp/core");
        assert_eq!(public_path("/mcp/core", Some("$default")), "/mcp/core");
        assert_eq!(public_path("/mcp/core", Some("prod")), "/mcp/core");
        assert_eq!(public_path("/production/x", Some("prod")), "/production/x");
        assert_eq!(
            public_path("/lambda-url/mcp-core/mcp/core", None),
            "/mcp/core"
        );
        assert_eq!(public_path("/lambda-url/mcp-core", None), "/");
    }
}
