// The official TypeScript client 2.x (@modelcontextprotocol/client, Streamable HTTP) against the
// real mcp-local binary, in both protocol eras on the same URL (CONTRACT N; T1, X2, X5, X6, U1):
// with `versionNegotiation: {mode: "auto"}` and with `{mode: {pin: "2026-07-28"}}` it negotiates
// the modern era (2026-07-28, `server/discover`, no `initialize`, per-request `_meta` and
// `Mcp-*` headers) and lists and calls tools; the default client stays in the legacy era
// (2025-11-25, `initialize`). Requests and answers are recorded by wrapping the client's own
// fetch, so the tests see what went over the wire.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import {
  Client,
  ProtocolError,
  StreamableHTTPClientTransport,
  UnsupportedProtocolVersionError,
} from "@modelcontextprotocol/client";

import { startInterop } from "../lib/gateway.mjs";
import { startLargeRoute } from "../lib/large-route.mjs";

const MODERN = "2026-07-28";
const LEGACY = "2025-11-25";
const PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion";
const SERVER_INFO_META = "io.modelcontextprotocol/serverInfo";

/** The tools of the interop route, in manifest order (lib/tool-service.mjs). */
const INTEROP_TOOLS = [
  "test_simple_text",
  "test_image_content",
  "test_audio_content",
  "test_embedded_resource",
  "test_multiple_content_types",
  "test_error_handling",
  "json_schema_2020_12_tool",
  "word_stats",
  "broken_image",
  "test_streaming_elicitation",
  "test_logging_tool",
  "regional_search",
  "greet",
  "slow_compute",
  "failing_job",
  "protocol_error_job",
  "confirm_delete",
  "multi_input",
  "test_tool_with_task",
];

let gateways;

before(async () => {
  gateways = await startInterop();
});

after(async () => {
  await gateways?.stop();
});

function parse(text) {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A connected 2.x client whose HTTP exchanges are recorded in `exchanges`: each with the
 * request's method, lower-cased headers and parsed body, and the answer's status, headers and
 * parsed body. `negotiation` is the client's `versionNegotiation` option (absent: the default).
 */
async function connect(url, negotiation) {
  const exchanges = [];
  const recordingFetch = async (input, init = {}) => {
    const response = await fetch(input, init);
    const exchange = {
      method: init.method ?? "GET",
      headers: Object.fromEntries(new Headers(init.headers).entries()),
      body: typeof init.body === "string" ? parse(init.body) : undefined,
      status: response.status,
      responseHeaders: Object.fromEntries(response.headers.entries()),
    };
    exchanges.push(exchange);
    if ((response.headers.get("content-type") ?? "").includes("application/json")) {
      exchange.response = parse(await response.clone().text());
    }
    return response;
  };
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch });
  const client = new Client(
    { name: "gateway-interop", version: "1.0.0" },
    negotiation ? { versionNegotiation: negotiation } : {},
  );
  await client.connect(transport);
  return { client, transport, exchanges };
}

/** The recorded POSTs of JSON-RPC method `method`. */
function posts(exchanges, method) {
  return exchanges.filter((e) => e.method === "POST" && e.body?.method === method);
}

async function eventually(predicate, what) {
  const deadline = Date.now() + 10_000;
  while (!predicate()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Asserts what every modern request and its answer carry (N: envelope, headers, result). */
function assertModernExchange(exchange, method) {
  assert.equal(exchange.headers["mcp-protocol-version"], MODERN, `${method}: MCP-Protocol-Version`);
  assert.equal(exchange.headers["mcp-method"], method, `${method}: Mcp-Method`);
  assert.equal(exchange.body.params._meta[PROTOCOL_VERSION_META], MODERN);
  assert.equal(exchange.status, 200, `${method}: ${JSON.stringify(exchange.response)}`);
  assert.equal(exchange.responseHeaders["content-type"]?.split(";")[0], "application/json");
  const { result } = exchange.response;
  assert.ok(result, `${method} answered a result: ${JSON.stringify(exchange.response)}`);
  assert.equal(result.resultType, "complete", `${method}: resultType`);
  assert.deepEqual(result._meta[SERVER_INFO_META], {
    name: "interop-tools",
    title: "Interop tools",
    version: "1.0.0",
  });
}

const MODES = [
  { label: "versionNegotiation auto", negotiation: { mode: "auto" } },
  { label: `versionNegotiation pin ${MODERN}`, negotiation: { mode: { pin: MODERN } } },
];

for (const { label, negotiation } of MODES) {
  describe(`TypeScript client 2.x (${label}) on the interop route`, () => {
    test(`connect negotiates ${MODERN} with server/discover, without initialize (N)`, async () => {
      const { client, exchanges } = await connect(gateways.interopUrl, negotiation);
      assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
      assert.equal(client.getProtocolEra(), "modern");
      assert.deepEqual(client.getServerVersion(), {
        name: "interop-tools",
        title: "Interop tools",
        version: "1.0.0",
      });
      // The route has task tools, so discover adds the tasks extension (CONTRACT K5).
      assert.deepEqual(client.getServerCapabilities(), {
        tools: { listChanged: false },
        extensions: { "io.modelcontextprotocol/tasks": {} },
      });
      const discover = client.getDiscoverResult();
      assert.deepEqual(discover.supportedVersions, [MODERN]);
      assert.ok(Number.isInteger(discover.ttlMs) && discover.ttlMs >= 0, `ttlMs ${discover.ttlMs}`);
      assert.ok(["public", "private"].includes(discover.cacheScope), `${discover.cacheScope}`);
      // One probe, answered at once; the legacy handshake never runs.
      const [probe, ...rest] = exchanges.filter((e) => e.method === "POST");
      assert.equal(probe.body.method, "server/discover");
      assertModernExchange(probe, "server/discover");
      assert.deepEqual(posts(exchanges, "initialize"), []);
      assert.deepEqual(posts(rest, "notifications/initialized"), []);
      await client.close();
    });

    test("listTools shows the route's tools with their public fields and caching hints (T1)", async () => {
      const { client, exchanges } = await connect(gateways.interopUrl, negotiation);
      const { tools, nextCursor } = await client.listTools();
      assert.deepEqual(
        tools.map((t) => t.name),
        INTEROP_TOOLS,
      );
      assert.equal(nextCursor, undefined);
      for (const tool of tools) {
        assert.equal(tool.inputSchema.type, "object");
        assert.equal(tool._meta, undefined, "private execution metadata is never exposed");
      }
      const regional = tools.find((t) => t.name === "regional_search");
      assert.equal(regional.inputSchema.properties.region["x-mcp-header"], "Region");
      const [list] = posts(exchanges, "tools/list");
      assertModernExchange(list, "tools/list");
      const { result } = list.response;
      assert.ok(Number.isInteger(result.ttlMs) && result.ttlMs >= 0, `ttlMs ${result.ttlMs}`);
      assert.ok(["public", "private"].includes(result.cacheScope), `${result.cacheScope}`);
      await client.close();
    });

    test("callTool returns a text result with the modern headers on the wire (X5)", async () => {
      const { client, exchanges } = await connect(gateways.interopUrl, negotiation);
      const result = await client.callTool({ name: "test_simple_text", arguments: {} });
      assert.notEqual(result.isError, true);
      assert.equal(result.content.length, 1);
      assert.equal(result.content[0].type, "text");
      assert.equal(result.content[0].text, "This is a simple text response for testing.");
      assert.equal(Number.isInteger(result.content[0]._meta.searchTime), true);
      const [call] = posts(exchanges, "tools/call");
      assertModernExchange(call, "tools/call");
      assert.equal(call.headers["mcp-name"], "test_simple_text");
      await client.close();
    });

    test("structuredContent of a tool with an outputSchema passes the client's own validation", async () => {
      const { client } = await connect(gateways.interopUrl, negotiation);
      const { tools } = await client.listTools();
      assert.deepEqual(tools.find((t) => t.name === "word_stats").outputSchema.required, [
        "words",
        "characters",
      ]);
      // listTools armed the client's outputSchema validator; callTool throws on a mismatch.
      const result = await client.callTool({
        name: "word_stats",
        arguments: { text: "연차 휴가 규정 rules" },
      });
      assert.notEqual(result.isError, true);
      assert.deepEqual(result.structuredContent, { words: 4, characters: 14 });
      assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
      await client.close();
    });

    test("MCP-native blocks reach the client unchanged with searchTime on the first", async () => {
      const { client } = await connect(gateways.interopUrl, negotiation);
      const result = await client.callTool({ name: "test_multiple_content_types", arguments: {} });
      assert.deepEqual(
        result.content.map((b) => b.type),
        ["text", "image", "resource"],
      );
      assert.equal(Number.isInteger(result.content[0]._meta.searchTime), true);
      assert.equal(result.content[1].mimeType, "image/png");
      assert.deepEqual(result.content[2].resource, {
        uri: "test://mixed-content-resource",
        mimeType: "application/json",
        text: '{"test":"data","value":123}',
      });
      await client.close();
    });

    test("an isError result and a malformed answer both reach the client as isError (X6)", async () => {
      const { client } = await connect(gateways.interopUrl, negotiation);
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

    test("invalid arguments and an unknown tool reject callTool with ProtocolError -32602 (X2)", async () => {
      const { client } = await connect(gateways.interopUrl, negotiation);
      await assert.rejects(
        client.callTool({ name: "word_stats", arguments: { text: "" } }),
        (error) => {
          assert.ok(error instanceof ProtocolError, `${error}`);
          assert.equal(error.code, -32602);
          assert.match(error.message, /Invalid params: "" is shorter than 1 character \(at \/text\)$/);
          return true;
        },
      );
      await assert.rejects(client.callTool({ name: "word_stats", arguments: {} }), (error) => {
        assert.ok(error instanceof ProtocolError, `${error}`);
        assert.equal(error.code, -32602);
        assert.match(error.message, /Invalid params: 'text' is required$/);
        return true;
      });
      await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), (error) => {
        assert.ok(error instanceof ProtocolError, `${error}`);
        assert.equal(error.code, -32602);
        assert.match(error.message, /Invalid params: unknown tool 'no_such_tool'$/);
        return true;
      });
      await client.close();
    });
  });
}

describe(`TypeScript client 2.x in the modern era: x-mcp-header arguments (SEP-2243)`, () => {
  test("after listTools, annotated arguments go out as Mcp-Param-* headers and the call succeeds", async () => {
    const { client, exchanges } = await connect(gateways.interopUrl, { mode: { pin: MODERN } });
    await client.listTools();
    const plain = await client.callTool({
      name: "regional_search",
      arguments: { region: "eu-west-1", query: "vpn", limit: 5 },
    });
    assert.notEqual(plain.isError, true, JSON.stringify(plain));
    assert.deepEqual(JSON.parse(plain.content[0].text), {
      region: "eu-west-1",
      query: "vpn",
      limit: 5,
    });
    // A value that is no plain ASCII header value goes out Base64-encoded; the gateway decodes
    // it before comparing it with the body.
    const encoded = await client.callTool({
      name: "regional_search",
      arguments: { region: "서울 (Seoul)" },
    });
    assert.notEqual(encoded.isError, true, JSON.stringify(encoded));
    assert.deepEqual(JSON.parse(encoded.content[0].text), {
      region: "서울 (Seoul)",
      query: null,
      limit: null,
    });
    const [first, second] = posts(exchanges, "tools/call");
    assertModernExchange(first, "tools/call");
    assert.equal(first.headers["mcp-name"], "regional_search");
    assert.equal(first.headers["mcp-param-region"], "eu-west-1");
    assert.equal(first.headers["mcp-param-limit"], "5");
    assert.equal(
      second.headers["mcp-param-region"],
      `=?base64?${Buffer.from("서울 (Seoul)").toString("base64")}?=`,
    );
    assert.equal(second.headers["mcp-param-limit"], undefined, "an absent argument has no header");
    await client.close();
  });

  test("without a tools/list the call is refused with -32020, and the client's retry succeeds", async () => {
    const { client, exchanges } = await connect(gateways.interopUrl, { mode: { pin: MODERN } });
    const result = await client.callTool({
      name: "regional_search",
      arguments: { region: "ap-northeast-2" },
    });
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.equal(JSON.parse(result.content[0].text).region, "ap-northeast-2");
    // The client knew no schema, sent no Mcp-Param-Region, got HeaderMismatch, read tools/list
    // and sent the call again with the header.
    const sequence = exchanges
      .filter((e) => e.method === "POST")
      .map((e) => `${e.body.method} ${e.status}`);
    assert.deepEqual(sequence, [
      "server/discover 200",
      "tools/call 400",
      "tools/list 200",
      "tools/call 200",
    ]);
    const [refused, retried] = posts(exchanges, "tools/call");
    assert.equal(refused.headers["mcp-param-region"], undefined);
    assert.equal(refused.response.error.code, -32020);
    assert.equal(refused.response.id, refused.body.id);
    assert.equal(retried.headers["mcp-param-region"], "ap-northeast-2");
    await client.close();
  });
});

describe("TypeScript client 2.x modern-era failures", () => {
  test("a pin to a revision the gateway does not serve fails with its supported versions", async () => {
    await assert.rejects(
      connect(gateways.interopUrl, { mode: { pin: "2099-01-01" } }),
      (error) => {
        assert.ok(error instanceof UnsupportedProtocolVersionError, `${error}`);
        assert.equal(error.code, -32022);
        assert.deepEqual(error.supported, [MODERN]);
        assert.equal(error.requested, "2099-01-01");
        return true;
      },
    );
  });
});

describe("TypeScript client 2.x on the sample route", () => {
  test("auto negotiates the modern era and reports the sample route's server info", async () => {
    const { client } = await connect(gateways.sampleUrl, { mode: "auto" });
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
    assert.deepEqual(client.getServerVersion(), {
      name: "core-tools",
      title: "Core tools",
      version: "1.0.0",
    });
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ["search_documents", "lookup_glossary", "create_ticket"],
    );
    const result = await client.callTool({
      name: "search_documents",
      arguments: { query: "VPN", limit: 1 },
    });
    assert.equal(result.isError, false);
    assert.equal(JSON.parse(result.content[0].text)[0].id, "DOC-2001");
    await assert.rejects(
      client.callTool({ name: "create_ticket", arguments: { title: "VPN" } }),
      (error) => {
        assert.equal(error.code, -32602);
        assert.match(error.message, /Invalid params: 'priority' is required$/);
        return true;
      },
    );
    await client.close();
  });
});

describe("TypeScript client 2.x with the default (legacy) negotiation", () => {
  test(`initialize negotiates ${LEGACY}; the wire carries no modern header or envelope`, async () => {
    const { client, transport, exchanges } = await connect(gateways.interopUrl);
    assert.equal(client.getNegotiatedProtocolVersion(), LEGACY);
    assert.equal(client.getProtocolEra(), "legacy");
    assert.equal(transport.protocolVersion, LEGACY);
    assert.deepEqual(client.getServerVersion(), {
      name: "interop-tools",
      title: "Interop tools",
      version: "1.0.0",
    });
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      INTEROP_TOOLS,
    );
    const result = await client.callTool({ name: "test_simple_text", arguments: {} });
    assert.equal(result.isError, false);
    assert.equal(result.content[0].text, "This is a simple text response for testing.");
    await assert.rejects(client.callTool({ name: "word_stats", arguments: {} }), {
      code: -32602,
    });
    const requests = exchanges.filter((e) => e.method === "POST");
    assert.equal(requests[0].body.method, "initialize");
    assert.deepEqual(posts(exchanges, "server/discover"), []);
    for (const request of requests) {
      assert.equal(request.headers["mcp-method"], undefined, request.body.method);
      assert.equal(request.body.params?._meta?.[PROTOCOL_VERSION_META], undefined);
    }
    // Legacy answers are as they were: no modern result fields.
    for (const method of ["tools/list", "tools/call"]) {
      const { result } = posts(exchanges, method)[0].response;
      assert.equal(result.resultType, undefined, method);
      assert.equal(result._meta?.[SERVER_INFO_META], undefined, method);
    }
    assert.equal(posts(exchanges, "tools/list")[0].response.result.ttlMs, undefined);
    await client.close();
  });
});

describe("usage events of both eras", () => {
  test("each request's usage event names its era and protocol version (U1)", async () => {
    const modern = await connect(gateways.interopUrl, { mode: { pin: MODERN } });
    await modern.client.callTool({ name: "test_simple_text", arguments: {} });
    await modern.client.close();
    const legacy = await connect(gateways.interopUrl);
    await legacy.client.callTool({ name: "test_error_handling", arguments: {} });
    await legacy.client.close();
    // Each answer's `x-request-id` names its usage event (H8, U1): an earlier test's event
    // that is written late (the same tools are called there) is never taken for these.
    const ids = (exchanges) =>
      new Set(
        exchanges
          .filter((e) => e.method === "POST")
          .map((e) => e.responseHeaders["x-request-id"])
          .filter(Boolean),
      );
    const modernIds = ids(modern.exchanges);
    const legacyIds = ids(legacy.exchanges);
    assert.ok(modernIds.size > 0 && legacyIds.size > 0, "every answer carries x-request-id");
    const of = (wanted) =>
      gateways.interop.usageEvents().filter((e) => wanted.has(e.x_request_id));
    await eventually(
      () => of(modernIds).length === modernIds.size && of(legacyIds).length === legacyIds.size,
      "the usage events of both clients' requests",
    );
    const modernEvents = of(modernIds);
    const legacyEvents = of(legacyIds);
    // The client may answer server/discover from its cache (ttlMs, cacheScope: public) when an
    // earlier test of this file discovered the same URL; a probe it does send is modern.
    for (const discover of modernEvents.filter((e) => e.method === "server/discover")) {
      assert.equal(discover.era, "modern");
      assert.equal(discover.protocol_version, MODERN);
    }
    const modernCall = modernEvents.find((e) => e.method === "tools/call");
    assert.equal(modernCall.tool, "test_simple_text", JSON.stringify(modernCall));
    assert.equal(modernCall.era, "modern", JSON.stringify(modernCall));
    assert.equal(modernCall.protocol_version, MODERN);
    assert.equal(modernCall.outcome, "ok");
    const legacyCall = legacyEvents.find((e) => e.method === "tools/call");
    assert.equal(legacyCall.tool, "test_error_handling", JSON.stringify(legacyCall));
    assert.equal(legacyCall.era, "legacy", JSON.stringify(legacyCall));
    assert.equal(legacyCall.protocol_version, LEGACY);
    assert.equal(legacyCall.outcome, "tool_error");
    assert.equal(legacyEvents.find((e) => e.method === "initialize").era, "legacy");
    for (const event of [...modernEvents, ...legacyEvents]) {
      assert.equal(event.route, "interop", JSON.stringify(event));
    }
  });
});

describe("TypeScript client 2.x on a 10,000-tool route (T2)", () => {
  let large;
  before(async () => {
    large = await startLargeRoute();
  });
  after(async () => {
    await large?.stop();
  });

  for (const { label, negotiation, era } of [
    { label: "default", negotiation: undefined, era: LEGACY },
    ...MODES.map((mode) => ({ ...mode, era: MODERN })),
  ]) {
    test(`listTools (${label}, ${era}) follows nextCursor: each tool once, in order`, async () => {
      const { client, exchanges } = await connect(large.url, negotiation);
      assert.equal(client.getNegotiatedProtocolVersion(), era);
      const listed = [];
      let cursor;
      do {
        const page = await client.listTools(cursor === undefined ? undefined : { cursor });
        listed.push(...page.tools.map((tool) => tool.name));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      assert.deepEqual(listed, large.names);
      const lists = posts(exchanges, "tools/list");
      assert.ok(lists.length >= 2, `${lists.length} pages`);
      for (const [i, exchange] of lists.entries()) {
        assert.equal(exchange.status, 200);
        // The cursor each page's request carried is the one the page before it gave.
        const sent = exchange.body.params?.cursor;
        assert.equal(sent, i === 0 ? undefined : lists[i - 1].response.result.nextCursor);
        if (era === MODERN) {
          assert.equal(exchange.response.result.resultType, "complete");
          assert.equal(typeof exchange.response.result.ttlMs, "number");
        }
      }
      await client.close();
    });
  }
});
