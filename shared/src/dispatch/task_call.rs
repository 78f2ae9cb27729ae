//! A task tool's call (CONTRACT K2, K4, K8): `Prefer: respond-async` when a task can be
//! returned, the `202 Accepted` answer turned into a `CreateTaskResult` for a client that
//! declared the extension, or polled to its end within the tool's timeout for every other
//! client; and the status and cancel requests every instance sends to the status location.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, StatusCode};
use serde::Serialize;

use super::Call;
use super::tools_call::{effective_timeout, forwarded_headers, redacted};
use crate::invoke::{InvokeError, ToolInvoker, ToolRequest, ToolResponse, ToolTarget};
use crate::protocol::{ErrorObject, RequestId};
use crate::registry::{Endpoint, Route, Tool};
use crate::tasks::{ServiceStatus, TaskClaims, TaskKeys, TaskSupport, iso_time, now_ms};
use crate::tool_result::map_tool_answer;
use crate::tool_result::model::CallResult;

/// The longest a cancel request after an outlived poll may take, in ms (CONTRACT K8).
const CANCEL_TIMEOUT: Duration = Duration::from_secs(1);

/// `Prefer: respond-async` (RFC 7240; CONTRACT K2).
pub(super) fn prefer_async() -> (HeaderName, HeaderValue) {
    (
        HeaderName::from_static("prefer"),
        HeaderValue::from_static("respond-async"),
    )
}

/// Who a task id binds (CONTRACT K3): `<auth>:<subject>` of the admitted caller (a delegation
/// id, an OAuth subject), `""` without authentication.
pub(super) fn caller_of(call: &Call<'_>) -> String {
    call.authorized
        .map(|facts| format!("{}:{}", facts.auth, facts.subject))
        .unwrap_or_default()
}

/// The status location `location` names, resolved against the tool's endpoint (an absolute
/// URL or a path), when it is on the endpoint's origin and carries no user name or password;
/// `None` otherwise, and nothing is ever requested there (CONTRACT K2).
pub(super) fn status_url(tool: &Tool, location: &str) -> Option<url::Url> {
    let Endpoint::Http(endpoint) = &tool.endpoint else {
        return None;
    };
    let location = location.trim();
    if location.is_empty() {
        return None;
    }
    let mut url = endpoint.join(location).ok()?;
    url.set_fragment(None);
    let same_origin = url.origin() == endpoint.origin() && url.origin().is_tuple();
    // Percent-encoding may have grown it: what is sealed stays within the limit too.
    let short = url.as_str().len() <= crate::invoke::MAX_LOCATION_BYTES;
    (same_origin && short && url.username().is_empty() && url.password().is_none()).then_some(url)
}

/// One request to a status location (CONTRACT K2): `GET` or `DELETE`, with the forwarded
/// caller headers, the call's trace context (O2) and the tool's outbound credential (X12),
/// every secret it sent taken out of the answer.
pub(super) async fn service_request<I: ToolInvoker>(
    call: &Call<'_>,
    invoker: &I,
    tool: &Tool,
    method: Method,
    url: url::Url,
    timeout: Duration,
) -> Result<ToolResponse, InvokeError> {
    service_request_spanned(call, invoker, tool, method, url, timeout, None).await
}

/// [`service_request`], its CLIENT span (CONTRACT O4, K9) written to `span` when the request's
/// spans are recorded and the request was sent.
pub(super) async fn service_request_spanned<I: ToolInvoker>(
    call: &Call<'_>,
    invoker: &I,
    tool: &Tool,
    method: Method,
    url: url::Url,
    timeout: Duration,
    span: Option<&mut Option<crate::trace::ToolCallSpan>>,
) -> Result<ToolResponse, InvokeError> {
    let mut headers = forwarded_headers(call);
    let span_id = crate::trace::new_span_id();
    headers.extend(call.trace.outbound(span_id));
    let target = ToolTarget::Http { method, url };
    let span_start = call.trace.records().then(|| {
        let method = match &target {
            ToolTarget::Http { method, .. } => method.clone(),
            ToolTarget::Lambda { .. } => Method::POST,
        };
        (
            std::time::SystemTime::now(),
            super::tools_call::call_target(&target, &method),
        )
    });
    let answer = send(call, invoker, tool, target, headers, timeout).await;
    if let (Some(slot), Some((started, target))) = (span, span_start)
        && answer.as_ref().map_or_else(InvokeError::was_sent, |_| true)
    {
        *slot = Some(crate::trace::ToolCallSpan {
            span_id,
            started,
            ended: std::time::SystemTime::now(),
            target,
            status: answer.as_ref().ok().map(|a| a.status.as_u16()),
            error: match &answer {
                Ok(a) if !a.status.is_success() => Some(a.status.as_str().to_string().into()),
                Ok(_) => None,
                Err(e) => Some(e.kind().into()),
            },
        });
    }
    answer
}

async fn send<I: ToolInvoker>(
    call: &Call<'_>,
    invoker: &I,
    tool: &Tool,
    target: ToolTarget,
    headers: Vec<(HeaderName, HeaderValue)>,
    timeout: Duration,
) -> Result<ToolResponse, InvokeError> {
    let request = ToolRequest {
        target,
        headers,
        body: Bytes::new(),
        timeout,
        max_response_bytes: call.config.max_tool_response_bytes,
        sigv4: None,
    };
    match &tool.auth {
        None => invoker.invoke(request).await,
        Some(auth) => {
            let presented =
                super::credentials::invoke_with(invoker, &tool.name, auth, request).await;
            redacted(presented.answer, &presented.secrets)
        }
    }
}

/// A task as the extension shows it (ext-tasks `Task`, `DetailedTask`; CONTRACT K4, K6).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct TaskView<'a> {
    pub(super) task_id: &'a str,
    pub(super) status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) status_message: Option<&'a str>,
    pub(super) created_at: String,
    pub(super) last_updated_at: String,
    pub(super) ttl_ms: u64,
    pub(super) poll_interval_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) result: Option<&'a CallResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) error: Option<&'a TaskError>,
}

/// The JSON-RPC error a `failed` task carries (ext-tasks `FailedTask.error`; CONTRACT K6).
#[derive(Serialize)]
pub(super) struct TaskError {
    pub(super) code: i32,
    pub(super) message: String,
}

/// What a task tool's `202` becomes.
pub(super) struct Accepted<'a> {
    pub(super) route: &'a Route,
    pub(super) tool: &'a Tool,
    pub(super) task: TaskSupport,
    /// The keys, when the client declared the extension and a task can be returned.
    pub(super) keys: Option<&'a TaskKeys>,
    /// When the call was sent.
    pub(super) started: Instant,
}

/// CONTRACT K4, K8: the `202 Accepted` of a task tool. A refused `Location` is an `isError`
/// result; with keys, a `CreateTaskResult`; without, the status polled until the work ends or
/// the tool's timeout (X7) runs out, then a `DELETE`.
pub(super) async fn accepted<I: ToolInvoker>(
    call: &Call<'_>,
    invoker: &I,
    id: &RequestId,
    accepted: &Accepted<'_>,
    location: Option<&str>,
) -> Result<(Bytes, bool, bool), ErrorObject> {
    let tool = accepted.tool;
    let ms = || u64::try_from(accepted.started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let Some(url) = location.and_then(|location| status_url(tool, location)) else {
        let result = CallResult::text(
            "Tool Service answered 202 Accepted without a status Location on the tool \
             endpoint's origin; nothing was requested there",
            true,
            ms(),
        );
        return Ok((call.encode(id, &result, false), true, false));
    };
    let Some(keys) = accepted.keys else {
        let result = poll(call, invoker, accepted, url).await;
        return Ok((call.encode(id, &result, false), result.is_error, false));
    };
    let created_ms = now_ms();
    let claims = TaskClaims {
        route: accepted.route.key.clone().unwrap_or_default(),
        tool: tool.name.clone(),
        location: url.to_string(),
        caller: caller_of(call),
        created_ms,
        ttl_ms: accepted.task.ttl_ms,
    };
    let task_id = keys.seal(&claims).map_err(ErrorObject::internal_error)?;
    let created = iso_time(created_ms);
    let view = TaskView {
        task_id: &task_id,
        status: "working",
        status_message: None,
        created_at: created.clone(),
        last_updated_at: created,
        ttl_ms: accepted.task.ttl_ms,
        poll_interval_ms: accepted.task.poll_interval_ms,
        result: None,
        error: None,
    };
    Ok((call.encode_as(id, &view, false, "task"), false, true))
}

/// The shortest wait between two status reads of the gateway's own polling, in ms (CONTRACT
/// K8): a `pollIntervalMs` below it is a hint for clients only.
pub(super) const MIN_POLL_INTERVAL_MS: u64 = 100;

/// CONTRACT K8: the status read after each wait of `pollIntervalMs` (at least
/// [`MIN_POLL_INTERVAL_MS`], at most half of what is left, so a read always has time) until
/// the work ends or less than [`MIN_POLL_INTERVAL_MS`] is left of the tool's effective
/// timeout; then a `DELETE` asks the service to stop.
async fn poll<I: ToolInvoker>(
    call: &Call<'_>,
    invoker: &I,
    accepted: &Accepted<'_>,
    url: url::Url,
) -> CallResult {
    let tool = accepted.tool;
    let timeout = effective_timeout(call, tool);
    let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
    let floor = Duration::from_millis(MIN_POLL_INTERVAL_MS);
    let interval = Duration::from_millis(accepted.task.poll_interval_ms).max(floor);
    let ms = || u64::try_from(accepted.started.elapsed().as_millis()).unwrap_or(u64::MAX);
    loop {
        let left = timeout.saturating_sub(accepted.started.elapsed());
        if left < floor {
            break;
        }
        tokio::time::sleep(interval.min(left / 2)).await;
        let left = timeout.saturating_sub(accepted.started.elapsed());
        let answer = service_request(call, invoker, tool, Method::GET, url.clone(), left).await;
        if let Some(result) = status_result(tool, answer, ms()) {
            return result;
        }
    }
    let _ = service_request(call, invoker, tool, Method::DELETE, url, CANCEL_TIMEOUT).await;
    CallResult::text(
        format!(
            "Tool Service did not finish the work within {timeout_ms} ms; the gateway asked it \
             to stop"
        ),
        true,
        ms(),
    )
}

/// What a status answer means for a call: `None` while the work runs (or the read ran out of
/// time), else its result (CONTRACT K2, K6, K8).
pub(super) fn status_result(
    tool: &Tool,
    answer: Result<ToolResponse, InvokeError>,
    ms: u64,
) -> Option<CallResult> {
    match read_status(answer) {
        Ok(ServiceStatus::Running { .. }) | Err(StatusProblem::Timeout) => None,
        Ok(status) => Some(ended_result(tool, status, ms)),
        Err(StatusProblem::Text(text)) => Some(CallResult::text(text, true, ms)),
        Err(StatusProblem::Gone) => Some(CallResult::text(GONE, true, ms)),
    }
}

/// The text of a task whose work the service no longer knows.
pub(super) const GONE: &str = "Tool Service no longer knows the work (HTTP 404 or 410)";

/// The result of ended work (CONTRACT K6): the succeeded value mapped as a synchronous 2xx
/// body (X5), or an `isError` result.
pub(super) fn ended_result(tool: &Tool, status: ServiceStatus, ms: u64) -> CallResult {
    match status {
        ServiceStatus::Succeeded { result } => {
            let response = ToolResponse {
                status: StatusCode::OK,
                body: Bytes::from(result),
                location: None,
            };
            map_tool_answer(Ok(response), ms, tool.result_shape())
        }
        ServiceStatus::Failed { message, .. } => CallResult::text(
            format!("Tool Service reported the work as failed: {message}"),
            true,
            ms,
        ),
        ServiceStatus::Canceled => CallResult::text("Tool Service canceled the work", true, ms),
        ServiceStatus::Running { .. } => {
            CallResult::text("Tool Service has not finished the work", true, ms)
        }
    }
}

/// Why a status answer says nothing about the work.
pub(super) enum StatusProblem {
    /// `404` or `410`: the service no longer knows it.
    Gone,
    /// No answer within the time left.
    Timeout,
    /// Anything else, as an `isError` text.
    Text(String),
}

/// Reads one status answer (CONTRACT K2).
pub(super) fn read_status(
    answer: Result<ToolResponse, InvokeError>,
) -> Result<ServiceStatus, StatusProblem> {
    let response = match answer {
        Ok(response) => response,
        Err(InvokeError::Timeout { .. }) => return Err(StatusProblem::Timeout),
        Err(error) => return Err(StatusProblem::Text(error.to_string())),
    };
    match response.status.as_u16() {
        200 => crate::tasks::parse_status(&response.body).map_err(StatusProblem::Text),
        404 | 410 => Err(StatusProblem::Gone),
        other => Err(StatusProblem::Text(format!(
            "Tool Service returned HTTP {other} for the work's status"
        ))),
    }
}
