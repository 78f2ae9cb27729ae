//! Method dispatch: one exhaustive `match` on the method name, one module per method
//! (STYLE 6; CONTRACT E4, L, T, X).

mod initialize;
mod ping;
mod tools_call;
mod tools_list;

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use serde_json::{Map, Value};

use crate::config::Config;
use crate::invoke::ToolInvoker;
use crate::policy::{CallerHeaders, Correlation};
use crate::protocol::{ErrorObject, ProtocolVersion, RequestId, methods};
use crate::registry::Route;
use crate::usage::ToolUse;

/// Everything a method handler may read about the request it serves.
pub(crate) struct Call<'a> {
    pub config: &'a Config,
    /// The resolved route; `None` when the snapshot is not loaded or lacks the fixed route.
    pub route: Option<&'a Arc<Route>>,
    /// Why `route` is `None`, as the `-32603` detail (CONTRACT X8).
    pub unavailable_reason: &'a str,
    pub correlation: &'a Correlation,
    pub caller: &'a CallerHeaders,
    /// The invocation deadline, when the platform gives one (CONTRACT X7).
    pub deadline: Option<Instant>,
    /// The version the request speaks; `None` for `initialize` (CONTRACT H4).
    #[expect(
        dead_code,
        reason = "carried for version-specific shapes (STYLE 9); one version today"
    )]
    pub version: Option<ProtocolVersion>,
}

/// What a method produced.
pub(crate) enum MethodOutcome {
    /// A JSON-RPC result, already encoded as a whole response body.
    Result {
        body: Bytes,
        /// `Mcp-Session-Id` to send (initialize only, CONTRACT L2).
        session_id: Option<String>,
        /// For tools/call: whether the tool result is `isError` (usage outcome `tool_error`).
        tool_error: bool,
    },
    /// A JSON-RPC error object.
    Error(ErrorObject),
}

/// Runs one request. `tool` receives the tool name of a `tools/call`, and the Tool Service
/// call's duration once it was made, for the usage log (CONTRACT U1).
pub(crate) async fn dispatch<I: ToolInvoker>(
    call: &Call<'_>,
    invoker: &I,
    id: &RequestId,
    method: &str,
    params: Option<&Map<String, Value>>,
    tool: &mut ToolUse,
) -> MethodOutcome {
    match method {
        methods::INITIALIZE => initialize::handle(call, id),
        methods::PING => ping::handle(id),
        methods::TOOLS_LIST => tools_list::handle(call, id, params),
        methods::TOOLS_CALL => tools_call::handle(call, invoker, id, params, tool).await,
        other => MethodOutcome::Error(ErrorObject::method_not_found(other)),
    }
}

fn result(body: Bytes) -> MethodOutcome {
    MethodOutcome::Result {
        body,
        session_id: None,
        tool_error: false,
    }
}
