//! Access tokens of `oauth2ClientCredentials` tools (CONTRACT X12), sans I/O: the token request
//! the dispatch builds (RFC 6749 §4.4, the client credentials grant), the key it is kept under,
//! and why no token was obtained.

use http::HeaderValue;

use super::secret_store::SecretText;

/// Which token a request asks for: the endpoint, the client and what it asks (never shown).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct TokenKey(pub String);

impl std::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<token request>")
    }
}

/// One token request: `POST <url>` with the form body and, with `client_secret_basic`, the
/// client's `Authorization`.
#[derive(Debug, Clone)]
pub struct TokenRequest {
    /// What the token is kept under.
    pub key: TokenKey,
    /// The token endpoint (`tokenUrl`).
    pub url: url::Url,
    /// `Authorization: Basic …` of `client_secret_basic` (sensitive), or none.
    pub authorization: Option<HeaderValue>,
    /// The `application/x-www-form-urlencoded` body (it may hold the client secret).
    pub form: SecretText,
}

/// Why no access token was obtained (CONTRACT X12): the words after
/// `Tool '<name>': the access token could not be obtained (`. None quotes the endpoint's
/// message, the client's secret or a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// The token endpoint could not be reached.
    #[error("the token endpoint is unreachable")]
    Unreachable,
    /// No answer within the time limit.
    #[error("no answer within {timeout_ms} ms")]
    Timeout {
        /// The time limit in ms.
        timeout_ms: u64,
    },
    /// A refusal, with the RFC 6749 `error` code when the answer names one.
    #[error("the token endpoint answered HTTP {status}{}", code.as_ref().map(|c| format!(", {c}")).unwrap_or_default())]
    Refused {
        /// The HTTP status.
        status: u16,
        /// `invalid_client`, `invalid_scope` …: letters and `_` only.
        code: Option<String>,
    },
    /// A 200 answer without a bearer `access_token`.
    #[error("the token endpoint's answer holds no bearer access_token")]
    NoToken,
    /// A 200 answer whose `access_token` cannot travel in an `Authorization` header (a control
    /// or non-ASCII character): never kept, the token endpoint's fault.
    #[error("the token endpoint's access_token is not a valid header value")]
    TokenNotHeaderValue,
    /// An answer longer than the gateway reads (64 KiB); nothing of it is used.
    #[error("the token endpoint's answer exceeds {limit_bytes} bytes")]
    AnswerTooLarge {
        /// The limit in bytes.
        limit_bytes: usize,
    },
    /// An invoker that obtains no tokens.
    #[error("this gateway obtains no access tokens")]
    Unsupported,
}
