//! The AWS Lambda adapter: `lambda_http` events in, the gateway service, `lambda_http` responses
//! out (CONTRACT P9, X7, H2–H4, C5; aws-lambda-rust-runtime `http-shared-resource`).
//!
//! Every event shape that reaches a function answers as the local server would: API Gateway REST
//! API (v1) and HTTP API (v2, `$default` or a named stage), Lambda Function URLs, ALB target
//! groups and the `cargo lambda watch` emulator.

use std::convert::Infallible;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use bytes::Bytes;
use lambda_http::request::{LambdaRequest, RequestContext};
use lambda_http::tower::Service;
use lambda_http::{Body, LambdaEvent, RequestExt};

use crate::invoke::ToolInvoker;
use crate::service::{Gateway, InvocationContext, RequestBody};

/// Runs the gateway on the Lambda Runtime API: the whole body of a function's `main` once the
/// gateway is built.
///
/// This is `lambda_http::run` plus [`keep_multi_value_headers`], so that a header the client
/// repeated reaches the gateway with every value, as it does on the local server.
///
/// # Errors
/// The runtime's error when the Runtime API cannot be reached or answers out of protocol.
pub async fn run<I: ToolInvoker>(gateway: Arc<Gateway<I>>) -> Result<(), lambda_http::Error> {
    let handler = lambda_http::service_fn(move |event: lambda_http::Request| {
        let gateway = Arc::clone(&gateway);
        async move {
            let deadline = deadline(&event);
            let response = handle_event(&gateway, event).await;
            // CONTRACT O5: the invocation's spans leave before it answers, but never at the
            // cost of its deadline (X7).
            gateway.flush_traces_before(deadline).await;
            Ok::<_, Infallible>(response)
        }
    });
    lambda_http::lambda_runtime::run(MultiValueHeaders(lambda_http::Adapter::from(handler))).await
}

/// Applies [`keep_multi_value_headers`] to every event before `lambda_http` converts it.
struct MultiValueHeaders<S>(S);

impl<S> Service<LambdaEvent<LambdaRequest>> for MultiValueHeaders<S>
where
    S: Service<LambdaEvent<LambdaRequest>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, mut event: LambdaEvent<LambdaRequest>) -> Self::Future {
        keep_multi_value_headers(&mut event.payload);
        self.0.call(event)
    }
}

/// Makes a REST API (v1) or ALB event keep every value of a repeated header.
///
/// These events carry each header twice: `multiValueHeaders` with every value and `headers` with
/// the last one only, and `lambda_http` lets the second overwrite the first. So `Accept:
/// application/json` followed by `Accept: text/html` would read as `text/html` alone (a 406 the
/// local server never gives, CONTRACT H2), and two `MCP-Protocol-Version` or `guid` headers as
/// one valid header (CONTRACT H4, C5). This keeps `multiValueHeaders` as the one source, adding
/// only the names that appear in `headers` alone. HTTP API and Function URL events join repeated
/// values with commas themselves and are left alone.
pub fn keep_multi_value_headers(event: &mut LambdaRequest) {
    let (single, multi) = match event {
        LambdaRequest::ApiGatewayV1(event) => (&mut event.headers, &mut event.multi_value_headers),
        LambdaRequest::Alb(event) => (&mut event.headers, &mut event.multi_value_headers),
        _ => return,
    };
    if multi.is_empty() {
        return;
    }
    for (name, value) in single.iter() {
        if !multi.contains_key(name) {
            multi.append(name.clone(), value.clone());
        }
    }
    single.clear();
}

/// Converts an event the way the functions do: `lambda_http`'s parser, then
/// [`keep_multi_value_headers`] before the conversion to a request.
///
/// # Errors
/// The parser's error when the JSON is none of the supported event shapes.
pub fn request_from_event(json: &str) -> Result<lambda_http::Request, serde_json::Error> {
    let mut event: LambdaRequest = serde_json::from_str(json)?;
    keep_multi_value_headers(&mut event);
    Ok(event.into())
}

/// The public path the client called (CONTRACT P9), from the path the event carries:
/// `stage_prefix` is the stage that event path starts with, if any; `$default` is none. A
/// `/lambda-url/<function>` prefix (the route of the `cargo lambda watch` emulator) is removed
/// too.
#[must_use]
pub fn public_path<'a>(path: &'a str, stage_prefix: Option<&str>) -> &'a str {
    let mut path = path;
    if let Some(rest) = stage_prefix
        .filter(|s| !s.is_empty() && *s != "$default")
        .and_then(|stage| path.strip_prefix('/')?.strip_prefix(stage))
        .filter(|rest| rest.is_empty() || rest.starts_with('/'))
    {
        path = if rest.is_empty() { "/" } else { rest };
    }
    if let Some(rest) = path.strip_prefix("/lambda-url/") {
        path = rest.find('/').map_or("/", |i| &rest[i..]);
    }
    if path.is_empty() { "/" } else { path }
}

/// The stage that prefixes the event's own path. A REST API event's `path` never carries its
/// stage (only `requestContext.path` does); an HTTP API event's `rawPath` carries a named stage.
/// ALB and Function URL events have none.
fn stage_prefix(request: &lambda_http::Request) -> Option<&str> {
    match request.request_context_ref()? {
        RequestContext::ApiGatewayV2(context) => context.stage.as_deref(),
        _ => None,
    }
}

/// The event's own path, before `lambda_http` put a stage in front of it: `lambda_http` adds
/// `/{stage}` to a REST API path unless the path already starts with that segment, so a stage
/// named like the first path segment (`mcp` for `/mcp/core`) could not be told apart from the
/// request URI alone.
fn event_path(request: &lambda_http::Request) -> &str {
    match request.raw_http_path() {
        "" => request.uri().path(),
        raw => raw,
    }
}

/// Percent-encodes the bytes a URI path cannot hold as they are (a REST API event's `path` is
/// decoded), keeping existing escapes.
fn encode_path(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut encoded = String::with_capacity(path.len());
    for (i, &byte) in bytes.iter().enumerate() {
        let is_escape = byte == b'%'
            && bytes.len() > i + 2
            && bytes[i + 1].is_ascii_hexdigit()
            && bytes[i + 2].is_ascii_hexdigit();
        if is_escape || byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/".contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            let _ = write!(encoded, "%{byte:02X}");
        }
    }
    encoded
}

/// The invocation deadline as an [`Instant`] (CONTRACT X7). A deadline that has already passed
/// when the event arrives is no real one and is ignored: the `cargo lambda watch` emulator sends
/// `Lambda-Runtime-Deadline-Ms: 600000`, a duration where Lambda sends epoch milliseconds, which
/// would otherwise cut every tool call to zero.
fn deadline(request: &lambda_http::Request) -> Option<Instant> {
    let context = request.lambda_context_ref()?;
    let remaining = context
        .deadline()
        .duration_since(SystemTime::now())
        .ok()
        .filter(|remaining| !remaining.is_zero())?;
    Some(Instant::now() + remaining)
}

/// Serves one Lambda HTTP event with the gateway: the public path (CONTRACT P9), the invocation
/// deadline (CONTRACT X7), the decoded body (base64 or not), and the answer as a text body.
pub async fn handle_event<I: ToolInvoker>(
    gateway: &Gateway<I>,
    request: lambda_http::Request,
) -> http::Response<Body> {
    let deadline = deadline(&request);
    // CONTRACT O1: the invocation's own X-Ray trace, never a header a client could set.
    let xray_trace_id = request
        .lambda_context_ref()
        .and_then(|context| context.xray_trace_id.clone());
    let path = encode_path(public_path(event_path(&request), stage_prefix(&request)));
    let (mut parts, body) = request.into_parts();
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
        Body::Text(text) => Bytes::from(text),
        Body::Binary(bytes) => Bytes::from(bytes),
        // `Body::Empty`, and any kind a later `lambda_http` adds (the enum is non-exhaustive).
        _ => Bytes::new(),
    };
    let request = http::Request::from_parts(parts, RequestBody::Full(body));
    let response = gateway
        .handle(
            request,
            InvocationContext {
                deadline,
                xray_trace_id,
            },
        )
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
    use super::{encode_path, public_path};

    #[test]
    fn p9_stage_and_emulator_prefixes_are_removed() {
        assert_eq!(public_path("/prod/mcp/core", Some("prod")), "/mcp/core");
        assert_eq!(public_path("/prod", Some("prod")), "/");
        assert_eq!(public_path("/mcp/core", Some("$default")), "/mcp/core");
        assert_eq!(public_path("/mcp/core", Some("prod")), "/mcp/core");
        assert_eq!(public_path("/production/x", Some("prod")), "/production/x");
        assert_eq!(public_path("/mcp/mcp/core", Some("mcp")), "/mcp/core");
        assert_eq!(
            public_path("/lambda-url/mcp-core/mcp/core", None),
            "/mcp/core"
        );
        assert_eq!(public_path("/lambda-url/mcp-core", None), "/");
        assert_eq!(public_path("", None), "/");
    }

    #[test]
    fn p9_decoded_event_paths_become_valid_uri_paths() {
        assert_eq!(encode_path("/mcp/core"), "/mcp/core");
        assert_eq!(encode_path("/mcp/a b"), "/mcp/a%20b");
        assert_eq!(encode_path("/mcp/%20"), "/mcp/%20");
        assert_eq!(encode_path("/mcp/50%"), "/mcp/50%25");
        assert_eq!(encode_path("/mcp/%zz"), "/mcp/%25zz");
        assert_eq!(encode_path("/mcp/é"), "/mcp/%C3%A9");
    }
}
