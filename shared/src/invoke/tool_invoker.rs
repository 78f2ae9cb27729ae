//! The [`ToolInvoker`] I/O trait and the values of one Tool Service call (CONTRACT X4, X6, X7):
//! the request the dispatch builds, the answer read whole, and why there was none.

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, StatusCode};

use super::secret_store::{Fetched, SecretError};
use super::token::{TokenError, TokenRequest};
use crate::registry::{FunctionArn, SecretSource};

/// Where one Tool Service call goes (CONTRACT X4, X10).
#[derive(Debug, Clone)]
pub enum ToolTarget {
    /// An HTTP Tool Service.
    Http {
        /// HTTP method from the manifest (`POST` by default).
        method: Method,
        /// Endpoint URL from the snapshot, never from the request (a REST-shaped tool's path
        /// and query arguments placed in its template, CONTRACT X9).
        url: url::Url,
    },
    /// A Lambda function, invoked with the Invoke API (CONTRACT X10).
    Lambda {
        /// The function, from the snapshot.
        function: FunctionArn,
        /// The `X-Amz-Client-Context` value ([`super::client_context`]).
        client_context: String,
    },
}

/// How a `sigv4` tool's request is signed (CONTRACT X12): SigV4 with the gateway's own AWS
/// credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigV4Signing {
    /// The service's signing name, e.g. `execute-api`.
    pub service: String,
    /// The signing region.
    pub region: String,
}

/// One Tool Service call (CONTRACT X4, X10).
#[derive(Debug, Clone)]
pub struct ToolRequest {
    /// The Tool Service: an HTTP endpoint or a Lambda function.
    pub target: ToolTarget,
    /// Forwarded caller headers (`guid`, `x-request-id`, `mcp-session-id`, `employee-no`,
    /// `virtual-employee-no`), then a REST-shaped tool's `header` arguments (CONTRACT X9). A
    /// Lambda function receives them in its client context instead (X10).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// The JSON body: the `arguments` object as compact JSON with the request's own number texts (CONTRACT X4, X11, a Lambda function's
    /// payload, X10) or a REST-shaped tool's body (X9); empty when the request has none (then no
    /// `Content-Type` is sent).
    pub body: Bytes,
    /// The effective timeout of the whole call, body included (CONTRACT X7).
    pub timeout: Duration,
    /// Most body bytes to read (`MCP_MAX_TOOL_RESPONSE_BYTES`, CONTRACT X6).
    pub max_response_bytes: usize,
    /// A `sigv4` tool's signing (CONTRACT X12): the invoker signs the request as it sends it.
    pub sigv4: Option<SigV4Signing>,
}

/// A Tool Service answer that was read whole.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolResponse {
    /// The HTTP status.
    pub status: StatusCode,
    /// The body, at most `max_response_bytes` long.
    pub body: Bytes,
    /// The `Location` of a `202 Accepted` answer, as sent (visible ASCII, at most
    /// [`MAX_LOCATION_BYTES`]): where the task's status is read (CONTRACT K2). `None` for
    /// every other status.
    pub location: Option<String>,
}

/// The longest `Location` of a `202` answer kept, in bytes (CONTRACT K2); a longer one is no
/// status location.
pub const MAX_LOCATION_BYTES: usize = 2048;

/// Why a Tool Service call produced no answer (CONTRACT X6). Messages never name the endpoint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvokeError {
    /// No complete answer within the effective timeout.
    #[error("Tool Service did not answer within {timeout_ms} ms")]
    Timeout {
        /// The effective timeout in ms.
        timeout_ms: u64,
    },
    /// The connection could not be made.
    #[error("Tool Service is unreachable (connection failed)")]
    Connect,
    /// The body exceeded the limit; reading stopped there.
    #[error("Tool Service response exceeds {limit_bytes} bytes")]
    ResponseTooLarge {
        /// `MCP_MAX_TOOL_RESPONSE_BYTES`.
        limit_bytes: usize,
    },
    /// A 2xx answer that is neither JSON nor plain text (e.g. an HTML page); its body is not
    /// read.
    #[error(
        "Tool Service answered with content type '{content_type}', which is neither JSON nor plain text"
    )]
    UnexpectedContentType {
        /// The `Content-Type` sent, printable ASCII only, cut short.
        content_type: String,
    },
    /// The exchange failed mid-way (reset, malformed HTTP).
    #[error("Tool Service call failed ({kind})")]
    Transport {
        /// A short, URL-free description.
        kind: &'static str,
    },
    /// The Lambda function ran and reported an error (`X-Amz-Function-Error`, CONTRACT X10).
    #[error("Tool Service function failed: {message}")]
    FunctionError {
        /// The function's `errorMessage` (else `errorType`), ARN, account and region replaced.
        message: String,
    },
    /// Lambda throttled the invocation (429).
    #[error("Tool Service function is throttled (TooManyRequestsException); try again later")]
    Throttled,
    /// No such function, version or alias (404).
    #[error("Tool Service function was not found (ResourceNotFoundException)")]
    FunctionNotFound,
    /// The gateway's role may not invoke the function (403).
    #[error("The gateway may not invoke the Tool Service function ({error_type})")]
    AccessDenied {
        /// The error type AWS named.
        error_type: String,
    },
    /// A payload over Lambda's limits (413).
    #[error("Tool Service payload exceeds Lambda's limits ({error_type})")]
    PayloadTooLarge {
        /// The error type AWS named.
        error_type: String,
    },
    /// Any other non-2xx answer of the Invoke API.
    #[error("Tool Service function could not be invoked (HTTP {status}, {error_type})")]
    InvokeFailed {
        /// The HTTP status.
        status: u16,
        /// The error type AWS named, or `unknown error`.
        error_type: String,
    },
    /// A function answer that is not JSON.
    #[error("Tool Service function answered with a body that is not JSON")]
    NotJson,
    /// The forwarded headers do not fit the client context: nothing was invoked.
    #[error(
        "The forwarded caller headers do not fit Lambda's client context (3583 bytes encoded); the function was not invoked"
    )]
    ClientContextTooLarge,
    /// The standard AWS chain gave no credentials to sign the invocation with.
    #[error("The gateway has no AWS credentials to invoke the Tool Service function")]
    NoCredentials,
    /// The AWS credential chain did not answer in time (a credentials endpoint that accepts and
    /// never answers): nothing was invoked (CONTRACT X10).
    #[error(
        "The gateway could not obtain AWS credentials within {timeout_ms} ms to invoke the Tool Service function"
    )]
    CredentialsTimeout {
        /// The time allowed, in ms: the tool's effective timeout (CONTRACT X7), at most 5,000.
        timeout_ms: u64,
    },
    /// A credential provider of the chain failed (a credentials endpoint refused the
    /// connection or answered with an error): nothing was invoked (CONTRACT X10).
    #[error(
        "The gateway could not obtain AWS credentials to invoke the Tool Service function ({kind})"
    )]
    CredentialsFailed {
        /// A short description that names no endpoint, account or secret.
        kind: &'static str,
    },
    /// A `sigv4` tool's request could not be signed; nothing was sent (CONTRACT X12).
    #[error("The gateway has no AWS credentials to sign the Tool Service request")]
    NoSigningCredentials,
    /// The tool's outbound credential could not be made; nothing was sent (CONTRACT X12).
    #[error("{text}")]
    Credential {
        /// `Tool '<name>': the credential could not be read (<what failed>)`.
        text: String,
    },
}

impl InvokeError {
    /// Whether the call may have reached the Tool Service: `false` when the gateway sent
    /// nothing (no credential, no AWS credentials, a client context that did not fit), so no
    /// CLIENT span is recorded for it (CONTRACT O4).
    #[must_use]
    pub fn was_sent(&self) -> bool {
        !matches!(
            self,
            Self::Credential { .. }
                | Self::NoSigningCredentials
                | Self::NoCredentials
                | Self::CredentialsTimeout { .. }
                | Self::CredentialsFailed { .. }
                | Self::ClientContextTooLarge
        )
    }

    /// The failure as a span's `error.type` (CONTRACT O4): `timeout`, `connect`,
    /// `function_error` …
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Timeout { .. } => "timeout",
            Self::Connect => "connect",
            Self::ResponseTooLarge { .. } => "response_too_large",
            Self::UnexpectedContentType { .. } => "unexpected_content_type",
            Self::Transport { .. } => "transport",
            Self::FunctionError { .. } => "function_error",
            Self::Throttled => "throttled",
            Self::FunctionNotFound => "function_not_found",
            Self::AccessDenied { .. } => "access_denied",
            Self::PayloadTooLarge { .. } => "payload_too_large",
            Self::InvokeFailed { .. } => "invoke_failed",
            Self::NotJson => "not_json",
            Self::ClientContextTooLarge => "client_context_too_large",
            Self::NoCredentials | Self::NoSigningCredentials => "no_credentials",
            Self::CredentialsTimeout { .. } => "credentials_timeout",
            Self::CredentialsFailed { .. } => "credentials_failed",
            Self::Credential { .. } => "credential",
        }
    }
}

/// Executes Tool Service calls. Implementations must enforce `timeout` and
/// `max_response_bytes` themselves.
pub trait ToolInvoker: Send + Sync + 'static {
    /// Sends one request and reads the whole answer.
    ///
    /// # Errors
    /// [`InvokeError`] for every failure that left no answer.
    fn invoke(
        &self,
        request: ToolRequest,
    ) -> impl Future<Output = Result<ToolResponse, InvokeError>> + Send;

    /// The secret of an outbound credential (CONTRACT X12): the instance's kept read unless it
    /// is older than `MCP_SECRET_TTL_S` or is the `stale` read the Tool Service refused, else a
    /// new read, one at a time per secret. The caller bounds it with its time limit. An invoker
    /// that reads no secrets answers [`SecretError::Unsupported`].
    ///
    /// # Errors
    /// [`SecretError`] for every read that gave no secret.
    fn secret(
        &self,
        source: &SecretSource,
        stale: Option<u64>,
    ) -> impl Future<Output = Result<Fetched, SecretError>> + Send {
        let _ = (source, stale);
        std::future::ready(Err(SecretError::Unsupported))
    }

    /// The access token of an `oauth2ClientCredentials` tool (CONTRACT X12): the instance's
    /// kept token for this request unless it expired or is the `stale` one the Tool Service
    /// refused, else a new one from the token endpoint, one request at a time per key. The
    /// caller bounds it with its time limit. An invoker that obtains no tokens answers
    /// [`TokenError::Unsupported`].
    ///
    /// # Errors
    /// [`TokenError`] when no token was obtained.
    fn token(
        &self,
        request: &TokenRequest,
        stale: Option<u64>,
    ) -> impl Future<Output = Result<Fetched, TokenError>> + Send {
        let _ = (request, stale);
        std::future::ready(Err(TokenError::Unsupported))
    }
}
