//! The authorization step of `tools/call` and the lists' filter (CONTRACT Z4–Z7, Z10): after
//! the tool is resolved and its arguments validated, before any Tool Service is called.

use super::sent_arguments::Sent;
use super::{Call, MethodOutcome};
use crate::authz::{
    ArgumentText, CallerFacts, CallerView, Decision, DecisionKind, Mode, NotAnObject, RequestFacts,
};
use crate::policy::CallerHeaders;
use crate::protocol::{ErrorObject, RequestId};
use crate::registry::Route;
use crate::tool_result::CallResult;
use crate::usage::ToolUse;

impl ArgumentText for Sent<'_> {
    fn scalar(&self) -> Option<std::borrow::Cow<'_, str>> {
        match self {
            Self::Scalar(text) => Some(std::borrow::Cow::Borrowed(text)),
            _ => None,
        }
    }

    fn items(&self) -> Option<Vec<&Self>> {
        match self {
            Self::Array(items) => Some(items.iter().collect()),
            _ => None,
        }
    }

    fn member(&self, key: &str) -> Result<Option<&Self>, NotAnObject> {
        match self {
            Self::Object(members) => Ok(members.iter().find(|m| m.key == key).map(|m| &m.value)),
            _ => Err(NotAnObject),
        }
    }
}

/// The caller and request as `route`'s policies see them; `None` for a route without
/// policies (it pays nothing) or when the caller's entity cannot be built.
pub(super) fn view<'r>(call: &Call<'_>, route: &'r Route) -> Option<CallerView<'r>> {
    view_of(route, call.authorized, call.caller, call.protocol_version)
}

fn view_of<'r>(
    route: &'r Route,
    authorized: Option<&CallerFacts>,
    caller: &CallerHeaders,
    protocol_version: &str,
) -> Option<CallerView<'r>> {
    let policies = route.policies()?;
    let anonymous;
    let authorized = if let Some(facts) = authorized {
        facts
    } else {
        anonymous = CallerFacts::anonymous();
        &anonymous
    };
    let facts = RequestFacts {
        employee_no: header_text(caller.employee_no.as_ref()),
        virtual_employee_no: header_text(caller.virtual_employee_no.as_ref()),
        protocol_version,
    };
    policies.view(authorized, &facts)
}

/// An employee header's text (C4 keeps it printable ASCII).
fn header_text(value: Option<&http::HeaderValue>) -> Option<&str> {
    value.and_then(|v| v.to_str().ok())
}

/// CONTRACT Z4, N2: whether the tool `name` of `route` is hidden from this caller, for the
/// checks before dispatch (a hidden tool's `Mcp-Param-*` headers are not checked, as an
/// unknown tool's are not).
pub(crate) fn hidden_before_dispatch(
    route: &Route,
    authorized: Option<&CallerFacts>,
    caller: &CallerHeaders,
    protocol_version: &str,
    name: &str,
) -> bool {
    view_of(route, authorized, caller, protocol_version).is_some_and(|v| !v.visible(name))
}

/// CONTRACT X2, Z4: the answer to a call of a tool that does not exist, or that no policy
/// could permit for this caller: the same bytes either way.
pub(super) fn unknown_tool(name: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("unknown tool '{name}'"))
}

/// Whether `name` is hidden from this caller (CONTRACT Z4): only under `enforce`.
pub(super) fn hidden(call: &Call<'_>, route: &Route, name: &str) -> bool {
    view(call, route).is_some_and(|v| !v.visible(name))
}

/// Decides the call of `name` with `arguments` as the request wrote them (CONTRACT Z4–Z7): `None` lets it go on to the Tool Service,
/// `Some` is the answer of a denied call. The decision and its policies go to `tool_use`
/// (Z10).
pub(super) fn decide(
    call: &Call<'_>,
    id: &RequestId,
    route: &Route,
    name: &str,
    arguments: &Sent<'_>,
    tool_use: &mut ToolUse,
) -> Option<MethodOutcome> {
    let policies = route.policies()?;
    let shadow = policies.mode() == Mode::Shadow;
    let Some(view) = view(call, route) else {
        tool_use.decision = Some(if shadow { "shadow_deny" } else { "error" });
        return (!shadow).then(|| MethodOutcome::Error(unknown_tool(name)));
    };
    let decision = view.decide(name, arguments)?;
    tool_use.decision = Some(decision.label(shadow));
    if !decision.policies.is_empty() {
        tool_use.policies = Some(decision.policies.join(" "));
    }
    if shadow || decision.kind == DecisionKind::Allow {
        return None;
    }
    if !view.visible(name) {
        return Some(MethodOutcome::Error(unknown_tool(name)));
    }
    Some(denied(call, id, &decision))
}

/// CONTRACT Z6: the `isError` result of a call its arguments denied.
fn denied(call: &Call<'_>, id: &RequestId, decision: &Decision) -> MethodOutcome {
    let result = CallResult::text(decision.denial.clone(), true, 0);
    MethodOutcome::Result {
        body: call.encode(id, &result, false),
        session_id: None,
        tool_error: true,
    }
}
