//! The checks of a modern request, in the order of CONTRACT N2, after the route key and the
//! caller headers: the answer of a deployment without a modern version (N5), the envelope in
//! `params._meta`, the mirrored headers, the version, and the methods the era serves.

use std::sync::Arc;

use http::{HeaderMap, StatusCode};
use serde_json::{Map, Value};

use super::respond::Reply;
use crate::config::Config;
use crate::policy::{self, MirroredFields};
use crate::protocol::{
    Era, ErrorObject, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, ProtocolVersion, RequestId,
    declared_version, methods,
};
use crate::registry::{Route, ToolLookup};

/// One modern request as the checks see it.
pub(super) struct ModernRequest<'a> {
    pub(super) headers: &'a HeaderMap,
    pub(super) id: &'a RequestId,
    pub(super) method: &'a str,
    pub(super) params: Option<&'a Map<String, Value>>,
    /// The resolved route, for the `x-mcp-header` arguments of the called tool.
    pub(super) route: Option<&'a Arc<Route>>,
    /// Whether a tool of the route is hidden from this caller by its policies (CONTRACT Z4):
    /// its `Mcp-Param-*` headers are then not checked, as an unknown tool's are not.
    pub(super) hidden: &'a dyn Fn(&str) -> bool,
}

/// The version a modern request asks for, as the usage event records it (CONTRACT N7): the
/// body's when it names one as a string, else the `MCP-Protocol-Version` header's.
pub(super) fn requested_version(
    headers: &HeaderMap,
    params: Option<&Map<String, Value>>,
) -> Option<String> {
    match declared_version(params) {
        Some(Value::String(version)) => Some(version.clone()),
        _ => policy::header_version(headers).map(str::to_string),
    }
}

/// CONTRACT N2, N5: `None` admits a modern request to dispatch; otherwise the [`Reply`] of the
/// first failed check: N5's 400 `-32600`; 400 `-32602` for a missing
/// envelope; 400 `-32020` for a mirrored header; 400 `-32022` for a version not served; 404
/// `-32601` for a method the modern era does not serve. Each echoes the request id.
pub(super) fn admit(config: &Config, request: &ModernRequest<'_>) -> Option<Reply> {
    match check(config, request) {
        Ok(_) => None,
        Err((status, error)) => Some(Reply::Rpc {
            id: Some(request.id.clone()),
            error,
            status,
        }),
    }
}

fn check(
    config: &Config,
    request: &ModernRequest<'_>,
) -> Result<ProtocolVersion, (StatusCode, ErrorObject)> {
    if !config.serves(Era::Modern) {
        let requested = requested_version(request.headers, request.params).unwrap_or_default();
        return Err((
            StatusCode::BAD_REQUEST,
            ErrorObject::no_modern_version(&config.versions_of(Era::Legacy), &requested),
        ));
    }
    let version =
        envelope_version(request.params).map_err(|error| (StatusCode::BAD_REQUEST, error))?;
    let params = request.params;
    let is_call = request.method == methods::TOOLS_CALL;
    let tool_name = params
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str)
        .filter(|_| is_call);
    let arguments = params
        .and_then(|p| p.get("arguments"))
        .and_then(Value::as_object);
    let header_params = match (tool_name, request.route, arguments) {
        (Some(name), Some(route), Some(arguments)) => match route.tool(name) {
            Some(ToolLookup::Active(tool)) if !(request.hidden)(name) => {
                Some((tool.header_params.as_slice(), arguments))
            }
            _ => None,
        },
        _ => None,
    };
    policy::check_mirrored_headers(
        request.headers,
        &MirroredFields {
            version,
            method: request.method,
            tool_name,
            params: header_params,
        },
    )
    .map_err(|error| (StatusCode::BAD_REQUEST, error))?;
    // CONTRACT K5: a task request names its task in `Mcp-Name` (a taskId that is no string is
    // the method's own -32602).
    if methods::is_task_method(request.method)
        && let Some(task_id) = params.and_then(|p| p.get("taskId")).and_then(Value::as_str)
    {
        policy::check_task_name(request.headers, task_id)
            .map_err(|error| (StatusCode::BAD_REQUEST, error))?;
    }
    let Some(version) = ProtocolVersion::from_wire(version)
        .filter(|v| v.era() == Era::Modern && config.supported_protocol_versions.contains(v))
    else {
        return Err((
            StatusCode::BAD_REQUEST,
            ErrorObject::unsupported_protocol_version(&config.versions_of(Era::Modern), version),
        ));
    };
    if !Era::Modern.serves(request.method) {
        return Err((
            StatusCode::NOT_FOUND,
            ErrorObject::method_not_found(request.method),
        ));
    }
    // CONTRACT K5: the tasks methods answer only a request that declared the extension.
    if methods::is_task_method(request.method) && !crate::tasks::declared(params) {
        return Err((
            StatusCode::BAD_REQUEST,
            ErrorObject::missing_tasks_capability(),
        ));
    }
    Ok(version)
}

/// The envelope of a modern request: `params._meta` with a string `protocolVersion` and an
/// object `clientCapabilities` (CONTRACT N2; MCP 2026-07-28 basic).
fn envelope_version(params: Option<&Map<String, Value>>) -> Result<&str, ErrorObject> {
    let Some(params) = params else {
        return Err(ErrorObject::invalid_params(
            "'params._meta' is required in this protocol version",
        ));
    };
    let Some(Value::Object(meta)) = params.get("_meta") else {
        return Err(ErrorObject::invalid_params(
            "'params._meta' must be an object in this protocol version",
        ));
    };
    let Some(Value::String(version)) = meta.get(META_PROTOCOL_VERSION) else {
        return Err(ErrorObject::invalid_params(format!(
            "'params._meta[\"{META_PROTOCOL_VERSION}\"]' must be a string"
        )));
    };
    if !matches!(meta.get(META_CLIENT_CAPABILITIES), Some(Value::Object(_))) {
        return Err(ErrorObject::invalid_params(format!(
            "'params._meta[\"{META_CLIENT_CAPABILITIES}\"]' must be an object"
        )));
    }
    Ok(version)
}
