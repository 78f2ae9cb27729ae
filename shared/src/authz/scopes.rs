//! A route's policies indexed by the actions their scope can hold (CONTRACT Z4): each tool's
//! slice of the set, and which tools share what their slices decide, so a list asks Cedar once
//! per distinct slice rather than once per tool.

use std::collections::HashMap;

use cedar_policy::{ActionConstraint, EntityTypeName, EntityUid, PolicyId, PolicySet};
use cedar_policy_core::ast::{ExprKind, Literal, Var};

/// The policies in the text's order, indexed by the actions their scope can hold: made once,
/// by the first decision of an instance, for every tool's slice.
#[derive(Debug, Default)]
pub(crate) struct Scopes {
    policies: Vec<cedar_policy::Policy>,
    /// Policies whose scope holds every tool's action (`action`, `action in call_tool`).
    every: Vec<usize>,
    /// Policies that name the action (`action == A`, `action in [A, …]`), by the tool's name
    /// (the id of a `Gateway::Action`; a policy naming an entity of another type names no
    /// tool).
    named: HashMap<String, Vec<usize>, foldhash::fast::RandomState>,
    /// Whether some policy's conditions (`when`, `unless`) read `action` or name an action:
    /// then two tools with the same policies in their slices may still be decided apart.
    reads_action: bool,
    /// The policies in groups that one partial evaluation each judges for every tool at once
    /// (CONTRACT Z4), when no condition reads `action` ([`Scopes::groups`]).
    groups: Vec<Group>,
}

/// Policies whose scopes all hold the action of `tool`: asked about that action, each says
/// what it says of every tool its scope holds, since nothing else in it reads the action.
#[derive(Debug)]
pub(super) struct Group {
    /// The tool asked about.
    pub(super) tool: String,
    /// The group's policies, as one set.
    pub(super) policies: PolicySet,
    /// Their places in the text's order.
    pub(super) members: Vec<usize>,
}

impl Scopes {
    /// `is_tool` tells the route's tools from other actions, `any_tool` is one of the
    /// route's tools (for the groups).
    pub(super) fn new(
        policies: &PolicySet,
        order: &[PolicyId],
        call_tool: &EntityUid,
        action_type: &EntityTypeName,
        is_tool: impl Fn(&str) -> bool,
        any_tool: Option<&str>,
    ) -> Self {
        let mut scopes = Self::default();
        let mut groups: HashMap<String, usize, foldhash::fast::RandomState> = HashMap::default();
        let action_type_name = action_type.to_string();
        let tool = |uid: &EntityUid| {
            (uid.type_name() == action_type).then(|| AsRef::<str>::as_ref(uid.id()).to_string())
        };
        for (i, policy) in order
            .iter()
            .filter_map(|id| policies.policy(id))
            .enumerate()
        {
            scopes.reads_action |= reads_action(policy, &action_type_name);
            scopes.policies.push(ast_only(policy));
            match policy.action_constraint() {
                ActionConstraint::Any => scopes.every.push(i),
                ActionConstraint::Eq(uid) => {
                    if let Some(name) = tool(&uid) {
                        scopes.named.entry(name).or_default().push(i);
                    }
                }
                ActionConstraint::In(uids) if uids.contains(call_tool) => scopes.every.push(i),
                ActionConstraint::In(uids) => {
                    for name in uids.iter().filter_map(tool) {
                        let named = scopes.named.entry(name).or_default();
                        if named.last() != Some(&i) {
                            named.push(i);
                        }
                    }
                }
            }
            if !scopes.reads_action {
                // The first tool of the route the scope names: the policy's group. A policy
                // whose scope names none is in no tool's slice, and in no group.
                let first = match policy.action_constraint() {
                    ActionConstraint::Eq(uid) => tool(&uid).filter(|name| is_tool(name)),
                    ActionConstraint::In(uids) if !uids.contains(call_tool) => {
                        uids.iter().filter_map(tool).find(|name| is_tool(name))
                    }
                    // `every`: joins the first group, made below.
                    _ => None,
                };
                if let Some(name) = first {
                    if let Some(&g) = groups.get(&name) {
                        scopes.groups[g].members.push(i);
                    } else {
                        groups.insert(name.clone(), scopes.groups.len());
                        scopes.groups.push(Group {
                            tool: name,
                            policies: PolicySet::new(),
                            members: vec![i],
                        });
                    }
                }
            }
        }
        if scopes.reads_action {
            scopes.groups = Vec::new();
        } else if !scopes.every.is_empty() {
            // Every tool's action is in the scope of these: any group holds them.
            if let (true, Some(name)) = (scopes.groups.is_empty(), any_tool) {
                scopes.groups.push(Group {
                    tool: name.to_string(),
                    policies: PolicySet::new(),
                    members: Vec::new(),
                });
            }
            if let Some(first) = scopes.groups.first_mut() {
                first.members.extend(&scopes.every);
            }
        }
        for group in &mut scopes.groups {
            for &i in &group.members {
                // Ids are unique in the whole set, so in any part of it.
                let _ = group.policies.add(scopes.policies[i].clone());
            }
        }
        scopes
    }

    /// The groups of the policies that one partial evaluation each judges for all tools
    /// (CONTRACT Z4): empty when some condition reads `action`, so that each tool's slice is
    /// asked apart.
    pub(super) fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// The policies' effects, in the text's order.
    pub(super) fn effect(&self, place: usize) -> cedar_policy::Effect {
        self.policies[place].effect()
    }

    /// The places of the policies of `tool`'s slice, in no set order.
    pub(super) fn slice_places(&self, tool: &str) -> impl Iterator<Item = usize> + '_ {
        let named = self.named.get(tool).map_or(&[][..], Vec::as_slice);
        self.every.iter().chain(named).copied()
    }

    /// The `@id` of the policy at `place`.
    pub(super) fn id(&self, place: usize) -> &PolicyId {
        self.policies[place].id()
    }

    /// The policies whose action scope can hold the action of `tool`, a member of
    /// `call_tool` only, in the text's order.
    pub(super) fn slice(&self, tool: &str) -> PolicySet {
        let named = self.named.get(tool).map_or(&[][..], Vec::as_slice);
        let mut indices: Vec<usize> = self.every.iter().chain(named).copied().collect();
        indices.sort_unstable();
        indices.dedup();
        let mut slice = PolicySet::new();
        for i in indices {
            // Ids are unique in the whole set, so in any part of it.
            let _ = slice.add(self.policies[i].clone());
        }
        slice
    }

    /// What decides the visibility of `tool`'s action beyond the caller (CONTRACT Z4): the policies that
    /// name it, when no policy's conditions read `action`. Two tools with the same key are
    /// decided alike for any caller and arguments (their slices hold the same policies, and
    /// nothing in them tells the two actions apart); `None` when a condition could.
    #[must_use]
    pub(super) fn visibility_key(&self, tool: &str) -> Option<&[usize]> {
        (!self.reads_action).then(|| self.named.get(tool).map_or(&[][..], Vec::as_slice))
    }
}

/// `policy` as Cedar's AST alone: what an authorization reads (scope, conditions, annotations,
/// id). Cedar's own copy also keeps the JSON form it was read from, which every clone of it
/// copies tree and all; this one's clones (into each group and slice) share the AST.
fn ast_only(policy: &cedar_policy::Policy) -> cedar_policy::Policy {
    let ast: &cedar_policy_core::ast::Policy = policy.as_ref();
    cedar_policy::Policy::from(ast.clone())
}

/// Whether `policy`'s conditions can tell one tool's action from another: they mention the
/// `action` variable, or name an entity of `action_type` (the store of a question about one
/// tool holds that tool's action and no other, so `Gateway::Action::"a" in …` depends on which
/// tool is asked about).
fn reads_action(policy: &cedar_policy::Policy, action_type: &str) -> bool {
    let ast: &cedar_policy_core::ast::Policy = policy.as_ref();
    ast.non_scope_constraints().is_some_and(|condition| {
        condition.subexpressions().any(|e| match e.expr_kind() {
            ExprKind::Var(Var::Action) => true,
            ExprKind::Lit(Literal::EntityUID(uid)) => uid.entity_type().to_string() == action_type,
            _ => false,
        })
    })
}
