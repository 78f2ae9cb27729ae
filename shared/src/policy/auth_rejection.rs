//! Authentication rejections, each with its HTTP status, headers and JSON body (STYLE 5;
//! CONTRACT A6, A7, A8, A9).
//!
//! Every token rejection is the same 401 (missing, malformed, unknown, revoked, expired,
//! idle-expired, wrong route, bad signature, wrong audience): one body and one challenge that
//! never tells the cases apart (CONTRACT A6). A missing scope is 403 (A7), a delegation over
//! its request limit 429 (A8). A store or key-set outage is 503, never 401 (a 401 sends
//! clients into OAuth discovery; CONTRACT A9).

use bytes::Bytes;
use http::StatusCode;
use serde_json::json;

/// Why a request was refused by the authentication chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthRejection {
    /// 401 with `WWW-Authenticate: <challenge>` (CONTRACT A6).
    Unauthorized {
        /// The whole `WWW-Authenticate` value.
        challenge: String,
    },
    /// 403 `insufficient_scope` (OAuth) with `WWW-Authenticate: <challenge>` (CONTRACT A7).
    InsufficientScope {
        /// The whole `WWW-Authenticate` value.
        challenge: String,
    },
    /// 429 with `Retry-After`: the delegation's request limit is reached (CONTRACT A8).
    RateLimited {
        /// Seconds to the end of the window, at least 1.
        retry_after_s: u64,
    },
    /// 503 with `Retry-After`: the delegation store or key set is unreachable, or the auth
    /// settings are broken (CONTRACT A9, A1).
    Unavailable {
        /// Seconds after which a retry makes sense.
        retry_after_s: u64,
    },
}

impl AuthRejection {
    /// The HTTP status.
    #[must_use]
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Unauthorized { .. } => StatusCode::UNAUTHORIZED,
            Self::InsufficientScope { .. } => StatusCode::FORBIDDEN,
            Self::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The `error` code of the body: `unauthorized`, `insufficient_scope`, `rate_limited`,
    /// `auth_unavailable`.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unauthorized { .. } => "unauthorized",
            Self::InsufficientScope { .. } => "insufficient_scope",
            Self::RateLimited { .. } => "rate_limited",
            Self::Unavailable { .. } => "auth_unavailable",
        }
    }

    /// The human-readable message.
    #[must_use]
    pub fn message(&self) -> String {
        match self {
            Self::Unauthorized { .. } => {
                "a valid bearer token for this MCP endpoint is required".into()
            }
            Self::InsufficientScope { .. } => "the access token lacks a required scope".into(),
            Self::RateLimited { retry_after_s } => {
                format!("request limit reached; retry after {retry_after_s} s")
            }
            Self::Unavailable { .. } => {
                "authentication is temporarily unavailable; retry later".into()
            }
        }
    }

    /// `WWW-Authenticate` and `Retry-After` values to send.
    #[must_use]
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::Unauthorized { challenge } | Self::InsufficientScope { challenge } => {
                vec![("www-authenticate", challenge.clone())]
            }
            Self::RateLimited { retry_after_s } | Self::Unavailable { retry_after_s } => {
                vec![("retry-after", retry_after_s.to_string())]
            }
        }
    }

    /// The JSON body: `{"error", "message", "guid"}`, plus `retryAfter` (seconds) on 429 and
    /// 503 (CONTRACT A6–A9).
    #[must_use]
    pub fn body(&self, guid: &str) -> Bytes {
        let value = match self {
            Self::RateLimited { retry_after_s } | Self::Unavailable { retry_after_s } => json!({
                "error": self.code(),
                "message": self.message(),
                "retryAfter": retry_after_s,
                "guid": guid,
            }),
            _ => json!({"error": self.code(), "message": self.message(), "guid": guid}),
        };
        Bytes::from(value.to_string())
    }
}
