//! The sibling `mcp-local` binary for this crate's end-to-end tests: found (or built) next to
//! `mcp-manifest`, and the endpoint it prints when it starts.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

/// The `mcp-local` binary of this workspace's target folder, built when it is missing.
pub(crate) fn mcp_local_binary() -> PathBuf {
    let path = Path::new(env!("CARGO_BIN_EXE_mcp-manifest"))
        .with_file_name(format!("mcp-local{}", std::env::consts::EXE_SUFFIX));
    if !path.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "--quiet", "-p", "mcp-local", "--bin", "mcp-local"])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "cargo build -p mcp-local");
    }
    path
}

/// The MCP endpoint a started `mcp-local` (spawned with its stderr piped) prints, waiting up to
/// 30 s. Its stderr is read to the end on a thread of its own: a closed pipe would fail the
/// server's later writes.
pub(crate) fn printed_endpoint(child: &mut Child) -> String {
    let stderr = child.stderr.take().expect("stderr is piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(rest) = line.strip_prefix("mcp-local: MCP endpoint ") {
                let _ = tx.send(rest.split(' ').next().unwrap_or_default().to_string());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("mcp-local prints its endpoint")
}
