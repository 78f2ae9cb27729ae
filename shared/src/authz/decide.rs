//! Decisions (CONTRACT Z4–Z7): deny unless a permit applies, a forbid wins, any evaluation
//! error denies; and whether a tool is visible to a caller at all, whatever its arguments.
//!
//! Cedar's authorizer skips a policy whose condition errors and decides on the others, so a
//! forbid that errors would let a call through: here any error in the diagnostics denies (Z5).
//! Visibility (the `visibility` module) asks Cedar's partial evaluation with `context.input`
//! unknown.

use std::collections::HashSet;

use cedar_policy::{
    Authorizer, Context, Decision as CedarDecision, Entities, Entity, EntityId, EntityUid,
    PolicyId, Request, RestrictedExpression,
};

use super::caller::{CallerFacts, RequestFacts};
use super::context::{ArgumentText, InputError, input_expression};
use super::policies::RoutePolicies;

mod visibility;

use visibility::Said;

/// How a call was decided (CONTRACT Z10: the usage event's `decision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionKind {
    /// A permit applies and no forbid does.
    Allow,
    /// No permit applies, or a forbid does.
    Deny,
    /// A policy could not be evaluated, or an argument cannot be held exactly: denied (Z5).
    Error,
}

/// The decision on one `tools/call` (CONTRACT Z4–Z6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// What was decided.
    pub kind: DecisionKind,
    /// The determining policies' ids: the permits of an allow, the forbids of a deny, the
    /// erroring policies of an error; in the text's order.
    pub policies: Vec<String>,
    /// The text of the `isError` result of a denied call: starts `Tool call denied`, names the
    /// deciding forbid's `@id` and its `@reason`, never the policy text (Z6).
    pub denial: String,
}

impl Decision {
    /// The usage event's `decision` label (CONTRACT Z10): `allow`, `deny`, `shadow_deny` (a
    /// deny or error under shadow mode) or `error`.
    #[must_use]
    pub fn label(&self, shadow: bool) -> &'static str {
        match (self.kind, shadow) {
            (DecisionKind::Allow, _) => "allow",
            (_, true) => "shadow_deny",
            (DecisionKind::Deny, false) => "deny",
            (DecisionKind::Error, false) => "error",
        }
    }
}

/// Built once per request: the caller's entity and the request facts (CONTRACT Z3).
#[derive(Debug)]
pub struct CallerView<'a> {
    policies: &'a RoutePolicies,
    caller: EntityUid,
    entity: Entity,
    request: RestrictedExpression,
    /// The context of a visibility question (`input` unknown, `request` this request's),
    /// made by the first: a list asks one per distinct slice, all with the same context.
    unknown_input: std::sync::OnceLock<Option<Context>>,
    /// What each policy says of this caller, in the text's order, for a list's many tools
    /// ([`CallerView::visible_mask`]): asked in one partial evaluation of the route's policies.
    said: std::sync::OnceLock<Vec<Said>>,
}

impl RoutePolicies {
    /// The caller and request as the policies see them (CONTRACT Z2, Z3).
    #[must_use]
    pub fn view(&self, caller: &CallerFacts, request: &RequestFacts<'_>) -> Option<CallerView<'_>> {
        let uid = EntityUid::from_type_name_and_id(
            self.caller_type.clone(),
            EntityId::new(&caller.subject),
        );
        let strings = |values: &[String]| {
            RestrictedExpression::new_set(
                values.iter().cloned().map(RestrictedExpression::new_string),
            )
        };
        let attributes = [
            (
                "auth".to_string(),
                RestrictedExpression::new_string(caller.auth.into()),
            ),
            (
                "subject".into(),
                RestrictedExpression::new_string(caller.subject.clone()),
            ),
            ("groups".into(), strings(&caller.groups)),
            ("scopes".into(), strings(&caller.scopes)),
            (
                "clientId".into(),
                RestrictedExpression::new_string(caller.client_id.clone()),
            ),
        ];
        let tags = caller
            .tags
            .iter()
            .map(|(k, v)| (k.clone(), RestrictedExpression::new_string(v.clone())));
        let entity = Entity::new_with_tags(uid.clone(), attributes, [], tags).ok()?;
        let mut fields = vec![(
            "protocolVersion".to_string(),
            RestrictedExpression::new_string(request.protocol_version.into()),
        )];
        for (name, value) in [
            ("employeeNo", request.employee_no),
            ("virtualEmployeeNo", request.virtual_employee_no),
        ] {
            if let Some(value) = value {
                fields.push((name.into(), RestrictedExpression::new_string(value.into())));
            }
        }
        let request = RestrictedExpression::new_record(fields).ok()?;
        Some(CallerView {
            policies: self,
            caller: uid,
            entity,
            request,
            unknown_input: std::sync::OnceLock::new(),
            said: std::sync::OnceLock::new(),
        })
    }
}

impl CallerView<'_> {
    /// The entity store of this caller, the route, `call_tool` and `action`: all that a
    /// decision about `action` reads. Their ancestors are already transitive (the caller has
    /// no parent; the action's one parent, `call_tool`, has none), so Cedar's closure pass is
    /// skipped: a call makes one, a list one per distinct slice it asks about.
    fn store(&self, action: &super::policies::ToolAction) -> Option<Entities> {
        let p = self.policies;
        cedar_policy_core::entities::Entities::from_entities(
            [&self.entity, &p.route, &p.call_tool, p.entity_of(action)]
                .map(|entity| AsRef::<cedar_policy_core::ast::Entity>::as_ref(entity).clone()),
            None::<&cedar_policy_core::entities::NoEntitiesSchema>,
            cedar_policy_core::entities::TCComputation::AssumeAlreadyComputed,
            cedar_policy_core::extensions::Extensions::none(),
        )
        .ok()
        .map(Entities::from)
    }

    /// Decides a call of `tool` with `arguments` (CONTRACT Z4, Z5, Z6): `None` for a tool the
    /// route's policies do not know (the gateway's `search_tools`).
    #[must_use]
    pub fn decide<A: ArgumentText>(&self, tool: &str, arguments: &A) -> Option<Decision> {
        let p = self.policies;
        let action = p.action(tool)?;
        let error = |denial: String, policies: Vec<String>| Decision {
            kind: DecisionKind::Error,
            policies,
            denial,
        };
        let Some(input_type) = action.input() else {
            return Some(error(
                "Tool call denied: the policies could not be evaluated for this call".into(),
                Vec::new(),
            ));
        };
        let input = match input_expression(input_type, arguments) {
            Ok(input) => input,
            Err(e @ (InputError::Inexact { .. } | InputError::Mistyped { .. })) => {
                return Some(error(format!("Tool call denied: {e}"), Vec::new()));
            }
        };
        let evaluation_error = || {
            error(
                "Tool call denied: the policies could not be evaluated for this call".into(),
                Vec::new(),
            )
        };
        let Some(entities) = self.store(action) else {
            return Some(evaluation_error());
        };
        let context = Context::from_pairs([
            ("input".to_string(), input),
            ("request".to_string(), self.request.clone()),
        ]);
        let Ok(context) = context else {
            return Some(evaluation_error());
        };
        // Not checked against the schema again: `input` is built from the very types the
        // schema declares (and the policies were validated against), and a value of another
        // type would make its policy error, which denies (Z5). The check cost about 10 us.
        let request = Request::new(
            self.caller.clone(),
            p.uid_of(action).clone(),
            p.route.uid(),
            context,
            None,
        );
        let Ok(request) = request else {
            return Some(evaluation_error());
        };
        let response = Authorizer::new().is_authorized(&request, p.slice(action), &entities);
        let diagnostics = response.diagnostics();
        let in_order = |ids: HashSet<&PolicyId>| -> Vec<String> {
            p.parsed()
                .order
                .iter()
                .filter(|id| ids.contains(id))
                .map(ToString::to_string)
                .collect()
        };
        let errored: HashSet<&PolicyId> = diagnostics
            .errors()
            .map(|e| match e {
                cedar_policy::AuthorizationError::PolicyEvaluationError(e) => e.policy_id(),
            })
            .collect();
        if !errored.is_empty() {
            let policies = in_order(errored);
            let denial = format!(
                "Tool call denied: policy '{}' could not be evaluated for these arguments",
                policies.first().map_or("", String::as_str)
            );
            return Some(error(denial, policies));
        }
        let policies = in_order(diagnostics.reason().collect());
        if response.decision() == CedarDecision::Allow {
            return Some(Decision {
                kind: DecisionKind::Allow,
                policies,
                denial: String::new(),
            });
        }
        let denial = match policies.first() {
            None => "Tool call denied: no policy permits these arguments".to_string(),
            Some(id) => {
                let reason = p
                    .parsed()
                    .policies
                    .policy(&PolicyId::new(id))
                    .and_then(|policy| super::parse::annotation(policy, "reason"));
                match reason {
                    Some(reason) => format!("Tool call denied by policy '{id}': {reason}"),
                    None => format!("Tool call denied by policy '{id}'"),
                }
            }
        };
        Some(Decision {
            kind: DecisionKind::Deny,
            policies,
            denial,
        })
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use serde_json::json;

    use super::super::policies::validation_digest;
    use super::*;

    const POLICIES: &str = r#"@id("all") permit(principal, action, resource);"#;

    /// A route whose one tool's schema text is `schema`, its policies vouched for by the
    /// digest, so the schema is first read by the tool's first call (CONTRACT Z11).
    fn vouched(schema: &'static str) -> RoutePolicies {
        vouched_tools(&["t"], schema, POLICIES)
    }

    /// A route of the tools `names`, each with the schema text `schema`, and `policies`
    /// vouched for by the digest (CONTRACT Z11): not validated, so policies that error on a
    /// caller's facts load too.
    pub(super) fn vouched_tools(
        names: &[&str],
        schema: &'static str,
        policies: &str,
    ) -> RoutePolicies {
        let digest = validation_digest(names.iter().map(|n| (*n, schema.as_bytes())), policies);
        let authorization = json!({"mode": "enforce", "policies": policies, "validated": digest});
        let tools = names
            .iter()
            .map(|n| (n.to_string(), Bytes::from_static(schema.as_bytes())))
            .collect();
        RoutePolicies::compile_texts("core", &authorization, tools)
            .expect("a matching digest skips validation")
    }

    #[test]
    fn z5_a_tool_whose_schema_text_cannot_be_read_is_denied_not_undecided() {
        let request = RequestFacts {
            protocol_version: "2025-11-25",
            ..RequestFacts::default()
        };
        let readable = vouched(r#"{"type":"object","properties":{"n":{"type":"integer"}}}"#);
        let view = readable.view(&CallerFacts::anonymous(), &request).unwrap();
        let allowed = view.decide("t", &json!({"n": 1})).unwrap();
        assert_eq!(allowed.kind, DecisionKind::Allow);
        let unreadable = vouched(r#"{"type":"object","properties":"#);
        let view = unreadable
            .view(&CallerFacts::anonymous(), &request)
            .unwrap();
        let denied = view.decide("t", &json!({"n": 1})).unwrap();
        assert_eq!(denied.kind, DecisionKind::Error);
        assert_eq!(
            denied.denial,
            "Tool call denied: the policies could not be evaluated for this call"
        );
    }
}
