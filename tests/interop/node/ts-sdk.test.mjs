// The official TypeScript SDK client (@modelcontextprotocol/sdk 1.x, Streamable HTTP) against the
// real mcp-local binary (CONTRACT L1, L2, L3, H1, T1, X2, X5, X6, U1; structuredContent and
// MCP-native results). Requests and answers are recorded by wrapping the SDK's own fetch, so the
// tests see what went over the wire.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

import { startInterop } from "../lib/gateway.mjs";
import { startLargeRoute } from "../lib/large-route.mjs";

let gateways;

before(async () => {
  gateways = await startInterop();
});

after(async () => {
  await gateways?.stop();
});

/** A connected SDK client whose HTTP exchanges are recorded in `exchanges`. */
async function connect(url) {
  const exchanges = [];
  const recordingFetch = async (input, init = {}) => {
    const response = await fetch(input, init);
    exchanges.push({
      method: init.method ?? "GET",
      status: response.status,
      allow: response.headers.get("allow"),
      contentType: response.headers.get("content-type"),
    });
    return response;
  };
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch });
  const client = new Client({ name: "gateway-interop", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, exchanges };
}

async function eventually(predicate, what) {
  const deadline = Date.now() + 10_000;
  while (!predicate()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("TypeScript SDK client on the sample route", () => {
  test("initialize negotiates 2025-11-25 and reports the route's server info (L1, L2)", async () => {
    const { client, transport } = await connect(gateways.sampleUrl);
    assert.deepEqual(client.getServerVersion(), {
      name: "core-tools",
      title: "Core tools",
      version: "1.0.0",
    });
    assert.deepEqual(client.getServerCapabilities(), { tools: { listChanged: false } });
    assert.equal(transport.protocolVersion, "2025-11-25");
    assert.match(transport.sessionId, /^[0-9a-f-]{36}$/);
    await client.close();
  });

  test("the client's GET probe for an SSE stream gets 405 with Allow: POST (H1)", async () => {
    const { client, exchanges } = await connect(gateways.sampleUrl);
    await eventually(() => exchanges.some((e) => e.method === "GET"), "the GET probe");
    const get = exchanges.find((e) => e.method === "GET");
    assert.equal(get.status, 405);
    assert.equal(get.allow, "POST");
    // The 405 did not break the client: it keeps working over POST.
    await client.ping();
    await client.close();
  });

  test("listTools shows the sample tools with their public fields only (T1)", async () => {
    const { client } = await connect(gateways.sampleUrl);
    const { tools, nextCursor } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ["search_documents", "lookup_glossary", "create_ticket"],
    );
    assert.equal(nextCursor, undefined);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, "object");
      assert.equal(tool._meta, undefined, "private execution metadata is never exposed");
    }
    await client.close();
  });

  test("callTool returns the Tool Service's JSON as compact text with searchTime (X5)", async () => {
    const { client } = await connect(gateways.sampleUrl);
    const result = await client.callTool({
      name: "search_documents",
      arguments: { query: "VPN", limit: 1 },
    });
    assert.equal(result.isError, false);
    assert.equal(result.content.length, 1);
    const [block] = result.content;
    assert.equal(block.type, "text");
    assert.equal(Number.isInteger(block._meta.searchTime), true);
    const documents = JSON.parse(block.text);
    assert.equal(documents.length, 1);
    assert.equal(documents[0].id, "DOC-2001");
    assert.equal(block.text, JSON.stringify(documents), "the text is compact JSON");
    await client.close();
  });

  test("a Tool Service failure reaches the client as an isError result, not an error (X6)", async () => {
    const { client } = await connect(gateways.sampleUrl);
    const result = await client.callTool({
      name: "lookup_glossary",
      arguments: { term: "nope" },
    });
    assert.equal(result.isError, true);
    assert.equal(
      result.content[0].text,
      "Tool Service returned HTTP 404: term 'nope' is not in the glossary",
    );
    await client.close();
  });

  test("arguments that break the inputSchema reject callTool with McpError -32602 (X2)", async () => {
    const { client } = await connect(gateways.sampleUrl);
    await assert.rejects(
      client.callTool({ name: "create_ticket", arguments: { title: "VPN" } }),
      (error) => {
        assert.ok(error instanceof McpError, `${error}`);
        assert.equal(error.code, -32602);
        assert.equal(error.message, "MCP error -32602: Invalid params: 'priority' is required");
        return true;
      },
    );
    await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), {
      code: -32602,
      message: "MCP error -32602: Invalid params: unknown tool 'no_such_tool'",
    });
    await client.close();
  });

  test("terminateSession's DELETE gets 405 and close ends the client (H1, L2)", async () => {
    const { client, transport, exchanges } = await connect(gateways.sampleUrl);
    await transport.terminateSession();
    const del = exchanges.find((e) => e.method === "DELETE");
    assert.equal(del.status, 405);
    await client.close();
  });

  test("every exchange of a session is one usage event with its outcome (U1)", async () => {
    const before = gateways.sample.usageEvents().length;
    const { client, exchanges } = await connect(gateways.sampleUrl);
    await client.listTools();
    await client.callTool({ name: "lookup_glossary", arguments: { term: "OTP" } });
    await eventually(() => exchanges.some((e) => e.method === "GET"), "the GET probe");
    await client.close();
    // mcp-local writes a serving thread's usage lines when it goes idle, just after the
    // answers: wait for this session's events themselves, not for a count that an earlier
    // test's late line could fill.
    const expected = ["initialize", "notifications/initialized", "tools/list", "tools/call"];
    await eventually(() => {
      const events = gateways.sample.usageEvents().slice(before);
      return (
        events.length >= exchanges.length &&
        expected.every((method) => events.some((e) => e.method === method)) &&
        events.some((e) => e.status === 405)
      );
    }, "the usage events");
    const events = gateways.sample.usageEvents().slice(before);
    const methods = events.map((e) => e.method ?? "");
    for (const method of expected) {
      assert.ok(methods.includes(method), `${method} in ${methods}`);
    }
    const call = events.find((e) => e.method === "tools/call");
    assert.equal(call.tool, "lookup_glossary");
    assert.equal(call.outcome, "ok");
    assert.ok(
      events.some((e) => e.status === 405),
      `the 405 of the GET probe is logged as a failed request: ${JSON.stringify(events)}`,
    );
  });
});

describe("TypeScript SDK client on the interop route", () => {
  test("structuredContent of a tool with an outputSchema passes the SDK's own validation", async () => {
    const { client } = await connect(gateways.interopUrl);
    const { tools } = await client.listTools();
    const stats = tools.find((t) => t.name === "word_stats");
    assert.deepEqual(stats.outputSchema.required, ["words", "characters"]);
    // listTools armed the SDK's outputSchema validator; callTool throws on a mismatch.
    const result = await client.callTool({
      name: "word_stats",
      arguments: { text: "연차 휴가 규정 rules" },
    });
    assert.equal(result.isError, false);
    assert.deepEqual(result.structuredContent, { words: 4, characters: 14 });
    assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
    await client.close();
  });

  test("MCP-native content blocks reach the client unchanged with searchTime on the first", async () => {
    const { client } = await connect(gateways.interopUrl);
    const result = await client.callTool({ name: "test_multiple_content_types", arguments: {} });
    assert.equal(result.isError, false);
    assert.deepEqual(
      result.content.map((b) => b.type),
      ["text", "image", "resource"],
    );
    assert.equal(Number.isInteger(result.content[0]._meta.searchTime), true);
    assert.equal(result.content[1].mimeType, "image/png");
    assert.equal(Buffer.from(result.content[1].data, "base64").subarray(1, 4).toString(), "PNG");
    assert.deepEqual(result.content[2].resource, {
      uri: "test://mixed-content-resource",
      mimeType: "application/json",
      text: '{"test":"data","value":123}',
    });
    const audio = await client.callTool({ name: "test_audio_content", arguments: {} });
    assert.equal(audio.content[0].type, "audio");
    assert.equal(audio.content[0].mimeType, "audio/wav");
    await client.close();
  });

  test("an MCP-native isError result and a malformed answer both reach the client as isError", async () => {
    const { client } = await connect(gateways.interopUrl);
    const failed = await client.callTool({ name: "test_error_handling", arguments: {} });
    assert.equal(failed.isError, true);
    assert.equal(failed.content[0].text, "This tool intentionally returns an error for testing");
    const broken = await client.callTool({ name: "broken_image", arguments: {} });
    assert.equal(broken.isError, true);
    assert.equal(
      broken.content[0].text,
      "Tool Service answer is not a valid MCP tool result at /content/0/mimeType: 'mimeType' is required",
    );
    await client.close();
  });
});

describe("TypeScript SDK client on a 10,000-tool route (T2)", () => {
  let large;
  before(async () => {
    large = await startLargeRoute();
  });
  after(async () => {
    await large?.stop();
  });

  test("listTools follows nextCursor through every page: each tool once, in order", async () => {
    const { client } = await connect(large.url);
    const listed = [];
    let cursor;
    let pages = 0;
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor });
      listed.push(...page.tools.map((tool) => tool.name));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== undefined);
    assert.ok(pages >= 2, `${pages} pages`);
    assert.equal(listed.length, large.names.length);
    assert.deepEqual(listed, large.names);
    await client.close();
  });
});
