//! The real `mcp-local` binary on free loopback ports (sample Tool Service included), with its
//! JSON log lines collected: shared by this crate's end-to-end tests.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A running `mcp-local` with its log lines collected.
pub(crate) struct LocalServer {
    /// The server process.
    pub(crate) child: Child,
    /// `http://127.0.0.1:<port>`.
    pub(crate) base: String,
    /// Every line the server wrote to standard output (JSON log lines).
    pub(crate) logs: Arc<Mutex<Vec<String>>>,
}

impl LocalServer {
    pub(crate) fn start(env: &[(&str, &str)]) -> Self {
        Self::start_with_args(&[], env)
    }

    pub(crate) fn start_with_args(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut all = vec!["--sample-tool-service", "127.0.0.1:0"];
        all.extend_from_slice(args);
        Self::spawn(&all, env)
    }

    /// `mcp-local --listen 127.0.0.1:0 --log-json` with exactly `args` after them.
    pub(crate) fn spawn(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-local"));
        command
            .args(["--listen", "127.0.0.1:0", "--log-json"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // The server sees only the MCP_ and AWS_ variables the test gives it.
        for (name, _) in std::env::vars() {
            if name.starts_with("MCP_") || name.starts_with("AWS_") {
                command.env_remove(name);
            }
        }
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("mcp-local starts");
        let logs = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().unwrap();
        let sink = Arc::clone(&logs);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let base = loop {
            let line = rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .expect("mcp-local prints its endpoint");
            if let Some(rest) = line.strip_prefix("mcp-local: MCP endpoint http://") {
                let addr = rest.split('/').next().unwrap();
                break format!("http://{addr}");
            }
        };
        Self { child, base, logs }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The usage events logged so far (JSON lines, target `mcp_gateway::usage`) that `keep`
    /// keeps, in order, waiting up to 10 s for `count` of them (the serving threads write
    /// their log lines when idle).
    pub(crate) fn usage_events_matching(
        &self,
        count: usize,
        keep: impl Fn(&Value) -> bool,
    ) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let events: Vec<Value> = self
                .logs
                .lock()
                .unwrap()
                .iter()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .filter(|e| e["target"] == "mcp_gateway::usage" && keep(e))
                .collect();
            if events.len() >= count || Instant::now() > deadline {
                return events;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A free loopback port (bound, then released).
#[allow(dead_code, reason = "not every test binary of this crate uses it")]
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A manifest (written to a temporary file, path returned) whose route `core` has the sample
/// asynchronous Tool Service's task tools at `origin` (CONTRACT K1): `export_report`
/// (`optional`, pollIntervalMs 200, ttlMs 600,000) and `export_report_now` (`required`,
/// pollIntervalMs 100, timeoutMs 5,000), both `POST /jobs/export_report`.
#[allow(dead_code, reason = "not every test binary of this crate uses it")]
pub(crate) fn task_manifest(origin: &str) -> std::path::PathBuf {
    let tool = |name: &str, task: Value| {
        serde_json::json!({
            "name": name,
            "description": "Builds a report of the given number of rows; takes a while.",
            "inputSchema": {"type": "object", "properties": {
                "rows": {"type": "integer", "minimum": 1},
                "seconds": {"type": "number", "minimum": 0},
                "outcome": {"enum": ["succeed", "fail"]}
            }, "required": ["rows"]},
            "_meta": {"version": "1.0.0", "endpoint": format!("{origin}/jobs/export_report"),
                      "timeoutMs": 5000, "task": task}
        })
    };
    let document = serde_json::json!({
        "manifestVersion": 1,
        "routes": [{
            "routeKey": "core",
            "server": {"name": "report-tools", "title": "Report tools", "version": "1.0.0"},
            "tools": [
                tool("export_report", serde_json::json!({"support": "optional", "ttlMs": 600_000, "pollIntervalMs": 200})),
                tool("export_report_now", serde_json::json!({"support": "required", "pollIntervalMs": 100})),
            ]
        }]
    });
    let path = std::env::temp_dir().join(format!(
        "mcp-local-tasks-{}-{}.json",
        std::process::id(),
        free_port()
    ));
    std::fs::write(&path, document.to_string()).expect("manifest written");
    path
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
