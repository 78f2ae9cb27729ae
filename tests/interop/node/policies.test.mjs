// The official TypeScript SDK client (@modelcontextprotocol/sdk 1.x, Streamable HTTP) on a route
// with Cedar authorization policies, served by the real mcp-local binary (CONTRACT Z): the
// client lists only the tools a policy permits, calls them, gets the "Tool call denied" result
// of a forbid on its arguments, and a hidden tool's call fails as an unknown tool's.

import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

import { startGateway } from "../lib/gateway.mjs";
import { manifest as interopManifest, startToolService } from "../lib/tool-service.mjs";

const POLICIES = `
@id("greet-anyone")
permit(principal, action == Gateway::Action::"test_simple_text", resource);

@id("count-words")
permit(principal, action == Gateway::Action::"word_stats", resource);

@id("no-secrets")
@reason("texts that mention a password are not counted here")
forbid(principal, action == Gateway::Action::"word_stats", resource)
when { context.input.text like "*password*" };
`;

let toolService;
let gateway;

before(async () => {
  toolService = await startToolService();
  const document = interopManifest(toolService.origin);
  document.routes[0].authorization = { mode: "enforce", policies: POLICIES };
  const dir = mkdtempSync(path.join(tmpdir(), "mcp-policies-"));
  const file = path.join(dir, "manifest.json");
  writeFileSync(file, JSON.stringify(document));
  gateway = await startGateway({
    env: {
      MCP_REGISTRY_SOURCE: `file:${file}`,
      MCP_PROFILE: "prod",
      MCP_ROUTING: "dynamic",
      MCP_ENDPOINT_PATH: "/mcp",
    },
  });
});

after(async () => {
  await gateway?.stop();
  await toolService?.close();
});

async function connect() {
  const url = new URL(gateway.url.replace(/\/mcp.*$/u, "/mcp/interop"));
  const transport = new StreamableHTTPClientTransport(url);
  const client = new Client({ name: "policies-interop", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

describe("TypeScript SDK client on a route with authorization policies", () => {
  test("lists only the permitted tools and calls them (Z)", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ["test_simple_text", "word_stats"]);
    const greeted = await client.callTool({ name: "test_simple_text", arguments: {} });
    assert.equal(greeted.isError, false);
    const counted = await client.callTool({
      name: "word_stats",
      arguments: { text: "two words" },
    });
    assert.equal(counted.isError, false);
    assert.deepEqual(counted.structuredContent, { words: 2, characters: 9 });
    await client.close();
  });

  test("a forbid on the arguments is a denial the model can read (Z)", async () => {
    const client = await connect();
    const denied = await client.callTool({
      name: "word_stats",
      arguments: { text: "my password is hunter2" },
    });
    assert.equal(denied.isError, true);
    const text = denied.content[0].text;
    assert.match(text, /^Tool call denied/u);
    assert.match(text, /no-secrets/u);
    assert.match(text, /texts that mention a password are not counted here/u);
    assert.doesNotMatch(text, /forbid|context\.input/u, "never the policy text");
    await client.close();
  });

  test("a tool no policy permits fails as an unknown tool (Z)", async () => {
    const client = await connect();
    const hidden = await client
      .callTool({ name: "test_error_handling", arguments: {} })
      .then(() => null, (error) => error);
    const unknown = await client
      .callTool({ name: "no_such_tool", arguments: {} })
      .then(() => null, (error) => error);
    assert.ok(hidden instanceof McpError, String(hidden));
    assert.ok(unknown instanceof McpError, String(unknown));
    assert.equal(hidden.code, -32602);
    assert.equal(hidden.message, unknown.message.replace("no_such_tool", "test_error_handling"));
    await client.close();
  });
});
