//! `mcp-manifest policy …` (CONTRACT Z9): a route's Cedar schema for editors and Cedar's own
//! tools, a team's table of requests and expected decisions, and `.cedar` files kept next to
//! the manifest (`"policies": {"file": "payroll.cedar"}`), written into the manifest's text
//! for upload.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use mcp_gateway::authz::schema::schema_text;
use mcp_gateway::authz::{CallerFacts, DecisionKind, RequestFacts};
use mcp_gateway::registry::{ManifestProblem, Route, Snapshot, compile_manifest};
use serde_json::Value;

/// `mcp-manifest policy` commands.
#[derive(Debug, Subcommand)]
pub(crate) enum PolicyCommand {
    /// Prints a route's Cedar schema (.cedarschema text), generated from its tools.
    Schema {
        /// The manifest file.
        source: PathBuf,
        /// The route (default: the manifest's only route).
        #[arg(long)]
        route: Option<String>,
    },
    /// Runs a table of requests and expected decisions against a route's policies.
    Test {
        /// The cases file: {"manifest": PATH, "route": KEY, "cases": [...]}.
        cases: PathBuf,
    },
    /// Writes the manifest with each `"policies": {"file": …}` replaced by the file's text.
    Embed {
        /// The manifest file.
        source: PathBuf,
        /// Where to write it (default: standard output).
        #[arg(long)]
        output: Option<PathBuf>,
        /// Write the manifest on one line, without indentation: a smaller file, which a cold
        /// start reads faster (the default indents it for people to read).
        #[arg(long)]
        compact: bool,
    },
}

/// Replaces each `authorization.policies` of the form `{"file": "<path>"}` (relative to
/// `base`) with the file's text; `Ok(true)` when one was replaced.
///
/// # Errors
/// The file that cannot be read, and why.
pub(crate) fn resolve_files(document: &mut Value, base: &Path) -> Result<bool, String> {
    let mut replaced = false;
    let routes: Vec<&mut Value> = if document.get("routes").is_some_and(Value::is_array) {
        document["routes"]
            .as_array_mut()
            .into_iter()
            .flatten()
            .collect()
    } else {
        vec![document]
    };
    for route in routes {
        let Some(policies) = route.pointer_mut("/authorization/policies") else {
            continue;
        };
        let Some(file) = policies.get("file").and_then(Value::as_str) else {
            continue;
        };
        let path = base.join(file);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read policies file {}: {e}", path.display()))?;
        *policies = Value::String(text);
        replaced = true;
    }
    Ok(replaced)
}

/// The route objects of a manifest with their keys (`""` for a single-route manifest's top
/// level), mutable.
fn route_objects(document: &mut Value) -> Vec<(String, &mut Value)> {
    if document.get("routes").is_some_and(Value::is_array) {
        document["routes"]
            .as_array_mut()
            .into_iter()
            .flatten()
            .map(|route| {
                let key = route["routeKey"].as_str().unwrap_or_default().to_string();
                (key, route)
            })
            .collect()
    } else {
        vec![(String::new(), document)]
    }
}

/// Takes each route's `authorization.validated` out of `document` (CONTRACT Z11), so that
/// compiling it validates every policy set in full; returns the route keys and the digests
/// taken.
pub(crate) fn take_digests(document: &mut Value) -> Vec<(String, Value)> {
    let mut taken = Vec::new();
    for (key, route) in route_objects(document) {
        let digest = route
            .get_mut("authorization")
            .and_then(Value::as_object_mut)
            .and_then(|a| a.remove("validated"));
        if let Some(digest) = digest {
            taken.push((key, digest));
        }
    }
    taken
}

/// CONTRACT Z11: a warning for each digest `taken` that is not the one its route's policies
/// and tools have now (the gateway's load would validate them again).
pub(crate) fn stale_digests(
    snapshot: &Snapshot,
    taken: &[(String, Value)],
) -> Vec<ManifestProblem> {
    let mut warnings = Vec::new();
    for (key, digest) in taken {
        let current = snapshot
            .route(key)
            .or_else(|| snapshot.fixed_route(key))
            .and_then(|route| route.policies())
            .map(mcp_gateway::authz::RoutePolicies::validation_digest);
        if current.is_some_and(|c| digest.as_str() != Some(c)) {
            warnings.push(ManifestProblem {
                path: if key.is_empty() {
                    "authorization.validated".into()
                } else {
                    format!("route '{key}': authorization.validated")
                },
                message: "stale: the policies or the tools changed since `mcp-manifest policy \
                          embed` validated them, so each load validates them again"
                    .into(),
            });
        }
    }
    warnings
}

fn read_manifest(source: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(source)
        .map_err(|e| format!("cannot read {}: {e}", source.display()))?;
    let mut document: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", source.display()))?;
    resolve_files(&mut document, source.parent().unwrap_or(Path::new(".")))?;
    Ok(document)
}

/// The route object `route` names, or the only one.
fn route_object<'a>(document: &'a Value, route: Option<&str>) -> Result<&'a Value, String> {
    match document.get("routes").and_then(Value::as_array) {
        None => Ok(document),
        Some(routes) => match route {
            Some(key) => routes
                .iter()
                .find(|r| r["routeKey"] == key)
                .ok_or_else(|| format!("no route '{key}'")),
            None if routes.len() == 1 => Ok(&routes[0]),
            None => Err("the manifest has several routes: name one with --route".into()),
        },
    }
}

fn schema(source: &Path, route: Option<&str>) -> Result<String, String> {
    let document = read_manifest(source)?;
    let route = route_object(&document, route)?;
    let mut seen = std::collections::HashSet::new();
    let tools: Vec<(&str, &Value)> = route["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t.pointer("/_meta/active") != Some(&Value::Bool(false)))
        .filter_map(|t| Some((t["name"].as_str()?, &t["inputSchema"])))
        .filter(|(name, _)| seen.insert(*name))
        .collect();
    schema_text(tools)
}

/// One case of a policy test table.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Case {
    name: String,
    #[serde(default)]
    caller: Caller,
    tool: String,
    #[serde(default)]
    arguments: Value,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default = "legacy_version")]
    protocol_version: String,
    /// `allow`, `deny`, `error` or `hidden`.
    expect: String,
}

fn legacy_version() -> String {
    "2025-11-25".into()
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Caller {
    #[serde(default)]
    auth: Option<String>,
    #[serde(default)]
    subject: Option<String>,
    #[serde(default)]
    groups: Vec<String>,
    #[serde(default)]
    scopes: Vec<String>,
    #[serde(default)]
    client_id: String,
    #[serde(default)]
    tags: BTreeMap<String, String>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    manifest: PathBuf,
    #[serde(default)]
    route: Option<String>,
    cases: Vec<Case>,
}

fn caller_facts(caller: Caller) -> Result<CallerFacts, String> {
    let auth = match caller.auth.as_deref().unwrap_or("none") {
        "none" => "none",
        "token" => "token",
        "oauth" => "oauth",
        other => return Err(format!("caller.auth '{other}' is not none, token or oauth")),
    };
    Ok(CallerFacts {
        auth,
        subject: caller.subject.unwrap_or_else(|| "anonymous".into()),
        groups: caller.groups,
        scopes: caller.scopes,
        client_id: caller.client_id,
        tags: caller.tags,
    })
}

/// The decision a case gets: `allow`, `deny`, `error`, `hidden`, or `unknown` for a tool the
/// route's policies do not know.
fn decide(route: &Route, case: Case) -> Result<(String, String, Vec<String>), String> {
    let policies = route.policies().ok_or("the route has no authorization")?;
    let name = case.name.clone();
    let facts = caller_facts(case.caller)?;
    let request = RequestFacts {
        employee_no: case.headers.get("employee-no").map(String::as_str),
        virtual_employee_no: case.headers.get("virtual-employee-no").map(String::as_str),
        protocol_version: &case.protocol_version,
    };
    let view = policies
        .view(&facts, &request)
        .ok_or_else(|| format!("{name}: the caller cannot be built"))?;
    if !view.visible(&case.tool) {
        return Ok((name, "hidden".into(), Vec::new()));
    }
    let arguments = if case.arguments.is_null() {
        Value::Object(serde_json::Map::new())
    } else {
        case.arguments
    };
    let Some(decision) = view.decide(&case.tool, &arguments) else {
        return Ok((name, "unknown".into(), Vec::new()));
    };
    let got = match decision.kind {
        DecisionKind::Allow => "allow",
        DecisionKind::Deny => "deny",
        DecisionKind::Error => "error",
    };
    Ok((name, got.into(), decision.policies))
}

fn test(cases: &Path) -> Result<bool, String> {
    let text = std::fs::read_to_string(cases)
        .map_err(|e| format!("cannot read {}: {e}", cases.display()))?;
    let table: Table =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", cases.display()))?;
    let manifest = cases
        .parent()
        .unwrap_or(Path::new("."))
        .join(&table.manifest);
    let document = read_manifest(&manifest)?;
    let snapshot = compile_manifest(&document).map_err(|problems| {
        let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
        format!("{} is invalid:\n{}", manifest.display(), lines.join("\n"))
    })?;
    let keys = snapshot.sorted_route_keys();
    // The named route, else the manifest's only one (a single-route manifest's has no key).
    let key = table
        .route
        .as_deref()
        .or_else(|| keys.first().copied().filter(|_| keys.len() == 1))
        .unwrap_or("");
    let route = snapshot
        .route(key)
        .or_else(|| snapshot.fixed_route(key))
        .ok_or("no such route in the manifest (name it with \"route\")")?;
    let (mut passed, mut failed) = (0, 0);
    for case in table.cases {
        let expected = case.expect.clone();
        let (name, got, policies) = decide(route, case)?;
        if got == expected {
            passed += 1;
            println!("ok: {name}");
        } else {
            failed += 1;
            println!(
                "FAIL: {name}: expected {expected}, got {got} (policies: {})",
                if policies.is_empty() {
                    "none".into()
                } else {
                    policies.join(", ")
                }
            );
        }
    }
    println!("{passed} passed, {failed} failed");
    Ok(failed == 0)
}

/// Writes the manifest with its `.cedar` files' text in place and, on each route with
/// policies, `authorization.policiesJson` (Cedar's JSON form of the text, CONTRACT Z12) and
/// `authorization.validated`: the digest of the policies, their JSON form and the tools that
/// strict validation has just accepted here (CONTRACT Z9, Z11).
fn embed(source: &Path, output: Option<&Path>, compact: bool) -> Result<(), String> {
    let mut document = read_manifest(source)?;
    take_digests(&mut document);
    let snapshot = compile_manifest(&document).map_err(|problems| {
        let lines: Vec<String> = problems
            .iter()
            .map(|p| format!("{}: {}", p.path, p.message))
            .collect();
        format!("the manifest is invalid:\n{}", lines.join("\n"))
    })?;
    for (key, route) in route_objects(&mut document) {
        let embedded = snapshot
            .route(&key)
            .or_else(|| snapshot.fixed_route(&key))
            .and_then(|route| route.policies())
            .and_then(mcp_gateway::authz::RoutePolicies::embedded_form);
        if let Some(authorization) = route
            .get_mut("authorization")
            .and_then(Value::as_object_mut)
        {
            // CONTRACT Z12: a JSON form read earlier is written anew from the text, or dropped.
            authorization.remove("policiesJson");
            if let Some((json, digest)) = embedded {
                authorization.insert("policiesJson".into(), Value::String(json));
                authorization.insert("validated".into(), Value::String(digest));
            }
        }
    }
    let text = if compact {
        serde_json::to_string(&document)
    } else {
        serde_json::to_string_pretty(&document)
    }
    .map_err(|e| e.to_string())?
        + "\n";
    match output {
        None => print!("{text}"),
        Some(path) => std::fs::write(path, text)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
    }
    Ok(())
}

/// CONTRACT Z12: an error for each route whose `authorization.policiesJson` is not the JSON
/// form `policy embed` writes from its policy text while the digest `taken` from it matches
/// (only a hand-written digest can): the gateway would enforce that form instead of the text
/// a reviewer reads. Beside a stale digest the gateway reads the text, and the warning of
/// [`stale_digests`] says so.
pub(crate) fn foreign_json_forms(
    snapshot: &Snapshot,
    document: &mut Value,
    taken: &[(String, Value)],
) -> Vec<ManifestProblem> {
    let mut errors = Vec::new();
    for (key, route) in route_objects(document) {
        let Some(written) = route
            .get("authorization")
            .and_then(|a| a.get("policiesJson"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        let Some(policies) = snapshot
            .route(&key)
            .or_else(|| snapshot.fixed_route(&key))
            .and_then(|route| route.policies())
        else {
            continue;
        };
        let vouched = taken
            .iter()
            .any(|(k, d)| *k == key && d.as_str() == Some(policies.validation_digest()));
        if !vouched
            || policies
                .embedded_form()
                .is_some_and(|(json, _)| json == written)
        {
            continue;
        }
        errors.push(ManifestProblem {
            path: if key.is_empty() {
                "authorization.policiesJson".into()
            } else {
                format!("route '{key}': authorization.policiesJson")
            },
            message: "not the JSON form `mcp-manifest policy embed` writes from the policies' \
                      text: with a digest that matched it the gateway would enforce it instead \
                      of the text; run `mcp-manifest policy embed` again"
                .into(),
        });
    }
    errors
}

/// Runs a `policy` command. Exit codes: `0` done (every case as expected), `1` a case
/// failed, `2` a file cannot be read or is invalid.
pub(crate) fn run(command: &PolicyCommand) -> ExitCode {
    let outcome = match command {
        PolicyCommand::Schema { source, route } => schema(source, route.as_deref()).map(|text| {
            print!("{text}");
            true
        }),
        PolicyCommand::Test { cases } => test(cases),
        PolicyCommand::Embed {
            source,
            output,
            compact,
        } => embed(source, output.as_deref(), *compact).map(|()| true),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(reason) => {
            eprintln!("error: {reason}");
            ExitCode::from(2)
        }
    }
}
