//! `mcp-manifest` on a route's authorization policies (CONTRACT Z8, Z9): `validate` reports
//! policy problems and warns about a tool no policy can reach, `policy schema` prints the
//! route's Cedar schema, `policy test` runs a table of expected decisions, and `.cedar` files
//! next to the manifest are read by every command and written in by `policy embed`.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

fn run(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-manifest"))
        .args(args)
        .output()
        .expect("mcp-manifest runs");
    (
        output.status.code().expect("exit code"),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

const POLICIES: &str = r#"@id("hr-reports")
permit(principal, action == Gateway::Action::"payroll_report", resource)
when { principal.groups.contains("hr") };

@id("refunds")
permit(principal, action == Gateway::Action::"refund", resource);

@id("big-refunds")
@reason("refunds above 500 need a person")
forbid(principal, action == Gateway::Action::"refund", resource)
when { context.input.amount.greaterThan(decimal("500.0")) };
"#;

/// A folder with `manifest.json` whose route reads its policies from `route.cedar`.
fn folder(name: &str, policies: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("mcp-manifest-policy-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tool = |name: &str, properties: Value| {
        let required: Vec<&str> = properties
            .get("amount")
            .map(|_| "amount")
            .into_iter()
            .collect();
        json!({"name": name, "description": format!("{name} tool"),
               "inputSchema": {"type": "object", "properties": properties, "required": required},
               "_meta": {"endpoint": format!("https://tools.example.internal/{name}")}})
    };
    let manifest = json!({"manifestVersion": 1, "routes": [{"routeKey": "core",
        "tools": [
            tool("refund", json!({"amount": {"type": "number"}, "currency": {"type": "string"}})),
            tool("payroll_report", json!({"month": {"type": "string"}})),
            tool("delete_everything", json!({})),
        ],
        "authorization": {"mode": "enforce", "policies": {"file": "route.cedar"}}}]});
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
    std::fs::write(dir.join("route.cedar"), policies).unwrap();
    dir
}

/// What a validation digest reads of `document`'s route 0: each tool's name and the JSON text
/// of its `inputSchema`, in order (CONTRACT Z11).
fn schema_texts(document: &Value) -> Vec<(String, Vec<u8>)> {
    document["routes"][0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                serde_json::to_vec(&t["inputSchema"]).unwrap(),
            )
        })
        .collect()
}

fn path(dir: &std::path::Path, file: &str) -> String {
    dir.join(file).to_string_lossy().into_owned()
}

#[test]
fn z9_validate_reads_the_cedar_file_and_warns_about_a_tool_no_policy_can_reach() {
    let dir = folder("good", POLICIES);
    let (code, out, _) = run(&["validate", &path(&dir, "manifest.json")]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines().any(|l| l
            == "warning: route 'core': authorization: no policy can permit tool \
                'delete_everything' for any caller: it is hidden from everyone"),
        "{out}"
    );
}

#[test]
fn z8_validate_reports_a_policy_that_does_not_validate_with_its_id() {
    let dir = folder(
        "bad",
        r#"@id("typo") permit(principal, action == Gateway::Action::"refund", resource) when { context.input.amout == 1 };"#,
    );
    let (code, out, _) = run(&["validate", &path(&dir, "manifest.json")]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("error: routes[0].authorization.policies: for policy `typo`, ")),
        "{out}"
    );
}

#[test]
fn z9_policy_schema_prints_the_routes_cedarschema() {
    let dir = folder("schema", POLICIES);
    let (code, out, err) = run(&[
        "policy",
        "schema",
        &path(&dir, "manifest.json"),
        "--route",
        "core",
    ]);
    assert_eq!(code, 0, "{err}");
    for part in [
        "namespace Gateway",
        "entity Caller",
        "tags String",
        r#"action "refund" in [Action::"call_tool"]"#,
        "amount: decimal",
        "currency?: String",
        "employeeNo?: String",
    ] {
        assert!(out.contains(part), "missing {part:?} in\n{out}");
    }
}

#[test]
fn z9_policy_test_runs_the_table_and_fails_on_an_unexpected_decision() {
    let dir = folder("test", POLICIES);
    let table = |expect_small: &str| {
        json!({"manifest": "manifest.json", "route": "core", "cases": [
            {"name": "small refund", "tool": "refund", "arguments": {"amount": 20}, "expect": expect_small},
            {"name": "big refund", "tool": "refund", "arguments": {"amount": 900}, "expect": "deny"},
            {"name": "inexact refund", "tool": "refund", "arguments": {"amount": 1.00001}, "expect": "error"},
            {"name": "hr reads payroll", "caller": {"auth": "token", "subject": "d-1", "groups": ["hr"]},
             "tool": "payroll_report", "expect": "allow"},
            {"name": "others do not see payroll", "tool": "payroll_report", "expect": "hidden"}
        ]})
    };
    std::fs::write(dir.join("cases.json"), table("allow").to_string()).unwrap();
    let (code, out, err) = run(&["policy", "test", &path(&dir, "cases.json")]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.ends_with("5 passed, 0 failed\n"), "{out}");
    std::fs::write(dir.join("cases.json"), table("deny").to_string()).unwrap();
    let (code, out, _) = run(&["policy", "test", &path(&dir, "cases.json")]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL: small refund: expected deny, got allow (policies: refunds)"),
        "{out}"
    );
}

/// Runs `policy embed` on the folder's `manifest.json` into `upload.json`; the written path and
/// manifest.
fn embed(dir: &std::path::Path) -> (String, Value) {
    let out_path = path(dir, "upload.json");
    let (code, _, err) = run(&[
        "policy",
        "embed",
        &path(dir, "manifest.json"),
        "--output",
        &out_path,
    ]);
    assert_eq!(code, 0, "{err}");
    let written = serde_json::from_str(&std::fs::read_to_string(&out_path).unwrap()).unwrap();
    (out_path, written)
}

#[test]
fn z9_policy_embed_writes_the_file_into_the_manifest_which_the_gateway_then_loads() {
    let dir = folder("embed", POLICIES);
    let (out_path, written) = embed(&dir);
    assert_eq!(written["routes"][0]["authorization"]["policies"], POLICIES);
    // CONTRACT Z11: the digest of what was just validated, the one the gateway computes.
    let digest = written["routes"][0]["authorization"]["validated"]
        .as_str()
        .expect("embed writes the validation digest")
        .to_string();
    let snapshot = mcp_gateway::registry::compile_manifest(&written).unwrap();
    let policies = snapshot.route("core").unwrap().policies().unwrap();
    assert_eq!(policies.validation_digest(), digest);
    // CONTRACT Z12: beside it, Cedar's JSON form of the text, which the digest covers.
    let json = written["routes"][0]["authorization"]["policiesJson"]
        .as_str()
        .expect("embed writes the JSON form");
    assert!(
        json.starts_with(r#"{"staticPolicies":{"hr-reports":"#),
        "{json}"
    );
    assert_eq!(
        policies.embedded_form(),
        Some((json.to_string(), digest.clone()))
    );
    // Loaded from the indented text it wrote, and from the same written `--compact`, the
    // digest is the same: whitespace outside strings is not digested.
    let compact_path = path(&dir, "compact.json");
    let (code, _, err) = run(&[
        "policy",
        "embed",
        &dir.join("manifest.json").to_string_lossy(),
        "--output",
        &compact_path,
        "--compact",
    ]);
    assert_eq!(code, 0, "{err}");
    for file in [&out_path, &compact_path] {
        let text = std::fs::read(file).unwrap();
        let snapshot =
            mcp_gateway::registry::compile_bytes("file", &bytes::Bytes::from(text)).unwrap();
        let loaded = snapshot.route("core").unwrap().policies().unwrap();
        assert_eq!(loaded.validation_digest(), digest, "{file}");
    }
    assert_eq!(
        std::fs::read_to_string(&compact_path)
            .unwrap()
            .lines()
            .count(),
        1
    );
    let (code, out, _) = run(&["validate", &out_path]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("stale"), "{out}");
    // The gateway itself loads text only: a file reference is a load problem.
    let unresolved: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let problems = mcp_gateway::registry::compile_manifest(&unresolved).unwrap_err();
    assert_eq!(
        problems[0].to_string(),
        "routes[0].authorization.policies: a policies file is read by mcp-manifest: run \
         `mcp-manifest policy embed` and load the manifest it writes"
    );
}

#[test]
fn z11_validate_checks_in_full_whatever_the_digest_and_warns_when_it_is_stale() {
    let dir = folder("stale", POLICIES);
    let (out_path, mut written) = embed(&dir);
    // A policy edited after embed: the digest is stale.
    written["routes"][0]["authorization"]["policies"] = json!(format!(
        "{POLICIES}\n@id(\"kill\") forbid(principal, action, resource);"
    ));
    std::fs::write(&out_path, written.to_string()).unwrap();
    let (code, out, _) = run(&["validate", &out_path]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(
            "route 'core': authorization.validated: stale: the policies or the tools changed \
             since `mcp-manifest policy embed` validated them, so each load validates them again"
        ),
        "{out}"
    );
    // A policy strict validation refuses is refused by validate though a digest vouches for it.
    let typo = r#"@id("typo") permit(principal, action == Gateway::Action::"refund", resource) when { context.input.amout > decimal("1.0") };"#;
    written["routes"][0]["authorization"]["policies"] = json!(typo);
    // A digest of the text alone, written by hand: the JSON form embed wrote goes (Z12).
    written["routes"][0]["authorization"]
        .as_object_mut()
        .unwrap()
        .remove("policiesJson");
    let snapshot_tools = schema_texts(&written);
    written["routes"][0]["authorization"]["validated"] =
        json!(mcp_gateway::authz::policies::validation_digest(
            snapshot_tools
                .iter()
                .map(|(n, t)| (n.as_str(), t.as_slice())),
            typo
        ));
    assert!(mcp_gateway::registry::compile_manifest(&written).is_ok());
    std::fs::write(&out_path, written.to_string()).unwrap();
    let (code, out, _) = run(&["validate", &out_path]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("for policy `typo`"), "{out}");
    // And embed refuses it, writing nothing.
    let refused = path(&dir, "refused.json");
    let (code, _, err) = run(&["policy", "embed", &out_path, "--output", &refused]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("for policy `typo`"), "{err}");
    assert!(!std::path::Path::new(&refused).exists());
}

#[test]
fn z12_validate_refuses_a_json_form_that_embed_did_not_write_from_the_text() {
    let dir = folder("json-form", POLICIES);
    let (out_path, written) = embed(&dir);
    let json = written["routes"][0]["authorization"]["policiesJson"]
        .as_str()
        .unwrap()
        .to_string();
    let error = "error: route 'core': authorization.policiesJson: not the JSON form \
                 `mcp-manifest policy embed` writes from the policies' text: with a digest \
                 that matched it the gateway would enforce it instead of the text; run \
                 `mcp-manifest policy embed` again";
    // A forbid turned into a permit, the same policies reordered, and the same form indented:
    // none is what embed writes.
    let reordered = {
        let value: Value = serde_json::from_str(&json).unwrap();
        let policies = value["staticPolicies"].as_object().unwrap();
        let mut reversed = serde_json::Map::new();
        for (name, policy) in policies.iter().rev() {
            reversed.insert(name.clone(), policy.clone());
        }
        json!({"staticPolicies": reversed, "templates": {}, "templateLinks": []}).to_string()
    };
    let indented =
        serde_json::to_string_pretty(&serde_json::from_str::<Value>(&json).unwrap()).unwrap();
    let forbid_to_permit = json.replacen(r#""effect":"forbid""#, r#""effect":"permit""#, 1);
    let schemas = schema_texts(&written);
    for tampered in [forbid_to_permit, reordered, indented] {
        assert_ne!(tampered, json);
        let mut document = written.clone();
        document["routes"][0]["authorization"]["policiesJson"] = json!(tampered);
        // Beside embed's digest, now stale, the gateway reads the text: only the warning.
        std::fs::write(&out_path, document.to_string()).unwrap();
        let (code, out, _) = run(&["validate", &out_path]);
        assert_eq!(code, 0, "{out}");
        assert!(out.contains("authorization.validated: stale"), "{out}");
        // A digest written by hand for the tampered form would have it enforced: refused.
        document["routes"][0]["authorization"]["validated"] =
            json!(mcp_gateway::authz::policies::validation_digest_with_json(
                schemas.iter().map(|(n, t)| (n.as_str(), t.as_slice())),
                POLICIES,
                &tampered
            ));
        assert!(mcp_gateway::registry::compile_manifest(&document).is_ok());
        std::fs::write(&out_path, document.to_string()).unwrap();
        let (code, out, _) = run(&["validate", &out_path]);
        assert_eq!(code, 1, "{out}");
        assert!(out.lines().any(|l| l == error), "{out}");
        assert!(!out.contains("stale"), "{out}");
    }
    // The form embed wrote passes.
    std::fs::write(&out_path, written.to_string()).unwrap();
    let (code, out, _) = run(&["validate", &out_path]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("policiesJson"), "{out}");
}

#[test]
fn m6_validate_refuses_a_repeated_policies_member_that_a_load_would_take_the_last_of() {
    let dir = folder("repeated", POLICIES);
    let (out_path, written) = embed(&dir);
    // A second `policies` member: a reader of the first (here a permit of everything) sees
    // other rules than a load enforces, which takes the last.
    let text = written.to_string().replacen(
        r#""policies":"#,
        r#""policies":"@id(\"all\") permit(principal, action, resource);","policies":"#,
        1,
    );
    assert_ne!(text, written.to_string());
    std::fs::write(&out_path, &text).unwrap();
    let (code, out, _) = run(&["validate", &out_path]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.lines().any(|l| l
            == "error: routes[0].authorization.policies: this member name is repeated in its \
                object: a load takes the last one"),
        "{out}"
    );
}
