//! A route's policies indexed by the actions their scope can hold (CONTRACT Z4): each tool's
//! slice of the set, and which tools share what their slices decide, so a list asks Cedar once
//! per distinct slice rather than once per tool.

use std::collections::HashMap;

use cedar_policy::{ActionConstraint, EntityTypeName, EntityUid, PolicyId, PolicySet};
use cedar_policy_core::ast::{ExprKind, Var};

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
    /// Whether some policy's conditions (`when`, `unless`) read `action`: then two tools with
    /// the same policies in their slices may still be decided apart.
    reads_action: bool,
}

impl Scopes {
    pub(super) fn new(
        policies: &PolicySet,
        order: &[PolicyId],
        call_tool: &EntityUid,
        action_type: &EntityTypeName,
    ) -> Self {
        let mut scopes = Self::default();
        let tool = |uid: &EntityUid| {
            (uid.type_name() == action_type).then(|| AsRef::<str>::as_ref(uid.id()).to_string())
        };
        for (i, policy) in order
            .iter()
            .filter_map(|id| policies.policy(id))
            .enumerate()
        {
            scopes.reads_action |= reads_action(policy);
            scopes.policies.push(policy.clone());
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
        }
        scopes
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

/// Whether `policy`'s conditions mention the `action` variable anywhere.
fn reads_action(policy: &cedar_policy::Policy) -> bool {
    let ast: &cedar_policy_core::ast::Policy = policy.as_ref();
    ast.non_scope_constraints().is_some_and(|condition| {
        condition
            .subexpressions()
            .any(|e| matches!(e.expr_kind(), ExprKind::Var(Var::Action)))
    })
}
