//! The `mcp-manifest validate` command: exit codes 0 valid / 1 invalid / 2 unreachable, text and
//! `--json` output, portability warnings (CONTRACT R5), `--route` (M1); and `new-route`, whose
//! scaffold validates and is served by the real `mcp-local` at its route's path (M1, P3).

use std::process::Command;

use serde_json::{Value, json};
use support::{mcp_local_binary, printed_endpoint};

mod support;

fn run(args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-manifest"))
        .args(args)
        .output()
        .expect("mcp-manifest runs");
    (
        output.status.code().expect("exit code"),
        String::from_utf8(output.stdout).unwrap(),
    )
}

fn temp_manifest(name: &str, body: &str) -> String {
    let dir = std::env::temp_dir().join(format!("mcp-manifest-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn r5_the_sample_manifest_is_valid_without_warnings() {
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../../manifests/sample.json");
    let (code, out) = run(&["validate", sample]);
    assert_eq!(code, 0, "{out}");
    assert!(out.ends_with(": valid (0 errors, 0 warnings)\n"), "{out}");
    let (code, _) = run(&["validate", "baked:sample"]);
    assert_eq!(code, 0);
}

#[test]
fn r5_invalid_manifest_exits_1_listing_every_problem_by_path() {
    let path = temp_manifest(
        "invalid.json",
        &json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": [
            {"name": "a b", "inputSchema": {"type": "object"}, "_meta": {"endpoint": "https://x/a"}},
            {"name": "b", "inputSchema": {"type": "string"}, "_meta": {"endpoint": "ftp://x/b"}}
        ]}]})
        .to_string(),
    );
    let (code, out) = run(&["validate", &path]);
    assert_eq!(code, 1, "{out}");
    for line in [
        "error: routes[0].tools[0].name: must be a string of 1-128 characters [A-Za-z0-9_.-]",
        "error: routes[0].tools[1].inputSchema: root must be \"type\": \"object\"",
        "error: routes[0].tools[1]._meta.endpoint: must be an absolute http(s) URL or a Lambda function ARN (arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>])",
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line:?} in\n{out}");
    }
    assert!(out.contains(": invalid (3 errors, "), "{out}");

    let (code, out) = run(&["validate", "--json", &path]);
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["valid"], false);
    assert_eq!(report["errors"].as_array().unwrap().len(), 3);
    assert_eq!(report["errors"][0]["path"], "routes[0].tools[0].name");
}

#[test]
fn r5_not_json_is_invalid() {
    let path = temp_manifest("broken.json", "{\"manifestVersion\": 1,");
    let (code, out) = run(&["validate", &path]);
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("error: not JSON: "), "{out}");
}

#[test]
fn r5_portability_warnings_do_not_fail_validation() {
    let path = temp_manifest(
        "warnings.json",
        &json!({"tools": [{"name": "search.v2", "inputSchema": {"properties": {"q": {}}},
                           "_meta": {"endpoint": "https://x/s"}}]})
        .to_string(),
    );
    let (code, out) = run(&["validate", "--json", &path]);
    assert_eq!(code, 0, "{out}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["valid"], true);
    let paths: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "tools[0].name",
            "tools[0].description",
            "tools[0].inputSchema",
            "tools[0].inputSchema.properties.q"
        ]
    );
    // Each warning names the tool (CONTRACT R5).
    for warning in report["warnings"].as_array().unwrap() {
        let message = warning["message"].as_str().unwrap();
        assert!(message.starts_with("tool 'search.v2': "), "{message}");
    }
}

#[test]
fn r2_unreachable_sources_exit_2() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    for source in [
        "/nonexistent/manifest.json".to_string(),
        "baked:nope".to_string(),
        format!("http://127.0.0.1:{port}/manifest.json"),
    ] {
        let (code, out) = run(&["validate", "--json", &source]);
        assert_eq!(code, 2, "{source}: {out}");
        let report: Value = serde_json::from_str(&out).unwrap();
        assert!(report["unreachable"].is_string(), "{out}");
    }
}

/// A fresh, empty temporary folder for one test.
fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-manifest-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run_with_stderr(args: &[&str]) -> (i32, String, String) {
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

#[test]
fn m1_new_route_writes_a_manifest_valid_for_its_route_and_a_samconfig() {
    let base = temp_dir("scaffold");
    let dir = base.join("hr");
    let dir_text = dir.to_string_lossy().into_owned();
    let (code, out, err) = run_with_stderr(&[
        "new-route",
        "hr",
        "--bucket",
        "team-manifests",
        "--dir",
        &dir_text,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let manifest = dir.join("manifest.json").to_string_lossy().into_owned();
    assert!(out.contains(&format!("wrote {manifest}")), "{out}");

    let (code, out) = run(&["validate", "--route", "hr", &manifest]);
    assert_eq!(code, 0, "{out}");
    assert!(out.ends_with("valid (0 errors, 0 warnings)\n"), "{out}");
    let (code, out) = run(&["validate", "--route", "core", &manifest]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "error: routes: no route 'core': a deployment at /mcp/core would serve nothing (routes: hr)"
        ),
        "{out}"
    );

    let config = std::fs::read_to_string(dir.join("samconfig.toml")).unwrap();
    for line in [
        "stack_name = \"mcp-route-hr\"",
        "template_file = \"infra/route.yaml\"",
        "build_dir = \".aws-sam/mcp-route-hr/build\"",
        "template_file = \".aws-sam/mcp-route-hr/build/template.yaml\"",
        "s3_prefix = \"mcp-route-hr\"",
        r#"parameter_overrides = "RouteKey=\"hr\" EnvironmentStack=\"mcp-gateway\" ManifestBucket=\"team-manifests\" ManifestRevision=\"1\"""#,
    ] {
        assert!(config.lines().any(|l| l == line), "{line} in {config}");
    }
}

#[test]
fn m1_validate_route_accepts_a_single_route_manifest_and_refuses_a_bad_key() {
    let path = temp_manifest(
        "single.json",
        &json!({"manifestVersion": 1, "tools": [{"name": "t", "description": "d",
            "inputSchema": {"type": "object"}, "_meta": {"endpoint": "https://x/t"}}]})
        .to_string(),
    );
    let (code, out) = run(&["validate", "--route", "anything", &path]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = run(&["validate", "--json", "--route", "a/b", &path]);
    assert_eq!(code, 1, "{out}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        report["errors"][0]["message"],
        "--route 'a/b' is not a route key: 1-64 characters of [A-Za-z0-9._-]"
    );
}

#[test]
fn m1_new_route_refuses_keys_that_break_p3_and_folders_that_exist() {
    let base = temp_dir("refusals");
    let long = "k".repeat(65);
    for key in ["a/b", "has space", "한글", long.as_str(), ""] {
        let dir = base.join("new");
        let (code, out, err) = run_with_stderr(&[
            "new-route",
            key,
            "--bucket",
            "team-manifests",
            "--dir",
            &dir.to_string_lossy(),
        ]);
        assert_eq!(code, 1, "{key}: {out}{err}");
        assert!(err.contains("is not a route key"), "{err}");
        assert!(!dir.exists(), "nothing written for {key:?}");
    }
    // A valid route key that cannot name a stack needs --stack-name (CloudFormation, Lambda).
    let dir = base.join("dotted");
    let dir_text = dir.to_string_lossy().into_owned();
    let args = [
        "new-route",
        "hr.eu",
        "--bucket",
        "team-manifests",
        "--dir",
        &dir_text,
    ];
    let (code, _, err) = run_with_stderr(&args);
    assert_eq!(code, 1);
    assert!(
        err.contains("stack name 'mcp-route-hr.eu' is not a CloudFormation stack"),
        "{err}"
    );
    assert!(!dir.exists());
    let (code, _, err) =
        run_with_stderr(&[&args[..], &["--stack-name", "mcp-route-hr-eu"]].concat());
    assert_eq!(code, 0, "{err}");
    let config = std::fs::read_to_string(dir.join("samconfig.toml")).unwrap();
    assert!(
        config.contains("stack_name = \"mcp-route-hr-eu\""),
        "{config}"
    );
    assert!(config.contains("RouteKey=\\\"hr.eu\\\""), "{config}");
    for bad_bucket in ["Team_Manifests", "ab", "x-"] {
        let dir = base.join("bucket");
        let (code, _, err) = run_with_stderr(&[
            "new-route",
            "hr",
            "--bucket",
            bad_bucket,
            "--dir",
            &dir.to_string_lossy(),
        ]);
        assert_eq!(code, 1, "{bad_bucket}");
        assert!(err.contains("is not an S3 bucket name"), "{err}");
        assert!(!dir.exists());
    }
    let existing = base.join("existing");
    std::fs::create_dir_all(&existing).unwrap();
    std::fs::write(existing.join("keep.txt"), "mine").unwrap();
    let (code, _, err) = run_with_stderr(&[
        "new-route",
        "hr",
        "--bucket",
        "team-manifests",
        "--dir",
        &existing.to_string_lossy(),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("exists; choose another folder with --dir"),
        "{err}"
    );
    let entries: Vec<_> = std::fs::read_dir(&existing).unwrap().collect();
    assert_eq!(entries.len(), 1, "the existing folder is left as it was");
    assert_eq!(
        std::fs::read_to_string(existing.join("keep.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn m1_mcp_local_serves_a_scaffolded_route_at_its_path() {
    use std::process::Stdio;

    let dir = temp_dir("serve").join("payroll");
    let (code, out, err) = run_with_stderr(&[
        "new-route",
        "payroll",
        "--bucket",
        "team-manifests",
        "--dir",
        &dir.to_string_lossy(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let manifest = dir.join("manifest.json");
    let mut child = Command::new(mcp_local_binary())
        .args([
            "--listen",
            "127.0.0.1:0",
            "--sample-tool-service",
            "127.0.0.1:0",
        ])
        .env(
            "MCP_REGISTRY_SOURCE",
            format!("file:{}", manifest.display()),
        )
        .env("MCP_ENDPOINT_PATH", "/mcp/payroll")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcp-local starts");
    let endpoint = printed_endpoint(&mut child);
    let output = Command::new("curl")
        .args([
            "-s",
            &endpoint,
            "-H",
            "Content-Type: application/json",
            "-H",
            "MCP-Protocol-Version: 2025-11-25",
            "-d",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        ])
        .output()
        .expect("curl runs");
    let _ = child.kill();
    let _ = child.wait();
    assert!(endpoint.ends_with("/mcp/payroll"), "{endpoint}");
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        list["result"]["tools"][0]["name"], "lookup_record",
        "{list}"
    );
}

/// CONTRACT M5: an `env:` secret reference is an error in the `prod` profile only.
#[test]
fn m5_env_secret_references_are_errors_in_prod() {
    let path = temp_manifest(
        "env-secret.json",
        &json!({"tools": [{"name": "keyed", "description": "d",
                           "inputSchema": {"type": "object"},
                           "_meta": {"endpoint": "https://x/s",
                                     "auth": {"type": "apiKey", "in": "header",
                                              "name": "X-Api-Key", "secret": "env:TOOL_KEY"}}}]})
        .to_string(),
    );
    let (code, out) = run(&["validate", &path]);
    assert_eq!(code, 0, "{out}");
    assert!(out.ends_with(": valid (0 errors, 0 warnings)\n"), "{out}");
    let (code, out) = run(&["validate", "--profile", "prod", &path]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("error: tools[0]._meta.auth.secret: env: references are read only by mcp-local and fail the load on Lambda; use a Secrets Manager or SSM ARN in prod\n"),
        "{out}"
    );
}

/// CONTRACT M5: an `env:` REF naming an `AWS_` variable is refused in every profile.
#[test]
fn m5_env_secret_references_to_aws_variables_are_refused() {
    for name in [
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "aws_secret_access_key",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    ] {
        let path = temp_manifest(
            &format!("env-aws-{name}.json"),
            &json!({"tools": [{"name": "keyed", "description": "d",
                               "inputSchema": {"type": "object"},
                               "_meta": {"endpoint": "https://x/s",
                                         "auth": {"type": "apiKey", "in": "header",
                                                  "name": "X-Api-Key",
                                                  "secret": format!("env:{name}")}}}]})
            .to_string(),
        );
        let (code, out) = run(&["validate", &path]);
        assert_eq!(code, 1, "{out}");
        assert!(
            out.contains("error: tools[0]._meta.auth.secret: must not name one of the gateway's own variables (AWS_, OTEL_ or MCP_): they hold its AWS credentials, its exporter's headers and its settings, which no Tool Service may receive\n"),
            "{out}"
        );
    }
}

/// A malformed `MCP_MAX_RESPONSE_BYTES` is an error said as the gateway says it.
#[test]
fn t2_a_malformed_response_limit_is_a_sentence() {
    let path = temp_manifest(
        "limit-sentence.json",
        &json!({"tools": [{"name": "t", "description": "d", "inputSchema": {"type": "object"},
                           "_meta": {"endpoint": "https://x/s"}}]})
        .to_string(),
    );
    let (code, out) = run_with_limit(&["validate", &path], Some("abc"));
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "error: MCP_MAX_RESPONSE_BYTES: 'abc' is not a whole number from 1 to {}\n",
            usize::MAX
        )),
        "{out}"
    );
}

/// `validate` with `MCP_MAX_RESPONSE_BYTES` set to `limit` (or unset).
fn run_with_limit(args: &[&str], limit: Option<&str>) -> (i32, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-manifest"));
    command.args(args).env_remove("MCP_MAX_RESPONSE_BYTES");
    if let Some(limit) = limit {
        command.env("MCP_MAX_RESPONSE_BYTES", limit);
    }
    let output = command.output().expect("mcp-manifest runs");
    (
        output.status.code().expect("exit code"),
        String::from_utf8(output.stdout).unwrap(),
    )
}

#[test]
fn t2_a_tool_whose_list_entry_fits_on_no_page_is_an_error() {
    let description = "긴 설명 ".repeat(700);
    let path = temp_manifest(
        "big-entry.json",
        &json!({"tools": [{"name": "wordy", "description": description,
                           "inputSchema": {"type": "object"},
                           "_meta": {"endpoint": "https://x/s"}}]})
        .to_string(),
    );
    // The entry as the gateway writes it: the manifest's text of the schema, serde_json's of
    // the rest (7,765 bytes: the Korean text is UTF-8, not escaped).
    let entry = json!({"name": "wordy", "description": description,
                       "inputSchema": {"type": "object"}})
    .to_string()
    .len();
    // A single-route manifest's serverInfo as JSON strings: "mcp-gateway", "mcp-gateway",
    // "0.0.0".
    let envelope = 2048 + 2 * "\"mcp-gateway\"".len() + "\"0.0.0\"".len();
    // Under the default limit (5 MiB) and a limit it fits, valid.
    for limit in [None, Some("12288")] {
        let (code, out) = run_with_limit(&["validate", &path], limit);
        assert_eq!(code, 0, "{out}");
    }
    let (code, out) = run_with_limit(&["validate", &path], Some("6144"));
    assert_eq!(code, 1, "{out}");
    let room = 6144 - envelope;
    assert!(
        out.contains(&format!(
            "error: tool 'wordy': its tools/list entry is {entry} bytes, more than a page holds \
             ({room} bytes: MCP_MAX_RESPONSE_BYTES 6144 less {envelope} for the response around it)\n"
        )),
        "{out}"
    );
    assert!(out.ends_with(": invalid (1 errors, 0 warnings)\n"), "{out}");
}

#[test]
fn k1_validate_checks_task_tools() {
    let good = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../manifests/sample-tasks.json"
    );
    let (code, out) = run(&["validate", good]);
    assert_eq!(code, 0, "{out}");
    let path = temp_manifest(
        "tasks.json",
        &json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": [
            {"name": "a", "inputSchema": {"type": "object"}, "_meta": {
                "endpoint": "arn:aws:lambda:eu-west-1:123456789012:function:report",
                "task": {"support": "optional"}}},
            {"name": "b", "inputSchema": {"type": "object"}, "_meta": {
                "endpoint": "https://reports.example/b", "task": {"support": "sometimes"}}}
        ]}]})
        .to_string(),
    );
    let (code, out) = run(&["validate", &path]);
    assert_eq!(code, 1, "{out}");
    for line in [
        "error: routes[0].tools[0]._meta.task: does not apply to a Lambda function tool yet: a task needs an HTTP Tool Service that answers 202 Accepted with a status Location",
        "error: routes[0].tools[1]._meta.task.support: must be \"optional\" or \"required\"",
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line:?} in\n{out}");
    }
}
