//! The sans-IO gateway service: one `http::Request` in, one `http::Response` out, every check in
//! the order CONTRACT "Order of checks" gives. Every failure becomes a response ([`Reply`],
//! STYLE 3).

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header, request::Parts};

use crate::auth::{AuthRecord, AuthRejection, Authenticator};
use crate::config::{Config, RoutingMode};
use crate::dispatch::{Call, MethodOutcome, dispatch};
use crate::invoke::{HttpInvoker, ToolInvoker};
use crate::policy::{self, Correlation, HttpRejection};
use crate::protocol::{
    ErrorObject, Message, ProtocolVersion, RequestId, encode_error, methods, parse_message,
};
use crate::registry::{Registry, RegistryError, Route, Snapshot, SourceChain, is_route_key};
use crate::usage::{Outcome, UsageEvent};

/// A request body as an adapter hands it over.
#[derive(Debug, Clone)]
pub enum RequestBody {
    /// The whole body.
    Full(Bytes),
    /// The adapter stopped reading at `MCP_MAX_REQUEST_BYTES` (CONTRACT H7).
    TooLarge,
}

/// Per-invocation facts from the platform.
#[derive(Debug, Clone, Copy, Default)]
pub struct InvocationContext {
    /// When the platform cuts the invocation off (Lambda deadline), if it does (CONTRACT X7).
    pub deadline: Option<Instant>,
}

/// Why the gateway could not be built at cold start.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The HTTP client could not be built.
    #[error("tool invoker: {0}")]
    Invoker(#[from] reqwest::Error),
}

/// The gateway: configuration, the registry snapshot of this warm instance, a tool invoker and,
/// when `MCP_AUTH` asks for it, the inbound authenticator.
///
/// The registry and the authenticator are shared with every [`Gateway::sibling`]; the invoker
/// is each gateway's own.
pub struct Gateway<I = HttpInvoker> {
    config: Config,
    registry: Arc<Registry>,
    invoker: I,
    auth: Option<Arc<Authenticator>>,
}

/// The `-32603` detail when no snapshot is loaded (CONTRACT X8).
const NOT_LOADED: &str = "the tool registry is not loaded";

/// What the pipeline decided, before it becomes a response.
enum Reply {
    Http(HttpRejection),
    Rpc {
        id: Option<RequestId>,
        error: ErrorObject,
    },
    Result {
        body: Bytes,
        session_id: Option<String>,
    },
    Accepted,
    /// An authentication rejection: 401, 403, 429 or 503.
    Auth(AuthRejection),
    /// The protected-resource metadata document (RFC 9728), 200.
    Metadata(Bytes),
    /// A metadata path asked with another method than `GET`: 405 with `Allow: GET`.
    MetadataMethodNotAllowed,
}

impl Gateway<HttpInvoker> {
    /// Cold start: loads the snapshot from the configured source (CONTRACT R1–R3) and builds
    /// the one HTTP client of this instance. A failed load is logged and leaves the gateway
    /// serving `initialize` with tool methods answering `-32603` (CONTRACT R4, X8).
    ///
    /// # Errors
    /// [`GatewayError::Invoker`] when the HTTP client cannot be built.
    pub async fn from_config(config: Config) -> Result<Self, GatewayError> {
        let registry = match SourceChain::from_config(&config).await {
            Err(error) => {
                tracing::error!(%error, "registry source unusable; tool methods answer -32603");
                Registry::unavailable(NOT_LOADED)
            }
            Ok(chain) => match chain.load().await {
                Ok(snapshot) => Registry::loaded(snapshot),
                Err(error) => {
                    tracing::error!(%error, "registry snapshot not loaded; tool methods answer -32603 until a retry succeeds");
                    Registry::retrying(
                        NOT_LOADED,
                        chain,
                        std::time::Duration::from_secs(config.registry_retry_seconds),
                        Arc::new(Instant::now),
                    )
                }
            },
        };
        let invoker = HttpInvoker::from_config(&config)?;
        let auth = Authenticator::from_config(&config).await;
        let mut gateway = Self::with_registry(config, registry, invoker);
        gateway.auth = auth.map(Arc::new);
        Ok(gateway)
    }

    /// [`Gateway::from_config`] over `MCP_*` variables applied to `defaults`. A broken
    /// configuration does not stop the function: it is logged, the defaults serve `initialize`,
    /// and tool methods answer `-32603` saying the configuration is broken (CONTRACT X8).
    ///
    /// # Errors
    /// [`GatewayError::Invoker`] when the HTTP client cannot be built.
    pub async fn from_env_or_broken(defaults: Config) -> Result<Self, GatewayError> {
        match Config::from_env(defaults.clone()) {
            Ok(config) => Self::from_config(config).await,
            Err(error) => {
                tracing::error!(%error, "gateway configuration is broken; tool methods answer -32603");
                let invoker = HttpInvoker::from_config(&defaults)?;
                let mut gateway = Self::with_registry(
                    defaults,
                    Registry::unavailable("the gateway configuration is broken"),
                    invoker,
                );
                // A deployment that asks for authentication is never served without it.
                let asks_for_auth =
                    std::env::var("MCP_AUTH").is_ok_and(|mode| !matches!(mode.trim(), "" | "none"));
                if asks_for_auth {
                    gateway.auth = Some(Arc::new(Authenticator::misconfigured()));
                }
                Ok(gateway)
            }
        }
    }
}

impl<I: ToolInvoker> Gateway<I> {
    /// A gateway over an already loaded (or failed) snapshot and any invoker.
    #[must_use]
    pub fn new(config: Config, snapshot: Result<Snapshot, RegistryError>, invoker: I) -> Self {
        let registry = match snapshot {
            Ok(snapshot) => Registry::loaded(snapshot),
            Err(_) => Registry::unavailable(NOT_LOADED),
        };
        Self::with_registry(config, registry, invoker)
    }

    /// A gateway over any registry state (for example one that retries, CONTRACT R4).
    #[must_use]
    pub fn with_registry(config: Config, registry: Registry, invoker: I) -> Self {
        Self {
            config,
            registry: Arc::new(registry),
            invoker,
            auth: None,
        }
    }

    /// This gateway with inbound authentication.
    #[must_use]
    pub fn with_auth(mut self, auth: Authenticator) -> Self {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// A gateway with the same configuration, registry (snapshot and R4 retry state) and
    /// authenticator (rate limits, caches) that calls Tool Services through `invoker`.
    ///
    /// A server with one async runtime per thread gives each thread a sibling with its own
    /// connection pool, so a call never waits on a connection task of another thread.
    #[must_use]
    pub fn sibling<J: ToolInvoker>(&self, invoker: J) -> Gateway<J> {
        Gateway {
            config: self.config.clone(),
            registry: Arc::clone(&self.registry),
            invoker,
            auth: self.auth.clone(),
        }
    }

    /// The configuration in force.
    #[must_use]
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The loaded snapshot, `None` when the load failed.
    #[must_use]
    pub fn snapshot(&self) -> Option<&Arc<Snapshot>> {
        self.registry.current()
    }

    /// Serves one request. Never fails: every rejection is a response. Writes exactly one usage
    /// event (CONTRACT U1) and sets `guid` and `x-request-id` on every response (CONTRACT H8).
    pub async fn handle(
        &self,
        request: Request<RequestBody>,
        context: InvocationContext,
    ) -> Response<Bytes> {
        let started = Instant::now();
        let (parts, body) = request.into_parts();
        let correlation = policy::correlation(&parts.headers);
        let mut usage = UsageEvent::new(correlation.guid.clone(), correlation.request_id.clone());
        let reply = self
            .process(&parts, body, context, &correlation, &mut usage)
            .await;
        let response = self.respond(reply, &correlation, &mut usage);
        usage.emit(started.elapsed());
        response
    }

    async fn process(
        &self,
        parts: &Parts,
        body: RequestBody,
        context: InvocationContext,
        correlation: &Correlation,
        usage: &mut UsageEvent,
    ) -> Reply {
        let config = &self.config;
        let headers = &parts.headers;
        let checks = policy::check_origin(headers, &config.allowed_origins).and_then(|()| {
            policy::check_host(headers, &parts.uri, config.allowed_hosts.as_deref())
        });
        if let Err(rejection) = checks {
            return Reply::Http(rejection);
        }
        if let Some(auth) = &self.auth
            && let Some(reply) = self.authenticate(auth, parts, usage).await
        {
            return reply;
        }
        let Some(rest) = endpoint_rest(&config.endpoint_path, parts.uri.path()) else {
            return Reply::Http(HttpRejection::NotFound);
        };
        let body = match body {
            RequestBody::Full(bytes) => Some(bytes),
            RequestBody::TooLarge => None,
        };
        let checks = policy::check_method(&parts.method)
            .and_then(|()| {
                policy::check_body_size(body.as_ref().map(Bytes::len), config.max_request_bytes)
            })
            .and_then(|()| policy::check_content_type(headers))
            .and_then(|()| policy::check_accept(headers));
        if let Err(rejection) = checks {
            return Reply::Http(rejection);
        }
        let body = body.unwrap_or_default();
        let message = match parse_message(&body) {
            Ok(message) => message,
            Err(e) => {
                return Reply::Rpc {
                    id: e.id,
                    error: *e.error,
                };
            }
        };
        let (id, method, params) = match message {
            Message::Request { id, method, params } => (Some(id), Some(method), params),
            Message::Notification { method } => (None, Some(method), None),
            Message::Response => (None, None, None),
        };
        usage.method.clone_from(&method);
        let rpc_error = |error| Reply::Rpc {
            id: id.clone(),
            error,
        };

        // A request (not a notification) may make the one retry load of CONTRACT R4.
        let snapshot = if id.is_some() {
            self.registry.current_or_retry().await
        } else {
            self.registry.current()
        };
        let route_key = match self.route_key(rest, snapshot) {
            Ok(key) => key,
            Err(error) => return rpc_error(error),
        };
        usage.route = Some(route_key.to_string());
        // Without a snapshot a dynamic route key is well-formed but unchecked (CONTRACT P3).
        usage.route_checked = config.routing == RoutingMode::Fixed || snapshot.is_some();
        let caller = match policy::check_caller_headers(headers) {
            Ok(caller) => caller,
            Err(error) => return rpc_error(error),
        };
        let is_initialize = method.as_deref() == Some(methods::INITIALIZE);
        let version = if is_initialize {
            None
        } else {
            match policy::check_protocol_version(headers, &config.supported_protocol_versions) {
                Ok(v) => ProtocolVersion::from_wire(v),
                Err(rejection) => return Reply::Http(rejection),
            }
        };
        let (Some(id), Some(method)) = (id.clone(), method) else {
            return Reply::Accepted;
        };

        let (route, route_unavailable) = self.resolve_route(route_key, snapshot);
        let call = Call {
            config,
            route,
            route_unavailable: &route_unavailable,
            correlation,
            caller: &caller,
            deadline: context.deadline,
            version,
        };
        match dispatch(
            &call,
            &self.invoker,
            &id,
            &method,
            params.as_ref(),
            &mut usage.tool,
        )
        .await
        {
            MethodOutcome::Result {
                body,
                session_id,
                tool_error,
            } => {
                if tool_error {
                    usage.outcome = Outcome::ToolError;
                }
                Reply::Result { body, session_id }
            }
            MethodOutcome::Error(error) => rpc_error(error),
        }
    }

    /// The authentication chain (after Host, before the method check): the protected-resource
    /// metadata, unauthenticated and not counted, then the credential. `None` lets the request
    /// go on.
    async fn authenticate(
        &self,
        auth: &Authenticator,
        parts: &Parts,
        usage: &mut UsageEvent,
    ) -> Option<Reply> {
        let path = parts.uri.path();
        usage.auth = Some(auth.mode().label());
        // Discovery paths are never challenged: a 401 there sends clients into OAuth discovery.
        if path.starts_with("/.well-known/") {
            usage.auth_record.outcome = "discovery";
            return Some(self.metadata(auth, parts));
        }
        let route = endpoint_rest(&self.config.endpoint_path, path).and_then(|rest| {
            match self.config.routing {
                RoutingMode::Fixed => rest.is_empty().then(|| self.fixed_route_key()),
                RoutingMode::Dynamic => rest.strip_prefix('/').filter(|key| is_route_key(key)),
            }
        });
        let mut record = AuthRecord::default();
        let result = auth.authenticate(&parts.headers, route, &mut record).await;
        usage.auth_record = record;
        result.err().map(Reply::Auth)
    }

    /// RFC 9728 metadata of a route in the OAuth modes; a JSON 404 in token mode and for any
    /// other `/.well-known/` path.
    fn metadata(&self, auth: &Authenticator, parts: &Parts) -> Reply {
        let Some(resource) = auth.resource().filter(|_| auth.mode().accepts_oauth()) else {
            return Reply::Http(HttpRejection::NotFound);
        };
        let Some(route) = resource.metadata_route(parts.uri.path()) else {
            return Reply::Http(HttpRejection::NotFound);
        };
        let registered = match (route, self.registry.current()) {
            (Some(key), Some(snapshot)) => snapshot.route(key).is_some(),
            _ => true,
        };
        if !registered {
            return Reply::Http(HttpRejection::NotFound);
        }
        if parts.method != http::Method::GET {
            return Reply::MetadataMethodNotAllowed;
        }
        Reply::Metadata(resource.document(route))
    }

    /// The route key of a fixed deployment: the last segment of its endpoint path (CONTRACT M).
    fn fixed_route_key(&self) -> &str {
        self.config
            .endpoint_path
            .rsplit('/')
            .next()
            .unwrap_or_default()
    }

    /// CONTRACT P3, P4: the route key from the rest of the path after the endpoint path.
    fn route_key<'a>(
        &'a self,
        rest: &'a str,
        snapshot: Option<&Arc<Snapshot>>,
    ) -> Result<&'a str, ErrorObject> {
        match self.config.routing {
            RoutingMode::Fixed => {
                if !rest.is_empty() {
                    return Err(ErrorObject::invalid_request_exact(
                        "route key is not allowed for fixed endpoint path",
                    ));
                }
                Ok(self.fixed_route_key())
            }
            RoutingMode::Dynamic => {
                let key = rest.strip_prefix('/').unwrap_or(rest);
                if key.is_empty() {
                    return Err(ErrorObject::invalid_request_exact("route key is required"));
                }
                if !is_route_key(key) {
                    return Err(ErrorObject::invalid_request_exact("route key is invalid"));
                }
                // An instance without a snapshot cannot tell; its tool methods answer -32603.
                if snapshot.is_some_and(|s| s.route(key).is_none()) {
                    return Err(ErrorObject::invalid_request_exact(
                        "route key is not registered",
                    ));
                }
                Ok(key)
            }
        }
    }

    fn resolve_route<'a>(
        &self,
        key: &str,
        snapshot: Option<&'a Arc<Snapshot>>,
    ) -> (Option<&'a Arc<Route>>, String) {
        let Some(snapshot) = snapshot else {
            return (None, self.registry.unavailable_reason().to_string());
        };
        let route = match self.config.routing {
            RoutingMode::Fixed => snapshot.fixed_route(key),
            RoutingMode::Dynamic => snapshot.route(key),
        };
        (route, format!("route '{key}' is not in the tool registry"))
    }

    /// The one place where a [`Reply`] becomes an HTTP response (STYLE 3).
    fn respond(
        &self,
        reply: Reply,
        correlation: &Correlation,
        usage: &mut UsageEvent,
    ) -> Response<Bytes> {
        let json = HeaderValue::from_static("application/json");
        let mut builder = Response::builder();
        let body = match reply {
            Reply::Http(rejection) => {
                usage.outcome = Outcome::HttpError;
                usage.rejection = Some(rejection.code());
                builder = builder
                    .status(rejection.status())
                    .header(header::CONTENT_TYPE, json);
                if rejection == HttpRejection::MethodNotAllowed {
                    builder = builder.header(header::ALLOW, "POST");
                }
                rejection.body(&correlation.guid, &self.config.supported_protocol_versions)
            }
            Reply::Rpc { id, error } => {
                usage.outcome = Outcome::RpcError(error.code.0);
                builder = builder
                    .status(StatusCode::OK)
                    .header(header::CONTENT_TYPE, json);
                encode_error(id.as_ref(), &error.with_guid(&correlation.guid))
            }
            Reply::Result { body, session_id } => {
                builder = builder
                    .status(StatusCode::OK)
                    .header(header::CONTENT_TYPE, json);
                if let Some(session_id) = session_id {
                    builder = builder.header("mcp-session-id", session_id);
                }
                body
            }
            Reply::Accepted => {
                builder = builder.status(StatusCode::ACCEPTED);
                Bytes::new()
            }
            Reply::Auth(rejection) => {
                usage.outcome = Outcome::HttpError;
                usage.rejection = Some(rejection.code());
                builder = builder
                    .status(rejection.status())
                    .header(header::CONTENT_TYPE, json);
                for (name, value) in rejection.headers() {
                    builder = builder.header(name, value);
                }
                rejection.body(&correlation.guid)
            }
            Reply::Metadata(document) => {
                builder = builder
                    .status(StatusCode::OK)
                    .header(header::CONTENT_TYPE, json)
                    .header(header::CACHE_CONTROL, "public, max-age=300");
                document
            }
            Reply::MetadataMethodNotAllowed => {
                usage.outcome = Outcome::HttpError;
                usage.rejection = Some(HttpRejection::MethodNotAllowed.code());
                builder = builder
                    .status(StatusCode::METHOD_NOT_ALLOWED)
                    .header(header::CONTENT_TYPE, json)
                    .header(header::ALLOW, "GET");
                Bytes::from(
                    serde_json::json!({
                        "error": HttpRejection::MethodNotAllowed.code(),
                        "message": "method not allowed: the metadata document answers GET only",
                        "guid": correlation.guid,
                    })
                    .to_string(),
                )
            }
        };
        builder = builder
            .header("guid", &correlation.guid)
            .header("x-request-id", &correlation.request_id);
        let response = builder.body(body).unwrap_or_else(|_| {
            // Every header above is built from validated values; this is unreachable in
            // practice but still answers rather than panics.
            let mut response = Response::new(Bytes::new());
            *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            response
        });
        usage.status = response.status().as_u16();
        response
    }
}

/// CONTRACT P6: the part of `path` after `endpoint`, with one trailing slash ignored; `None`
/// when the path is outside the endpoint altogether.
fn endpoint_rest<'a>(endpoint: &str, path: &'a str) -> Option<&'a str> {
    let path = if path.len() > 1 {
        path.strip_suffix('/').unwrap_or(path)
    } else {
        path
    };
    let path = if path == "/" { "" } else { path };
    let rest = path.strip_prefix(endpoint)?;
    (rest.is_empty() || rest.starts_with('/')).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::endpoint_rest;

    #[test]
    fn p6_one_trailing_slash_is_ignored_and_segments_match_whole() {
        assert_eq!(endpoint_rest("/mcp/core", "/mcp/core"), Some(""));
        assert_eq!(endpoint_rest("/mcp/core", "/mcp/core/"), Some(""));
        assert_eq!(endpoint_rest("/mcp/core", "/mcp/core//"), Some("/"));
        assert_eq!(endpoint_rest("/mcp/core", "/mcp/corex"), None);
        assert_eq!(endpoint_rest("/mcp/core", "/mcp"), None);
        assert_eq!(endpoint_rest("/mcp", "/mcp/hr/"), Some("/hr"));
        assert_eq!(endpoint_rest("", "/"), Some(""));
        assert_eq!(endpoint_rest("", "/x"), Some("/x"));
    }
}
