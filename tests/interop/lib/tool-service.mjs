// The interop Tool Service: a real HTTP backend on loopback for the `interop` route.
//
// It serves the conformance suite's fixture tools (test_simple_text, test_image_content,
// test_audio_content, test_embedded_resource, test_multiple_content_types, test_error_handling,
// json_schema_2020_12_tool) as an MCP-native Tool Service (manifest `_meta.resultFormat: "mcp"`),
// and two tools the client tests use: `word_stats` (plain JSON with an `outputSchema`, so its
// results carry `structuredContent`) and `broken_image` (an MCP-native answer with a malformed
// image block). `manifest(origin)` is the route's manifest, pointing at this service.

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
];

/** The names of the conformance suite's fixture tools. */
export const CONFORMANCE_TOOLS = TOOLS.filter(
  (t) => t.name.startsWith("test_") || t.name.startsWith("json_schema"),
).map((t) => t.name);

/** The single-route manifest of the `interop` route, its endpoints under `origin`. */
export function manifest(origin) {
  return {
    manifestVersion: 1,
    routes: [
      {
        routeKey: "interop",
        server: { name: "interop-tools", title: "Interop tools", version: "1.0.0" },
        tools: TOOLS.map((tool) => ({
          name: tool.name,
          description: tool.description,
          inputSchema: tool.inputSchema,
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
