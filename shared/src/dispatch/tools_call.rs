//! `tools/call`: params checks, version resolution, `inputSchema` validation, the Tool Service
//! call (a REST-shaped one as X9 builds it) and result mapping by the tool's result shape
//! or a Lambda function's invocation (X10) (CONTRACT X1–X10; `structuredContent` and
//! MCP-native results as docs/routes.md "Tool results" describes), with the tool's outbound
//! credential (X12, [`super::credentials`]).

use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http::{HeaderName, HeaderValue};
use serde_json::{Map, Value};

use super::sent_arguments::{self, Sent};
use super::{Call, MethodOutcome};
use crate::invoke::{
    InvokeError, SecretText, ToolInvoker, ToolRequest, ToolResponse, ToolTarget, client_context,
};
use crate::policy::CallerHeaders;
use crate::protocol::{Era, ErrorObject, RequestId};
use crate::registry::search::SEARCH_TOOL_NAME;
use crate::registry::{Endpoint, Tool, ToolLookup};
use crate::text::violation_message;
use crate::tool_result::redact::redact_body;
use crate::tool_result::{map_tool_answer, oversized_result};
use crate::trace::{self, CallTarget, ToolCallSpan};
use crate::usage::ToolUse;

/// The longest violation text of a `-32602`, in bytes (CONTRACT X2); a longer one is cut at a
/// character boundary and ends with `…`.
pub(super) const MAX_VIOLATION_BYTES: usize = 512;
/// How many violations a `-32602`'s `data.errors` lists at most (CONTRACT X2).
pub(super) const MAX_VIOLATIONS: usize = 100;

/// One `inputSchema` violation as `-32602` detail text (CONTRACT X2): a missing property is
/// `'<name>' is required`, other violations carry the JSON pointer of the offending value; at
/// most [`MAX_VIOLATION_BYTES`], ending with `…` when cut.
fn violation_text(error: &jsonschema::ValidationError<'_>) -> String {
    violation_message(error, true, MAX_VIOLATION_BYTES)
}

/// Validates `arguments` against the tool's compiled `inputSchema`.
fn validate_arguments(tool: &Tool, arguments: &Value) -> Result<(), ErrorObject> {
    validate_with(tool.input_schema.get(), arguments)
}

/// Validates `arguments` against `validator`: `-32602` with the first violation's text and
/// every violation in `data.errors` (CONTRACT X2).
pub(super) fn validate_with(
    validator: &jsonschema::Validator,
    arguments: &Value,
) -> Result<(), ErrorObject> {
    if validator.is_valid(arguments) {
        return Ok(());
    }
    // CONTRACT X2: each text cut to MAX_VIOLATION_BYTES (the validator quotes the offending
    // value, which may be as long as the request), at most MAX_VIOLATIONS of them.
    let violations: Vec<String> = validator
        .iter_errors(arguments)
        .take(MAX_VIOLATIONS)
        .map(|e| violation_text(&e))
        .collect();
    let first = violations
        .first()
        .cloned()
        .unwrap_or_else(|| "arguments do not match the inputSchema".into());
    Err(ErrorObject::invalid_params(first).with_errors(violations))
}

pub(super) fn forwarded_headers(call: &Call<'_>) -> Vec<(HeaderName, HeaderValue)> {
    let mut headers = Vec::with_capacity(5);
    for (name, value) in [
        ("guid", call.correlation.guid.as_str()),
        ("x-request-id", call.correlation.request_id.as_str()),
    ] {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.push((HeaderName::from_static(name), value));
        }
    }
    let CallerHeaders {
        session_id,
        employee_no,
        virtual_employee_no,
    } = call.caller;
    for (name, value) in [
        ("mcp-session-id", session_id),
        ("employee-no", employee_no),
        ("virtual-employee-no", virtual_employee_no),
    ] {
        if let Some(value) = value {
            headers.push((HeaderName::from_static(name), value.clone()));
        }
    }
    headers
}

/// The tool's timeout capped by the invocation deadline minus the safety margin (CONTRACT X7).
pub(super) fn effective_timeout(call: &Call<'_>, tool: &Tool) -> Duration {
    let configured = Duration::from_millis(
        tool.timeout_ms
            .unwrap_or(call.config.default_tool_timeout_ms),
    );
    match call.deadline {
        None => configured,
        Some(deadline) => {
            let margin = Duration::from_millis(call.config.deadline_margin_ms);
            let remaining = deadline
                .saturating_duration_since(Instant::now())
                .saturating_sub(margin);
            configured.min(remaining)
        }
    }
}

/// Where a call goes, as its CLIENT span names it (CONTRACT O4): host and port, or function
/// name and region; never the URL's path or query.
pub(super) fn call_target(target: &ToolTarget, method: &http::Method) -> CallTarget {
    match target {
        ToolTarget::Http { url, .. } => CallTarget::Http {
            method: method.as_str().to_string(),
            host: url.host_str().unwrap_or_default().to_string(),
            port: url.port_or_known_default().unwrap_or_default(),
        },
        ToolTarget::Lambda { function, .. } => CallTarget::Lambda {
            name: function.name.clone(),
            region: function.region.clone(),
        },
    }
}

/// `answer` with every one of `secrets` replaced by `[redacted]` in its body (CONTRACT X12).
pub(super) fn redacted(
    answer: Result<ToolResponse, InvokeError>,
    secrets: &[SecretText],
) -> Result<ToolResponse, InvokeError> {
    let mut response = answer?;
    let texts: Vec<&str> = secrets.iter().map(SecretText::expose).collect();
    if let Some(body) = redact_body(&response.body, &texts) {
        response.body = body;
    }
    Ok(response)
}

pub(super) async fn handle<I: ToolInvoker>(
    call: &Call<'_>,
    invoker: &I,
    id: &RequestId,
    params: Option<&Map<String, Value>>,
    tool_use: &mut ToolUse,
) -> MethodOutcome {
    let error = |e| MethodOutcome::Error(e);
    let Some(params) = params else {
        return error(ErrorObject::invalid_params("'name' is required"));
    };
    let name = match params.get("name") {
        None => return error(ErrorObject::invalid_params("'name' is required")),
        Some(Value::String(name)) => name,
        Some(_) => return error(ErrorObject::invalid_params("'name' must be a string")),
    };
    tool_use.name = Some(name.clone());
    let empty = Value::Object(Map::new());
    let arguments = match params.get("arguments") {
        None => &empty,
        Some(arguments @ Value::Object(_)) => arguments,
        Some(_) => return error(ErrorObject::invalid_params("'arguments' must be an object")),
    };
    let Some(route) = call.route else {
        return error(ErrorObject::internal_error(call.unavailable_reason));
    };
    // CONTRACT S2: the route's own search tool, answered by the gateway.
    if let Some(search) = route.search()
        && name == SEARCH_TOOL_NAME
    {
        return super::search_tools::handle(call, id, route, search, arguments);
    }
    let tool = match route.tool(name) {
        None => return error(super::authorize::unknown_tool(name)),
        Some(ToolLookup::Conflict { active_versions }) => {
            return error(ErrorObject::internal_error(format!(
                "tool '{name}' has {active_versions} active versions"
            )));
        }
        Some(ToolLookup::Active(tool)) => tool,
    };
    if let Err(e) = validate_arguments(tool, arguments) {
        // CONTRACT Z4: a tool no policy could permit for this caller answers as an unknown
        // one, whatever its arguments.
        if super::authorize::hidden(call, route, name) {
            return error(super::authorize::unknown_tool(name));
        }
        return error(e);
    }

    let mut headers = forwarded_headers(call);
    // CONTRACT X11: what travels is `arguments` as the request wrote it; `serde_json`'s text of
    // the parsed value only if the body could not be read so (never seen).
    let parsed_text;
    let sent = if let Some(sent) = sent_arguments::arguments_of(call.body) {
        sent
    } else {
        parsed_text = serde_json::to_string(arguments).unwrap_or_default();
        Sent::read(&parsed_text).unwrap_or(Sent::Object(Vec::new()))
    };
    // CONTRACT Z4-Z7: decided on the arguments as written, before any Tool Service is called.
    if let Some(denied) = super::authorize::decide(call, id, route, name, &sent, tool_use) {
        return denied;
    }
    // CONTRACT K4, K5, K8: a task tool becomes a task only for a client that declared the
    // extension, when the instance has keys to seal its id.
    let declared = call.era == Era::Modern && crate::tasks::declared(Some(params));
    let mut task_keys = None;
    if let Some(&task) = tool.task.as_deref() {
        if task.required && call.era == Era::Modern && !declared {
            return error(ErrorObject::missing_tasks_capability());
        }
        if declared && call.tasks.is_configured() {
            match call.tasks.keys(invoker).await {
                Ok(keys) => task_keys = Some(keys),
                Err(detail) => return error(ErrorObject::internal_error(detail)),
            }
        }
    }
    let whole_arguments = || Bytes::from(sent.to_vec());
    // CONTRACT O2, O3: the values this call's CLIENT span passes on.
    let span_id = trace::new_span_id();
    let trace_values = call.trace.outbound(span_id);
    let target = match (&tool.endpoint, &tool.rest, arguments) {
        (Endpoint::Lambda(function), _, _) => {
            match client_context(&tool.name, &headers, &trace_values) {
                Ok(client_context) => Ok((
                    ToolTarget::Lambda {
                        function: (**function).clone(),
                        client_context,
                    },
                    whole_arguments(),
                )),
                Err(refused) => Err(refused),
            }
        }
        (Endpoint::Http(_), Some(rest), Value::Object(arguments)) => {
            let sent_members = match &sent {
                Sent::Object(members) => &members[..],
                _ => &[],
            };
            match super::rest_request::build(rest, &tool.method, arguments, sent_members) {
                Ok(request) => {
                    headers.extend(request.headers);
                    Ok((
                        ToolTarget::Http {
                            method: tool.method.clone(),
                            url: request.endpoint,
                        },
                        request.body,
                    ))
                }
                Err(detail) => return error(ErrorObject::invalid_params(detail)),
            }
        }
        (Endpoint::Http(url), _, _) => Ok((
            ToolTarget::Http {
                method: tool.method.clone(),
                url: url.clone(),
            },
            whole_arguments(),
        )),
    };
    let started = Instant::now();
    let answer = match target {
        Ok((target, body)) => {
            if let ToolTarget::Http { .. } = target {
                // CONTRACT O2: the call's own trace context, nothing else under those names
                // (M2 reserves them for header arguments already).
                headers.retain(|(name, _)| !trace::HEADER_NAMES.contains(&name.as_str()));
                headers.extend(trace_values);
                // CONTRACT K2: the service may answer 202 when a task can follow, or when the
                // gateway will poll a `required` tool's work.
                if tool
                    .task
                    .as_deref()
                    .is_some_and(|task| task.required || task_keys.is_some())
                {
                    headers.retain(|(name, _)| name.as_str() != "prefer");
                    headers.push(super::task_call::prefer_async());
                }
            }
            // CONTRACT O4: what the CLIENT span needs, only when spans are recorded.
            let span_start = call
                .trace
                .records()
                .then(|| (SystemTime::now(), call_target(&target, &tool.method)));
            let request = ToolRequest {
                target,
                headers,
                body,
                timeout: effective_timeout(call, tool),
                max_response_bytes: call.config.max_tool_response_bytes,
                sigv4: None,
            };
            let answer = match &tool.auth {
                None => invoker.invoke(request).await,
                // CONTRACT X12: the tool's outbound credential, read anew after a 401, and
                // every secret value it sent taken out of the answer.
                Some(auth) => {
                    let presented =
                        super::credentials::invoke_with(invoker, &tool.name, auth, request).await;
                    redacted(presented.answer, &presented.secrets)
                }
            };
            // CONTRACT O4: a call that was never sent has no CLIENT span.
            let sent = answer.as_ref().map_or_else(InvokeError::was_sent, |_| true);
            tool_use.span = span_start
                .filter(|_| sent)
                .map(|(started, target)| ToolCallSpan {
                    span_id,
                    started,
                    ended: SystemTime::now(),
                    target,
                    status: answer.as_ref().ok().map(|a| a.status.as_u16()),
                    error: match &answer {
                        Ok(a) if !a.status.is_success() => {
                            Some(a.status.as_str().to_string().into())
                        }
                        Ok(_) => None,
                        Err(e) => Some(e.kind().into()),
                    },
                });
            answer
        }
        // CONTRACT X10: the headers do not fit the client context; nothing is invoked.
        Err(refused) => Err(refused),
    };
    let tool_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    tool_use.tool_ms = Some(tool_ms);
    if let (Some(&task), Ok(response)) = (tool.task.as_deref(), &answer)
        && response.status == http::StatusCode::ACCEPTED
    {
        let accepted = super::task_call::Accepted {
            route,
            tool,
            task,
            keys: task_keys.as_deref(),
            started,
        };
        let location = response.location.as_deref();
        return match super::task_call::accepted(call, invoker, id, &accepted, location).await {
            Ok((body, tool_error, created)) => {
                // CONTRACT K9.
                if created {
                    tool_use.task_status = Some("created");
                }
                MethodOutcome::Result {
                    body,
                    session_id: None,
                    tool_error,
                }
            }
            Err(error) => MethodOutcome::Error(error),
        };
    }
    let mut result = map_tool_answer(answer, tool_ms, tool.result_shape());
    // CONTRACT O4: an answer mapped to `isError` (a body that is no text, a native error
    // result) fails its CLIENT span too.
    if let Some(span) = tool_use.span.as_mut().filter(|_| result.is_error) {
        span.error
            .get_or_insert(std::borrow::Cow::Borrowed("tool_error"));
    }
    let mut body = call.encode(id, &result, false);
    if body.len() > call.config.max_response_bytes {
        result = oversized_result(call.config.max_response_bytes, tool_ms);
        body = call.encode(id, &result, false);
    }
    MethodOutcome::Result {
        body,
        session_id: None,
        tool_error: result.is_error,
    }
}
