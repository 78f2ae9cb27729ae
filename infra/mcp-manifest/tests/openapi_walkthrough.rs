//! The OpenAPI walk-through of docs/routes.md, end to end with real parts (CONTRACT M3, X9): the
//! published Petstore document imported by the real `mcp-manifest`, served by the real
//! `mcp-local`, whose sample Tool Service implements a few Petstore operations on loopback; the
//! guide's own commands are run, and further operations reach that REST service through the
//! gateway.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};
use support::{mcp_local_binary, printed_endpoint};

mod support;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// docs/routes.md, with the `openapi` walk-through.
const ROUTES_GUIDE: &str = include_str!("../../../docs/routes.md");
/// infra/README.md, with the `openapi-secured` walk-through.
const INFRA_README: &str = include_str!("../../README.md");

/// The fenced blocks of `language` between the `<!-- marker:start -->` and `<!-- marker:end -->`
/// comments of `guide`, in order.
fn blocks(guide: &str, marker: &str, language: &str) -> Vec<String> {
    let start = guide
        .find(&format!("<!-- {marker}:start -->"))
        .expect("start marker");
    let end = guide
        .find(&format!("<!-- {marker}:end -->"))
        .expect("end marker");
    let fence = format!("```{language}\n");
    let mut blocks = Vec::new();
    let mut rest = &guide[start..end];
    while let Some(open) = rest.find(&fence) {
        let after = &rest[open + fence.len()..];
        let close = after.find("```").expect("closing fence");
        blocks.push(after[..close].to_string());
        rest = &after[close + 3..];
    }
    blocks
}

/// The fenced blocks of `language` of docs/routes.md's OpenAPI walk-through.
fn guide_blocks(language: &str) -> Vec<String> {
    blocks(ROUTES_GUIDE, "openapi", language)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn bash(script: &str) -> std::process::Output {
    Command::new("bash")
        .args(["-c", script])
        .current_dir(workspace_root())
        .output()
        .expect("bash runs")
}

/// `mcp-local` started as the guide's second block says, with its ports replaced.
struct Server {
    child: Child,
    endpoint: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(block: &str, sample_port: u16) -> Server {
    let line = block.trim();
    let command = line
        .strip_suffix("cargo run -p mcp-local")
        .expect("the block starts cargo run -p mcp-local");
    let mut server = Command::new(mcp_local_binary());
    server
        .current_dir(workspace_root())
        .args([
            "--listen",
            "127.0.0.1:0",
            "--sample-tool-service",
            &format!("127.0.0.1:{sample_port}"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (name, _) in std::env::vars() {
        if name.starts_with("MCP_") {
            server.env_remove(name);
        }
    }
    // The secured walk-through's key is set by its block alone.
    server.env_remove("PETSTORE_API_KEY");
    for assignment in command.split_whitespace() {
        let (name, value) = assignment.split_once('=').expect("NAME=value");
        server.env(name, value);
    }
    let mut child = server.spawn().expect("mcp-local starts");
    let endpoint = printed_endpoint(&mut child);
    Server { child, endpoint }
}

/// A `tools/call` through the gateway, as the guide's curl does it.
fn call(server: &Server, name: &str, arguments: &Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": name, "arguments": arguments}});
    let output = Command::new("curl")
        .args([
            "-s",
            &server.endpoint,
            "-H",
            "Content-Type: application/json",
            "-H",
            "Accept: application/json, text/event-stream",
            "-H",
            "MCP-Protocol-Version: 2025-11-25",
            "-d",
            &body.to_string(),
        ])
        .output()
        .expect("curl runs");
    serde_json::from_slice(&output.stdout).expect("a JSON-RPC answer")
}

fn text_of(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"].as_str().unwrap()
}

#[test]
fn m3_x9_guide_openapi_walkthrough_imports_serves_and_calls_the_petstore() {
    // The walk-through's document is the published one, byte for byte.
    let published = workspace_root()
        .join("tests/openapi/node_modules/@readme/oas-examples/3.1/json/petstore.json");
    assert_eq!(
        std::fs::read(workspace_root().join("infra/openapi/petstore.json")).unwrap(),
        std::fs::read(&published)
            .expect("the OpenAPI test documents are installed: run ./tests/run.sh"),
    );
    let sh = guide_blocks("sh");
    assert_eq!(sh.len(), 3, "import, serve, curl");
    let sample_port = free_port();
    let out_dir =
        std::env::temp_dir().join(format!("mcp-openapi-walkthrough-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).unwrap();
    let manifest = out_dir.join("petstore.json");

    // 1. The import, with the built binary, the sample Tool Service's port and a temp output.
    let stderr = run_import(&sh[0], sample_port, &manifest);
    // Every line the guide shows (but the elision) is printed as shown.
    let shown = guide_blocks("text");
    for line in shown[0].lines().filter(|l| *l != "…") {
        let line = line.replace("127.0.0.1:3001", &format!("127.0.0.1:{sample_port}"));
        assert!(
            stderr.lines().any(|l| l == line),
            "missing {line:?} in\n{stderr}"
        );
    }
    let validate = Command::new(env!("CARGO_BIN_EXE_mcp-manifest"))
        .args([
            "validate",
            "--route",
            "petstore",
            &manifest.to_string_lossy(),
        ])
        .output()
        .unwrap();
    assert!(
        validate.status.success(),
        "{}",
        String::from_utf8_lossy(&validate.stdout)
    );

    // 2. The server, on the imported manifest.
    let serve = sh[1].replace(
        "file:petstore.json",
        &format!("file:{}", manifest.display()),
    );
    let server = start_server(&serve, sample_port);
    assert!(
        server.endpoint.ends_with("/mcp/petstore"),
        "{}",
        server.endpoint
    );

    // 3. The guide's curl, and its answer as the guide shows it (but `searchTime`).
    let base = server.endpoint.trim_end_matches("/mcp/petstore");
    let curl = bash(&sh[2].replace("http://127.0.0.1:3000", base));
    assert!(curl.status.success());
    let mut answer: Value = serde_json::from_slice(&curl.stdout).unwrap();
    let mut expected: Value =
        serde_json::from_str(guide_blocks("json")[0].trim()).expect("the guide's answer");
    for value in [&mut answer, &mut expected] {
        assert!(value["result"]["content"][0]["_meta"]["searchTime"].is_u64());
        value["result"]["content"][0]["_meta"]["searchTime"] = json!(0);
    }
    assert_eq!(answer, expected);

    // More operations reach the REST service: a repeated query, a JSON body, a header.
    let found = call(
        &server,
        "findPetsByStatus",
        &json!({"status": ["sold", "pending"]}),
    );
    let pets: Value = serde_json::from_str(text_of(&found)).unwrap();
    assert_eq!(
        pets,
        json!([{"id": 2, "name": "바둑이", "category": {"id": 1, "name": "Dogs"},
                             "photoUrls": [], "tags": [], "status": "sold"}])
    );
    let added = call(
        &server,
        "addPet",
        &json!({"name": "Mimi", "photoUrls": [], "status": "pending"}),
    );
    assert_eq!(added["result"]["isError"], false, "{added}");
    let pet: Value = serde_json::from_str(text_of(&added)).unwrap();
    assert_eq!(
        (pet["id"].clone(), pet["name"].clone()),
        (json!(4), json!("Mimi"))
    );
    let found = call(&server, "getPetById", &json!({"petId": 4}));
    assert!(
        text_of(&found).contains("\"status\":\"pending\""),
        "{found}"
    );
    // The schema is checked before the call (X2): a missing photoUrls never reaches the service.
    let refused = call(&server, "addPet", &json!({"name": "Nope"}));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(
        refused["error"]["message"],
        "Invalid params: 'photoUrls' is required"
    );
    // deletePet's api_key header parameter travels as a header; without it the service says 401.
    let denied = call(&server, "deletePet", &json!({"petId": 4}));
    assert_eq!(denied["result"]["isError"], true);
    assert!(text_of(&denied).contains("HTTP 401"), "{denied}");
    let deleted = call(
        &server,
        "deletePet",
        &json!({"petId": 4, "api_key": "special-key"}),
    );
    assert_eq!(deleted["result"]["isError"], false, "{deleted}");
    let gone = call(&server, "getPetById", &json!({"petId": 4}));
    assert_eq!(gone["result"]["isError"], true);
    assert!(text_of(&gone).contains("HTTP 404") && text_of(&gone).contains("Pet not found"));
    let _ = std::fs::remove_dir_all(&out_dir);
}

/// The import block `block` run with the built binary, `127.0.0.1:3001` on `sample_port` and the
/// output in `manifest`: its standard error.
fn run_import(block: &str, sample_port: u16, manifest: &Path) -> String {
    let import = block
        .replace(
            "cargo run -q -p mcp-manifest --",
            env!("CARGO_BIN_EXE_mcp-manifest"),
        )
        .replace("127.0.0.1:3001", &format!("127.0.0.1:{sample_port}"))
        .replace(
            "--output petstore.json",
            &format!("--output {}", manifest.display()),
        );
    let output = bash(&import);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{import}\n{stderr}");
    stderr
}

/// `mcp-manifest validate --profile prod --json` of `manifest`: whether it is valid, and its
/// errors' and warnings' messages.
fn prod_report(manifest: &Path) -> (bool, Vec<String>) {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-manifest"))
        .args(["validate", "--route", "petstore", "--profile", "prod"])
        .arg(manifest)
        .arg("--json")
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    let messages = ["errors", "warnings"]
        .iter()
        .flat_map(|kind| report[kind].as_array().cloned().unwrap_or_default())
        .map(|w| w["message"].as_str().unwrap().to_string())
        .collect();
    (report["valid"] == true, messages)
}

#[test]
fn m3_m5_x12_infra_readme_secured_openapi_walkthrough_presents_the_key() {
    let sh = blocks(INFRA_README, "openapi-secured", "sh");
    assert_eq!(sh.len(), 4, "import, serve, curl, import with an ARN");
    let sample_port = free_port();
    let out_dir = std::env::temp_dir().join(format!(
        "mcp-openapi-secured-walkthrough-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&out_dir).unwrap();
    let manifest = out_dir.join("petstore.json");

    // 1. The import binds the api_key scheme: getInventory's _meta.auth is the guide's.
    let stderr = run_import(&sh[0], sample_port, &manifest);
    assert_eq!(
        stderr.trim(),
        "wrote 1 tool for route 'petstore' (skipped 0)"
    );
    let written: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    let tools = written["routes"][0]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "{written}");
    assert_eq!(tools[0]["name"], "getInventory");
    let auth: Value =
        serde_json::from_str(blocks(INFRA_README, "openapi-secured", "json")[0].trim()).unwrap();
    assert_eq!(tools[0]["_meta"]["auth"], auth);
    // M5: an env: reference is an error in the prod profile.
    let (valid, messages) = prod_report(&manifest);
    assert!(!valid, "{messages:?}");
    assert!(messages.iter().any(|w| w.contains("env:")), "{messages:?}");

    // 2. Served with the key in the environment, the guide's curl answers as the guide shows.
    let serve = sh[1].replace(
        "file:petstore.json",
        &format!("file:{}", manifest.display()),
    );
    let mut answer = {
        let server = start_server(&serve, sample_port);
        let base = server.endpoint.trim_end_matches("/mcp/petstore");
        let curl = bash(&sh[2].replace("http://127.0.0.1:3000", base));
        assert!(curl.status.success());
        serde_json::from_slice::<Value>(&curl.stdout).unwrap()
    };
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let mut expected: Value =
        serde_json::from_str(blocks(INFRA_README, "openapi-secured", "json")[1].trim())
            .expect("the guide's answer");
    for value in [&mut answer, &mut expected] {
        assert!(value["result"]["content"][0]["_meta"]["searchTime"].is_u64());
        value["result"]["content"][0]["_meta"]["searchTime"] = json!(0);
    }
    assert_eq!(answer, expected);

    // 3. Without the variable: the guide's isError text, and the service never called.
    let without = serve.replace("PETSTORE_API_KEY=special-key ", "");
    assert_ne!(without, serve);
    let server = start_server(&without, sample_port);
    let refused = call(&server, "getInventory", &json!({}));
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert_eq!(
        text_of(&refused),
        blocks(INFRA_README, "openapi-secured", "text")[0].trim()
    );
    drop(server);

    // 4. The AWS import: the ARN is the reference, and the prod profile has nothing to say.
    let arn_manifest = out_dir.join("petstore-arn.json");
    run_import(&sh[3], sample_port, &arn_manifest);
    let written: Value = serde_json::from_slice(&std::fs::read(&arn_manifest).unwrap()).unwrap();
    assert_eq!(
        written["routes"][0]["tools"][0]["_meta"]["auth"]["secret"],
        "arn:aws:secretsmanager:eu-west-1:111122223333:secret:petstore/api-key-AbCdEf"
    );
    assert_eq!(prod_report(&arn_manifest), (true, Vec::<String>::new()));
    let _ = std::fs::remove_dir_all(&out_dir);
}
