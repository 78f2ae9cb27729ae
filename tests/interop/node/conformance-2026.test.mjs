// The official MCP conformance suite's 0.2.0 line (npm alias `conformance-2`, `server
// --requirements 2026-07-28`: the frozen scenario set of protocol revision 2026-07-28, run on its
// stateless wire) against the interop route of the real mcp-local binary in the modern era
// (CONTRACT N, T1, X5, X6, H5, H6, K; MCP-native results). The route's MCP-native Tool Service
// serves the suite's fixture tools (its `json_schema_2020_12_tool` with the schema of this suite
// line, SEP-2106), `regional_search`, whose arguments carry `x-mcp-header` (SEP-2243), and the
// fixture tools of its tasks scenarios (tasks extension, SEP-2663) as an asynchronous job service
// (`202 Accepted` + status `Location`, CONTRACT K2) behind task tools (`_meta.task`).
//
// The suite runs with the strict baseline conformance/baseline-2026-07-28.yml. The suite itself
// judges only the scenarios the revision scores; this test holds every scenario it runs to the
// same rule, the unscored ones (pending, extension) included: a must-pass scenario passes with
// no failed or warning check but the ones the baseline names check by check (`scenario:check`),
// each of which must fail; a scenario the baseline names whole must fail; nothing else runs.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { readBaseline, runSuite, scenarioChecks } from "../lib/conformance.mjs";
import { startInterop } from "../lib/gateway.mjs";

const REVISION = "2026-07-28";
const require = createRequire(import.meta.url);
const SUITE = require.resolve("conformance-2/dist/index.js");
const SUITE_VERSION = require("conformance-2/package.json").version;
const BASELINE = fileURLToPath(new URL(`../conformance/baseline-${REVISION}.yml`, import.meta.url));

/**
 * The scenarios that must pass: everything a stateless JSON-only tools gateway offers in the
 * modern era. The suite runs but does not score `json-schema-2020-12`, `http-header-validation`
 * and `http-custom-header-server-validation` (`pending`: its own reference server cannot pass
 * them yet) nor the `tasks-*` ones (`extension`: the tasks extension, SEP-2663, CONTRACT K);
 * this test scores them, every check.
 */
const MUST_PASS = [
  "server-stateless",
  "tools-list",
  "tools-call-simple-text",
  "tools-call-image",
  "tools-call-audio",
  "tools-call-embedded-resource",
  "tools-call-mixed-content",
  "tools-call-error",
  "server-sse-multiple-streams",
  "dns-rebinding-protection",
  "caching",
  "input-required-result-unsupported-methods",
  "input-required-result-validate-input",
  "json-schema-2020-12",
  "http-header-validation",
  "http-custom-header-server-validation",
  "tasks-lifecycle",
  "tasks-capability-negotiation",
  "tasks-wire-fields",
  "tasks-request-state-removal",
  "tasks-request-headers",
  "tasks-dispatch-and-envelope",
  "tasks-required-task-error",
];

/**
 * Scenarios the suite runs whose every check it skips whatever the server does (its own harness
 * is pending), with the reason.
 */
const SKIPPED_BY_SUITE = new Map([
  [
    "tasks-status-notifications",
    "tasks extension: the suite skips it until its harness listens on subscriptions/listen",
  ],
]);

/**
 * The checks of must-pass scenarios that may be SKIPPED: each needs a capability the gateway
 * does not claim in server/discover, so the suite rightly reads it as not applicable.
 */
const SKIPPABLE = new Map([
  [
    "server-stateless:sep-2575-server-sends-subscription-ack",
    "no listChanged or subscribe capability: subscriptions/listen is not applicable",
  ],
  [
    "server-stateless:sep-2575-server-tags-subscription-id",
    "no listChanged or subscribe capability: subscriptions/listen is not applicable",
  ],
  [
    "server-stateless:sep-2575-server-honors-notification-filter",
    "no listChanged or subscribe capability: subscriptions/listen is not applicable",
  ],
  [
    "server-stateless:sep-2575-server-sends-prompts-list-changed-on-subscription",
    "no prompts.listChanged capability",
  ],
  [
    "server-stateless:sep-2575-server-sends-tools-list-changed-on-subscription",
    "tools.listChanged is false: the tool list of a snapshot never changes",
  ],
  [
    "caching:sep-2549-resources-read-caching-hints",
    "no resources: nothing to read, so resources/read is not exercised",
  ],
]);

const baseline = () => readBaseline(BASELINE);

/** The baseline's whole-scenario entries and its per-check entries, by scenario. */
async function baselineParts() {
  const scenarios = new Set();
  const checks = new Map();
  for (const entry of (await baseline()).keys()) {
    const [scenario, check] = entry.split(":");
    if (check === undefined) {
      scenarios.add(scenario);
    } else {
      if (!checks.has(scenario)) checks.set(scenario, new Set());
      checks.get(scenario).add(check);
    }
  }
  return { scenarios, checks };
}

let gateways;
let outputDir;
let run;

before(async () => {
  gateways = await startInterop({ jsonSchemaFixture: "sep-2106" });
  outputDir = await mkdtemp(path.join(os.tmpdir(), "mcp-conformance-2026-"));
  run = await runSuite(SUITE, {
    url: gateways.interopUrl,
    args: ["--requirements", REVISION],
    baseline: BASELINE,
    outputDir,
    timeoutMs: 600_000,
  });
});

after(async () => {
  await gateways?.stop();
  if (outputDir) await rm(outputDir, { recursive: true, force: true });
});


const failed = (check) => check.status === "FAILURE" || check.status === "WARNING";
const brief = (checks) =>
  JSON.stringify(
    checks.map(({ id, status, errorMessage, details }) => ({ id, status, errorMessage, details })),
    null,
    1,
  );

describe(`conformance suite ${SUITE_VERSION} --requirements ${REVISION}`, () => {
  test("the suite passes against its strict baseline", () => {
    const summary = run.stdout.slice(run.stdout.indexOf("=== SUMMARY ==="));
    assert.equal(run.code, 0, `${summary}\n${run.stderr}`);
    assert.match(run.stdout, /Baseline check passed: all failures are expected\./);
  });

  test("every baseline entry gives its reason and excuses no must-pass scenario whole", async () => {
    const entries = await baseline();
    assert.ok(entries.size > 0);
    for (const [entry, reason] of entries) {
      assert.ok(reason.length > 10, `${entry} has no reason`);
      assert.ok(!MUST_PASS.includes(entry), `${entry} must pass, not be excused`);
    }
    const { checks } = await baselineParts();
    for (const scenario of checks.keys()) {
      assert.ok(MUST_PASS.includes(scenario), `${scenario}: per-check entries are for must-pass scenarios`);
    }
  });

  test("the suite ran exactly the must-pass scenarios, the baseline's and the skipped ones", async () => {
    const ran = [...(await scenarioChecks(outputDir)).keys()].sort();
    const { scenarios } = await baselineParts();
    const expected = [...MUST_PASS, ...scenarios, ...SKIPPED_BY_SUITE.keys()].sort();
    assert.deepEqual(ran, expected);
  });

  for (const scenario of MUST_PASS) {
    test(`${scenario} passes with no failed or warning check but those the baseline names`, async () => {
      const checks = (await scenarioChecks(outputDir)).get(scenario);
      assert.ok(checks, `${scenario} did not run`);
      const excused = (await baselineParts()).checks.get(scenario) ?? new Set();
      const verdicts = checks.filter((c) => c.status !== "INFO" && !excused.has(c.id));
      assert.ok(
        verdicts.some((c) => c.status === "SUCCESS"),
        `${scenario} has no successful check: ${brief(checks)}`,
      );
      const bad = verdicts.filter(
        (c) =>
          c.status !== "SUCCESS" &&
          !(c.status === "SKIPPED" && SKIPPABLE.has(`${scenario}:${c.id}`)),
      );
      assert.deepEqual(bad, [], `${scenario}: ${brief(bad)}`);
      // A per-check entry is strict too: the check it names runs and fails.
      for (const id of excused) {
        const named = checks.filter((c) => c.id === id);
        assert.ok(named.length > 0, `${scenario}:${id} did not run`);
        assert.ok(named.some(failed), `${scenario}:${id} passes: remove it from the baseline`);
      }
    });
  }

  test("every scenario the baseline names whole fails (a listed scenario that passes fails the build)", async () => {
    const all = await scenarioChecks(outputDir);
    const { scenarios } = await baselineParts();
    const passing = [...scenarios].filter((s) => !(all.get(s) ?? []).some(failed));
    assert.deepEqual(passing, [], "these pass now: remove them from the baseline");
  });

  test("the suite skips the scenarios it cannot run yet", async () => {
    const all = await scenarioChecks(outputDir);
    for (const [scenario, reason] of SKIPPED_BY_SUITE) {
      const checks = all.get(scenario);
      assert.ok(checks, `${scenario} did not run`);
      assert.ok(
        checks.every((c) => c.status === "SKIPPED"),
        `${scenario} (${reason}) is no longer skipped: ${brief(checks)}`,
      );
    }
  });
});
