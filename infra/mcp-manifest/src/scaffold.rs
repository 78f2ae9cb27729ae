//! `mcp-manifest new-route KEY`: the folder of a route stack (CONTRACT M1, P3): a starter
//! manifest that serves route `KEY` with one example tool, and the `samconfig.toml` that deploys
//! `infra/route.yaml` for it as stack `mcp-route-KEY` (or `--stack-name`).

use std::path::{Path, PathBuf};

use mcp_gateway::routing::is_route_key;
use serde_json::json;

/// The starter manifest of route `key`: the `routes` form with that one route and one example
/// tool whose Tool Service the team replaces (infra/README.md explains each field).
#[must_use]
pub(crate) fn starter_manifest(key: &str) -> serde_json::Value {
    json!({
        "manifestVersion": 1,
        "routes": [{
            "routeKey": key,
            "server": {"name": format!("{key}-tools"), "title": format!("{key} tools"), "version": "0.1.0"},
            "tools": [{
                "name": "lookup_record",
                "title": "Look up a record",
                "description": "Looks up one record by its id and returns it as JSON. Replace this example with the route's own tools.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The record id."}
                    },
                    "required": ["id"],
                    "additionalProperties": false
                },
                "annotations": {"readOnlyHint": true, "openWorldHint": false},
                "_meta": {
                    "version": "0.1.0",
                    "endpoint": format!("https://tool-service.example.internal/{key}/lookup_record"),
                    "method": "POST",
                    "timeoutMs": 5000
                }
            }]
        }]
    })
}

/// The SAM CLI configuration that deploys `infra/route.yaml` for route `key` as stack
/// `stack`, its manifest at `s3://<bucket>/routes/<key>/manifest.json` (the shape infra/README.md
/// documents: `template_file` per command, so that `sam deploy` deploys the built template, and
/// a build folder of the stack's own).
#[must_use]
pub(crate) fn samconfig(key: &str, stack: &str, bucket: &str, environment: &str) -> String {
    format!(
        r#"# SAM CLI configuration of the route stack of route '{key}' (infra/route.yaml).
# Run sam from the repository root (see infra/README.md):
#   sam build --config-file routes/{key}/samconfig.toml && sam deploy --config-file routes/{key}/samconfig.toml
# After uploading a changed manifest, raise ManifestRevision: only this route's instances recycle.
version = 0.1

[default.global.parameters]
stack_name = "{stack}"

[default.build.parameters]
template_file = "infra/route.yaml"
build_dir = ".aws-sam/{stack}/build"
cache_dir = ".aws-sam/{stack}/cache"
# rust-cargolambda is a beta build method of the SAM CLI.
beta_features = true
cached = true

[default.validate.parameters]
template_file = "infra/route.yaml"
lint = true

[default.deploy.parameters]
template_file = ".aws-sam/{stack}/build/template.yaml"
capabilities = "CAPABILITY_IAM"
confirm_changeset = true
resolve_s3 = true
s3_prefix = "{stack}"
fail_on_empty_changeset = false
parameter_overrides = "RouteKey=\"{key}\" EnvironmentStack=\"{environment}\" ManifestBucket=\"{bucket}\" ManifestRevision=\"1\""
"#
    )
}

/// A CloudFormation stack name that is also a Lambda function name: a letter, then letters,
/// digits and `-`, at most 64 characters.
fn is_stack_name(name: &str) -> bool {
    name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// An S3 bucket name: 3-63 characters of `[a-z0-9.-]`, starting and ending with a letter or
/// digit.
fn is_bucket_name(name: &str) -> bool {
    (3..=63).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'-'))
        && !name.starts_with(['.', '-'])
        && !name.ends_with(['.', '-'])
}

/// Writes `manifest.json` and `samconfig.toml` into the new folder `dir`; the paths written.
/// The stack is `stack`, or `mcp-route-<key>`.
///
/// # Errors
/// A message when `key` breaks P3, the stack or environment name is no stack name, `bucket`
/// is no S3 bucket name, `dir` exists, or a file cannot be written. Nothing is written then, except that a failed
/// write may leave the new folder behind.
pub(crate) fn write(
    key: &str,
    dir: &Path,
    stack: Option<&str>,
    bucket: &str,
    environment: &str,
) -> Result<Vec<PathBuf>, String> {
    if !is_route_key(key) {
        return Err(format!(
            "'{key}' is not a route key: 1-64 characters of [A-Za-z0-9._-] (CONTRACT P3)"
        ));
    }
    let stack = stack.map_or_else(|| format!("mcp-route-{key}"), str::to_string);
    if !is_stack_name(&stack) {
        return Err(format!(
            "stack name '{stack}' is not a CloudFormation stack and Lambda function name (a letter, then letters, digits and '-', at most 64 characters); give one with --stack-name"
        ));
    }
    if !is_stack_name(environment) {
        return Err(format!(
            "--environment '{environment}' is not a CloudFormation stack name"
        ));
    }
    if !is_bucket_name(bucket) {
        return Err(format!("--bucket '{bucket}' is not an S3 bucket name"));
    }
    if dir.exists() {
        return Err(format!(
            "{} exists; choose another folder with --dir",
            dir.display()
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let manifest = dir.join("manifest.json");
    let mut text = serde_json::to_string_pretty(&starter_manifest(key)).unwrap_or_default();
    text.push('\n');
    std::fs::write(&manifest, text)
        .map_err(|e| format!("cannot write {}: {e}", manifest.display()))?;
    let config = dir.join("samconfig.toml");
    std::fs::write(&config, samconfig(key, &stack, bucket, environment))
        .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
    Ok(vec![manifest, config])
}
