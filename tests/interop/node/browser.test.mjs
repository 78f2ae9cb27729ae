// A real browser against the real mcp-local binary (CONTRACT H5, H9, H10): headless Chromium
// (Debian's package, driven by playwright-core) opens a page served on loopback from an origin
// listed in MCP_ALLOWED_ORIGINS, whose script calls the gateway on another port with `fetch`
// for initialize, tools/list and tools/call; the same page served from a second origin, not
// listed, must see the browser refuse every call. The test reads back what each page saw.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import http from "node:http";
import { after, before, test } from "node:test";

import { chromium } from "playwright-core";

import { startGateway } from "../lib/gateway.mjs";

const CHROMIUM = process.env.CHROMIUM_BIN ?? "/usr/bin/chromium";

/** The page: three MCP requests over fetch, each outcome written to `window.outcomes`. */
function page(gatewayUrl) {
  return `<!doctype html><html><head><meta charset="utf-8"><title>MCP from a browser</title></head>
<body><script type="module">
const url = ${JSON.stringify(gatewayUrl)};
const outcomes = [];
async function call(body, version) {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  if (version) headers["mcp-protocol-version"] = version;
  try {
    const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
    outcomes.push({
      ok: true,
      status: response.status,
      sessionId: response.headers.get("mcp-session-id"),
      guid: response.headers.get("guid"),
      body: await response.json(),
    });
  } catch (error) {
    outcomes.push({ ok: false, error: String(error) });
  }
}
await call({ jsonrpc: "2.0", id: 1, method: "initialize", params: {
  protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "browser", version: "1" } } });
await call({ jsonrpc: "2.0", id: 2, method: "tools/list" }, "2025-11-25");
await call({ jsonrpc: "2.0", id: 3, method: "tools/call",
  params: { name: "lookup_glossary", arguments: { term: "SLA" } } }, "2025-11-25");
window.outcomes = outcomes;
</script></body></html>`;
}

/** A page server on a free loopback port whose page is built on each request by `html()`. */
async function servePage(html) {
  const server = http.createServer((request, response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end(html());
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

let gateway;
let allowed;
let foreign;
let browser;

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing (tests/run.sh installs Debian's chromium)`);
  // The pages are served first, so that the gateway can list the allowed page's origin; they
  // are built on request, once the gateway's URL is known.
  const html = () => page(gateway.url);
  allowed = await servePage(html);
  foreign = await servePage(html);
  gateway = await startGateway({
    args: ["--sample-tool-service", "127.0.0.1:0"],
    env: { MCP_ALLOWED_ORIGINS: allowed.origin },
  });
  // playwright-core starts Chromium with a new empty profile of its own.
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
});

after(async () => {
  await browser?.close();
  await gateway?.stop();
  await allowed?.close();
  await foreign?.close();
});

/** Opens `origin`'s page and returns what its script saw. */
async function outcomesAt(origin) {
  const tab = await browser.newPage();
  try {
    await tab.goto(`${origin}/`);
    await tab.waitForFunction(() => Array.isArray(window.outcomes), null, { timeout: 30_000 });
    return await tab.evaluate(() => window.outcomes);
  } finally {
    await tab.close();
  }
}

test("H9 H10: a page from an allowed origin initializes, lists and calls tools", async () => {
  const [initialize, list, call] = await outcomesAt(allowed.origin);
  for (const outcome of [initialize, list, call]) {
    assert.equal(outcome.ok, true, JSON.stringify(outcome));
    assert.equal(outcome.status, 200);
    // Exposed by Access-Control-Expose-Headers (H10); a browser hides it otherwise.
    assert.match(outcome.guid ?? "", /^[0-9a-f-]{36}$/);
  }
  assert.equal(initialize.body.result.protocolVersion, "2025-11-25");
  assert.match(initialize.sessionId ?? "", /^[0-9a-f-]{36}$/);
  assert.ok(list.body.result.tools.some((tool) => tool.name === "lookup_glossary"));
  assert.equal(call.body.result.isError, false, JSON.stringify(call.body));
  assert.ok(call.body.result.content[0].text.length > 0);
  // The preflights reached the gateway and were logged as such (H9, U1).
  const preflights = gateway.usageEvents().filter((event) => event.cors === "preflight");
  assert.ok(preflights.length >= 1, "the browser sent a preflight");
  assert.ok(preflights.every((event) => event.status === 204));
});

test("H5: the browser refuses every call from an origin the gateway does not list", async () => {
  const outcomes = await outcomesAt(foreign.origin);
  assert.equal(outcomes.length, 3);
  for (const outcome of outcomes) {
    assert.equal(outcome.ok, false, JSON.stringify(outcome));
    assert.match(outcome.error, /TypeError: Failed to fetch/);
  }
  const refused = gateway
    .usageEvents()
    .filter((event) => event.rejection === "origin_not_allowed");
  assert.ok(refused.length >= 1, "the foreign origin's preflight got the H5 403");
});
