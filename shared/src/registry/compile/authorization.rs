//! A route's `authorization` (CONTRACT Z1, Z8): its policies compiled against the schema of the
//! route's active tools, each tool's `inputSchema` read back from its `tools/list` entry.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::problems::{Problems, join};
use super::threads::CompiledTool;
use bytes::Bytes;

use crate::authz::RoutePolicies;
use crate::registry::snapshot::ListEntry;

/// The route's compiled policies, `None` when it has no `authorization` (a route without one
/// pays nothing) or when they have problems, added to `problems` at `path.authorization`.
pub(super) fn compile_authorization(
    route: &Map<String, Value>,
    key: Option<&str>,
    path: &str,
    active: &[usize],
    outcomes: &[CompiledTool],
    problems: &mut Problems,
) -> Option<Arc<RoutePolicies>> {
    let authorization = route.get("authorization")?;
    let tools: Vec<(String, Bytes)> = active
        .iter()
        .filter_map(|&i| {
            let outcome = &outcomes[i];
            let (tool, _) = outcome.tool.as_ref()?;
            let schema = match outcome.public.as_deref()? {
                // The one pass's entry keeps the input schema's own text, a slice of the
                // manifest's: the policies hold it as it is (CONTRACT Z11 digests it; the
                // tool's Cedar type is read from it when needed).
                ListEntry::Parts { input_schema, .. } => input_schema.clone(),
                entry @ ListEntry::Text(_) => {
                    let mut text = Vec::new();
                    entry.write_to(&mut text);
                    let entry: Value = serde_json::from_slice(&text).ok()?;
                    let schema = entry.get("inputSchema").unwrap_or(&Value::Null);
                    Bytes::from(serde_json::to_vec(schema).ok()?)
                }
            };
            Some((tool.name.clone(), schema))
        })
        .collect();
    let at = join(path, "authorization");
    match RoutePolicies::compile_texts(key.unwrap_or(""), authorization, tools) {
        Ok(policies) => Some(Arc::new(policies)),
        Err(found) => {
            for problem in found {
                let path = if problem.path.is_empty() {
                    at.clone()
                } else {
                    join(&at, problem.path)
                };
                problems.add(&path, problem.message);
            }
            None
        }
    }
}
