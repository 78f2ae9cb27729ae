// The interop Tool Service: a real HTTP backend on loopback for the `interop` route.
//
// It serves the conformance suite's fixture tools (test_simple_text, test_image_content,
// test_audio_content, test_embedded_resource, test_multiple_content_types, test_error_handling,
// json_schema_2020_12_tool, and test_streaming_elicitation and test_logging_tool of the
// 2026-07-28 suite) as an MCP-native Tool Service (manifest `_meta.resultFormat: "mcp"`), and
// three tools the client tests use: `word_stats` (plain JSON with an `outputSchema`, so its
// results carry `structuredContent`), `broken_image` (an MCP-native answer with a malformed
// image block) and `regional_search` (arguments annotated with `x-mcp-header`, mirrored into
// `Mcp-Param-*` headers in the modern era).
//
// It also serves the fixture tools of the 2026-07-28 suite's `tasks-*` scenarios (the tasks
// extension, SEP-2663; CONTRACT K): `greet` (synchronous, `Hello, <name>!`) and six task tools
// (`_meta.task`) run as an asynchronous job service on the same server (CONTRACT K2): a call
// that carries `Prefer: respond-async` becomes a job in an in-memory store and is answered
// `202 Accepted` with `Location: /status/<job id>` (a random id); `GET /status/<id>` reports it
// `running`, `succeeded` with its result, `failed` with an error or `canceled`; `DELETE
// /status/<id>` cancels it; a job is forgotten (`404`) its tool's `ttlMs` after its creation.
// Without `Prefer` a task tool answers synchronously once its work is done. `slow_compute`
// (optional) works `seconds` seconds; `failing_job` (required) ends failed without an error code
// (a tool error: a completed task with an isError result); `protocol_error_job` (required) ends
// failed with JSON-RPC code -32603 (a failed task); `confirm_delete`, `multi_input` (optional)
// and `test_tool_with_task` (required) complete after a moment: a Tool Service answers a call
// once, so none of them can ask for input (input_required) as their scenarios would have it.
//
// `manifest(origin)` is the route's manifest, pointing at this service.

import { randomUUID } from "node:crypto";
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
  // The fixture tools of the suite's `tasks-*` scenarios (tasks extension, SEP-2663). `task` is
  // the manifest's `_meta.task` (CONTRACT K1); `workMs` is how long a job of the tool works;
  // a job ends with `answer(args)` as its result, or failed with `fail` as its error (`code`: a
  // JSON-RPC error code, the work broke as a protocol request breaks).
  {
    name: "greet",
    description: "Greets by name, synchronously (never a task).",
    inputSchema: {
      type: "object",
      properties: { name: { type: "string" } },
      required: ["name"],
      additionalProperties: false,
    },
    format: "mcp",
    tasksFixture: true,
    answer: (args) => ({ content: [{ type: "text", text: `Hello, ${args.name}!` }] }),
  },
  {
    name: "slow_compute",
    description: "Computes for the given number of seconds; may run as a task.",
    inputSchema: {
      type: "object",
      properties: {
        seconds: { type: "number", minimum: 0, maximum: 600 },
        label: { type: "string" },
      },
      additionalProperties: false,
    },
    format: "mcp",
    tasksFixture: true,
    task: { support: "optional", ttlMs: 600_000, pollIntervalMs: 200 },
    workMs: (args) => (args.seconds ?? 0) * 1000,
    answer: (args) => ({
      content: [
        {
          type: "text",
          text: `Computed ${args.label ?? "a result"} in ${args.seconds ?? 0} s.`,
        },
      ],
    }),
  },
  {
    name: "failing_job",
    description: "A job that always fails as a tool fails; it runs as a task only.",
    inputSchema: NO_ARGUMENTS,
    format: "mcp",
    tasksFixture: true,
    task: { support: "required", ttlMs: 600_000, pollIntervalMs: 200 },
    workMs: () => 1000,
    fail: { message: "this job always fails, for testing" },
  },
  {
    name: "protocol_error_job",
    description: "A job that always breaks with a JSON-RPC internal error; it runs as a task only.",
    inputSchema: NO_ARGUMENTS,
    format: "mcp",
    tasksFixture: true,
    task: { support: "required", ttlMs: 600_000, pollIntervalMs: 200 },
    workMs: () => 300,
    fail: { code: -32603, message: "Internal error: this job always breaks, for testing" },
  },
  {
    name: "confirm_delete",
    description: "Deletes the named file; may run as a task.",
    inputSchema: {
      type: "object",
      properties: { filename: { type: "string" } },
      required: ["filename"],
      additionalProperties: false,
    },
    format: "mcp",
    tasksFixture: true,
    task: { support: "optional", ttlMs: 600_000, pollIntervalMs: 200 },
    workMs: () => 300,
    answer: (args) => ({ content: [{ type: "text", text: `Deleted ${args.filename}.` }] }),
  },
  {
    name: "multi_input",
    description: "A job that completes after a moment; may run as a task.",
    inputSchema: NO_ARGUMENTS,
    format: "mcp",
    tasksFixture: true,
    task: { support: "optional", ttlMs: 600_000, pollIntervalMs: 200 },
    workMs: () => 300,
    answer: () => ({ content: [{ type: "text", text: "All inputs processed." }] }),
  },
  {
    name: "test_tool_with_task",
    description: "A job that completes after a moment; it runs as a task only.",
    inputSchema: NO_ARGUMENTS,
    format: "mcp",
    tasksFixture: true,
    task: { support: "required", ttlMs: 600_000, pollIntervalMs: 200 },
    workMs: () => 300,
    answer: () => ({ content: [{ type: "text", text: "Task complete." }] }),
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

/** The names of the conformance suite's fixture tools (those of its tasks scenarios included). */
export const CONFORMANCE_TOOLS = TOOLS.filter(
  (t) => t.name.startsWith("test_") || t.name.startsWith("json_schema") || t.tasksFixture,
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
            ...(tool.task ? { task: tool.task } : {}),
          },
        })),
      },
    ],
  };
}

/** Whether a request's `Prefer` header (RFC 7240) asks for `respond-async`. */
function prefersAsync(request) {
  return (request.headers.prefer ?? "")
    .split(",")
    .some((preference) => preference.split(";")[0].trim().toLowerCase() === "respond-async");
}

/** The answer of a job's status location (CONTRACT K2). */
function statusDocument(job) {
  switch (job.status) {
    case "running":
      return { status: "running", message: `${job.tool} is working` };
    case "succeeded":
      return { status: "succeeded", result: job.result };
    case "failed":
      return { status: "failed", error: job.error };
    default:
      return { status: "canceled" };
  }
}

/**
 * Starts the Tool Service on a free loopback port; resolves to `{ origin, close }`. Its job
 * store (the task tools' jobs) lives as long as the service.
 */
export async function startToolService() {
  const jobs = new Map();
  const timers = new Set();
  const later = (ms, then) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      then();
    }, ms);
    timers.add(timer);
    return timer;
  };
  const send = (response, status, body, headers = {}) => {
    response.writeHead(status, { "content-type": "application/json", ...headers });
    response.end(body === undefined ? undefined : JSON.stringify(body));
  };

  /** A new job of a task tool: it ends after `workMs`, unless canceled first. */
  const startJob = (tool, args) => {
    const id = randomUUID();
    const job = { tool: tool.name, status: "running" };
    job.timer = later(tool.workMs(args), () => {
      if (tool.fail) {
        job.status = "failed";
        job.error = tool.fail;
      } else {
        job.status = "succeeded";
        job.result = tool.answer(args);
      }
    });
    jobs.set(id, job);
    // Kept at least the tool's ttlMs after its creation (docs/tasks.md), then forgotten.
    later(tool.task.ttlMs ?? 3_600_000, () => jobs.delete(id)).unref();
    return id;
  };

  /** `GET` or `DELETE /status/<id>`. */
  const status = (request, response, id) => {
    const job = jobs.get(id);
    if (!job) return send(response, 404, { message: `no job ${id}` });
    if (request.method === "GET") return send(response, 200, statusDocument(job));
    if (request.method === "DELETE") {
      if (job.status === "running") {
        clearTimeout(job.timer);
        timers.delete(job.timer);
        job.status = "canceled";
      }
      return send(response, 204);
    }
    return send(response, 405, { message: `${request.method} is not served here` }, {
      allow: "GET, DELETE",
    });
  };

  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      const job = /^\/status\/([0-9a-f-]+)$/.exec(request.url ?? "");
      if (job) return status(request, response, job[1]);
      const name = request.url?.startsWith("/tools/") ? request.url.slice("/tools/".length) : "";
      const tool = TOOLS.find((t) => t.name === name);
      if (request.method !== "POST" || !tool) {
        return send(response, 404, { message: `no tool at ${request.url}` });
      }
      let args;
      try {
        args = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
      } catch {
        return send(response, 400, { message: "arguments are not JSON" });
      }
      if (!tool.task) return send(response, 200, tool.answer(args));
      if (prefersAsync(request)) {
        const location = `/status/${startJob(tool, args)}`;
        return send(response, 202, { accepted: true }, { location });
      }
      // No Prefer: the answer once the work is done (a tool error, or HTTP 500 for work that
      // breaks with a protocol error).
      later(tool.workMs(args), () => {
        const { fail } = tool;
        if (!fail) return send(response, 200, tool.answer(args));
        if (fail.code !== undefined) return send(response, 500, { message: fail.message });
        send(response, 200, { isError: true, content: [{ type: "text", text: fail.message }] });
      });
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        jobs.clear();
        server.close(resolve);
        server.closeAllConnections();
      }),
  };
}
