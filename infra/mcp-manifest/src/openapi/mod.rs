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
//! inputs to tool arguments, [`operation`] makes the tool, [`naming`] its name, and
//! [`manifest`] writes, merges and checks the manifest.
//!
//! Exit codes: `0` a manifest was written, `1` the document cannot be imported (nothing is
//! written), `2` SPEC (or the `--merge` manifest) cannot be read.

mod document;
mod manifest;
mod naming;
mod operation;
mod parameters;
mod refs;
mod request_body;
mod schema;
mod servers;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mcp_gateway::routing::is_route_key;
use serde_json::{Map, Value};
use url::Url;

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

/// `mcp-manifest import openapi`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct OpenapiArgs {
    /// The OpenAPI 3.0 or 3.1 document, JSON or YAML: a file or an https:// URL (http:// on
    /// loopback).
    pub(crate) spec: String,
    /// The route the tools are for (the manifest's routeKey; CONTRACT P3).
    #[arg(long)]
    pub(crate) route: String,
    /// Write the manifest to this file instead of standard output (through a symbolic link to
    /// the file it names; anything but a regular file is refused).
    #[arg(long)]
    pub(crate) output: Option<PathBuf>,
    /// The API's base URL: replaces the document's server URL, and resolves a relative or
    /// missing one (which needs it). No query, fragment, user name or password.
    #[arg(long)]
    pub(crate) base_url: Option<String>,
    /// Import only operations with this tag (repeatable).
    #[arg(long = "tag")]
    pub(crate) tags: Vec<String>,
    /// Import only the operation with this operationId (repeatable).
    #[arg(long = "operation")]
    pub(crate) operations: Vec<String>,
    /// Import only operations with this HTTP method (repeatable).
    #[arg(long = "method")]
    pub(crate) methods: Vec<String>,
    /// Skip operations with security requirements instead of importing them with a warning.
    #[arg(long)]
    pub(crate) skip_secured: bool,
    /// Merge this route's imported tools into this manifest (the active entries of the same name
    /// replaced, inactive versions and the rest kept).
    #[arg(long)]
    pub(crate) merge: Option<PathBuf>,
    /// Manifest size limit in bytes.
    #[arg(long, default_value_t = 16 * 1024 * 1024)]
    pub(crate) max_bytes: usize,
}

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
    /// A lower bound of the bytes the tools' schemas take as JSON.
    pub(crate) schema_bytes: usize,
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
    let context = Context {
        document,
        dialect,
        version: &version,
        base_url: options.base_url.as_ref(),
        skip_secured: options.skip_secured,
        max_bytes,
        work: std::cell::Cell::new(0),
    };
    // The work all operations may take, skipped ones' included (each at most MAX_NODES): a
    // schema node takes about 8 bytes of the manifest or more, so more work could hardly give
    // a manifest within --max-bytes.
    let max_work = schema::MAX_WORK_NODES.max(max_bytes / 8);
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
            outcome
                .lines
                .extend(warnings.iter().map(|w| format!("warning: {label}: {w}")));
            outcome.schema_bytes = outcome.schema_bytes.saturating_add(mapped.schema_bytes);
            let mut tool = Map::new();
            tool.insert("name".into(), Value::String(name));
            tool.extend(mapped.tool);
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

/// Why the import wrote nothing.
#[derive(Debug)]
enum Failure {
    /// The document cannot be imported (exit 1).
    Refused(Vec<String>),
    /// SPEC or the `--merge` manifest cannot be read (exit 2).
    Unreadable(String),
}

fn refused(error: impl Into<String>) -> Failure {
    Failure::Refused(vec![error.into()])
}

/// Runs `mcp-manifest import openapi`: the manifest to standard output or `--output`, the skip,
/// warning and count lines to standard error.
pub(crate) async fn run(args: &OpenapiArgs) -> ExitCode {
    match import(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Refused(errors)) => {
            for error in errors {
                eprintln!("error: {error}");
            }
            ExitCode::from(1)
        }
        Err(Failure::Unreadable(error)) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}

async fn import(args: &OpenapiArgs) -> Result<(), Failure> {
    if !is_route_key(&args.route) {
        return Err(refused(format!(
            "--route '{}' is not a route key: 1-64 characters of [A-Za-z0-9._-]",
            args.route
        )));
    }
    let base_url = args.base_url.as_deref().map(base_url).transpose()?;
    let output = args.output.as_deref().map(output_target).transpose()?;
    let bytes = document::read(&args.spec)
        .await
        .map_err(Failure::Unreadable)?;
    let spec = document::redacted(&args.spec);
    let document = document::parse(&bytes).map_err(|e| refused(format!("{spec}: {e}")))?;
    let dialect = document::dialect(&document).map_err(|e| refused(format!("{spec}: {e}")))?;
    let options = Options {
        base_url,
        skip_secured: args.skip_secured,
        filters: Filters {
            tags: args.tags.clone(),
            operations: args.operations.clone(),
            methods: args.methods.clone(),
        },
        max_bytes: Some(args.max_bytes),
    };
    let outcome = import_document(&document, dialect, &options);
    for line in &outcome.lines {
        eprintln!("{line}");
    }
    if let Some(errors) = outcome.refusal(&options.filters) {
        return Err(Failure::Refused(errors));
    }
    let count = outcome.tools.len();
    let imported = manifest::single_route(
        &args.route,
        document.get("info").unwrap_or(&Value::Null),
        outcome.tools,
    );
    let (manifest, merged) = match &args.merge {
        Some(path) => {
            let existing = read_manifest(path)?;
            let (merged, counts) = manifest::merge(existing, &args.route, imported)
                .map_err(|e| refused(format!("--merge {}: {e}", path.display())))?;
            (merged, Some((path, counts)))
        }
        None => (imported, None),
    };
    let text =
        manifest::checked_text(&manifest, &args.route, args.max_bytes).map_err(Failure::Refused)?;
    write(output.as_ref(), &text)?;
    eprintln!(
        "wrote {count} tool{} for route '{}' (skipped {})",
        if count == 1 { "" } else { "s" },
        args.route,
        outcome.skipped
    );
    if let Some((path, counts)) = merged {
        let kept = match counts.inactive_kept {
            0 => String::new(),
            1 => ", 1 inactive version kept".into(),
            n => format!(", {n} inactive versions kept"),
        };
        eprintln!(
            "merged into {}: {} replaced, {} added{kept}",
            path.display(),
            counts.replaced,
            counts.added
        );
    }
    Ok(())
}

/// `--base-url`: an absolute http(s) URL without user info, query or fragment.
fn base_url(text: &str) -> Result<Url, Failure> {
    let parsed = Url::parse(text).ok();
    if parsed
        .as_ref()
        .is_some_and(|url| !url.username().is_empty() || url.password().is_some())
        || (parsed.is_none() && document::redacted(text) != text)
    {
        // The gateway refuses endpoints with user info: reqwest would send them as
        // `Authorization: Basic`.
        return Err(refused("--base-url must not carry a user name or password"));
    }
    let url = parsed
        .filter(|url| matches!(url.scheme(), "http" | "https") && url.has_host())
        .ok_or_else(|| {
            refused(format!(
                "--base-url '{text}' is not an absolute http(s) URL"
            ))
        })?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err(refused(format!(
            "--base-url '{text}' must not carry a query or fragment"
        )));
    }
    Ok(url)
}

/// The `--merge` manifest (at most the largest document SPEC may be).
fn read_manifest(path: &Path) -> Result<Value, Failure> {
    let bytes = document::read_file(path, document::MAX_DOCUMENT_BYTES)
        .map_err(|e| Failure::Unreadable(format!("cannot read --merge {}: {e}", path.display())))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| refused(format!("--merge {}: not JSON: {e}", path.display())))
}

/// Where `--output` writes: the path given, or, for a symbolic link, the file it resolves to
/// (so the link stays a link).
#[derive(Debug)]
struct Output {
    /// `--output` as given, for messages.
    given: PathBuf,
    /// The file written.
    target: PathBuf,
}

/// The most symbolic links followed from `--output`.
const MAX_LINKS: usize = 40;

/// `--output`'s target file: symbolic links followed; what exists there must be a regular file.
fn output_target(path: &Path) -> Result<Output, Failure> {
    let not_regular = || {
        refused(format!(
            "--output '{}' is not a regular file",
            path.display()
        ))
    };
    let mut target = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let metadata = match std::fs::symlink_metadata(&target) {
            Ok(metadata) => metadata,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Output {
                    given: path.to_path_buf(),
                    target,
                });
            }
            Err(e) => return Err(refused(format!("cannot write {}: {e}", path.display()))),
        };
        if metadata.file_type().is_symlink() {
            let link = std::fs::read_link(&target)
                .map_err(|e| refused(format!("cannot write {}: {e}", path.display())))?;
            target = match target.parent() {
                Some(parent) if link.is_relative() => parent.join(link),
                _ => link,
            };
        } else if metadata.is_file() {
            return Ok(Output {
                given: path.to_path_buf(),
                target,
            });
        } else {
            return Err(not_regular());
        }
    }
    Err(refused(format!(
        "cannot write {}: more than {MAX_LINKS} symbolic links",
        path.display()
    )))
}

/// Writes the manifest to `output` (through a new temporary file beside its target, renamed over
/// it, so that `--merge X --output X` never leaves half a manifest) or to standard output.
fn write(output: Option<&Output>, text: &str) -> Result<(), Failure> {
    let Some(output) = output else {
        return std::io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .map_err(|e| refused(format!("cannot write the manifest: {e}")));
    };
    let cannot =
        |e: std::io::Error| refused(format!("cannot write {}: {e}", output.given.display()));
    // Checked again: the target may have changed since the import began.
    let target = &output_target(&output.given)?.target;
    let mut temporary = target.as_os_str().to_owned();
    temporary.push(format!(".tmp-{}", std::process::id()));
    let temporary = PathBuf::from(temporary);
    // A new file: never one (or a link) that was there before.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)
        .map_err(cannot)?;
    let written = (|| {
        if let Ok(metadata) = std::fs::metadata(target) {
            file.set_permissions(metadata.permissions())?;
        }
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, target)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        cannot(e)
    })
}

#[cfg(test)]
mod tests;
