//! The `mcp-manifest validate` command: exit codes 0 valid / 1 invalid / 2 unreachable, text and
//! `--json` output, portability warnings (CONTRACT R5).

use std::process::Command;

use serde_json::{Value, json};

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
        "error: routes[0].tools[1]._meta.endpoint: must be an absolute http(s) URL",
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
