//! The pipeline of one request, in the order CONTRACT "Order of checks" gives: Origin (H5) and
//! Host (H6), authentication (A2), the path (P6), method, size, media types (H1–H3, H7), the
//! envelope (E), the route key (P3, P4), caller headers (C), the protocol version (H4) or the
//! modern checks (N2), and the method's dispatch. Every outcome is a [`Reply`]; [`super::respond`] makes it a response.

use std::sync::Arc;

use bytes::Bytes;
use http::StatusCode;
use http::request::Parts;

use super::modern::{self, ModernRequest};
use super::respond::Reply;
use super::{Gateway, InvocationContext, RequestBody};
use crate::auth::{AuthRecord, Authenticator};
use crate::authz::CallerFacts;
use crate::config::RoutingMode;
use crate::dispatch::{Call, MethodOutcome, dispatch, hidden_before_dispatch};
use crate::invoke::ToolInvoker;
use crate::policy::{self, Correlation, HttpRejection};
use crate::protocol::{Era, Message, declared_version, methods, parse_message};
use crate::registry::{Route, Snapshot};
use crate::routing::{RouteKeyError, RouteTarget, fixed_route_key, route_target};
use crate::trace::RequestTrace;
use crate::usage::{Outcome, UsageEvent};

impl<I: ToolInvoker> Gateway<I> {
    pub(super) async fn process(
        &self,
        parts: &Parts,
        body: RequestBody,
        context: &InvocationContext,
        correlation: &Correlation,
        usage: &mut UsageEvent,
        trace: &mut RequestTrace,
    ) -> Reply {
        let config = &self.config;
        let headers = &parts.headers;
        // CONTRACT N1, N7: the header tells the era of every request, the body refines it for a
        // POST it can read.
        let header_era = policy::header_era(headers);
        usage.era = Some(header_era);
        usage.protocol_version = policy::header_version(headers).map(str::to_string);
        let is_preflight = policy::is_preflight(&parts.method, headers);
        if is_preflight {
            usage.cors = Some("preflight");
        }
        let checks = policy::check_origin(headers, &config.allowed_origins).and_then(|()| {
            policy::check_host(headers, &parts.uri, config.allowed_hosts.as_deref())
        });
        if let Err(rejection) = checks {
            return Reply::Rejected(rejection.into());
        }
        // CONTRACT H9: before authentication (browsers send no credential on a preflight) and
        // every other check; it never reaches a method.
        if is_preflight && let Some(method) = self.answered_method(parts.uri.path()) {
            return match policy::check_preflight(headers, method) {
                Ok(preflight) => Reply::Preflight(preflight),
                Err(rejection) => Reply::Rejected(rejection.into()),
            };
        }
        // CONTRACT Z3: the caller a route's policies see; `None` (anonymous) without
        // authentication, built only when a route's policies ask.
        let authorized = match &self.auth {
            None => None,
            Some(auth) => match self.authenticate(auth, parts, usage).await {
                Ok(facts) => Some(facts),
                Err(reply) => return reply,
            },
        };
        let Some(target) = route_target(&config.endpoint_path, config.routing, parts.uri.path())
        else {
            return Reply::Rejected(HttpRejection::NotFound.into());
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
            return Reply::Rejected(rejection.into());
        }
        let body = body.unwrap_or_default();
        let message = match parse_message(&body) {
            Ok(message) => message,
            Err(e) => {
                let era = if e.declares_version {
                    Era::Modern
                } else {
                    header_era
                };
                usage.era = Some(era);
                return Reply::Rpc {
                    id: e.id,
                    error: *e.error,
                    status: envelope_status(era),
                };
            }
        };
        let (id, method, params) = match message {
            Message::Request { id, method, params } => (Some(id), Some(method), params),
            Message::Notification { method, params } => (None, Some(method), params),
            Message::Response => (None, None, None),
        };
        // CONTRACT O1: `_meta`'s trace context over the headers'; never a refusal.
        trace.read_meta(params.as_ref());
        self.tracing.decide(trace, method.as_deref());
        if let Some(id) = id.as_ref().filter(|_| trace.records()) {
            trace.set_rpc_id(id);
        }
        let era = if declared_version(params.as_ref()).is_some() {
            Era::Modern
        } else {
            header_era
        };
        usage.era = Some(era);
        usage.method.clone_from(&method);
        let rpc_error = |error| Reply::Rpc {
            id: id.clone(),
            error,
            status: StatusCode::OK,
        };

        // A request (not a notification) may make the one retry load of CONTRACT R4.
        let snapshot = if id.is_some() {
            self.registry.current_or_retry().await
        } else {
            self.registry.current()
        };
        let route_key = match route_key(&config.endpoint_path, target, snapshot) {
            Ok(key) => key,
            Err(error) => return rpc_error(error.error_object()),
        };
        usage.route = Some(route_key.to_string());
        // Without a snapshot a dynamic route key is well-formed but unchecked (CONTRACT P3).
        usage.route_checked = config.routing == RoutingMode::Fixed || snapshot.is_some();
        let caller = match policy::check_caller_headers(headers, era) {
            Ok(caller) => caller,
            Err(error) => return rpc_error(error),
        };
        let (route, unavailable_reason) = self.resolve_route(route_key, snapshot);
        match era {
            Era::Legacy => {
                let is_initialize = method.as_deref() == Some(methods::INITIALIZE);
                if !is_initialize {
                    match policy::check_protocol_version(
                        headers,
                        &config.supported_protocol_versions,
                    ) {
                        Ok(version) => usage.protocol_version = Some(version.as_str().into()),
                        Err(rejection) => return Reply::Rejected(rejection.into()),
                    }
                }
            }
            Era::Modern => {
                usage.protocol_version = modern::requested_version(headers, params.as_ref());
                // CONTRACT N2: a notification that passed the checks before the envelope.
                let (Some(id), Some(method)) = (&id, &method) else {
                    return Reply::Accepted;
                };
                let version = usage.protocol_version.as_deref().unwrap_or_default();
                let hidden = |name: &str| {
                    route.is_some_and(|route| {
                        hidden_before_dispatch(route, authorized.as_ref(), &caller, version, name)
                    })
                };
                let request = ModernRequest {
                    headers,
                    id,
                    method,
                    params: params.as_ref(),
                    route,
                    hidden: &hidden,
                };
                if let Some(reply) = modern::admit(config, &request) {
                    return reply;
                }
            }
        }
        let (Some(id), Some(method)) = (id.clone(), method) else {
            return Reply::Accepted;
        };

        let call = Call {
            config,
            route,
            unavailable_reason: &unavailable_reason,
            correlation,
            caller: &caller,
            deadline: context.deadline,
            era,
            body: &body,
            trace,
            authorized: authorized.as_ref(),
            protocol_version: usage.protocol_version.as_deref().unwrap_or_default(),
            tasks: &self.tasks,
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
            // CONTRACT K5: a missing client capability is a 400, as the modern checks' are.
            MethodOutcome::Error(error)
                if error.code == crate::protocol::ErrorCode::MISSING_CLIENT_CAPABILITY =>
            {
                Reply::Rpc {
                    id: Some(id),
                    error,
                    status: StatusCode::BAD_REQUEST,
                }
            }
            MethodOutcome::Error(error) => rpc_error(error),
        }
    }

    /// The one method `path` answers, `None` for a path this deployment does not serve: `POST`
    /// inside the endpoint path (CONTRACT H1, P6), `GET` on a metadata path it answers in the
    /// OAuth modes (A10).
    fn answered_method(&self, path: &str) -> Option<&'static str> {
        if route_target(&self.config.endpoint_path, self.config.routing, path).is_some() {
            return Some("POST");
        }
        let auth = self.auth.as_ref()?;
        let resource = auth.resource().filter(|_| auth.mode().accepts_oauth())?;
        resource.metadata_route(path).map(|_| "GET")
    }

    /// The authentication chain (after Host, before the method check): the protected-resource
    /// metadata, unauthenticated and not counted, then the credential. `Ok` lets the request
    /// go on with the admitted caller's facts (CONTRACT Z3).
    async fn authenticate(
        &self,
        auth: &Authenticator,
        parts: &Parts,
        usage: &mut UsageEvent,
    ) -> Result<CallerFacts, Reply> {
        let path = parts.uri.path();
        usage.auth = Some(auth.mode().label());
        // Discovery paths are never challenged: a 401 there sends clients into OAuth discovery.
        if path.starts_with("/.well-known/") {
            usage.auth_record.outcome = "discovery";
            return Err(self.metadata(auth, parts));
        }
        let route = match route_target(&self.config.endpoint_path, self.config.routing, path) {
            Some(target) => target.key(&self.config.endpoint_path),
            None => None,
        };
        let mut record = AuthRecord::default();
        let result = auth.authenticate(&parts.headers, route, &mut record).await;
        usage.auth_record = record;
        result.map_err(|rejection| Reply::Rejected(rejection.into()))
    }

    /// RFC 9728 metadata of a route in the OAuth modes; a JSON 404 in token mode and for any
    /// other `/.well-known/` path.
    fn metadata(&self, auth: &Authenticator, parts: &Parts) -> Reply {
        let Some(resource) = auth.resource().filter(|_| auth.mode().accepts_oauth()) else {
            return Reply::Rejected(HttpRejection::NotFound.into());
        };
        let Some(route) = resource.metadata_route(parts.uri.path()) else {
            return Reply::Rejected(HttpRejection::NotFound.into());
        };
        let registered = match (route, self.registry.current()) {
            (Some(key), Some(snapshot)) => snapshot.route(key).is_some(),
            _ => true,
        };
        if !registered {
            return Reply::Rejected(HttpRejection::NotFound.into());
        }
        if parts.method != http::Method::GET {
            return Reply::Rejected(HttpRejection::MetadataMethodNotAllowed.into());
        }
        Reply::Metadata(resource.document(route))
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
}

/// The status of an envelope error (E1–E3): 200 in the legacy era, 400 in the modern era
/// (CONTRACT N2).
fn envelope_status(era: Era) -> StatusCode {
    match era {
        Era::Legacy => StatusCode::OK,
        Era::Modern => StatusCode::BAD_REQUEST,
    }
}

/// CONTRACT P3, P4: the route key of a request whose path lies inside the endpoint; a dynamic
/// key must be registered when a snapshot is loaded (without one it is well-formed but
/// unchecked, and tool methods answer `-32603`).
fn route_key<'a>(
    endpoint: &'a str,
    target: RouteTarget<'a>,
    snapshot: Option<&Arc<Snapshot>>,
) -> Result<&'a str, RouteKeyError> {
    match target {
        RouteTarget::BadKey(error) => Err(error),
        RouteTarget::Dynamic(key) if snapshot.is_some_and(|s| s.route(key).is_none()) => {
            Err(RouteKeyError::NotRegistered)
        }
        RouteTarget::Dynamic(key) => Ok(key),
        RouteTarget::Fixed => Ok(fixed_route_key(endpoint)),
    }
}
