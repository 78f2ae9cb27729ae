//! A tool's `_meta.task` (CONTRACT K1, R5): whether its calls may or must become tasks of the
//! MCP tasks extension, with the task's TTL and the clients' polling hint.

use serde_json::Value;

use super::problems::{Problems, join};
use crate::tasks::{
    DEFAULT_POLL_INTERVAL_MS, DEFAULT_TTL_MS, MAX_POLL_INTERVAL_MS, MAX_TTL_MS, TaskSupport,
};

/// The problem of `_meta.task` on a Lambda function tool (CONTRACT K1).
pub(super) const LAMBDA_PROBLEM: &str = "does not apply to a Lambda function tool yet: a task needs an HTTP Tool Service that answers 202 Accepted with a status Location";

/// Compiles `_meta.task` at `meta_path` (CONTRACT K1); `None` after adding a problem.
pub(super) fn compile_task(
    task: &Value,
    meta_path: &str,
    is_lambda: bool,
    problems: &mut Problems,
) -> Option<TaskSupport> {
    let path = join(meta_path, "task");
    if is_lambda {
        problems.add(&path, LAMBDA_PROBLEM);
        return None;
    }
    let Value::Object(object) = task else {
        problems.add(&path, "must be an object with \"support\"");
        return None;
    };
    let before = problems.0.len();
    if let Some(other) = object
        .keys()
        .find(|k| !matches!(k.as_str(), "support" | "ttlMs" | "pollIntervalMs"))
    {
        problems.add(&join(&path, other), "is not a field of _meta.task");
    }
    let required = match object.get("support").and_then(Value::as_str) {
        Some("optional") => false,
        Some("required") => true,
        _ => {
            problems.add(
                &join(&path, "support"),
                "must be \"optional\" or \"required\"",
            );
            false
        }
    };
    let mut whole = |field: &str, default: u64, max: u64| match object.get(field) {
        None => default,
        Some(value) => match value.as_u64() {
            Some(ms) if (1..=max).contains(&ms) => ms,
            _ => {
                problems.add(
                    &join(&path, field),
                    format!("must be a whole number of ms from 1 to {max}"),
                );
                default
            }
        },
    };
    let ttl_ms = whole("ttlMs", DEFAULT_TTL_MS, MAX_TTL_MS);
    let poll_interval_ms = whole(
        "pollIntervalMs",
        DEFAULT_POLL_INTERVAL_MS,
        MAX_POLL_INTERVAL_MS,
    );
    (problems.0.len() == before).then_some(TaskSupport {
        required,
        ttl_ms,
        poll_interval_ms,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn compiled(task: &Value, is_lambda: bool) -> Result<TaskSupport, Vec<String>> {
        let mut problems = Problems::default();
        compile_task(task, "tools[0]._meta", is_lambda, &mut problems)
            .ok_or_else(|| problems.0.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn k1_defaults_and_given_values() {
        assert_eq!(
            compiled(&json!({"support": "optional"}), false),
            Ok(TaskSupport {
                required: false,
                ttl_ms: 3_600_000,
                poll_interval_ms: 2_000
            })
        );
        assert_eq!(
            compiled(
                &json!({"support": "required", "ttlMs": 60000, "pollIntervalMs": 500}),
                false
            ),
            Ok(TaskSupport {
                required: true,
                ttl_ms: 60_000,
                poll_interval_ms: 500
            })
        );
    }

    #[test]
    fn k1_problems_name_the_field() {
        assert_eq!(
            compiled(&json!({"support": "optional"}), true),
            Err(vec![format!("tools[0]._meta.task: {LAMBDA_PROBLEM}")])
        );
        assert_eq!(
            compiled(&json!(true), false),
            Err(vec![
                "tools[0]._meta.task: must be an object with \"support\"".to_string()
            ])
        );
        assert_eq!(
            compiled(
                &json!({"support": "always", "ttlMs": 0, "pollIntervalMs": 1.5, "retry": 1}),
                false
            ),
            Err(vec![
                "tools[0]._meta.task.retry: is not a field of _meta.task".to_string(),
                "tools[0]._meta.task.support: must be \"optional\" or \"required\"".to_string(),
                "tools[0]._meta.task.ttlMs: must be a whole number of ms from 1 to 2592000000"
                    .to_string(),
                "tools[0]._meta.task.pollIntervalMs: must be a whole number of ms from 1 to 3600000"
                    .to_string(),
            ])
        );
    }
}
