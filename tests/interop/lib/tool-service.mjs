// The interop Tool Service: a real HTTP backend on loopback for the `interop` route.
//
// It serves the conformance suite's fixture tools (test_simple_text, test_image_content,
// test_audio_content, test_embedded_resource, test_multiple_content_types, test_error_handling,
// json_schema_2020_12_tool, and test_streaming_elicitation and test_logging_tool of the
// 2026-07-28 suite) as an MCP-native Tool Service (manifest `_meta.resultFormat: "mcp"`), and
// three tools the client tests use: `word_stats` (plain JSON with an `outputSchema`, so its
// results carry `structuredContent`), `broken_image` (an MCP-native answer with a malformed
// image block) and `regional_search` (arguments annotated with `x-mcp-header`, mirrored into
// `Mcp-Param-*` headers in the modern era). `manifest(origin)` is the route's manifest, pointing
// at this service.

import http from "node:http";

// A 1x1 red PNG.
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
// A WAV file with a header and no samples.
const WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

const NO_ARGUMENTS = { type: "object", properties: {}, additionalProperties: false };

/** The tools: public manifest fields, result format, and what the Tool Service answers. */
const TOOLS = [
  {
    name: "test_simple_text",
    description: "Returns one text block.",
    inputSchema: NO_ARGUMENTS,
    format: "mcp",
    answer: () => ({
      content: [{ type: "text", text: "This is a simple text response for testing." }],
    }),
  },
  {
    name: "test_image_content",
    description: "Returns one PNG image block.",
    inputSchema: NO_ARGUMENTS,
    format: "mcp",
    answer: () => ({ content: [{ type: "image", data: PNG, mimeType: "image/png" }] }),
  },
  {
    name: "test_audio_content",
    description: "Returns one WAV audio block.",
    inputSchema: NO_ARGUMENTS,
    format: "mcp",
    answer: () => ({ content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }] }),
  },
  {
    name: "test_embedded_resource",
    description: "Returns one embedded text resource.",
    inputSchema: NO_ARGUMENTS,
    format: "mcp",
    answer: () => ({
      content: [
        {
          type: "resource",
          resource: {
            uri: "test://embedded-resource",
            mimeType: "text/plain",
            text: "This is an embedded resource content.",
          },
        },
      ],
    }),
  },
  {
    name: "test_multiple_content_types",
    description: "Returns a text, an image and an embedded resource block.",
    inputSchema: NO_ARGUMENTS,
    format: "mcp",
    answer: () => ({
      content: [
        { type: "text", text: "Multiple content types test:" },
        { type: "image", data: PNG, mimeType: "image/png" },
        {
          type: "resource",
          resource: {
            uri: "test://mixed-content-resource",
            mimeType: "application/json",
            text: '{"test":"data","value":123}',
          },
        },
      ],
    }),
  },
  {
    name: "test_error_handling",
    description: "Always fails with a tool error.",
    inputSchema: NO_ARGUMENTS,
    format: "mcp",
    answer: () => ({
      isError: true,
      content: [{ type: "text", text: "This tool intentionally returns an error for testing" }],
    }),
  },
  {
    name: "json_schema_2020_12_tool",
    description: "Tool with JSON Schema 2020-12 features",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: {
        address: {
          type: "object",
          properties: { street: { type: "string" }, city: { type: "string" } },
        },
      },
      properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
      additionalProperties: false,
    },
    format: "mcp",
    answer: (args) => ({
      content: [{ type: "text", text: `Hello, ${args.name ?? "nobody"}` }],
    }),
  },
  {
    name: "word_stats",
    description: "Counts the words and characters of a text.",
    inputSchema: {
      type: "object",
      properties: { text: { type: "string", minLength: 1 } },
      required: ["text"],
      additionalProperties: false,
    },
    outputSchema: {
      type: "object",
      properties: {
        words: { type: "integer", minimum: 0 },
        characters: { type: "integer", minimum: 0 },
      },
      required: ["words", "characters"],
    },
    format: "json",
    answer: (args) => ({
      words: args.text.split(/\s+/u).filter(Boolean).length,
      characters: [...args.text].length,
    }),
  },
  {
    name: "broken_image",
    description: "Answers with an image block that lacks its mimeType.",
    inputSchema: NO_ARGUMENTS,
    format: "mcp",
    answer: () => ({ content: [{ type: "image", data: PNG }] }),
  },
  // The fixture tools of the 2026-07-28 conformance suite that a JSON-only gateway can serve:
  // `server-stateless` calls them over a response stream and checks that no server-to-client
  // request and no log message arrives on it (no `logLevel` was asked for), which holds for
  // every answer of this gateway. (Its `test_missing_capability` needs the gateway to refuse a
  // call for a client capability the manifest cannot declare, and is left out.)
  {
    name: "test_streaming_elicitation",
    description: "Answers one text block (the stream check of the stateless conformance suite).",
    inputSchema: NO_ARGUMENTS,
    format: "mcp",
    answer: () => ({ content: [{ type: "text", text: "Streaming complete" }] }),
  },
  {
    name: "test_logging_tool",
    description: "Answers one text block (the no-log-without-logLevel check of the suite).",
    inputSchema: NO_ARGUMENTS,
    format: "mcp",
    answer: () => ({ content: [{ type: "text", text: "Logging evaluated" }] }),
  },
  // A tool whose arguments are mirrored into HTTP headers in the modern era (SEP-2243
  // `x-mcp-header`): `region` (a string) as `Mcp-Param-Region` and `limit` (an integer) as
  // `Mcp-Param-Limit`; `query` is not mirrored. It echoes what the Tool Service received.
  {
    name: "regional_search",
    description: "Echoes the region, query and limit it was called with.",
    inputSchema: {
      type: "object",
      properties: {
        region: {
          type: "string",
          description: "The region to search in (sent as the Mcp-Param-Region header).",
          "x-mcp-header": "Region",
        },
        query: { type: "string", description: "What to search for." },
        limit: {
          type: "integer",
          minimum: 1,
          maximum: 100,
          description: "How many hits at most (sent as the Mcp-Param-Limit header).",
          "x-mcp-header": "Limit",
        },
      },
      required: ["region"],
      additionalProperties: false,
    },
    format: "json",
    answer: (args) => ({
      region: args.region,
      query: args.query ?? null,
      limit: args.limit ?? null,
    }),
  },
];

/**
 * The `json_schema_2020_12_tool` inputSchema that the conformance suite's 0.2.0 line asks for
 * (its `json-schema-2020-12` scenario at 2026-07-28, SEP-2106): the tool's own schema above plus
 * an `$anchor` in `$defs`, composition (`allOf`/`anyOf`) and conditional (`if`/`then`/`else`)
 * keywords, all of which a server must pass through unchanged.
 */
const JSON_SCHEMA_2020_12_SEP_2106 = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: {
    address: {
      $anchor: "addressDef",
      type: "object",
      properties: { street: { type: "string" }, city: { type: "string" } },
    },
  },
  properties: {
    name: { type: "string" },
    address: { $ref: "#/$defs/address" },
    contactMethod: { type: "string", enum: ["phone", "email"] },
    phone: { type: "string" },
    email: { type: "string" },
  },
  allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
  if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
  then: { required: ["phone"] },
  else: { required: ["email"] },
  additionalProperties: false,
};

/** The names of the conformance suite's fixture tools. */
export const CONFORMANCE_TOOLS = TOOLS.filter(
  (t) => t.name.startsWith("test_") || t.name.startsWith("json_schema"),
).map((t) => t.name);

/**
 * The single-route manifest of the `interop` route, its endpoints under `origin`. With
 * `jsonSchemaFixture: "sep-2106"`, `json_schema_2020_12_tool` has the schema that the 0.2.0
 * conformance suite asks for (JSON_SCHEMA_2020_12_SEP_2106) instead of its own.
 */
export function manifest(origin, { jsonSchemaFixture } = {}) {
  const inputSchema = (tool) =>
    tool.name === "json_schema_2020_12_tool" && jsonSchemaFixture === "sep-2106"
      ? JSON_SCHEMA_2020_12_SEP_2106
      : tool.inputSchema;
  return {
    manifestVersion: 1,
    routes: [
      {
        routeKey: "interop",
        server: { name: "interop-tools", title: "Interop tools", version: "1.0.0" },
        tools: TOOLS.map((tool) => ({
          name: tool.name,
          description: tool.description,
          inputSchema: inputSchema(tool),
          ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
          _meta: {
            version: "1.0.0",
            endpoint: `${origin}/tools/${tool.name}`,
            timeoutMs: 5000,
            resultFormat: tool.format,
          },
        })),
      },
    ],
  };
}

/** Starts the Tool Service on a free loopback port; resolves to `{ origin, close }`. */
export async function startToolService() {
  const server = http.createServer((request, response) => {
    const name = request.url?.startsWith("/tools/") ? request.url.slice("/tools/".length) : "";
    const tool = TOOLS.find((t) => t.name === name);
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      if (request.method !== "POST" || !tool) {
        response.writeHead(404, { "content-type": "application/json" });
        response.end(JSON.stringify({ message: `no tool at ${request.url}` }));
        return;
      }
      let args;
      try {
        args = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
      } catch {
        response.writeHead(400, { "content-type": "application/json" });
        response.end(JSON.stringify({ message: "arguments are not JSON" }));
        return;
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(tool.answer(args)));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
