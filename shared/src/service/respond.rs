//! The one place where a pipeline outcome becomes an HTTP response (STYLE 3): status, headers,
//! body, and the `guid` and `x-request-id` every response carries (CONTRACT H8).

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};

use super::Gateway;
use crate::policy::{
    Correlation, EXPOSED_HEADERS, HttpRejection, PREFLIGHT_MAX_AGE_S, Preflight, Rejection,
};
use crate::protocol::{Era, ErrorObject, RequestId, encode_error};
use crate::usage::{Outcome, UsageEvent};

/// What the pipeline decided, before it becomes a response.
pub(super) enum Reply {
    /// A non-200 answer of the rejection table (CONTRACT H, P6, A6–A10).
    Rejected(Rejection),
    /// A JSON-RPC error object: HTTP 200, or the status of CONTRACT N2 in the modern era.
    Rpc {
        id: Option<RequestId>,
        error: ErrorObject,
        status: StatusCode,
    },
    Result {
        body: Bytes,
        session_id: Option<String>,
    },
    Accepted,
    /// The protected-resource metadata document (RFC 9728), 200.
    Metadata(Bytes),
    /// An admitted CORS preflight: 204 (CONTRACT H9).
    Preflight(Preflight),
}

impl<I> Gateway<I> {
    /// The one place where a [`Reply`] becomes an HTTP response (STYLE 3).
    ///
    /// `origin` is the request's `Origin`: an answer to an allowed origin carries the CORS
    /// headers of CONTRACT H10, whatever its status; one refused by H5 carries none.
    pub(super) fn respond(
        &self,
        reply: Reply,
        correlation: &Correlation,
        origin: Option<HeaderValue>,
        usage: &mut UsageEvent,
    ) -> Response<Bytes> {
        let json = HeaderValue::from_static("application/json");
        let origin = origin.filter(|_| {
            !matches!(
                reply,
                Reply::Rejected(Rejection::Http(HttpRejection::OriginNotAllowed))
            )
        });
        let mut builder = Response::builder();
        let body = match reply {
            Reply::Rejected(rejection) => {
                usage.outcome = Outcome::HttpError;
                usage.rejection = Some(rejection.code());
                builder = builder
                    .status(rejection.status())
                    .header(header::CONTENT_TYPE, json);
                for (name, value) in rejection.headers() {
                    builder = builder.header(name, value);
                }
                rejection.body(&correlation.guid, &self.config.versions_of(Era::Legacy))
            }
            Reply::Rpc { id, error, status } => {
                usage.outcome = Outcome::RpcError(error.code.0);
                builder = builder.status(status).header(header::CONTENT_TYPE, json);
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
            Reply::Preflight(preflight) => {
                builder = builder
                    .status(StatusCode::NO_CONTENT)
                    .header(header::ACCESS_CONTROL_ALLOW_METHODS, preflight.allow_method)
                    .header(header::ACCESS_CONTROL_MAX_AGE, PREFLIGHT_MAX_AGE_S);
                if let Some(requested) = preflight.allow_headers {
                    builder = builder.header(header::ACCESS_CONTROL_ALLOW_HEADERS, requested);
                }
                Bytes::new()
            }
            Reply::Accepted => {
                builder = builder.status(StatusCode::ACCEPTED);
                Bytes::new()
            }
            Reply::Metadata(document) => {
                builder = builder
                    .status(StatusCode::OK)
                    .header(header::CONTENT_TYPE, json)
                    .header(header::CACHE_CONTROL, "public, max-age=300")
                    // A cacheable answer: a shared cache keeps one copy per Origin (A10, H10).
                    .header(header::VARY, "Origin");
                document
            }
        };
        if let Some(origin) = origin {
            if builder
                .headers_ref()
                .is_none_or(|headers| !headers.contains_key(header::VARY))
            {
                builder = builder.header(header::VARY, "Origin");
            }
            builder = builder
                .header(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin)
                .header(header::ACCESS_CONTROL_EXPOSE_HEADERS, EXPOSED_HEADERS);
        }
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
