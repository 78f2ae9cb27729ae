//! Method dispatch: one exhaustive `match` on the method name, one module per method
//! (STYLE 6; CONTRACT E4, L, T, X, N3, N4).

mod authorize;
mod credentials;
mod discover;
mod initialize;
mod oauth2;
mod ping;
mod rest_request;
mod search_tools;
mod sent_arguments;
mod task_call;
mod tasks;
mod tools_call;
mod tools_list;

pub(crate) use authorize::hidden_before_dispatch;

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::Config;
use crate::invoke::ToolInvoker;
use crate::policy::{CallerHeaders, Correlation};
use crate::protocol::{Era, ErrorObject, META_SERVER_INFO, RequestId, encode_response, methods};
use crate::registry::{Route, ServerInfo};
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
    /// The era the request speaks: which methods it may call and which fields its results
    /// carry (CONTRACT N1, N4).
    pub era: Era,
    /// The request body as it arrived: `tools/call` forwards `arguments` from it as written
    /// (CONTRACT X11).
    pub body: &'a [u8],
    /// The request's trace: what its Tool Service calls carry (CONTRACT O2, O3).
    pub trace: &'a crate::trace::RequestTrace,
    /// The admitted caller, as a route's policies see it (CONTRACT Z3); `None` without
    /// authentication (the anonymous caller).
    pub authorized: Option<&'a crate::authz::CallerFacts>,
    /// The protocol version the request speaks, for `context.request` (CONTRACT Z2).
    pub protocol_version: &'a str,
    /// The keys that seal and open task ids (CONTRACT K3).
    pub tasks: &'a crate::tasks::Keyring,
}

impl Call<'_> {
    /// `serverInfo`: the route's server, or the gateway itself when no route is loaded
    /// (CONTRACT L1, N4).
    fn server_info(&self) -> std::borrow::Cow<'_, ServerInfo> {
        match self.route {
            Some(route) => std::borrow::Cow::Borrowed(&route.server),
            None => std::borrow::Cow::Owned(ServerInfo {
                name: "mcp-gateway".into(),
                title: "MCP gateway".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            }),
        }
    }

    /// `instructions`: the route's, else `MCP_INSTRUCTIONS` (CONTRACT L1, N3).
    fn instructions(&self) -> Option<&str> {
        self.route
            .and_then(|r| r.instructions.as_deref())
            .or(self.config.instructions.as_deref())
    }

    /// `cacheScope` of a modern list (CONTRACT N4): `private` also on a route with policies,
    /// whose lists depend on the caller (Z4).
    fn cache_scope(&self) -> &'static str {
        if self.route.is_some_and(|route| route.policies().is_some()) {
            "private"
        } else {
            self.config.cache_scope()
        }
    }

    /// Encodes a whole response body around `result`, with the fields the request's era adds
    /// (CONTRACT N4): none for the legacy era, whose bytes stay exactly as before;
    /// `resultType` and `_meta["io.modelcontextprotocol/serverInfo"]` for the modern era, and
    /// `ttlMs` and `cacheScope` on a `cacheable` result.
    fn encode<R: Serialize>(&self, id: &RequestId, result: &R, cacheable: bool) -> Bytes {
        self.encode_as(id, result, cacheable, "complete")
    }

    /// [`Call::encode`] with another `resultType`: `"task"` for a `CreateTaskResult`
    /// (CONTRACT K4).
    fn encode_as<R: Serialize>(
        &self,
        id: &RequestId,
        result: &R,
        cacheable: bool,
        result_type: &'static str,
    ) -> Bytes {
        let fields = self.era.result_fields();
        if !(fields.result_type || fields.server_info || fields.cache) {
            return encode_response(id, result);
        }
        let server_info = self.server_info();
        let cache = fields.cache && cacheable;
        encode_response(
            id,
            &EraResult {
                result,
                result_type: fields.result_type.then_some(result_type),
                meta: fields.server_info.then(|| ServerInfoMeta {
                    server_info: &server_info,
                }),
                ttl_ms: cache.then_some(self.config.list_ttl_ms),
                cache_scope: cache.then(|| self.cache_scope()),
            },
        )
    }
}

/// A result with the fields of CONTRACT N4 after its own.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EraResult<'a, R: Serialize> {
    #[serde(flatten)]
    result: &'a R,
    #[serde(skip_serializing_if = "Option::is_none")]
    result_type: Option<&'static str>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<ServerInfoMeta<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_scope: Option<&'static str>,
}

/// `{"io.modelcontextprotocol/serverInfo": {name, title, version}}` (CONTRACT N4).
struct ServerInfoMeta<'a> {
    server_info: &'a ServerInfo,
}

impl Serialize for ServerInfoMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(META_SERVER_INFO, self.server_info)?;
        map.end()
    }
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
    if !call.era.serves(method) {
        return MethodOutcome::Error(ErrorObject::method_not_found(method));
    }
    match method {
        methods::SERVER_DISCOVER => discover::handle(call, id),
        methods::INITIALIZE => initialize::handle(call, id),
        methods::PING => ping::handle(id),
        methods::TOOLS_LIST => tools_list::handle(call, id, params),
        // The call's future (credentials, the Tool Service exchange, redaction, the decision)
        // is the largest of any method: on the heap, so that every request's future stays small
        // (one allocation per call, next to nothing beside the call itself).
        methods::TOOLS_CALL => Box::pin(tools_call::handle(call, invoker, id, params, tool)).await,
        methods::TASKS_GET | methods::TASKS_UPDATE | methods::TASKS_CANCEL => {
            Box::pin(tasks::handle(call, invoker, id, method, params, tool)).await
        }
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
