//! A route's policy text parsed, each policy under its `@id`, and strictly validated against the
//! route's generated schema (CONTRACT Z1, Z2, Z8).

use std::str::FromStr;

use cedar_policy::{PolicyId, PolicySet, Schema, ValidationMode, Validator};
use miette::Diagnostic as _;

use super::policies::PolicyProblem;
use super::schema::{CedarType, schema_json};

/// Strict validation of `policies` against the schema of `tools` (CONTRACT Z2, Z8).
pub(super) fn validate(
    tools: &[(String, CedarType)],
    policies: &PolicySet,
) -> Result<(), Vec<PolicyProblem>> {
    let json = schema_json(tools.iter().map(|(name, ty)| (name.as_str(), ty)));
    let schema = Schema::from_json_value(json).map_err(|e| {
        vec![PolicyProblem {
            path: "",
            message: format!("the route's Cedar schema: {e}"),
        }]
    })?;
    let validation = Validator::new(schema).validate(policies, ValidationMode::Strict);
    // Cedar's message names the policy (`for policy `<id>`, …`).
    let mut problems: Vec<PolicyProblem> = validation
        .validation_errors()
        .map(|e| PolicyProblem {
            path: "policies",
            message: e.to_string(),
        })
        .collect();
    problems.dedup();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// Parses the policy text; each policy is named by its `@id` annotation, else `policy<N>` (its
/// place in the text, from 0).
pub(super) fn parse(text: &str) -> Result<(PolicySet, Vec<PolicyId>), Vec<PolicyProblem>> {
    let parsed = PolicySet::from_str(text).map_err(|e| {
        let at = e
            .labels()
            .and_then(|mut labels| labels.next())
            .map(|label| line_column(text, label.offset()))
            .map_or_else(String::new, |(line, column)| {
                format!(" (line {line}, column {column})")
            });
        vec![PolicyProblem {
            path: "policies",
            message: format!("Cedar cannot parse the policies{at}: {e}"),
        }]
    })?;
    if parsed.templates().next().is_some() {
        return Err(vec![PolicyProblem {
            path: "policies",
            message: "templates (policies with ?principal or ?resource) are not supported".into(),
        }]);
    }
    let mut policies: Vec<_> = parsed.policies().collect();
    // `from_str` names them policy0, policy1 … in the text's order.
    policies.sort_by_key(|p| {
        AsRef::<str>::as_ref(p.id())
            .strip_prefix("policy")
            .and_then(|n| n.parse::<usize>().ok())
    });
    let mut set = PolicySet::new();
    let mut order = Vec::with_capacity(policies.len());
    let mut problems = Vec::new();
    let mut seen = std::collections::HashSet::with_capacity(policies.len());
    for policy in policies {
        let id = policy
            .annotation("id")
            .map_or_else(|| policy.id().clone(), PolicyId::new);
        if !seen.insert(id.clone()) {
            problems.push(PolicyProblem {
                path: "policies",
                message: format!("policy '{id}': the @id is repeated"),
            });
            continue;
        }
        if let Err(e) = set.add(policy.new_id(id.clone())) {
            problems.push(PolicyProblem {
                path: "policies",
                message: format!("policy '{id}': {e}"),
            });
            continue;
        }
        order.push(id);
    }
    if problems.is_empty() {
        Ok((set, order))
    } else {
        Err(problems)
    }
}

/// The 1-based line and column of a byte `offset` of `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}
