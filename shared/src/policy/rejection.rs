//! The one table of rejections (STYLE 3, 5): every answer that is not a JSON-RPC `200`, each
//! with its HTTP status, headers and JSON body next to its definition. [`HttpRejection`] holds
//! the transport rejections (CONTRACT H1–H7, P6, A10's 405), [`AuthRejection`] those of the
//! authentication chain (A6–A9), and [`Rejection`] is either, as the service answers it.

use bytes::Bytes;
use http::StatusCode;
use serde_json::json;

pub use super::auth_rejection::AuthRejection;
use crate::protocol::{ErrorObject, encode_error};

/// A request refused before JSON-RPC processing, answered with a non-200 status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpRejection {
    /// `Origin` outside `MCP_ALLOWED_ORIGINS`: 403, JSON-RPC error body (CONTRACT H5).
    OriginNotAllowed,
    /// `Host` outside `MCP_ALLOWED_HOSTS`: 403, JSON-RPC error body (CONTRACT H6).
    HostNotAllowed,
    /// A preflight of an allowed origin that asks for another method than `POST` or a header
    /// the gateway does not read: 403, JSON-RPC error body (CONTRACT H9).
    PreflightRefused {
        /// What was refused: `method PUT`, `header x-api-key`.
        refused: String,
    },
    /// The path is outside the endpoint path: 404 (CONTRACT P6).
    NotFound,
    /// Any method but `POST`: 405 with `Allow: POST` (CONTRACT H1).
    MethodNotAllowed,
    /// A metadata path asked with another method than `GET`: 405 with `Allow: GET`
    /// (CONTRACT A10).
    MetadataMethodNotAllowed,
    /// Body above `MCP_MAX_REQUEST_BYTES`: 413 (CONTRACT H7).
    PayloadTooLarge {
        /// The limit in bytes.
        limit_bytes: usize,
    },
    /// `Content-Type` neither JSON nor JSON-RPC: 415 (CONTRACT H3).
    UnsupportedMediaType,
    /// `Accept` admits no JSON: 406 (CONTRACT H2).
    NotAcceptable,
    /// No `MCP-Protocol-Version` on a non-initialize message: 400 (CONTRACT H4).
    MissingProtocolVersion,
    /// `MCP-Protocol-Version` not in the supported list: 400 (CONTRACT H4).
    UnsupportedProtocolVersion,
}

impl HttpRejection {
    /// The HTTP status of this rejection.
    #[must_use]
    pub fn status(&self) -> StatusCode {
        match self {
            Self::OriginNotAllowed | Self::HostNotAllowed | Self::PreflightRefused { .. } => {
                StatusCode::FORBIDDEN
            }
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed | Self::MetadataMethodNotAllowed => {
                StatusCode::METHOD_NOT_ALLOWED
            }
            Self::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::NotAcceptable => StatusCode::NOT_ACCEPTABLE,
            Self::MissingProtocolVersion | Self::UnsupportedProtocolVersion => {
                StatusCode::BAD_REQUEST
            }
        }
    }

    /// The machine-readable `error` code of the JSON body.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::OriginNotAllowed => "origin_not_allowed",
            Self::HostNotAllowed => "host_not_allowed",
            Self::PreflightRefused { .. } => "preflight_refused",
            Self::NotFound => "not_found",
            Self::MethodNotAllowed | Self::MetadataMethodNotAllowed => "method_not_allowed",
            Self::PayloadTooLarge { .. } => "payload_too_large",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::NotAcceptable => "not_acceptable",
            Self::MissingProtocolVersion => "missing_protocol_version",
            Self::UnsupportedProtocolVersion => "unsupported_protocol_version",
        }
    }

    /// The human-readable message. It never repeats a request value.
    #[must_use]
    pub fn message(&self) -> String {
        match self {
            Self::OriginNotAllowed => "origin is not allowed".into(),
            Self::HostNotAllowed => "host is not allowed".into(),
            Self::PreflightRefused { refused } => {
                format!("CORS preflight refused: {refused} is not allowed")
            }
            Self::NotFound => "no MCP endpoint at this path".into(),
            Self::MethodNotAllowed => {
                "method not allowed: this MCP endpoint accepts POST only and offers no SSE stream"
                    .into()
            }
            Self::MetadataMethodNotAllowed => {
                "method not allowed: the metadata document answers GET only".into()
            }
            Self::PayloadTooLarge { limit_bytes } => {
                format!("request body exceeds {limit_bytes} bytes")
            }
            Self::UnsupportedMediaType => {
                "Content-Type must be application/json or application/json-rpc".into()
            }
            Self::NotAcceptable => "Accept must admit application/json".into(),
            Self::MissingProtocolVersion => "MCP-Protocol-Version header is required".into(),
            Self::UnsupportedProtocolVersion => {
                "MCP-Protocol-Version header names an unsupported version".into()
            }
        }
    }

    /// Headers the rejection adds: `Allow` on a 405 (CONTRACT H1, A10).
    #[must_use]
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::MethodNotAllowed => vec![("allow", "POST".into())],
            Self::MetadataMethodNotAllowed => vec![("allow", "GET".into())],
            _ => Vec::new(),
        }
    }

    /// The JSON body.
    ///
    /// - H5/H6/H9: a JSON-RPC error object, `id` null, `-32600` (CONTRACT H5, H9).
    /// - H4: `{"error", "message", "supportedVersions", "guid"}`, the legacy versions served
    ///   (CONTRACT H4, N5).
    /// - the others: `{"error", "message", "guid"}`.
    #[must_use]
    pub fn body(&self, guid: &str, supported_versions: &[&str]) -> Bytes {
        let value = match self {
            Self::OriginNotAllowed | Self::HostNotAllowed | Self::PreflightRefused { .. } => {
                let error = ErrorObject::invalid_request_exact(self.message()).with_guid(guid);
                return encode_error(None, &error);
            }
            Self::MissingProtocolVersion | Self::UnsupportedProtocolVersion => json!({
                "error": self.code(),
                "message": self.message(),
                "supportedVersions": supported_versions,
                "guid": guid,
            }),
            _ => json!({"error": self.code(), "message": self.message(), "guid": guid}),
        };
        Bytes::from(value.to_string())
    }
}

/// Any rejection, as the service answers it: its status, headers and body come from the table
/// of its kind above.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// A transport rejection (CONTRACT H, P6, A10).
    Http(HttpRejection),
    /// An authentication rejection: 401, 403, 429 or 503 (CONTRACT A6–A9).
    Auth(AuthRejection),
}

impl From<HttpRejection> for Rejection {
    fn from(rejection: HttpRejection) -> Self {
        Self::Http(rejection)
    }
}

impl From<AuthRejection> for Rejection {
    fn from(rejection: AuthRejection) -> Self {
        Self::Auth(rejection)
    }
}

impl Rejection {
    /// The HTTP status.
    #[must_use]
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Http(rejection) => rejection.status(),
            Self::Auth(rejection) => rejection.status(),
        }
    }

    /// The `error` code of the body, also the usage event's `rejection` (CONTRACT U1).
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::Http(rejection) => rejection.code(),
            Self::Auth(rejection) => rejection.code(),
        }
    }

    /// Headers the rejection adds (`Allow`, `WWW-Authenticate`, `Retry-After`).
    #[must_use]
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::Http(rejection) => rejection.headers(),
            Self::Auth(rejection) => rejection.headers(),
        }
    }

    /// The JSON body; `supported_versions` goes into the H4 body.
    #[must_use]
    pub fn body(&self, guid: &str, supported_versions: &[&str]) -> Bytes {
        match self {
            Self::Http(rejection) => rejection.body(guid, supported_versions),
            Self::Auth(rejection) => rejection.body(guid),
        }
    }
}
