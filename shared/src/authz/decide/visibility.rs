//! Whether a tool is visible to a caller at all, whatever its arguments (CONTRACT Z4, Z7):
//! Cedar's partial evaluation with `context.input` unknown. A tool is hidden when the answer
//! is a definite deny, or when a policy errors on the caller's facts alone (then every call of
//! it errors, and so is denied). An error behind an unknown stays a residual, so no tool is
//! hidden that some arguments could make permitted.

use std::collections::HashMap;

use cedar_policy::{
    Authorizer, Context, Decision as CedarDecision, PolicyId, Request, RequestBuilder,
    RestrictedExpression,
};

use super::CallerView;

/// Policy ids, for a response's classes.
type Ids = std::collections::HashSet<PolicyId, foldhash::fast::RandomState>;

/// What one policy says of a caller for every tool its scope holds, whatever the arguments
/// (CONTRACT Z4): as Cedar's partial authorizer classes it.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Said {
    /// The policy errors on the caller's facts alone: every tool it could decide is hidden.
    errored: bool,
    /// A permit that applies, or that some arguments could make apply.
    may_permit: bool,
    /// A forbid that applies whatever the arguments.
    forbids: bool,
}

impl CallerView<'_> {
    /// Whether some policy could permit `tool` for this caller, whatever the arguments
    /// (CONTRACT Z4). A tool the route's policies do not know (the gateway's `search_tools`) is
    /// visible; under shadow mode every tool is (Z7).
    #[must_use]
    pub fn visible(&self, tool: &str) -> bool {
        let p = self.policies;
        let Some(action) = p.action(tool) else {
            return true;
        };
        p.mode == crate::authz::Mode::Shadow || self.visible_in(action)
    }

    /// Whether each of `tools` is visible to this caller (CONTRACT Z4), in their order, for
    /// lists. When no policy's condition reads `action` and the tools are at least as many as
    /// the slices it would otherwise take to hear from every policy, each policy is asked once,
    /// all in one partial evaluation with their action scopes opened, and each tool's answer is
    /// put together from its slice's as Cedar's partial authorizer puts them together (the
    /// bench's thousand tools and hundred policies: one partial evaluation where a list asked
    /// 97). Otherwise the tools whose slices decide alike are asked once, a partial evaluation
    /// of the slice.
    #[must_use]
    pub fn visible_mask<'t>(&self, tools: impl IntoIterator<Item = &'t str>) -> Vec<bool> {
        let p = self.policies;
        let tools = tools.into_iter();
        if p.mode == crate::authz::Mode::Shadow {
            return tools.map(|_| true).collect();
        }
        let scopes = p.scopes();
        let tools: Vec<&str> = tools.collect();
        if let Some(asked) = scopes.asked().filter(|asked| tools.len() >= asked.slices) {
            let said = self.said.get_or_init(|| self.ask_all(asked));
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
    /// evaluation of the [`Asked`](crate::authz::scopes::Asked) policies, about their tool
    /// with `input` unknown. A policy not asked is in no tool's slice; when the question cannot
    /// be put, every policy asked counts as errored.
    fn ask_all(&self, asked: &crate::authz::scopes::Asked) -> Vec<Said> {
        let p = self.policies;
        let scopes = p.scopes();
        let mut said = vec![Said::default(); p.parsed().order.len()];
        let response = p
            .action(&asked.tool)
            .and_then(|action| Some((action, self.store(action)?)))
            .and_then(|(action, entities)| {
                let request = self.unknown_input_request(action)?;
                Some(Authorizer::new().is_authorized_partial(&request, &asked.policies, &entities))
            });
        let Some(response) = response else {
            for &place in &asked.members {
                said[place].errored = true;
            }
            return said;
        };
        let errored: Ids = response.definitely_errored().cloned().collect();
        let satisfied: Ids = response
            .definitely_satisfied()
            .map(|policy| policy.id().clone())
            .collect();
        let residual: Ids = response
            .nontrivial_residuals()
            .map(|policy| policy.id().clone())
            .collect();
        for &place in &asked.members {
            let id = scopes.id(place);
            let said = &mut said[place];
            said.errored = errored.contains(id);
            let holds = satisfied.contains(id);
            match scopes.effect(place) {
                cedar_policy::Effect::Permit => {
                    said.may_permit = holds || residual.contains(id);
                }
                cedar_policy::Effect::Forbid => said.forbids = holds,
            }
        }
        said
    }

    /// The request of a visibility question about `action`: this caller, the route, and the
    /// context with `input` unknown (made by the first question).
    fn unknown_input_request(
        &self,
        action: &crate::authz::policies::ToolAction,
    ) -> Option<Request> {
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

    fn visible_in(&self, action: &crate::authz::policies::ToolAction) -> bool {
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
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::vouched_tools;
    use super::super::*;

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
        let asked = policies
            .scopes()
            .asked()
            .expect("no condition reads the action");
        assert!(
            asked.slices > 0 && asked.slices <= names.len(),
            "{} slices",
            asked.slices
        );
        // Every policy whose scope names one of the tools, or all of them, is asked; "ghost"
        // names none.
        assert_eq!(asked.members.len(), policies.policy_ids().count() - 1);
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
        assert!(policies.scopes().asked().is_none());
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

    /// A policy of the generated sets: its effect, principal scope, action scope and
    /// condition, over the tools t0..t5 (and `ghost`, no tool of the route).
    fn policy_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let principal = prop_oneof![
            Just("principal"),
            Just(r#"principal == Gateway::Caller::"anonymous""#),
            Just(r#"principal == Gateway::Caller::"d1""#),
        ];
        let action = prop_oneof![
            Just("action".to_string()),
            Just(r#"action in Gateway::Action::"call_tool""#.to_string()),
            (0..7_usize).prop_map(|t| format!(r#"action == Gateway::Action::"{}""#, tool(t))),
            proptest::collection::vec(0..7_usize, 1..4).prop_map(|ts| {
                let listed: Vec<String> = ts
                    .iter()
                    .map(|t| format!(r#"Gateway::Action::"{}""#, tool(*t)))
                    .collect();
                format!("action in [{}]", listed.join(", "))
            }),
        ];
        let condition = prop_oneof![
            Just(""),
            Just(r#" when { principal.groups.contains("a") }"#),
            Just(r#" unless { principal.groups.contains("b") }"#),
            Just(" when { context.input.n > 3 }"),
            Just(" when { principal.missing == 1 }"),
            Just(r#" when { principal.groups.contains("c") && principal.missing == 1 }"#),
            Just(r#" when { principal.subject == "x" && context.input.n > 1 }"#),
        ];
        (any::<bool>(), principal, action, condition).prop_map(|(permit, p, a, c)| {
            let effect = if permit { "permit" } else { "forbid" };
            format!("{effect}({p}, {a}, resource){c};")
        })
    }

    fn tool(t: usize) -> String {
        if t == 6 {
            "ghost".into()
        } else {
            format!("t{t}")
        }
    }

    proptest::proptest! {
        /// CONTRACT Z4: for any set of policies and any caller, a list that asks each policy
        /// once sees what asking each tool's slice sees.
        #[test]
        fn z4_grouped_answers_equal_each_slices_for_any_policies(
            texts in proptest::collection::vec(policy_text(), 1..9),
            groups in proptest::collection::vec(group_name(), 0..3),
        ) {
            let policies: Vec<String> = texts
                .iter()
                .enumerate()
                .map(|(i, text)| format!("@id(\"p{i}\") {text}"))
                .collect();
            let policies = policies.join("\n");
            let names = ["t0", "t1", "t2", "t3", "t4", "t5"];
            let route = vouched_tools(
                &names,
                r#"{"type":"object","properties":{"n":{"type":"integer"}}}"#,
                &policies,
            );
            // Every generated policy parses (a text that did not would leave none to ask).
            proptest::prop_assert_eq!(route.policy_ids().count(), texts.len());
            // The names asked four times over: at least as many as the slices.
            let asked: Vec<&str> = names.iter().cycle().take(names.len() * 4).copied().collect();
            proptest::prop_assert!(route.scopes().asked().is_none_or(|a| a.slices <= asked.len()));
            let request = RequestFacts {
                protocol_version: "2025-11-25",
                ..RequestFacts::default()
            };
            for caller in [
                CallerFacts::anonymous(),
                CallerFacts {
                    auth: "token",
                    subject: "d1".into(),
                    groups: groups.clone(),
                    ..CallerFacts::default()
                },
                CallerFacts {
                    auth: "oauth",
                    subject: "x".into(),
                    groups: groups.clone(),
                    ..CallerFacts::default()
                },
            ] {
                let view = route.view(&caller, &request).unwrap();
                let apart: Vec<bool> = asked.iter().map(|n| view.visible(n)).collect();
                proptest::prop_assert_eq!(view.visible_mask(asked.iter().copied()), apart);
            }
        }
    }

    fn group_name() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            Just("a".to_string()),
            Just("b".to_string()),
            Just("c".to_string())
        ]
    }
}
