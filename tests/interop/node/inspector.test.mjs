// MCP Inspector's CLI mode (@modelcontextprotocol/inspector 1.0.3 and 2.x) against the real
// mcp-local binary: tools/list and tools/call over Streamable HTTP (CONTRACT L1, T1, X2, X5, X6;
// MCP-native results).

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { startInterop } from "../lib/gateway.mjs";

const require = createRequire(import.meta.url);
const INSPECTORS = [
  {
    version: require("@modelcontextprotocol/inspector/package.json").version,
    cli: require.resolve("@modelcontextprotocol/inspector/cli/build/cli.js"),
  },
  {
    version: require("inspector-2/package.json").version,
    cli: path.join(path.dirname(require.resolve("inspector-2/package.json")), "clients/launcher/build/index.js"),
  },
];

let gateways;
let home;

before(async () => {
  gateways = await startInterop();
  // Inspector 2 keeps a server catalog in the home directory: give it a throwaway one.
  home = await mkdtemp(path.join(os.tmpdir(), "mcp-inspector-home-"));
});

after(async () => {
  await gateways?.stop();
  if (home) await rm(home, { recursive: true, force: true });
});

/** Runs `inspector --cli <url> --transport http <args…>`; resolves to `{ code, stdout, stderr }`. */
function inspect(inspector, url, args) {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [inspector.cli, "--cli", url, "--transport", "http", ...args],
      {
        env: { ...process.env, HOME: home, MCP_CATALOG_PATH: path.join(home, "catalog.json") },
        timeout: 60_000,
      },
      (error, stdout, stderr) => {
        resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** The JSON document an Inspector CLI printed on stdout. */
function printed(run) {
  try {
    return JSON.parse(run.stdout);
  } catch {
    assert.fail(`no JSON on stdout (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
}

for (const inspector of INSPECTORS) {
  describe(`MCP Inspector ${inspector.version} --cli`, () => {
    test("tools/list prints the route's tools with their public fields (T1)", async () => {
      const run = await inspect(inspector, gateways.sampleUrl, ["--method", "tools/list"]);
      assert.equal(run.code, 0, run.stderr);
      const { tools } = printed(run);
      assert.deepEqual(
        tools.map((t) => t.name),
        ["search_documents", "lookup_glossary", "create_ticket"],
      );
      assert.ok(tools.every((t) => t._meta === undefined));
    });

    test("tools/call prints the Tool Service's answer as a compact JSON text result (X5)", async () => {
      const run = await inspect(inspector, gateways.sampleUrl, [
        "--method",
        "tools/call",
        "--tool-name",
        "search_documents",
        "--tool-arg",
        "query=VPN",
        "limit=1",
      ]);
      assert.equal(run.code, 0, run.stderr);
      const result = printed(run);
      assert.equal(result.isError, false);
      assert.equal(JSON.parse(result.content[0].text)[0].id, "DOC-2001");
      assert.equal(Number.isInteger(result.content[0]._meta.searchTime), true);
    });

    test("tools/call shows a Tool Service failure as an isError result (X6)", async () => {
      const run = await inspect(inspector, gateways.sampleUrl, [
        "--method",
        "tools/call",
        "--tool-name",
        "lookup_glossary",
        "--tool-arg",
        "term=nope",
      ]);
      const result = printed(run);
      assert.equal(result.isError, true);
      assert.equal(
        result.content[0].text,
        "Tool Service returned HTTP 404: term 'nope' is not in the glossary",
      );
    });

    test("tools/call fails with the gateway's -32602 message for invalid arguments (X2)", async () => {
      const run = await inspect(inspector, gateways.sampleUrl, [
        "--method",
        "tools/call",
        "--tool-name",
        "create_ticket",
        "--tool-arg",
        "title=VPN",
      ]);
      assert.equal(run.code, 1);
      assert.match(run.stdout + run.stderr, /Invalid params: 'priority' is required/);
    });

    test("tools/call prints MCP-native image blocks unchanged", async () => {
      const run = await inspect(inspector, gateways.interopUrl, [
        "--method",
        "tools/call",
        "--tool-name",
        "test_image_content",
      ]);
      assert.equal(run.code, 0, run.stderr);
      const [image] = printed(run).content;
      assert.equal(image.type, "image");
      assert.equal(image.mimeType, "image/png");
      assert.equal(Buffer.from(image.data, "base64").subarray(1, 4).toString(), "PNG");
    });
  });
}
