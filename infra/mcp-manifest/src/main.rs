//! `mcp-manifest validate SOURCE [--json]`: the load-time manifest checks of CONTRACT R5 as a
//! command for infra teams, plus portability warnings.
//!
//! Exit codes: `0` valid, `1` invalid (not JSON, or any R5 problem), `2` unreachable.

use std::process::ExitCode;
use std::time::Duration;

use std::fmt::Write as _;

use clap::{Parser, Subcommand};
use mcp_gateway::RegistrySource;
use mcp_gateway::build::source_for;
use mcp_gateway::registry::{
    ManifestProblem, RegistryError, compile_manifest, portability_warnings,
};
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
    },
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

async fn validate(source: &str, timeout: Duration, max_bytes: usize) -> Report {
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
    let document: Value = match serde_json::from_slice(&bytes) {
        Ok(document) => document,
        Err(error) => {
            report.errors.push(ManifestProblem {
                path: String::new(),
                message: format!("not JSON: {error}"),
            });
            return report;
        }
    };
    if let Err(problems) = compile_manifest(&document) {
        report.errors = problems;
    }
    report.warnings = portability_warnings(&document);
    report
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
        } => {
            let report = validate(&source, Duration::from_millis(timeout_ms), max_bytes).await;
            if json {
                println!("{}", report.to_json());
            } else {
                print!("{}", report.to_text());
            }
            ExitCode::from(report.exit_code())
        }
    }
}
