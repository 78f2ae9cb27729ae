// The official MCP conformance suite (@modelcontextprotocol/conformance, `server --suite all`)
// against the interop route of the real mcp-local binary, whose MCP-native Tool Service serves
// the suite's fixture tools (CONTRACT L1, L4, T1, X5, X6, H5, H6; MCP-native results). The
// suite runs with the strict baseline conformance/baseline.yml; every scenario it does not list
// must pass with at least one successful check and no failed one.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { readBaseline, runSuite, scenarioChecks } from "../lib/conformance.mjs";
import { startInterop } from "../lib/gateway.mjs";

const require = createRequire(import.meta.url);
const SUITE = require.resolve("@modelcontextprotocol/conformance/dist/index.js");
const SUITE_VERSION = require("@modelcontextprotocol/conformance/package.json").version;
const BASELINE = fileURLToPath(new URL("../conformance/baseline.yml", import.meta.url));

/** The scenarios that must pass: everything a stateless JSON-only tools gateway offers. */
const MUST_PASS = [
  "server-initialize",
  "ping",
  "tools-list",
  "tools-call-simple-text",
  "tools-call-image",
  "tools-call-audio",
  "tools-call-embedded-resource",
  "tools-call-mixed-content",
  "tools-call-error",
  "json-schema-2020-12",
  "dns-rebinding-protection",
];

const baseline = () => readBaseline(BASELINE);

let gateways;
let outputDir;
let run;

before(async () => {
  gateways = await startInterop();
  outputDir = await mkdtemp(path.join(os.tmpdir(), "mcp-conformance-"));
  run = await runSuite(SUITE, {
    url: gateways.interopUrl,
    args: ["--suite", "all"],
    baseline: BASELINE,
    outputDir,
    timeoutMs: 300_000,
  });
});

after(async () => {
  await gateways?.stop();
  if (outputDir) await rm(outputDir, { recursive: true, force: true });
});


describe(`conformance suite ${SUITE_VERSION} --suite all`, () => {
  test("the suite passes against its strict baseline", () => {
    const summary = run.stdout.slice(run.stdout.indexOf("=== SUMMARY ==="));
    assert.equal(run.code, 0, `${summary}\n${run.stderr}`);
    assert.match(run.stdout, /Baseline check passed: all failures are expected\./);
  });

  test("every baseline entry gives its reason", async () => {
    const entries = await baseline();
    assert.ok(entries.size > 0);
    for (const [scenario, reason] of entries) {
      assert.ok(reason.length > 10, `${scenario} has no reason`);
      assert.ok(!MUST_PASS.includes(scenario), `${scenario} must pass, not be excused`);
    }
  });

  test("the suite ran exactly the must-pass scenarios and the baseline's", async () => {
    const ran = [...(await scenarioChecks(outputDir)).keys()].sort();
    const expected = [...MUST_PASS, ...(await baseline()).keys()].sort();
    assert.deepEqual(ran, expected);
  });

  for (const scenario of MUST_PASS) {
    test(`${scenario} passes with no failed or warning check`, async () => {
      const checks = (await scenarioChecks(outputDir)).get(scenario);
      assert.ok(checks, `${scenario} did not run`);
      const verdicts = checks.filter((c) => c.status !== "INFO");
      assert.ok(
        verdicts.some((c) => c.status === "SUCCESS"),
        `${scenario} has no successful check: ${JSON.stringify(checks)}`,
      );
      const bad = verdicts.filter((c) => c.status !== "SUCCESS");
      assert.deepEqual(bad, [], `${scenario}: ${JSON.stringify(bad)}`);
    });
  }
});
