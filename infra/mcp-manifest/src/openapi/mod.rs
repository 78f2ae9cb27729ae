//! `mcp-manifest import openapi SPEC --route KEY`: a manifest of REST-shaped tools (CONTRACT M2,
//! M3) from an OpenAPI 3.0 or 3.1 document, one tool per operation it can map, the rest skipped
//! with one line each saying why.
//!
//! The document is navigated as a `serde_json::Value` (YAML converted to it), not through an
//! OpenAPI model crate: `openapiv3` reads only 3.0 documents and `oas3` only 3.1 ones, and both
//! fail a whole document on one field they do not model, where the import should skip only the
//! operation it cannot map.
//!
//! The jobs, one module each: [`document`] reads and parses SPEC and tells its version,
//! [`refs`] resolves `$ref`s, [`servers`] gives an operation's server URL, [`schema`] translates
//! Schema Objects to JSON Schema 2020-12, [`parameters`] and [`request_body`] map an operation's
//! inputs to tool arguments and [`response`] its success response to the `outputSchema`,
//! [`credentials`] reads `--credential`s and [`security`] meets an operation's security
//! requirement with them, [`operation`] makes the tool, [`naming`] its name, [`manifest`]
//! writes, merges and checks the manifest, [`output`] writes it to its file, and [`command`]
//! runs the whole command.
//!
//! Exit codes: `0` a manifest was written, `1` the document cannot be imported (nothing is
//! written), `2` SPEC (or the `--merge` manifest) cannot be read, or a `--credential` is wrong.

mod command;
mod credentials;
mod document;
mod manifest;
mod naming;
mod operation;
mod output;
mod parameters;
mod refs;
mod request_body;
mod response;
mod schema;
mod security;
mod servers;

use serde_json::{Map, Value};
use url::Url;

pub(crate) use command::{OpenapiArgs, run};
use document::Dialect;
use operation::{Context, Operation, Skip};

/// The HTTP methods of a Path Item Object: its field names and the methods.
const PATH_ITEM_METHODS: [(&str, &str); 8] = [
    ("get", "GET"),
    ("put", "PUT"),
    ("post", "POST"),
    ("delete", "DELETE"),
    ("options", "OPTIONS"),
    ("head", "HEAD"),
    ("patch", "PATCH"),
    ("trace", "TRACE"),
];

/// Which operations to import: each non-empty list must match.
#[derive(Debug, Default)]
pub(crate) struct Filters {
    /// `--tag`: one of the operation's tags.
    pub(crate) tags: Vec<String>,
    /// `--operation`: its operationId.
    pub(crate) operations: Vec<String>,
    /// `--method`: its method, case-insensitively.
    pub(crate) methods: Vec<String>,
}

impl Filters {
    fn admit(&self, operation: &Operation<'_>) -> bool {
        let tags = operation.object.get("tags").and_then(Value::as_array);
        (self.methods.is_empty()
            || self
                .methods
                .iter()
                .any(|m| m.eq_ignore_ascii_case(operation.method)))
            && (self.operations.is_empty()
                || operation
                    .id()
                    .is_some_and(|id| self.operations.iter().any(|o| o == id)))
            && (self.tags.is_empty()
                || tags.into_iter().flatten().any(|tag| {
                    tag.as_str()
                        .is_some_and(|tag| self.tags.iter().any(|t| t == tag))
                }))
    }

    fn is_empty(&self) -> bool {
        self.tags.is_empty() && self.operations.is_empty() && self.methods.is_empty()
    }
}

/// How the document's operations are imported.
#[derive(Debug, Default)]
pub(crate) struct Options {
    /// `--base-url`.
    pub(crate) base_url: Option<Url>,
    /// `--skip-secured`.
    pub(crate) skip_secured: bool,
    /// `--credential`: the security schemes bound.
    pub(crate) bindings: credentials::Bindings,
    /// `--tag`, `--operation`, `--method`.
    pub(crate) filters: Filters,
    /// `--max-bytes` (default 16 MiB): the tools' schemas may not take more, nor one
    /// operation's.
    pub(crate) max_bytes: Option<usize>,
}

/// What importing a document's operations gave.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// The tools, in document order.
    pub(crate) tools: Vec<Value>,
    /// The `skipped ...` and `warning: ...` lines, in document order.
    pub(crate) lines: Vec<String>,
    /// How many operations (or path items) were skipped.
    pub(crate) skipped: usize,
    /// Why a server URL needs `--base-url` (the document then cannot be imported).
    pub(crate) needs_base_url: Vec<String>,
    /// A lower bound of the bytes the tools' input schemas take as JSON.
    pub(crate) schema_bytes: usize,
    /// A lower bound of the bytes the tools' `outputSchema`s take as JSON.
    pub(crate) output_bytes: usize,
    /// Why the import stopped early: the tools' schemas are over `--max-bytes`.
    pub(crate) too_large: Option<String>,
}

impl Outcome {
    /// The errors that keep the import from writing a manifest (exit 1), if any.
    fn refusal(&self, filters: &Filters) -> Option<Vec<String>> {
        if let Some(error) = &self.too_large {
            return Some(vec![error.clone()]);
        }
        if !self.needs_base_url.is_empty() {
            return Some(self.needs_base_url.clone());
        }
        if !self.tools.is_empty() {
            return None;
        }
        Some(vec![if self.skipped > 0 {
            format!(
                "no operation could be imported (skipped {}): nothing written",
                self.skipped
            )
        } else if filters.is_empty() {
            "the document has no operation to import: nothing written".into()
        } else {
            "no operation matches --tag, --operation and --method: nothing written".into()
        }])
    }
}

/// Maps every operation of `document` that `options` admits.
pub(crate) fn import_document(document: &Value, dialect: Dialect, options: &Options) -> Outcome {
    let version = manifest::info_version(document.get("info").unwrap_or(&Value::Null));
    let max_bytes = options.max_bytes.unwrap_or(schema::DEFAULT_MAX_BYTES);
    // The work all operations may take, skipped ones' included (each at most MAX_NODES): a
    // schema node takes about 8 bytes of the manifest or more, so more work could hardly give
    // a manifest within --max-bytes. Their response schemas may take as much again.
    let max_work = schema::MAX_WORK_NODES.max(max_bytes / 8);
    let context = Context {
        document,
        dialect,
        version: &version,
        base_url: options.base_url.as_ref(),
        skip_secured: options.skip_secured,
        bindings: &options.bindings,
        max_bytes,
        work: std::cell::Cell::new(0),
        output_work: std::cell::Cell::new(0),
        max_work,
    };
    let mut outcome = Outcome::default();
    let mut names = naming::ToolNames::default();
    let mut matched_ids: Vec<&str> = Vec::new();
    let paths = document.get("paths").and_then(Value::as_object);
    'paths: for (path, item) in paths.into_iter().flatten() {
        if path.starts_with("x-") {
            continue;
        }
        let path_item =
            match refs::follow(document, item, refs::Kind::PathItem).map(Value::as_object) {
                Ok(Some(path_item)) => path_item,
                Ok(None) => continue,
                Err(error) => {
                    outcome
                        .lines
                        .push(format!("skipped {path}: its path item {error}"));
                    outcome.skipped += 1;
                    continue;
                }
            };
        for (method, object) in operations(path_item) {
            let operation = Operation {
                path,
                method,
                path_item,
                object,
            };
            if !options.filters.admit(&operation) {
                continue;
            }
            matched_ids.extend(operation.id());
            import_operation(&context, &operation, &mut names, &mut outcome);
            if outcome.schema_bytes > max_bytes {
                // Each schema byte is at least one byte of the manifest: stop before the tools
                // take more memory.
                outcome.too_large = Some(format!(
                    "the manifest would be over the limit of {max_bytes} bytes (--max-bytes): the tools' input schemas alone take more; nothing written"
                ));
                break 'paths;
            }
            if context.work.get() > max_work {
                outcome.too_large = Some(format!(
                    "the operations' schemas expand to more than {max_work} nodes in all (repeated $refs): nothing written"
                ));
                break 'paths;
            }
        }
    }
    for scheme in options.bindings.unused() {
        outcome.lines.push(format!(
            "warning: --credential {scheme}: no imported operation's security requirement is met by security scheme '{scheme}' alone"
        ));
    }
    for id in &options.filters.operations {
        if !matched_ids.contains(&id.as_str()) {
            outcome.lines.push(format!(
                "warning: --operation '{id}' names no operation the other filters admit"
            ));
        }
    }
    outcome
}

/// The Operation Objects of a path item with their methods, in document order.
fn operations(
    path_item: &Map<String, Value>,
) -> impl Iterator<Item = (&'static str, &Map<String, Value>)> {
    path_item.iter().filter_map(|(field, operation)| {
        let (_, method) = PATH_ITEM_METHODS.iter().find(|(f, _)| f == field)?;
        Some((*method, operation.as_object()?))
    })
}

/// Maps one operation into `outcome`: its tool and warning lines, or its skip line.
fn import_operation(
    context: &Context<'_>,
    operation: &Operation<'_>,
    names: &mut naming::ToolNames,
    outcome: &mut Outcome,
) {
    let label = operation.label();
    match operation::map(context, operation) {
        Ok(mapped) => {
            let base = naming::base_name(operation.id(), operation.method, operation.path);
            let name = names.unique(&base);
            let mut warnings = mapped.warnings;
            if let Some(id) = operation.id().filter(|id| !naming::is_portable_name(id)) {
                warnings.push(format!(
                    "operationId '{id}' is no tool name (1-64 characters of [A-Za-z0-9_-]): named '{name}'"
                ));
            } else if name != base {
                warnings.push(format!("tool name '{base}' is taken: named '{name}'"));
            }
            let mut fields = mapped.tool;
            outcome.schema_bytes = outcome.schema_bytes.saturating_add(mapped.schema_bytes);
            let max_bytes = context.max_bytes;
            if fields.contains_key("outputSchema") {
                let bytes = outcome.output_bytes.saturating_add(mapped.output_bytes);
                if outcome.schema_bytes.saturating_add(bytes) > max_bytes {
                    // The outputSchema is optional: left out rather than refusing the import.
                    fields.shift_remove("outputSchema");
                    warnings.push(format!(
                        "no outputSchema: with it, the tools' schemas would take more than {max_bytes} bytes (--max-bytes)"
                    ));
                } else {
                    outcome.output_bytes = bytes;
                }
            }
            outcome
                .lines
                .extend(warnings.iter().map(|w| format!("warning: {label}: {w}")));
            let mut tool = Map::new();
            tool.insert("name".into(), Value::String(name));
            tool.extend(fields);
            outcome.tools.push(Value::Object(tool));
        }
        Err(Skip::Reason(reason)) => {
            outcome.lines.push(format!("skipped {label}: {reason}"));
            outcome.skipped += 1;
        }
        Err(Skip::NeedsBaseUrl(message)) => {
            if !outcome.needs_base_url.contains(&message) {
                outcome.needs_base_url.push(message);
            }
        }
    }
}

#[cfg(test)]
mod credential_tests;
#[cfg(test)]
mod response_tests;
#[cfg(test)]
mod tests;
