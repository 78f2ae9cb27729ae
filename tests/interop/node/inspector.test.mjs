// MCP Inspector's CLI mode (@modelcontextprotocol/inspector 1.0.3 and 2.x) against the real
// mcp-local binary: tools/list and tools/call over Streamable HTTP (CONTRACT L1, T1, X2, X5, X6;
// MCP-native results). Inspector 2's `--protocol-era modern` (pinned to 2026-07-28) and `auto`
// (probe with server/discover) run the same calls in the modern era (CONTRACT N), read back from
// the gateway's usage log.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { startInterop } from "../lib/gateway.mjs";
import { startLargeRoute } from "../lib/large-route.mjs";

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
        // A 10,000-tool list prints about 8 MB.
        maxBuffer: 64 * 1024 * 1024,
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

const MODERN = "2026-07-28";
const INSPECTOR_2 = INSPECTORS[1];

/** The interop gateway's usage events logged after the first `from` (CONTRACT U1, N). */
async function eventsSince(from, what) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const events = gateways.interop.usageEvents().slice(from);
    if (what(events)) return events;
    if (Date.now() > deadline) assert.fail(`timed out waiting for usage events: ${JSON.stringify(events)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The number of the interop gateway's usage events once none has been written for 200 ms (at
 * most 10 s): an earlier test's last event, written just after its answer, is then counted
 * before this test's start and never taken for one of its own.
 */
async function settledCount() {
  const deadline = Date.now() + 10_000;
  let count = gateways.interop.usageEvents().length;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = gateways.interop.usageEvents().length;
    if (now === count || Date.now() > deadline) return now;
    count = now;
  }
}

for (const era of ["modern", "auto"]) {
  describe(`MCP Inspector ${INSPECTOR_2.version} --cli --protocol-era ${era}`, () => {
    const modern = (args, url = gateways.interopUrl) =>
      inspect(INSPECTOR_2, url, ["--protocol-era", era, ...args]);

    test(`it negotiates ${MODERN} with server/discover and never sends initialize (N)`, async () => {
      const from = await settledCount();
      const run = await modern(["--method", "initialize"]);
      assert.equal(run.code, 0, run.stderr);
      const shown = printed(run);
      assert.equal(shown.protocolVersion, MODERN);
      assert.equal(shown.serverInfo.name, "interop-tools");
      assert.equal(shown.serverInfo.version, "1.0.0");
      // The route has task tools, so discover adds the tasks extension (CONTRACT K5).
      assert.deepEqual(shown.capabilities, {
        tools: { listChanged: false },
        extensions: { "io.modelcontextprotocol/tasks": {} },
      });
      const events = await eventsSince(from, (e) => e.some((x) => x.method === "server/discover"));
      assert.equal(events.find((e) => e.method === "server/discover").outcome, "ok");
      assert.ok(!events.some((e) => e.method === "initialize"), JSON.stringify(events));
    });

    test(`its requests' usage events name the modern era and ${MODERN} (U1, N)`, async () => {
      const from = await settledCount();
      const run = await modern(["--method", "tools/call", "--tool-name", "test_simple_text"]);
      assert.equal(run.code, 0, run.stderr);
      const events = await eventsSince(
        from,
        (e) => e.some((x) => x.method === "server/discover") && e.some((x) => x.method === "tools/call"),
      );
      for (const method of ["server/discover", "tools/call"]) {
        const event = events.find((e) => e.method === method);
        assert.equal(event.era, "modern", JSON.stringify(event));
        assert.equal(event.protocol_version, MODERN, JSON.stringify(event));
      }
    });

    test("tools/list prints the route's tools with their public fields (T1)", async () => {
      const run = await modern(["--method", "tools/list"]);
      assert.equal(run.code, 0, run.stderr);
      const { tools } = printed(run);
      assert.deepEqual(tools.map((t) => t.name).slice(0, 3), [
        "test_simple_text",
        "test_image_content",
        "test_audio_content",
      ]);
      assert.ok(tools.some((t) => t.name === "regional_search"));
      assert.ok(tools.every((t) => t._meta === undefined));
    });

    test("tools/call prints text, image and isError results (X5, X6)", async () => {
      const text = await modern(["--method", "tools/call", "--tool-name", "test_simple_text"]);
      assert.equal(text.code, 0, text.stderr);
      const textResult = printed(text);
      assert.notEqual(textResult.isError, true);
      assert.equal(textResult.content[0].text, "This is a simple text response for testing.");
      const image = await modern(["--method", "tools/call", "--tool-name", "test_image_content"]);
      assert.equal(image.code, 0, image.stderr);
      const [block] = printed(image).content;
      assert.equal(block.type, "image");
      assert.equal(Buffer.from(block.data, "base64").subarray(1, 4).toString(), "PNG");
      const failed = await modern(["--method", "tools/call", "--tool-name", "test_error_handling"]);
      const failedResult = printed(failed);
      assert.equal(failedResult.isError, true);
      assert.equal(
        failedResult.content[0].text,
        "This tool intentionally returns an error for testing",
      );
    });

    test("tools/call with an x-mcp-header argument succeeds (SEP-2243 Mcp-Param-Region)", async () => {
      const run = await modern([
        "--method",
        "tools/call",
        "--tool-name",
        "regional_search",
        "--tool-args-json",
        '{"region":"eu-west-1","query":"vpn"}',
      ]);
      assert.equal(run.code, 0, run.stderr);
      const result = printed(run);
      assert.notEqual(result.isError, true, JSON.stringify(result));
      assert.deepEqual(JSON.parse(result.content[0].text), {
        region: "eu-west-1",
        query: "vpn",
        limit: null,
      });
    });

    test("tools/call fails with the gateway's -32602 message for invalid arguments (X2)", async () => {
      const run = await modern([
        "--method",
        "tools/call",
        "--tool-name",
        "word_stats",
        "--tool-args-json",
        "{}",
      ]);
      assert.equal(run.code, 1);
      assert.match(run.stdout + run.stderr, /Invalid params: 'text' is required/);
    });

    test("tools/call on the sample route prints the Tool Service's answer (X5)", async () => {
      const run = await modern(
        ["--method", "tools/call", "--tool-name", "search_documents", "--tool-arg", "query=VPN", "limit=1"],
        gateways.sampleUrl,
      );
      assert.equal(run.code, 0, run.stderr);
      const result = printed(run);
      assert.equal(result.isError, false);
      assert.equal(JSON.parse(result.content[0].text)[0].id, "DOC-2001");
    });
  });
}

describe("MCP Inspector --cli on a 10,000-tool route (T2)", () => {
  let large;
  before(async () => {
    large = await startLargeRoute();
  });
  after(async () => {
    await large?.stop();
  });

  for (const inspector of INSPECTORS) {
    const walks = !inspector.version.startsWith("1.");
    const what = walks ? "walks every page" : "prints the first page and its nextCursor";
    test(`Inspector ${inspector.version} tools/list ${what}: each tool once`, async () => {
      const run = await inspect(inspector, large.url, ["--method", "tools/list"]);
      assert.equal(run.code, 0, run.stderr);
      const { tools, nextCursor } = printed(run);
      const names = tools.map((t) => t.name);
      assert.equal(new Set(names).size, names.length, "no tool twice");
      if (walks) {
        assert.deepEqual(names, large.names);
      } else {
        assert.equal(typeof nextCursor, "string");
        assert.ok(names.length < large.names.length, `${names.length} tools on the first page`);
        assert.deepEqual(names, large.names.slice(0, names.length));
      }
    });
  }
});
