// Running the official MCP conformance suite against the interop route and reading what it
// wrote: shared by node/conformance.test.mjs (0.1.x, 2025-11-25) and
// node/conformance-2026.test.mjs (0.2.0-alpha, 2026-07-28).

import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

/**
 * A baseline's entries with their reasons (`  - scenario # reason`, or `  - scenario:check-id #
 * reason` for one check of a scenario): entry → reason.
 */
export async function readBaseline(file) {
  const entries = new Map();
  for (const line of (await readFile(file, "utf8")).split("\n")) {
    const match = /^\s+-\s+([a-z0-9-]+(?::[a-z0-9-]+)?)\s*(?:#\s*(.*))?$/.exec(line);
    if (match) entries.set(match[1], match[2] ?? "");
  }
  return entries;
}

/**
 * Runs `node <suite> server --url <url> <args…> --expected-failures <baseline> --output-dir
 * <outputDir>`; resolves to `{ code, stdout, stderr }` (never rejects).
 */
export function runSuite(suite, { url, args, baseline, outputDir, timeoutMs }) {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        suite,
        "server",
        "--url",
        url,
        ...args,
        "--expected-failures",
        baseline,
        "--output-dir",
        outputDir,
      ],
      { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Each scenario's checks, from `<outputDir>/server-<scenario>-<timestamp>/checks.json`. */
export async function scenarioChecks(outputDir) {
  const checks = new Map();
  for (const dir of await readdir(outputDir)) {
    const match = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(dir);
    if (!match) continue;
    checks.set(
      match[1],
      JSON.parse(await readFile(path.join(outputDir, dir, "checks.json"), "utf8")),
    );
  }
  return checks;
}
