//! Manifest problems (CONTRACT R5): each with the JSON path of the offending value, collected
//! over the whole manifest so that one load reports them all.

use std::fmt;

use serde_json::{Map, Value};

/// One manifest problem: the JSON path of the offending value and what is wrong (CONTRACT R5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestProblem {
    /// JSON path such as `routes[0].tools[3].inputSchema`; empty for the document root.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ManifestProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

#[derive(Debug, Default)]
pub(super) struct Problems(pub(super) Vec<ManifestProblem>);

impl Problems {
    pub(super) fn add(&mut self, path: &str, message: impl Into<String>) {
        self.0.push(ManifestProblem {
            path: path.to_string(),
            message: message.into(),
        });
    }
}

pub(super) fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

/// The string value of `object`'s `field`, when it has one; a value that is not a string is a
/// problem at `path`'s `field`.
pub(super) fn optional_string(
    object: &Map<String, Value>,
    field: &str,
    path: &str,
    problems: &mut Problems,
) -> Option<String> {
    string_field(object.get(field), field, path, problems)
}

/// The string value of the object at `path`'s `field`, when it has one (`value`); a value that
/// is not a string is a problem.
pub(super) fn string_field(
    value: Option<&Value>,
    field: &str,
    path: &str,
    problems: &mut Problems,
) -> Option<String> {
    match value {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            problems.add(&join(path, field), "must be a string");
            None
        }
    }
}
