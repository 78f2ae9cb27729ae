//! A loopback relay between the gateway and `cargo lambda watch`, so that the gateway's Lambda
//! Invoke API calls (CONTRACT X10) reach a real function under the emulator exactly as they
//! would reach AWS, with no special case in the gateway.
//!
//! The gateway's `AWS_ENDPOINT_URL_LAMBDA` names the relay. On that side (the Invoke API) the
//! relay bridges the three ways the emulator's Invoke API differs from AWS's:
//!
//! 1. **Function names.** The gateway sends `POST /2015-03-31/functions/<function>/invocations`
//!    with the function's ARN (or name) percent-encoded as one path segment and a
//!    `?Qualifier=` when the ARN has one; the emulator routes only bare function names (the
//!    workspace's binaries) and knows no versions. The relay forwards to the bare name and drops
//!    the query.
//! 2. **Client context.** AWS reads `X-Amz-Client-Context`, base64 of JSON; the emulator ignores
//!    it and reads `lambda-runtime-client-context` holding the JSON itself (`cargo lambda invoke`
//!    sends it unencoded: `invoke_local`, `client_context(false)` in
//!    cargo-lambda `crates/cargo-lambda-invoke/src/lib.rs`; the emulator base64-encodes what it
//!    received for the function: `process_next_request` in
//!    `crates/cargo-lambda-watch/src/runtime/functions_router.rs`, v1.9.2). The relay decodes the
//!    one into the other.
//! 3. **Function errors.** The emulator answers a function error (the runtime's
//!    `/invocation/<id>/error`) with HTTP 500 and the error JSON; AWS answers `200` with
//!    `X-Amz-Function-Error: Unhandled` and the same body (`errorType`, `errorMessage`). The relay
//!    converts a 500 whose body is such an error object; any other answer passes through.
//!
//! Everything else (the body, the other headers, the status) passes through unchanged, and the
//! relay records every Invoke request it received for the tests' assertions.
//!
//! **The Runtime API side.** The emulator differs from AWS once more, where the function polls
//! for its next event: AWS's Runtime API hands the runtime `Lambda-Runtime-Client-Context` as
//! JSON (the Rust runtime parses it as JSON: `Context::new` in lambda_runtime 1.5.0), while the
//! emulator hands over the base64 of it (`functions_router.rs` above), which the Rust runtime
//! cannot parse: the function exits with `Error("expected value", line: 1, column: 1)` and the
//! invocation never answers. The relay therefore also serves the Runtime API: a cargo runner
//! ([`Relay::write_runner`]) points each function that `cargo lambda watch` starts at the relay
//! (`AWS_LAMBDA_RUNTIME_API`), and the relay forwards those calls to the emulator unchanged but
//! for that one header, base64-decoded back to the JSON AWS would send.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

/// The header AWS's Invoke API reads the client context from (base64 of JSON).
const AMZ_CLIENT_CONTEXT: &str = "x-amz-client-context";
/// The header the emulator's Invoke API reads it from (JSON), and the Runtime API's header.
const RUNTIME_CLIENT_CONTEXT: &str = "lambda-runtime-client-context";
/// The Invoke API path prefix.
const INVOKE_PREFIX: &str = "/2015-03-31/functions/";
/// The largest body the relay reads (Lambda's synchronous payload limit is 6 MB).
const MAX_BODY: usize = 16 * 1024 * 1024;

/// One Invoke API request as the relay received it.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    /// The request method.
    pub(crate) method: String,
    /// The path and query as received (percent-encoded).
    pub(crate) path_and_query: String,
    /// The bare function name the relay forwarded to.
    pub(crate) function: String,
    /// The `Qualifier` query parameter, when there was one.
    pub(crate) qualifier: Option<String>,
    /// Every header, names lower-case, in the order received.
    pub(crate) headers: Vec<(String, String)>,
    /// `X-Amz-Client-Context` decoded (base64, then JSON), when present and decodable.
    pub(crate) client_context: Option<Value>,
    /// The payload.
    pub(crate) body: Vec<u8>,
}

impl Recorded {
    /// The first value of the header `name` (lower-case).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug)]
struct Shared {
    emulator_port: AtomicU16,
    recorded: Mutex<Vec<Recorded>>,
    client: reqwest::Client,
}

/// The relay, serving on a free loopback port until dropped.
#[derive(Debug)]
pub(crate) struct Relay {
    port: u16,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    /// Starts serving; [`Relay::forward_to`] names the emulator once it listens.
    pub(crate) async fn start() -> Self {
        mcp_gateway::tls::install_crypto_provider();
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("relay port");
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Shared {
            emulator_port: AtomicU16::new(0),
            recorded: Mutex::new(Vec::new()),
            client: reqwest::Client::builder()
                .no_proxy()
                .build()
                .expect("relay client"),
        });
        let app = axum::Router::new()
            .fallback(relay)
            .with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { port, shared, task }
    }

    /// Forwards to the emulator listening on `port`.
    pub(crate) fn forward_to(&self, port: u16) {
        self.shared.emulator_port.store(port, Ordering::SeqCst);
    }

    /// `http://127.0.0.1:<port>`: the gateway's `AWS_ENDPOINT_URL_LAMBDA`.
    pub(crate) fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The Invoke API requests received so far.
    pub(crate) fn recorded(&self) -> Vec<Recorded> {
        self.shared
            .recorded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Writes the cargo runner that starts a function with its Runtime API at the relay, and
    /// returns the variable that names it to cargo (`CARGO_TARGET_<host triple>_RUNNER`).
    pub(crate) fn write_runner(&self, dir: &Path) -> (String, PathBuf) {
        let script = dir.join("runtime-api-via-relay.sh");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\n\
                 # Started by `cargo run` under `cargo lambda watch`: the function's Runtime API\n\
                 # calls go through the test relay (tests/lambda_watch/relay.rs), same path.\n\
                 rest=\"${{AWS_LAMBDA_RUNTIME_API#*//}}\"\n\
                 case \"$rest\" in\n\
                 */*) AWS_LAMBDA_RUNTIME_API=\"http://127.0.0.1:{}/${{rest#*/}}\" ;;\n\
                 *) AWS_LAMBDA_RUNTIME_API=\"127.0.0.1:{}\" ;;\n\
                 esac\n\
                 export AWS_LAMBDA_RUNTIME_API\n\
                 exec \"$@\"\n",
                self.port, self.port
            ),
        )
        .expect("runner script");
        std::process::Command::new("chmod")
            .arg("+x")
            .arg(&script)
            .status()
            .expect("chmod");
        let version = std::process::Command::new("rustc")
            .arg("-vV")
            .output()
            .expect("rustc -vV");
        let host = String::from_utf8_lossy(&version.stdout)
            .lines()
            .find_map(|line| line.strip_prefix("host: ").map(str::to_string))
            .expect("rustc names its host");
        let variable = format!(
            "CARGO_TARGET_{}_RUNNER",
            host.to_uppercase().replace(['-', '.'], "_")
        );
        (variable, script)
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The bare function name and the qualifier of an Invoke API path segment, percent-decoded: a
/// function ARN (`arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]`), a partial
/// ARN (`<account>:function:<name>[:<qualifier>]`) or a name (`<name>[:<qualifier>]`).
fn function_name(segment: &str) -> (String, Option<String>) {
    let decoded = percent_encoding::percent_decode_str(segment)
        .decode_utf8_lossy()
        .into_owned();
    let parts: Vec<&str> = decoded.split(':').collect();
    let rest = match parts.iter().position(|part| *part == "function") {
        Some(at) => &parts[at + 1..],
        None => &parts[..],
    };
    (
        rest.first().copied().unwrap_or_default().to_string(),
        rest.get(1).map(|qualifier| (*qualifier).to_string()),
    )
}

/// The `Qualifier` of a query string.
fn query_qualifier(query: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        pair.strip_prefix("Qualifier=").map(|value| {
            percent_encoding::percent_decode_str(value)
                .decode_utf8_lossy()
                .into_owned()
        })
    })
}

/// Base64 text decoded to UTF-8 JSON text, when it is that.
fn decode_context(value: &HeaderValue) -> Option<String> {
    let bytes = STANDARD.decode(value.as_bytes()).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    serde_json::from_str::<Value>(&text).ok()?;
    Some(text)
}

fn bad_gateway(message: String) -> Response {
    let mut response = Response::new(Body::from(message));
    *response.status_mut() = StatusCode::BAD_GATEWAY;
    response
}

/// Copies the headers that make sense on a forwarded message (not the framing ones).
fn copy_headers(from: &HeaderMap, to: &mut HeaderMap) {
    for (name, value) in from {
        if !matches!(
            name.as_str(),
            "host" | "content-length" | "transfer-encoding" | "connection"
        ) {
            to.append(name.clone(), value.clone());
        }
    }
}

async fn relay(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let emulator = shared.emulator_port.load(Ordering::SeqCst);
    let (parts, body) = request.into_parts();
    let Ok(body) = to_bytes(body, MAX_BODY).await else {
        return bad_gateway("relay: the request body could not be read".into());
    };
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().unwrap_or_default().to_string();
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or_else(|| path.clone(), ToString::to_string);

    let mut headers = HeaderMap::new();
    copy_headers(&parts.headers, &mut headers);
    let invoke = path
        .strip_prefix(INVOKE_PREFIX)
        .and_then(|rest| rest.strip_suffix("/invocations"))
        .filter(|segment| !segment.contains('/'))
        .map(function_name);
    let forward_path = if let Some((function, qualifier)) = &invoke {
        // (b) X-Amz-Client-Context (base64 JSON) → lambda-runtime-client-context (JSON).
        let context = headers.remove(AMZ_CLIENT_CONTEXT);
        let decoded = context.as_ref().and_then(decode_context);
        if let Some(json) = &decoded {
            headers.insert(
                HeaderName::from_static(RUNTIME_CLIENT_CONTEXT),
                HeaderValue::from_bytes(json.as_bytes()).expect("JSON is a header value"),
            );
        }
        shared
            .recorded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Recorded {
                method: parts.method.to_string(),
                path_and_query: path_and_query.clone(),
                function: function.clone(),
                qualifier: query_qualifier(&query).or_else(|| qualifier.clone()),
                headers: parts
                    .headers
                    .iter()
                    .map(|(n, v)| {
                        (
                            n.as_str().to_string(),
                            String::from_utf8_lossy(v.as_bytes()).into_owned(),
                        )
                    })
                    .collect(),
                client_context: decoded.and_then(|json| serde_json::from_str(&json).ok()),
                body: body.to_vec(),
            });
        // (a) The bare function name, no qualifier.
        format!("{INVOKE_PREFIX}{function}/invocations")
    } else {
        // The Runtime API (and anything else): the same path and query.
        path_and_query.clone()
    };

    let url = format!("http://127.0.0.1:{emulator}{forward_path}");
    let forwarded = shared
        .client
        .request(parts.method.clone(), &url)
        .headers(headers)
        .body(body)
        .send()
        .await;
    let upstream = match forwarded {
        Ok(upstream) => upstream,
        Err(error) => return bad_gateway(format!("relay: {url}: {error}")),
    };
    let status = upstream.status();
    let upstream_headers = upstream.headers().clone();
    let Ok(answer) = upstream.bytes().await else {
        return bad_gateway(format!("relay: {url}: the answer could not be read"));
    };

    let mut response = Response::new(Body::from(answer.clone()));
    *response.status_mut() = status;
    copy_headers(&upstream_headers, response.headers_mut());
    if invoke.is_some() {
        // (c) A function error: 500 + the error JSON → 200 + X-Amz-Function-Error.
        let is_function_error = status == StatusCode::INTERNAL_SERVER_ERROR
            && serde_json::from_slice::<Value>(&answer).is_ok_and(|error| {
                error.get("errorMessage").is_some() || error.get("errorType").is_some()
            });
        if is_function_error {
            *response.status_mut() = StatusCode::OK;
            let headers = response.headers_mut();
            headers.insert(
                HeaderName::from_static("x-amz-function-error"),
                HeaderValue::from_static("Unhandled"),
            );
            headers.insert(
                axum::http::header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
        }
    } else if let Some(decoded) = response
        .headers()
        .get(RUNTIME_CLIENT_CONTEXT)
        .and_then(decode_context)
    {
        // The Runtime API: the client context as JSON, as AWS hands it to the runtime.
        response.headers_mut().insert(
            HeaderName::from_static(RUNTIME_CLIENT_CONTEXT),
            HeaderValue::from_bytes(decoded.as_bytes()).expect("JSON is a header value"),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invoke_paths_name_the_bare_function() {
        assert_eq!(
            function_name(
                "arn%3Aaws%3Alambda%3Aus-east-1%3A123456789012%3Afunction%3Asample-lambda-tool"
            ),
            ("sample-lambda-tool".to_string(), None)
        );
        assert_eq!(
            function_name("arn:aws:lambda:us-east-1:123456789012:function:sample-lambda-tool:live"),
            ("sample-lambda-tool".to_string(), Some("live".to_string()))
        );
        assert_eq!(
            function_name("sample-lambda-tool"),
            ("sample-lambda-tool".to_string(), None)
        );
        assert_eq!(query_qualifier("Qualifier=live"), Some("live".to_string()));
    }
}
