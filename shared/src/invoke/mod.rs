//! Calling a Tool Service (CONTRACT X4, X6, X7): the [`ToolInvoker`] I/O trait the service sees,
//! and [`HttpInvoker`], its reqwest implementation (one client per instance), which
//! [`crate::build`] names. Mapping the answer to an MCP result is [`crate::tool_result`]'s.

mod http;
mod tool_invoker;

pub use http::HttpInvoker;
pub use tool_invoker::{InvokeError, ToolInvoker, ToolRequest, ToolResponse};
