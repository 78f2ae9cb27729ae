//! A route's policy text (or its JSON form, CONTRACT Z12) parsed, each policy under its `@id`,
//! and strictly validated against the route's generated schema (CONTRACT Z1, Z2, Z8).

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
    name_by_id(&parsed)
}

/// Parses Cedar's JSON form of a route's policies (CONTRACT Z12), as [`json_form`] writes it:
/// the policies are already under their names, in the text's order, so the set Cedar builds is
/// the one kept (the text's parse builds a second one, to rename them). Refuses a template (or
/// a template link) and a policy whose name is not its `@id` (or `policy<N>` for its place
/// without one), which only a JSON form written by hand can hold.
///
/// The form is read as Cedar's own JSON policy set (`est::PolicySet`, what
/// `PolicySet::from_json_str` reads: the same fields, no repeated name), and each policy is
/// turned into Cedar's AST where it lies, in the form's order: Cedar's `from_json_str` would
/// copy the whole form once more and keep each policy's JSON tree beside its AST, which an
/// authorization never reads.
pub(super) fn parse_json(json: &str) -> Result<(PolicySet, Vec<PolicyId>), Vec<PolicyProblem>> {
    use cedar_policy_core::est;
    let problem = |message: String| {
        vec![PolicyProblem {
            path: "policiesJson",
            message,
        }]
    };
    let cannot_read = |e: &dyn std::fmt::Display| {
        problem(format!(
            "Cedar cannot read the JSON form of the policies: {e}"
        ))
    };
    let form: est::PolicySet = serde_json::from_str(json).map_err(|e| cannot_read(&e))?;
    if !form.templates.is_empty() || !form.template_links.is_empty() {
        return Err(problem(
            "templates (policies with ?principal or ?resource) are not supported".into(),
        ));
    }
    let mut set = PolicySet::new();
    let mut order = Vec::with_capacity(form.static_policies.len());
    for (place, (name, policy)) in form.static_policies.into_iter().enumerate() {
        let id = PolicyId::new(name.as_ref());
        let ast = policy
            .try_into_ast_policy(Some(name))
            .map_err(|e| cannot_read(&e))?;
        let policy = cedar_policy::Policy::from(ast);
        let named = match annotation(&policy, "id") {
            Some(annotated) => annotated == AsRef::<str>::as_ref(&id),
            None => AsRef::<str>::as_ref(&id) == format!("policy{place}"),
        };
        if !named {
            return Err(problem(format!(
                "policy '{id}' is not named by its @id or its place"
            )));
        }
        set.add(policy).map_err(|e| cannot_read(&e))?;
        order.push(id);
    }
    Ok((set, order))
}

/// Cedar's JSON form of the policy `text` (CONTRACT Z12): `{"staticPolicies": {"<name>": …,
/// …}, "templates": {}, "templateLinks": []}`, each policy in Cedar's JSON policy format under
/// its name (its `@id`, else `policy<N>` for its place in the text), in the text's order, so
/// that the same text always gives the same JSON. `None` when the text does not parse or
/// repeats an `@id`.
pub(super) fn json_form(text: &str) -> Option<String> {
    let (set, order) = parse(text).ok()?;
    let mut out = String::with_capacity(text.len() * 2);
    out.push_str("{\"staticPolicies\":{");
    for (i, id) in order.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(AsRef::<str>::as_ref(id)).ok()?);
        out.push(':');
        out.push_str(&set.policy(id)?.to_json().ok()?.to_string());
    }
    out.push_str("},\"templates\":{},\"templateLinks\":[]}");
    Some(out)
}

/// The value of `policy`'s annotation `key` (`""` for one without a value), `None` when it has
/// none: found among its annotations, since Cedar's `Policy::annotation` parses `key` with its
/// grammar at every call (about 66,000 instructions; a hundred policies' `@id`s were 4 % of a
/// first `tools/list`'s, CONTRACT Z12).
pub(super) fn annotation<'a>(policy: &'a cedar_policy::Policy, key: &str) -> Option<&'a str> {
    policy
        .annotations()
        .find_map(|(name, value)| (name == key).then_some(value))
}

/// The place in the text of a policy Cedar's parser named `policy<N>`.
fn place(id: &PolicyId) -> Option<usize> {
    AsRef::<str>::as_ref(id)
        .strip_prefix("policy")
        .and_then(|n| n.parse::<usize>().ok())
}

/// Each policy of `parsed` under its `@id`, else its parser's name (`policy<N>`), and the ids
/// in the text's order; refuses templates and a repeated `@id` (CONTRACT Z1, Z8).
fn name_by_id(parsed: &PolicySet) -> Result<(PolicySet, Vec<PolicyId>), Vec<PolicyProblem>> {
    if parsed.templates().next().is_some() {
        return Err(vec![PolicyProblem {
            path: "policies",
            message: "templates (policies with ?principal or ?resource) are not supported".into(),
        }]);
    }
    let mut policies: Vec<_> = parsed.policies().collect();
    // `from_str` names them policy0, policy1 … in the text's order.
    policies.sort_by_key(|p| place(p.id()));
    let mut set = PolicySet::new();
    let mut order = Vec::with_capacity(policies.len());
    let mut problems = Vec::new();
    let mut seen = std::collections::HashSet::with_capacity(policies.len());
    for policy in policies {
        let id = annotation(policy, "id").map_or_else(|| policy.id().clone(), PolicyId::new);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Policies of every form the grammar has that the gateway's model can use: scopes with
    /// `==`, `in` a list, `is`; conditions with `has`, `like` (wildcards, escapes), sets,
    /// records, decimals, `if`, `unless`, unicode, tags; `@id`, `@reason` and no annotation.
    const FORMS: &str = r#"
@id("scoped")
permit(principal == Gateway::Caller::"anonymous", action in [Gateway::Action::"a", Gateway::Action::"b"], resource == Gateway::Route::"core");
permit(principal is Gateway::Caller, action in Gateway::Action::"call_tool", resource)
when { principal.groups.containsAny(["hr", "ops"]) && principal.hasTag("dept") && principal.getTag("dept") like "sa*\*s" };
@id("amounts") @reason("over \"500\" — needs a person")
forbid(principal, action == Gateway::Action::"refund", resource)
when { context.input has amount && context.input.amount.greaterThan(decimal("500.0001")) }
unless { context.request has employeeNo && context.request.employeeNo == "직원-1" };
@id("shapes")
forbid(principal, action, resource)
when { if context.input has tags then context.input.tags.contains({"k": [1, -2, true]}) else 3 * -4 < 2 };
"#;

    #[test]
    fn z6_an_annotation_is_read_as_cedar_reads_it() {
        let text =
            format!("{FORMS}\n@flag @reason(\"\") @if(\"x\") permit(principal, action, resource);");
        let (set, order) = parse(&text).unwrap();
        assert_eq!(order.len(), 5);
        for id in &order {
            let policy = set.policy(id).unwrap();
            // Identifiers, as the gateway asks (Cedar would also trim a key's white space).
            for key in ["id", "reason", "flag", "if", "Id", "missing", ""] {
                assert_eq!(
                    annotation(policy, key),
                    policy.annotation(key),
                    "{id} @{key}"
                );
            }
        }
        let last = set.policy(&order[4]).unwrap();
        assert_eq!(
            (
                annotation(last, "flag"),
                annotation(last, "reason"),
                annotation(last, "if")
            ),
            (Some(""), Some(""), Some("x"))
        );
        let amounts = set.policy(&PolicyId::new("amounts")).unwrap();
        assert_eq!(
            annotation(amounts, "reason"),
            Some("over \"500\" — needs a person")
        );
    }

    #[test]
    fn z12_the_json_form_parses_to_the_policies_the_text_does() {
        let (text_set, text_order) = parse(FORMS).unwrap();
        let json = json_form(FORMS).unwrap();
        let (json_set, json_order) = parse_json(&json).unwrap();
        assert_eq!(text_order, json_order);
        let names: Vec<&str> = text_order.iter().map(AsRef::as_ref).collect();
        assert_eq!(names, ["scoped", "policy1", "amounts", "shapes"]);
        // The ASTs compared in the JSON form Cedar writes from an AST (the text's own JSON form
        // keeps its `when` and `unless` apart, which Cedar's AST joins).
        let from_ast = |policy: &cedar_policy::Policy| {
            let ast: &cedar_policy_core::ast::Policy = policy.as_ref();
            cedar_policy::Policy::from(ast.clone()).to_json().unwrap()
        };
        for id in &text_order {
            let (a, b) = (text_set.policy(id).unwrap(), json_set.policy(id).unwrap());
            assert_eq!(from_ast(a), from_ast(b), "{id}");
            assert_eq!(from_ast(a), b.to_json().unwrap(), "{id}");
            assert_eq!(a.annotation("reason"), b.annotation("reason"), "{id}");
        }
        assert_eq!(json_form(FORMS).unwrap(), json);
        assert_eq!(json_form("permit("), None);
    }

    #[test]
    fn z12_a_json_form_with_a_template_or_a_misnamed_policy_is_refused() {
        let template = "permit(principal == ?principal, action, resource);";
        let json = PolicySet::from_str(template)
            .unwrap()
            .to_json()
            .unwrap()
            .to_string();
        assert_eq!(
            parse_json(&json).unwrap_err()[0].message,
            "templates (policies with ?principal or ?resource) are not supported"
        );
        // Only a JSON form written by hand names a policy otherwise than json_form does.
        let form = json_form(
            r#"@id("a") permit(principal, action, resource); forbid(principal, action, resource);"#,
        )
        .unwrap();
        assert!(parse_json(&form).is_ok(), "{form}");
        for (from, to, name) in [
            (r#"{"a":"#, r#"{"b":"#, "b"),
            (r#""policy1":"#, r#""policy7":"#, "policy7"),
        ] {
            let renamed = form.replacen(from, to, 1);
            assert_ne!(renamed, form);
            assert_eq!(
                parse_json(&renamed).unwrap_err()[0].message,
                format!("policy '{name}' is not named by its @id or its place")
            );
        }
        // A link to a template, even one the form does not hold, is a template's policy.
        let linked = r#"{"staticPolicies":{},"templates":{},"templateLinks":[{"templateId":"t","newId":"l","values":{}}]}"#;
        assert_eq!(
            parse_json(linked).unwrap_err()[0].message,
            "templates (policies with ?principal or ?resource) are not supported"
        );
        // What Cedar's own reading refuses: not JSON, a repeated name, a missing field, a
        // field it does not know, a policy it cannot turn into its AST.
        let permit = r#"{"effect":"permit","principal":{"op":"All"},"action":{"op":"All"},"resource":{"op":"All"},"conditions":[]}"#;
        for refused in [
            "{".to_string(),
            format!(
                r#"{{"staticPolicies":{{"policy0":{permit},"policy0":{permit}}},"templates":{{}},"templateLinks":[]}}"#
            ),
            format!(r#"{{"staticPolicies":{{"policy0":{permit}}},"templates":{{}}}}"#),
            format!(
                r#"{{"staticPolicies":{{"policy0":{permit}}},"templates":{{}},"templateLinks":[],"x":1}}"#
            ),
            r#"{"staticPolicies":{"policy0":{"effect":"permit"}},"templates":{},"templateLinks":[]}"#
                .to_string(),
        ] {
            let problems = parse_json(&refused).unwrap_err();
            assert!(
                problems[0]
                    .message
                    .starts_with("Cedar cannot read the JSON form of the policies: "),
                "{refused}: {problems:?}"
            );
            assert!(PolicySet::from_json_str(&refused).is_err(), "{refused}");
        }
        let accepted = format!(
            r#"{{"staticPolicies":{{"policy0":{permit}}},"templates":{{}},"templateLinks":[]}}"#
        );
        assert_eq!(parse_json(&accepted).unwrap().1, [PolicyId::new("policy0")]);
    }
}
