//! Calling a Tool Service (CONTRACT X4, X6, X7, X10): the [`ToolInvoker`] I/O trait the service sees,
//! and [`HttpInvoker`], its reqwest implementation (one client per instance; HTTP Tool Services
//! and Lambda functions, X10; the secrets of outbound credentials, X12), which
//! [`crate::build`] names. Mapping the answer to an MCP result is [`crate::tool_result`]'s.

mod aws_sign;
mod http;
mod lambda;
mod lambda_invocation;
mod lambda_redaction;
mod secret_store;
mod secrets;
mod token;
mod token_endpoint;
mod tool_invoker;

pub use http::HttpInvoker;
pub use lambda_invocation::{MAX_CLIENT_CONTEXT_BYTES, classify, client_context, invoke_url};
pub use secret_store::{Fetched, SecretCache, SecretError, SecretText};
pub use secrets::EnvLookup;
pub use token::{TokenError, TokenKey, TokenRequest};
pub use tool_invoker::{
    InvokeError, MAX_LOCATION_BYTES, SigV4Signing, ToolInvoker, ToolRequest, ToolResponse,
    ToolTarget,
};
