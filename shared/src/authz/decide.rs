//! Decisions (CONTRACT Z4–Z7): deny unless a permit applies, a forbid wins, any evaluation
//! error denies; and whether a tool is visible to a caller at all, whatever its arguments.
//!
//! Cedar's authorizer skips a policy whose condition errors and decides on the others, so a
//! forbid that errors would let a call through: here any error in the diagnostics denies (Z5).
//! Visibility asks Cedar's partial evaluation with `context.input` unknown: a tool is hidden
//! when the answer is a definite deny, or when a policy errors on the caller's facts alone
//! (then every call of it errors, and so is denied). An error behind an unknown stays a
//! residual, so no tool is hidden that some arguments could make permitted (Z4).

use std::collections::{HashMap, HashSet};

use cedar_policy::{
    Authorizer, Context, Decision as CedarDecision, Entities, Entity, EntityId, EntityUid,
    PolicyId, Request, RequestBuilder, RestrictedExpression,
};

use super::caller::{CallerFacts, RequestFacts};
use super::context::{ArgumentText, InputError, input_expression};
use super::policies::RoutePolicies;

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
    /// ([`CallerView::visible_mask`]): asked once per group of the route's policies.
    said: std::sync::OnceLock<Vec<Said>>,
}

/// What one policy says of a caller for every tool its scope holds, whatever the arguments
/// (CONTRACT Z4): as Cedar's partial authorizer classes it.
#[derive(Debug, Clone, Copy, Default)]
struct Said {
    /// The policy errors on the caller's facts alone: every tool it could decide is hidden.
    errored: bool,
    /// A permit that applies, or that some arguments could make apply.
    may_permit: bool,
    /// A forbid that applies whatever the arguments.
    forbids: bool,
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

    /// Whether some policy could permit `tool` for this caller, whatever the arguments
    /// (CONTRACT Z4). A tool the route's policies do not know (the gateway's `search_tools`) is
    /// visible; under shadow mode every tool is (Z7).
    #[must_use]
    pub fn visible(&self, tool: &str) -> bool {
        let p = self.policies;
        let Some(action) = p.action(tool) else {
            return true;
        };
        p.mode == super::Mode::Shadow || self.visible_in(action)
    }

    /// Whether each of `tools` is visible to this caller (CONTRACT Z4), in their order, for
    /// lists. When no policy's condition reads `action` and the tools are at least as many as
    /// the groups of policies (policies whose scopes all hold one tool), each policy is asked
    /// once, in one partial evaluation per group, and each tool's answer is put together from
    /// its slice's as Cedar's partial authorizer puts them together (the bench's thousand
    /// tools and hundred policies: 97 partial evaluations of one or two policies each).
    /// Otherwise the tools whose slices decide alike are asked once, a partial evaluation of
    /// the slice.
    #[must_use]
    pub fn visible_mask<'t>(&self, tools: impl IntoIterator<Item = &'t str>) -> Vec<bool> {
        let p = self.policies;
        let tools = tools.into_iter();
        if p.mode == super::Mode::Shadow {
            return tools.map(|_| true).collect();
        }
        let scopes = p.scopes();
        let tools: Vec<&str> = tools.collect();
        let groups = scopes.groups();
        if !groups.is_empty() && tools.len() >= groups.len() {
            let said = self.said.get_or_init(|| self.ask_groups(groups));
            return tools
                .into_iter()
                .map(|t| {
                    if p.action(t).is_none() {
                        return true;
                    }
                    // Cedar's partial decision: denied when a forbid applies or no permit can;
                    // hidden also when a policy of the slice errors (as `visible_in`).
                    let mut permit = false;
                    for place in scopes.slice_places(t) {
                        let Some(said) = said.get(place) else {
                            return false;
                        };
                        if said.errored || said.forbids {
                            return false;
                        }
                        permit |= said.may_permit;
                    }
                    permit
                })
                .collect();
        }
        let mut decided: HashMap<&[usize], bool, foldhash::fast::RandomState> = HashMap::default();
        tools
            .into_iter()
            .map(|t| {
                let Some(action) = p.action(t) else {
                    return true;
                };
                match scopes.visibility_key(&action.name) {
                    Some(key) => *decided
                        .entry(key)
                        .or_insert_with(|| self.visible_in(action)),
                    None => self.visible_in(action),
                }
            })
            .collect()
    }

    /// What each policy says of this caller (CONTRACT Z4), in the text's order: one partial
    /// evaluation per group, asked about the group's tool with `input` unknown. A policy in
    /// no group is in no tool's slice; a group that cannot be asked counts as errored.
    fn ask_groups(&self, groups: &[super::scopes::Group]) -> Vec<Said> {
        let p = self.policies;
        let scopes = p.scopes();
        let mut said = vec![Said::default(); p.parsed().order.len()];
        for group in groups {
            let asked = p
                .action(&group.tool)
                .and_then(|action| Some((action, self.store(action)?)))
                .and_then(|(action, entities)| {
                    let request = self.unknown_input_request(action)?;
                    Some(Authorizer::new().is_authorized_partial(
                        &request,
                        &group.policies,
                        &entities,
                    ))
                });
            let Some(response) = asked else {
                for &place in &group.members {
                    said[place].errored = true;
                }
                continue;
            };
            let errored: Vec<&PolicyId> = response.definitely_errored().collect();
            let satisfied: Vec<PolicyId> = response
                .definitely_satisfied()
                .map(|policy| policy.id().clone())
                .collect();
            let residual: Vec<PolicyId> = response
                .nontrivial_residuals()
                .map(|policy| policy.id().clone())
                .collect();
            for &place in &group.members {
                let id = scopes.id(place);
                let said = &mut said[place];
                said.errored = errored.contains(&id);
                let holds = satisfied.contains(id);
                match scopes.effect(place) {
                    cedar_policy::Effect::Permit => {
                        said.may_permit = holds || residual.contains(id);
                    }
                    cedar_policy::Effect::Forbid => said.forbids = holds,
                }
            }
        }
        said
    }

    /// The request of a visibility question about `action`: this caller, the route, and the
    /// context with `input` unknown (made by the first question).
    fn unknown_input_request(&self, action: &super::policies::ToolAction) -> Option<Request> {
        let p = self.policies;
        let context = self.unknown_input.get_or_init(|| {
            Context::from_pairs([
                (
                    "input".to_string(),
                    RestrictedExpression::new_unknown("input"),
                ),
                ("request".to_string(), self.request.clone()),
            ])
            .ok()
        });
        let context = context.clone()?;
        Some(
            RequestBuilder::default()
                .principal(self.caller.clone())
                .action(p.uid_of(action).clone())
                .resource(p.route.uid())
                .context(context)
                .build(),
        )
    }

    fn visible_in(&self, action: &super::policies::ToolAction) -> bool {
        let p = self.policies;
        let slice = p.slice(action);
        // No policy's scope holds the tool: nothing can permit it (Cedar would say Deny).
        if slice.is_empty() {
            return false;
        }
        let Some(entities) = self.store(action) else {
            return false;
        };
        let Some(request) = self.unknown_input_request(action) else {
            return false;
        };
        let partial = Authorizer::new().is_authorized_partial(&request, slice, &entities);
        partial.decision() != Some(CedarDecision::Deny)
            && partial.definitely_errored().next().is_none()
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
    fn vouched_tools(names: &[&str], schema: &'static str, policies: &str) -> RoutePolicies {
        let digest = validation_digest(names.iter().map(|n| (*n, schema.as_bytes())), policies);
        let authorization = json!({"mode": "enforce", "policies": policies, "validated": digest});
        let tools = names
            .iter()
            .map(|n| (n.to_string(), Bytes::from_static(schema.as_bytes())))
            .collect();
        RoutePolicies::compile_texts("core", &authorization, tools)
            .expect("a matching digest skips validation")
    }

    const GROUPED: &str = r#"
@id("admins") permit(principal, action in Gateway::Action::"call_tool", resource) when { principal.groups.contains("admin") };
@id("anon") permit(principal == Gateway::Caller::"anonymous", action in [Gateway::Action::"t0", Gateway::Action::"t1"], resource);
@id("team-a") permit(principal, action in [Gateway::Action::"nope", Gateway::Action::"t2", Gateway::Action::"t3"], resource) when { principal.groups.contains("a") };
@id("team-b") permit(principal, action == Gateway::Action::"t4", resource) when { principal.groups.contains("b") };
@id("by-input") permit(principal, action in [Gateway::Action::"t5", Gateway::Action::"t6"], resource) when { context.input.n > 3 };
@id("limit") forbid(principal, action == Gateway::Action::"t6", resource) when { context.input has n && context.input.n > 10 };
@id("kill") forbid(principal, action == Gateway::Action::"t7", resource);
@id("open") permit(principal, action in [Gateway::Action::"t7", Gateway::Action::"t8", Gateway::Action::"t9"], resource);
@id("broken-permit") permit(principal, action == Gateway::Action::"t10", resource) when { principal.subject == "x" && principal.missing == 1 };
@id("broken-forbid") forbid(principal, action in [Gateway::Action::"t8", Gateway::Action::"t11"], resource) when { principal.groups.contains("c") && principal.missing == 1 };
@id("t11") permit(principal, action == Gateway::Action::"t11", resource);
@id("ghost") permit(principal, action == Gateway::Action::"ghost", resource);
"#;

    #[test]
    fn z4_a_list_asking_each_policy_once_sees_what_each_tools_slice_decides() {
        const SCHEMA: &str = r#"{"type":"object","properties":{"n":{"type":"integer"}}}"#;
        let names: Vec<String> = (0..12).map(|i| format!("t{i}")).collect();
        let listed: Vec<&str> = names.iter().map(String::as_str).collect();
        let policies = vouched_tools(&listed, SCHEMA, GROUPED);
        let groups = policies.scopes().groups().len();
        assert!(groups > 0 && groups <= names.len(), "{groups} groups");
        let request = RequestFacts {
            protocol_version: "2025-11-25",
            ..RequestFacts::default()
        };
        let caller = |subject: &str, groups: &[&str]| CallerFacts {
            auth: "token",
            subject: subject.into(),
            groups: groups.iter().map(ToString::to_string).collect(),
            ..CallerFacts::default()
        };
        let seen = |caller: &CallerFacts| -> Vec<&str> {
            let view = policies.view(caller, &request).unwrap();
            let mask = view.visible_mask(names.iter().map(String::as_str));
            // Each tool asked apart, its slice in one partial evaluation, says the same.
            let apart: Vec<bool> = names.iter().map(|n| view.visible(n)).collect();
            assert_eq!(mask, apart, "{caller:?}");
            names
                .iter()
                .zip(mask)
                .filter_map(|(n, seen)| seen.then_some(n.as_str()))
                .collect()
        };
        assert_eq!(
            seen(&CallerFacts::anonymous()),
            ["t0", "t1", "t5", "t6", "t8", "t9", "t11"]
        );
        assert_eq!(
            seen(&caller("d1", &["a"])),
            ["t2", "t3", "t5", "t6", "t8", "t9", "t11"]
        );
        // broken-forbid errors for group c: t8 and t11 are hidden although permitted.
        assert_eq!(seen(&caller("d2", &["b", "c"])), ["t4", "t5", "t6", "t9"]);
        // broken-permit errors for subject x: t10 stays hidden.
        assert_eq!(seen(&caller("x", &[])), ["t5", "t6", "t8", "t9", "t11"]);
        // admins see every tool but the killed one and those an erroring forbid holds.
        assert_eq!(
            seen(&caller("d3", &["admin"])),
            [
                "t0", "t1", "t2", "t3", "t4", "t5", "t6", "t8", "t9", "t10", "t11"
            ]
        );
        assert_eq!(
            seen(&caller("d4", &["admin", "c"])),
            ["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t9", "t10"]
        );
    }

    #[test]
    fn z4_a_condition_naming_an_action_is_asked_tool_by_tool_as_a_call_decides() {
        const SCHEMA: &str = r#"{"type":"object"}"#;
        // The store of a question about one tool holds that tool's action only: `t0 in
        // call_tool` holds when t0 is asked about, not when t1 is.
        const NAMING: &str = r#"@id("odd") permit(principal, action in [Gateway::Action::"t0", Gateway::Action::"t1"], resource) when { Gateway::Action::"t0" in Gateway::Action::"call_tool" };"#;
        let names = ["t0", "t1"];
        let policies = vouched_tools(&names, SCHEMA, NAMING);
        assert!(policies.scopes().groups().is_empty());
        let request = RequestFacts {
            protocol_version: "2025-11-25",
            ..RequestFacts::default()
        };
        let view = policies.view(&CallerFacts::anonymous(), &request).unwrap();
        assert_eq!(view.visible_mask(names), [true, false]);
        assert_eq!(view.visible_mask(["t1", "t0"]), [false, true]);
        assert_eq!(
            view.decide("t0", &json!({})).unwrap().kind,
            DecisionKind::Allow
        );
        assert_eq!(
            view.decide("t1", &json!({})).unwrap().kind,
            DecisionKind::Deny
        );
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
