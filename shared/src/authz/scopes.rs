//! A route's policies indexed by the actions their scope can hold (CONTRACT Z4): each tool's
//! slice of the set, which tools share what their slices decide, and the set a list asks about
//! at once, so a list asks Cedar once (or once per distinct slice, when a condition reads the
//! action) rather than once per tool.

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
    /// The policies that one partial evaluation judges for every tool at once (CONTRACT Z4),
    /// when no condition reads `action` ([`Scopes::asked`]).
    asked: Option<Asked>,
}

/// The policies in some tool's slice, for a list to ask Cedar about in one partial evaluation:
/// each with its action scope opened ([`any_action`]) and asked about one of the route's
/// tools. Since nothing else in a policy reads the action, what each says there it says of
/// every tool its scope holds.
#[derive(Debug)]
pub(super) struct Asked {
    /// The tool asked about.
    pub(super) tool: String,
    /// The policies, as one set.
    pub(super) policies: PolicySet,
    /// Their places in the text's order.
    pub(super) members: Vec<usize>,
    /// How many slices a list would ask about to hear from each of these policies otherwise
    /// (the distinct first tools their scopes name): a list of fewer tools asks its tools'
    /// slices instead.
    pub(super) slices: usize,
}

impl Scopes {
    /// `is_tool` tells the route's tools from other actions, `any_tool` is one of the
    /// route's tools (to ask about when no policy names one).
    pub(super) fn new(
        policies: &PolicySet,
        order: &[PolicyId],
        call_tool: &EntityUid,
        action_type: &EntityTypeName,
        is_tool: impl Fn(&str) -> bool,
        any_tool: Option<&str>,
    ) -> Self {
        let mut scopes = Self::default();
        let mut first_tools: std::collections::HashSet<String, foldhash::fast::RandomState> =
            std::collections::HashSet::default();
        let mut members = Vec::new();
        let mut ask_about: Option<String> = None;
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
            // The route's tools and other actions the scope names (none for `every`).
            let actions: Vec<String> = match policy.action_constraint() {
                ActionConstraint::Any => {
                    scopes.every.push(i);
                    Vec::new()
                }
                ActionConstraint::In(uids) if uids.contains(call_tool) => {
                    scopes.every.push(i);
                    Vec::new()
                }
                ActionConstraint::Eq(uid) => tool(&uid).into_iter().collect(),
                ActionConstraint::In(uids) => uids.iter().filter_map(tool).collect(),
            };
            // The first tool of the route the scope names. A policy whose scope names none is
            // in no tool's slice, and is not asked.
            let first = actions.iter().find(|name| is_tool(name)).cloned();
            for name in actions {
                let named = scopes.named.entry(name).or_default();
                if named.last() != Some(&i) {
                    named.push(i);
                }
            }
            if let (false, Some(name)) = (scopes.reads_action, first) {
                if ask_about.is_none() {
                    ask_about = Some(name.clone());
                }
                first_tools.insert(name);
                members.push(i);
            }
        }
        if scopes.reads_action {
            return scopes;
        }
        let mut slices = first_tools.len();
        if !scopes.every.is_empty() {
            // Every tool's action is in the scope of these.
            ask_about = ask_about.or_else(|| any_tool.map(str::to_string));
            members.extend(&scopes.every);
            slices = slices.max(1);
        }
        if let Some(tool) = ask_about {
            members.sort_unstable();
            let mut policies = PolicySet::new();
            for &i in &members {
                // Ids are unique in the whole set, so in any part of it.
                let _ = policies.add(any_action(&scopes.policies[i]));
            }
            scopes.asked = Some(Asked {
                tool,
                policies,
                members,
                slices,
            });
        }
        scopes
    }

    /// The policies that one partial evaluation judges for all tools (CONTRACT Z4): `None`
    /// when some condition reads `action` (then each tool's slice is asked apart), or when no
    /// policy is in any tool's slice.
    pub(super) fn asked(&self) -> Option<&Asked> {
        self.asked.as_ref()
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
/// copies tree and all; this one's clones (into a list's question and each slice) share the AST.
fn ast_only(policy: &cedar_policy::Policy) -> cedar_policy::Policy {
    let ast: &cedar_policy_core::ast::Policy = policy.as_ref();
    cedar_policy::Policy::from(ast.clone())
}

/// `policy` with its action scope opened to every action, for a list's one question
/// ([`Asked`]): what the policy says of the tool asked about is then what it says of each
/// tool its scope holds (there the scope is `true`, and an action's `==` or `in` cannot
/// error), and Cedar need not build the scope's list of actions into a set at every question.
/// The rest of the policy, its id included, is its own. The policy as it is when Cedar will not
/// rebuild it so (a template; not in a route's set).
fn any_action(policy: &cedar_policy::Policy) -> cedar_policy::Policy {
    use cedar_policy_core::ast;
    let original: &ast::Policy = policy.as_ref();
    ast::StaticPolicy::new(
        original.id().clone(),
        None,
        (**original.annotations_arc()).clone(),
        original.effect(),
        original.principal_constraint(),
        ast::ActionConstraint::any(),
        original.resource_constraint(),
        original.non_scope_constraints().cloned(),
    )
    .map_or_else(
        |_| policy.clone(),
        |opened| ast::Policy::from(opened).into(),
    )
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
