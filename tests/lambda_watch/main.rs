//! The real function binaries under the Lambda Runtime API of `cargo lambda watch`, reached
//! through its HTTP endpoint on a free loopback port (CONTRACT P9, L1, L2, L3, T1, X5, X7, H1):
//! `initialize` → `notifications/initialized` → `tools/list` → `tools/call` on the fixed
//! deployment (`mcp-core`) and on a route of the dynamic one (`mcp-router`), against a real Tool
//! Service on loopback.
//!
//! `cargo-lambda` comes from `$CARGO_LAMBDA`, the repository's `.venv` (which `tests/run.sh`
//! fills) or `PATH`.

use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod lambda_tools;
mod relay;

use gateway_tests::manifest;
use serde_json::{Value, json};
use wiremock::matchers::{body_json, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The first invocation of each function may compile it: allow for a cold build on 2 cores.
const FIRST_ANSWER: Duration = Duration::from_mins(20);
const LATER_ANSWER: Duration = Duration::from_mins(1);

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn cargo_lambda() -> PathBuf {
    if let Some(path) = std::env::var_os("CARGO_LAMBDA") {
        return PathBuf::from(path);
    }
    let venv = workspace_root().join(".venv/bin/cargo-lambda");
    if venv.exists() {
        return venv;
    }
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join("cargo-lambda"))
                .find(|candidate| candidate.exists())
        })
        .unwrap_or_else(|| {
            panic!("cargo-lambda is not installed: run ./tests/run.sh, which installs it in .venv")
        })
}

/// Removes from `command` the variables `cargo test` sets for this test (`CARGO_MANIFEST_DIR`,
/// `CARGO_PKG_*`, `OUT_DIR` …), which would reach the build scripts that watch them and rebuild
/// half the dependency tree on every run, and the gateway's `MCP_*` settings.
fn without_test_env(command: &mut Command) {
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let from_cargo_test = [
            "CARGO_MANIFEST_",
            "CARGO_PKG_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
            "CARGO_PRIMARY_PACKAGE",
            "CARGO_TARGET_TMPDIR",
            "CARGO_RUSTC_CURRENT_DIR",
            "OUT_DIR",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix));
        if name.starts_with("MCP_") || from_cargo_test {
            command.env_remove(name.as_ref());
        }
    }
}

/// `cargo lambda watch` on a free loopback port; stopped (with the functions it started) on drop.
struct Watch {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Watch {
    fn start(env_file: &Path, log: PathBuf) -> Self {
        Self::start_with_env(env_file, log, &[])
    }

    /// As [`Watch::start`], with `extra_env` set for `cargo lambda watch` itself (and so for the
    /// `cargo run` of each function it starts).
    fn start_with_env(env_file: &Path, log: PathBuf, extra_env: &[(String, PathBuf)]) -> Self {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let output = File::create(&log).expect("log file");
        let mut command = Command::new(cargo_lambda());
        command
            .args(["lambda", "watch", "--ignore-changes", "--invoke-address"])
            .arg("127.0.0.1")
            .arg("--invoke-port")
            .arg(port.to_string())
            .arg("--env-file")
            .arg(env_file)
            .current_dir(workspace_root())
            .stdin(Stdio::null())
            .stdout(output.try_clone().unwrap())
            .stderr(output)
            // Its own process group, so that stopping it stops the functions it spawned.
            .process_group(0);
        without_test_env(&mut command);
        for (name, value) in extra_env {
            command.env(name, value);
        }
        let child = command.spawn().expect("cargo lambda watch starts");
        let mut watch = Self { child, port, log };
        let until = Instant::now() + Duration::from_mins(1);
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if let Ok(Some(status)) = watch.child.try_wait() {
                panic!("cargo lambda watch exited ({status}):\n{}", watch.log());
            }
            assert!(
                Instant::now() < until,
                "cargo lambda watch is not listening:\n{}",
                watch.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        watch
    }

    fn url(&self, function: &str, public_path: &str) -> String {
        format!(
            "http://127.0.0.1:{}/lambda-url/{function}{public_path}",
            self.port
        )
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        for signal in ["-TERM", "-KILL"] {
            let _ = Command::new("kill").args([signal, "--", &group]).status();
            let until = Instant::now() + Duration::from_secs(5);
            while Instant::now() < until {
                if matches!(self.child.try_wait(), Ok(Some(_))) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

/// A scratch folder for the manifest, the variables and the emulator's log; removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Self {
        let path = std::env::temp_dir().join(format!("mcp-lambda-watch-{}", std::process::id()));
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One MCP client session against one function behind the emulator.
struct Session<'a> {
    watch: &'a Watch,
    client: reqwest::Client,
    url: String,
}

/// An answer read whole.
struct Answer {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}), HTTP {}: {}", self.status, self.body))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

impl Session<'_> {
    async fn send(
        &self,
        verb: reqwest::Method,
        body: Option<Value>,
        version: bool,
        wait: Duration,
    ) -> Answer {
        let mut request = self
            .client
            .request(verb, &self.url)
            .timeout(wait)
            .header("accept", "application/json, text/event-stream");
        if version {
            request = request.header("MCP-Protocol-Version", "2025-11-25");
        }
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let response = request
            .send()
            .await
            .unwrap_or_else(|e| panic!("{} did not answer: {e}\n{}", self.url, self.watch.log()));
        Answer {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            body: response.text().await.unwrap(),
        }
    }

    async fn post(&self, body: Value) -> Answer {
        self.send(reqwest::Method::POST, Some(body), true, LATER_ANSWER)
            .await
    }

    /// `initialize` (no version header, CONTRACT H4) then `notifications/initialized`; returns
    /// the `serverInfo`.
    async fn initialize(&self) -> Value {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "lambda-watch-test", "version": "1"}}});
        let answer = self
            .send(reqwest::Method::POST, Some(init), false, FIRST_ANSWER)
            .await;
        assert_eq!(answer.status, 200, "{}\n{}", answer.body, self.watch.log());
        assert_eq!(answer.header("content-type"), Some("application/json"));
        let session = answer.header("mcp-session-id").expect("L2 session id");
        assert!(uuid::Uuid::try_parse(session).is_ok(), "{session}");
        let body = answer.json();
        assert_eq!(body["id"], 1);
        assert_eq!(body["result"]["protocolVersion"], "2025-11-25");

        let notified = self
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(notified.status, 202, "{}", notified.body);
        assert!(notified.body.is_empty(), "{}", notified.body);
        body["result"]["serverInfo"].clone()
    }

    async fn tool_names(&self) -> Vec<String> {
        let answer = self
            .post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
            .await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        let body = answer.json();
        let tools = body["result"]["tools"].as_array().expect("tools");
        for tool in tools {
            assert!(tool.get("_meta").is_none(), "T1: no private fields: {tool}");
        }
        tools
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }

    async fn call(&self, name: &str, arguments: Value) -> Value {
        let answer = self
            .post(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": name, "arguments": arguments}}))
            .await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        let body = answer.json();
        assert_eq!(body["id"], 3, "{body}");
        body["result"].clone()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn function_binaries_serve_an_mcp_session_under_cargo_lambda_watch() {
    let tool_service = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/search"))
        .and(body_json(json!({"query": "vacation"})))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([{"id": "DOC-1"}])))
        .mount(&tool_service)
        .await;
    Mock::given(method("POST"))
        .and(path("/leave"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"days": 12})))
        .mount(&tool_service)
        .await;

    let scratch_dir = Scratch::new();
    let scratch = scratch_dir.0.as_path();
    let manifest_path = scratch.join("manifest.json");
    std::fs::write(&manifest_path, manifest(&tool_service.uri()).to_string()).unwrap();
    let env_file = scratch.join("functions.env");
    std::fs::write(
        &env_file,
        format!(
            "MCP_REGISTRY_SOURCE=file:{}\nRUST_LOG=info\n",
            manifest_path.display()
        ),
    )
    .unwrap();
    let watch = Watch::start(&env_file, scratch.join("watch.log"));
    mcp_gateway::tls::install_crypto_provider();
    let client = reqwest::Client::new();

    // The fixed deployment, `/mcp/core`.
    let core = Session {
        watch: &watch,
        client: client.clone(),
        url: watch.url("mcp-core", "/mcp/core"),
    };
    assert_eq!(core.initialize().await["name"], "core-tools");
    let names = core.tool_names().await;
    assert!(names.contains(&"search_documents".to_string()), "{names:?}");
    let result = core
        .call("search_documents", json!({"query": "vacation"}))
        .await;
    // X7: the emulator's deadline header is not a real deadline, so the call is not cut short.
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["content"][0]["text"], r#"[{"id":"DOC-1"}]"#);

    // H1 through the emulator's HTTP conversion: GET is 405 with `Allow: POST`.
    let probe = core
        .send(reqwest::Method::GET, None, true, LATER_ANSWER)
        .await;
    assert_eq!(probe.status, 405, "{}", probe.body);
    assert_eq!(probe.header("allow"), Some("POST"));

    // The dynamic deployment, `/mcp/{routeKey}`, with a trailing slash (CONTRACT P6).
    let hr = Session {
        watch: &watch,
        client,
        url: watch.url("mcp-router", "/mcp/hr/"),
    };
    assert_eq!(hr.initialize().await["name"], "hr-tools");
    assert_eq!(hr.tool_names().await, ["leave_balance"]);
    let result = hr.call("leave_balance", json!({})).await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["content"][0]["text"], r#"{"days":12}"#);
}
