//! `tasks/get`, `tasks/update` and `tasks/cancel` of the tasks extension (CONTRACT K6, K7;
//! ext-tasks specification/draft/tasks.md): the task id opened, checked against the route and
//! the caller, and the Tool Service's status location asked, once per request.

use std::time::Instant;

use http::Method;
use serde_json::{Map, Value};

use super::task_call::{
    StatusProblem, TaskError, TaskView, caller_of, ended_result, read_status,
    service_request_spanned,
};
use super::tools_call::effective_timeout;
use super::{Call, MethodOutcome, result};
use crate::invoke::ToolInvoker;
use crate::protocol::{ErrorObject, RequestId, methods};
use crate::registry::ToolLookup;
use crate::tasks::{ServiceStatus, iso_time, now_ms};
use crate::tool_result::oversized_result;
use crate::usage::ToolUse;

pub(super) async fn handle<I: ToolInvoker>(
    call: &Call<'_>,
    invoker: &I,
    id: &RequestId,
    method: &str,
    params: Option<&Map<String, Value>>,
    tool_use: &mut ToolUse,
) -> MethodOutcome {
    let error = MethodOutcome::Error;
    let task_id = match params.and_then(|p| p.get("taskId")) {
        Some(Value::String(task_id)) => task_id,
        None => return error(ErrorObject::invalid_params("'taskId' is required")),
        Some(_) => return error(ErrorObject::invalid_params("'taskId' must be a string")),
    };
    let Some(route) = call.route else {
        return error(ErrorObject::internal_error(call.unavailable_reason));
    };
    // CONTRACT K3: no key, no task could have been made here.
    if !call.tasks.is_configured() {
        return error(ErrorObject::unknown_task());
    }
    let keys = match call.tasks.keys(invoker).await {
        Ok(keys) => keys,
        Err(detail) => return error(ErrorObject::internal_error(detail)),
    };
    // CONTRACT K6: made up, changed, another route's, another caller's, expired: one answer,
    // and nothing is asked of any service.
    let Some(claims) = keys.open(task_id).filter(|claims| {
        claims.route == route.key.as_deref().unwrap_or_default()
            && claims.caller == caller_of(call)
            && !claims.expired(now_ms())
    }) else {
        return error(ErrorObject::unknown_task());
    };
    // The tool must still be a task tool of the route, and one the caller may see (Z4).
    let tool = match route.tool(&claims.tool) {
        Some(ToolLookup::Active(tool))
            if tool.task.is_some() && !super::authorize::hidden(call, route, &tool.name) =>
        {
            tool
        }
        _ => return error(ErrorObject::unknown_task()),
    };
    tool_use.name = Some(claims.tool.clone());
    // CONTRACT K2: still on the tool endpoint's origin (a manifest that moved the tool moves
    // its credentials, which never go to the old host).
    let Some(url) = super::task_call::status_url(tool, &claims.location) else {
        return error(ErrorObject::unknown_task());
    };
    let timeout = effective_timeout(call, tool);
    match method {
        methods::TASKS_GET => {}
        methods::TASKS_CANCEL => {
            // CONTRACT K7: the service is asked to stop; the request is acknowledged whatever
            // it answers (a finished task's included).
            let started = Instant::now();
            let span = Some(&mut tool_use.span);
            let _ =
                service_request_spanned(call, invoker, tool, Method::DELETE, url, timeout, span)
                    .await;
            tool_use.tool_ms = Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(0));
            tool_use.task_status = Some("cancel_requested");
            return result(call.encode(id, &Map::new(), false));
        }
        // CONTRACT K7: no task of the gateway asks for input; an update is acknowledged.
        _ => return result(call.encode(id, &Map::new(), false)),
    }
    let started = Instant::now();
    let span = Some(&mut tool_use.span);
    let answer =
        service_request_spanned(call, invoker, tool, Method::GET, url, timeout, span).await;
    let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    tool_use.tool_ms = Some(ms);
    let status = match read_status(answer) {
        Ok(status) => status,
        Err(StatusProblem::Gone) => return error(ErrorObject::unknown_task()),
        Err(StatusProblem::Timeout) => {
            return error(ErrorObject::internal_error(format!(
                "the Tool Service did not answer the task's status request within {} ms",
                timeout.as_millis()
            )));
        }
        Err(StatusProblem::Text(text)) => {
            return error(ErrorObject::internal_error(format!(
                "the task's status could not be read: {text}"
            )));
        }
    };
    // CONTRACT K9: what the status said (a failed work is a completed task).
    tool_use.task_status = Some(match &status {
        ServiceStatus::Running { .. } => "working",
        ServiceStatus::Canceled => "cancelled",
        ServiceStatus::Failed { .. } => "failed",
        ServiceStatus::Succeeded { .. } => "completed",
    });
    let task = tool
        .task
        .as_ref()
        .map(|t| t.poll_interval_ms)
        .unwrap_or_default();
    let mut failure = None;
    let (name, message, ended) = match status {
        ServiceStatus::Running { message } => ("working", message, None),
        ServiceStatus::Canceled => ("cancelled", None, None),
        // CONTRACT K6: a JSON-RPC error of the work is a failed task.
        ServiceStatus::Failed {
            message,
            code: Some(code),
        } => {
            failure = Some(TaskError {
                code,
                message: message.clone(),
            });
            ("failed", Some(message), None)
        }
        ServiceStatus::Failed {
            message,
            code: None,
        } => {
            let ended = ended_result(
                tool,
                ServiceStatus::Failed {
                    message: message.clone(),
                    code: None,
                },
                ms,
            );
            ("completed", Some(message), Some(ended))
        }
        succeeded @ ServiceStatus::Succeeded { .. } => {
            ("completed", None, Some(ended_result(tool, succeeded, ms)))
        }
    };
    let view = |result| TaskView {
        task_id,
        status: name,
        status_message: message.as_deref(),
        created_at: iso_time(claims.created_ms),
        last_updated_at: iso_time(now_ms()),
        ttl_ms: claims.ttl_ms,
        poll_interval_ms: task,
        result,
        error: failure.as_ref(),
    };
    let mut body = call.encode(id, &view(ended.as_ref()), false);
    if body.len() > call.config.max_response_bytes {
        let oversized = oversized_result(call.config.max_response_bytes, ms);
        body = call.encode(id, &view(Some(&oversized)), false);
    }
    let tool_error = ended.as_ref().is_some_and(|r| r.is_error);
    MethodOutcome::Result {
        body,
        session_id: None,
        tool_error,
    }
}
