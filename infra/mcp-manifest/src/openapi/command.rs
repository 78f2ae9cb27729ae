//! The command: `mcp-manifest import openapi`'s arguments checked, the document read and
//! imported, the manifest merged, checked and written, and the exit code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mcp_gateway::routing::is_route_key;
use serde_json::Value;
use url::Url;

use super::{Filters, Options, credentials, document, import_document, manifest, output};

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
    /// Skip operations with security requirements that no --credential meets instead of
    /// importing them with a warning.
    #[arg(long)]
    pub(crate) skip_secured: bool,
    /// `--credential SCHEME=REF`: binds a security scheme to a secret reference (CONTRACT M5);
    /// the help text gives the reference's forms.
    #[arg(
        long = "credential",
        value_name = "SCHEME=REF",
        help = "Bind the security scheme SCHEME (its name in components.securitySchemes) to \
                the secret REF: arn:<partition>:secretsmanager:<region>:<account>:secret:\
                <name>[#<jsonKey>], arn:<partition>:ssm:<region>:<account>:parameter/<name> or \
                env:<NAME> (repeatable). The operations it secures get it as _meta.auth."
    )]
    pub(crate) credentials: Vec<String>,
    /// Merge this route's imported tools into this manifest (the active entries of the same name
    /// replaced, inactive versions and the rest kept).
    #[arg(long)]
    pub(crate) merge: Option<PathBuf>,
    /// Manifest size limit in bytes.
    #[arg(long, default_value_t = 16 * 1024 * 1024)]
    pub(crate) max_bytes: usize,
}

/// Why the import wrote nothing.
#[derive(Debug)]
pub(super) enum Failure {
    /// The document cannot be imported (exit 1).
    Refused(Vec<String>),
    /// SPEC or the `--merge` manifest cannot be read (exit 2).
    Unreadable(String),
    /// A `--credential` is malformed, names no security scheme of the document, or one the
    /// gateway cannot send credentials for (exit 2).
    Usage(String),
}

pub(super) fn refused(error: impl Into<String>) -> Failure {
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
        Err(Failure::Unreadable(error) | Failure::Usage(error)) => {
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
    let output = args
        .output
        .as_deref()
        .map(output::output_target)
        .transpose()?;
    let credentials = credentials::parse(&args.credentials).map_err(Failure::Usage)?;
    let bytes = document::read(&args.spec)
        .await
        .map_err(Failure::Unreadable)?;
    let spec = document::redacted(&args.spec);
    let document = document::parse(&bytes).map_err(|e| refused(format!("{spec}: {e}")))?;
    let dialect = document::dialect(&document).map_err(|e| refused(format!("{spec}: {e}")))?;
    let bindings = credentials::bind(&document, &credentials).map_err(Failure::Usage)?;
    let options = Options {
        base_url,
        skip_secured: args.skip_secured,
        bindings,
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
    output::write(output.as_ref(), &text)?;
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
