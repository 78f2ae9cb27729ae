//! `mcp-manifest validate [--route KEY] [--profile local|prod] SOURCE [--json]`: the load-time
//! manifest checks of CONTRACT R5 (and M1 for a route stack's manifest) as a command for infra
//! teams, plus portability warnings (and, in `prod`, `env:` secret references as errors, M5). Exit codes: `0` valid, `1` invalid (not JSON, any R5 problem, a
//! tool whose `tools/list` entry fits on no page of `MCP_MAX_RESPONSE_BYTES` (T2), or without
//! the route), `2` unreachable.
//!
//! `mcp-manifest new-route KEY --bucket BUCKET [--dir DIR] [--stack-name NAME]
//! [--environment STACK]`: scaffolds a route stack's folder (a starter
//! manifest and its `samconfig.toml`). Exit codes: `0` written, `1` refused (a key that breaks
//! P3, or a folder that exists).
//!
//! `mcp-manifest import openapi SPEC --route KEY [--output FILE] [--base-url URL] [--tag TAG]
//! [--operation ID] [--method METHOD] [--skip-secured] [--credential SCHEME=REF] [--merge FILE]
//! [--max-bytes N]`: a manifest of REST-shaped tools from an OpenAPI 3.0 or 3.1 document
//! (CONTRACT M2, M3; see [`openapi`]). Exit codes: `0` written, `1` the document cannot be
//! imported, `2` it cannot be read or a `--credential` is wrong.

use std::process::ExitCode;
use std::time::Duration;

use std::fmt::Write as _;

use clap::{Parser, Subcommand};
use mcp_gateway::build::source_for;
use mcp_gateway::registry::{
    ManifestProblem, RegistryError, Snapshot, compile_bytes, compile_manifest,
    oversized_list_entries, portability_warnings,
};
use mcp_gateway::routing::is_route_key;
use mcp_gateway::{Config, RegistrySource};

mod openapi;
mod policy;
mod repeated;
mod scaffold;
use serde_json::{Value, json};

/// Checks MCP gateway tool manifests.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validates a manifest: a file path, file:PATH, baked:NAME, s3://bucket/key or http(s)://…
    Validate {
        /// Where the manifest is.
        source: String,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Fetch time limit in ms.
        #[arg(long, default_value_t = 10_000)]
        timeout_ms: u64,
        /// Manifest size limit in bytes.
        #[arg(long, default_value_t = 16 * 1024 * 1024)]
        max_bytes: usize,
        /// The route the manifest must serve: a route stack's `RouteKey` (CONTRACT M1).
        #[arg(long)]
        route: Option<String>,
        /// The profile the manifest is for (`local` or `prod`, CONTRACT R3): in `prod` an
        /// `env:` secret reference is an error (CONTRACT M5).
        #[arg(long, default_value = "local", value_parser = ["local", "prod"])]
        profile: String,
    },
    /// Writes a route stack's folder: `manifest.json` (one example tool) and `samconfig.toml`.
    NewRoute {
        /// The route key: 1-64 characters of [A-Za-z0-9._-] (CONTRACT P3).
        key: String,
        /// The folder to create (default `routes/<KEY>`); it must not exist.
        #[arg(long)]
        dir: Option<std::path::PathBuf>,
        /// The S3 bucket the route's manifest is uploaded to (`ManifestBucket`).
        #[arg(long)]
        bucket: String,
        /// The route stack's name, also its function's (default `mcp-route-<KEY>`).
        #[arg(long)]
        stack_name: Option<String>,
        /// The environment stack whose HTTP API and delegation table the route uses.
        #[arg(long, default_value = "mcp-gateway")]
        environment: String,
    },
    /// Writes a manifest from another description of the tools.
    Import {
        #[command(subcommand)]
        format: ImportFormat,
    },
    /// A route's authorization policies: its Cedar schema, a test table, `.cedar` files.
    Policy {
        #[command(subcommand)]
        command: policy::PolicyCommand,
    },
}

/// The descriptions `import` reads.
#[derive(Debug, Subcommand)]
enum ImportFormat {
    /// A manifest of REST-shaped tools from an OpenAPI 3.0 or 3.1 document (JSON or YAML, a file
    /// or an https:// URL): one tool per operation it can map, the rest skipped with a line each.
    Openapi(openapi::OpenapiArgs),
}

/// What a validation found.
struct Report {
    source: String,
    unreachable: Option<String>,
    errors: Vec<ManifestProblem>,
    warnings: Vec<ManifestProblem>,
}

impl Report {
    fn exit_code(&self) -> u8 {
        if self.unreachable.is_some() {
            2
        } else {
            u8::from(!self.errors.is_empty())
        }
    }

    fn to_json(&self) -> Value {
        let list = |problems: &[ManifestProblem]| -> Vec<Value> {
            problems
                .iter()
                .map(|p| json!({"path": p.path, "message": p.message}))
                .collect()
        };
        json!({
            "source": self.source,
            "valid": self.exit_code() == 0,
            "unreachable": self.unreachable,
            "errors": list(&self.errors),
            "warnings": list(&self.warnings),
        })
    }

    fn to_text(&self) -> String {
        let mut out = String::new();
        if let Some(reason) = &self.unreachable {
            let _ = writeln!(out, "error: {reason}");
        }
        for e in &self.errors {
            let _ = writeln!(out, "error: {e}");
        }
        for w in &self.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        let verdict = match self.exit_code() {
            0 => "valid",
            1 => "invalid",
            _ => "unreachable",
        };
        let _ = writeln!(
            out,
            "{}: {verdict} ({} errors, {} warnings)",
            self.source,
            self.errors.len(),
            self.warnings.len()
        );
        out
    }
}

async fn validate(
    source: &str,
    timeout: Duration,
    max_bytes: usize,
    route: Option<&str>,
    prod: bool,
) -> Report {
    let parsed =
        RegistrySource::parse(source).unwrap_or_else(|_| RegistrySource::File(source.into()));
    let mut report = Report {
        source: parsed.to_string(),
        unreachable: None,
        errors: Vec::new(),
        warnings: Vec::new(),
    };
    let fetched = match source_for(&parsed).await {
        Ok(source) => tokio::time::timeout(timeout, source.fetch(max_bytes))
            .await
            .unwrap_or_else(|_| {
                Err(RegistryError::Timeout {
                    source_name: parsed.to_string(),
                    timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                })
            }),
        Err(error) => Err(error),
    };
    let bytes = match fetched {
        Ok(bytes) => bytes,
        Err(error) => {
            report.unreachable = Some(error.to_string());
            return report;
        }
    };
    let mut document: Value = match serde_json::from_slice(&bytes) {
        Ok(document) => document,
        Err(error) => {
            report.errors.push(ManifestProblem {
                path: String::new(),
                message: format!("not JSON: {error}"),
            });
            return report;
        }
    };
    // CONTRACT M6: a repeated member name loads as its last copy; a reader sees the first.
    let repeated = repeated::repeated_members(&bytes);
    // CONTRACT Z9: `.cedar` files next to a local manifest, read as `policy embed` reads them.
    let mut bytes = bytes;
    if let RegistrySource::File(path) = &parsed {
        let base = std::path::Path::new(path)
            .parent()
            .unwrap_or(std::path::Path::new("."));
        match policy::resolve_files(&mut document, base) {
            Ok(true) => bytes = serde_json::to_vec(&document).unwrap_or_default().into(),
            Ok(false) => {}
            Err(reason) => {
                report.errors.push(ManifestProblem {
                    path: String::new(),
                    message: reason,
                });
                return report;
            }
        }
    }
    let mut unreachable = Vec::new();
    // CONTRACT Z11: validate checks every policy set in full, whatever digest it carries.
    let digests = policy::take_digests(&mut document);
    match compile_manifest(&document) {
        Err(problems) => report.errors = problems,
        Ok(snapshot) => {
            if let Some(problem) = route.and_then(|key| route_problem(&snapshot, key)) {
                report.errors.push(problem);
            }
            unreachable = unreachable_tools(&snapshot);
            unreachable.extend(policy::stale_digests(&snapshot, &digests));
            report.errors.extend(policy::foreign_json_forms(
                &snapshot,
                &mut document,
                &digests,
            ));
            // CONTRACT T2: each listed tool's entry, as the gateway writes it from this text,
            // fits on a tools/list page of the deployment's MCP_MAX_RESPONSE_BYTES.
            if let Ok(served) = compile_bytes(&report.source, &bytes) {
                match max_response_bytes() {
                    Ok(limit) => report.errors.extend(oversized_list_entries(&served, limit)),
                    // A malformed variable is said as the gateway would say it.
                    Err(error) => report.errors.push(ManifestProblem {
                        path: String::new(),
                        message: error.to_string(),
                    }),
                }
            }
        }
    }
    report.errors.extend(repeated);
    report.warnings = portability_warnings(&document);
    report.warnings.extend(unreachable);
    if prod {
        report.errors.extend(env_secret_errors(&document));
    }
    report
}

/// `MCP_MAX_RESPONSE_BYTES` as the gateway reads it, else its default (5 MiB): the size of the
/// `tools/list` pages the manifest's tools must fit on (CONTRACT T2).
///
/// # Errors
/// The gateway's own [`mcp_gateway::ConfigError`] for a malformed value.
fn max_response_bytes() -> Result<usize, mcp_gateway::ConfigError> {
    let variable = |name: &str| std::env::var(name).ok();
    Config::from_env_with(Config::fixed_defaults(), |name| {
        (name == "MCP_MAX_RESPONSE_BYTES")
            .then(|| variable(name))
            .flatten()
    })
    .map(|config| config.max_response_bytes)
}

/// CONTRACT M5: an `env:` secret reference is for `mcp-local` only; in the `prod` profile each
/// one is an error at its `_meta.auth.secret` (a Lambda function fails such a load).
fn env_secret_errors(document: &Value) -> Vec<ManifestProblem> {
    let mut lists: Vec<(String, &Value)> = Vec::new();
    if let Some(tools) = document.get("tools") {
        lists.push(("tools".into(), tools));
    }
    if let Some(routes) = document.get("routes").and_then(Value::as_array) {
        for (i, route) in routes.iter().enumerate() {
            if let Some(tools) = route.get("tools") {
                lists.push((format!("routes[{i}].tools"), tools));
            }
        }
    }
    let mut errors = Vec::new();
    for (path, tools) in lists {
        for (j, tool) in tools.as_array().into_iter().flatten().enumerate() {
            let secret = tool.pointer("/_meta/auth/secret").and_then(Value::as_str);
            if secret.is_some_and(|s| s.starts_with("env:")) {
                errors.push(ManifestProblem {
                    path: format!("{path}[{j}]._meta.auth.secret"),
                    message: "env: references are read only by mcp-local and fail the load on Lambda; use a Secrets Manager or SSM ARN in prod".into(),
                });
            }
        }
    }
    errors
}

/// CONTRACT Z9: a tool no policy of its route could permit, for any caller and arguments.
fn unreachable_tools(snapshot: &Snapshot) -> Vec<ManifestProblem> {
    let mut keys: Vec<&str> = snapshot.sorted_route_keys();
    if keys.is_empty() {
        keys.push("");
    }
    let mut warnings = Vec::new();
    for key in keys {
        let Some(route) = snapshot.route(key).or_else(|| snapshot.fixed_route(key)) else {
            continue;
        };
        let Some(policies) = route.policies() else {
            continue;
        };
        let at = if key.is_empty() {
            "authorization".to_string()
        } else {
            format!("route '{key}': authorization")
        };
        for tool in policies.unreachable_tools() {
            warnings.push(ManifestProblem {
                path: at.clone(),
                message: format!(
                    "no policy can permit tool '{tool}' for any caller: it is hidden from everyone"
                ),
            });
        }
    }
    warnings
}

/// CONTRACT M1: a route stack's manifest serves its route (a `routes` manifest names it, or a
/// single-route manifest); `None` when it does.
fn route_problem(snapshot: &Snapshot, key: &str) -> Option<ManifestProblem> {
    if !is_route_key(key) {
        return Some(ManifestProblem {
            path: String::new(),
            message: format!(
                "--route '{key}' is not a route key: 1-64 characters of [A-Za-z0-9._-]"
            ),
        });
    }
    if snapshot.fixed_route(key).is_some() {
        return None;
    }
    let routes = snapshot.sorted_route_keys();
    Some(ManifestProblem {
        path: "routes".into(),
        message: format!(
            "no route '{key}': a deployment at /mcp/{key} would serve nothing (routes: {})",
            if routes.is_empty() {
                "none".to_string()
            } else {
                routes.join(", ")
            }
        ),
    })
}

#[tokio::main]
async fn main() -> ExitCode {
    let Cli { command } = Cli::parse();
    match command {
        Command::Validate {
            source,
            json,
            timeout_ms,
            max_bytes,
            route,
            profile,
        } => {
            let report = validate(
                &source,
                Duration::from_millis(timeout_ms),
                max_bytes,
                route.as_deref(),
                profile == "prod",
            )
            .await;
            if json {
                println!("{}", report.to_json());
            } else {
                print!("{}", report.to_text());
            }
            ExitCode::from(report.exit_code())
        }
        Command::NewRoute {
            key,
            dir,
            bucket,
            stack_name,
            environment,
        } => {
            let dir = dir.unwrap_or_else(|| std::path::Path::new("routes").join(&key));
            match scaffold::write(&key, &dir, stack_name.as_deref(), &bucket, &environment) {
                Ok(written) => {
                    for path in written {
                        println!("wrote {}", path.display());
                    }
                    println!(
                        "next: cargo run -p mcp-manifest -- validate --route {key} {}",
                        dir.join("manifest.json").display()
                    );
                    ExitCode::SUCCESS
                }
                Err(reason) => {
                    eprintln!("error: {reason}");
                    ExitCode::from(1)
                }
            }
        }
        Command::Import {
            format: ImportFormat::Openapi(args),
        } => openapi::run(&args).await,
        Command::Policy { command } => policy::run(&command),
    }
}
