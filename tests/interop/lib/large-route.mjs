// A route of many tools for the tools/list page tests (CONTRACT T2): `startLargeRoute` writes a
// manifest of `count` tools (`tool_00000`, …, about 760 bytes of tools/list entry each, so
// 10,000 tools are about 7.6 MB of list, more than the default MCP_MAX_RESPONSE_BYTES of
// 5 MiB) and serves it with the real mcp-local at /mcp/large.

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

import { startGateway } from "./gateway.mjs";

/** The name of the `i`th tool of the large route. */
export function largeToolName(i) {
  return `tool_${String(i).padStart(5, "0")}`;
}

/** The large route's manifest: `count` tools in order. */
export function largeManifest(count) {
  const tools = [];
  for (let i = 0; i < count; i += 1) {
    tools.push({
      name: largeToolName(i),
      title: `Tool ${i}`,
      description:
        `Looks up record ${i} of the archive by its key and returns the fields asked for. ` +
        `보관소 ${i}번 기록을 키로 찾아 요청한 필드를 돌려줍니다. `.repeat(4) +
        "x".repeat(i % 50),
      inputSchema: {
        type: "object",
        properties: {
          key: { type: "string", description: "The record's key." },
          fields: { type: "array", items: { type: "string" } },
        },
        required: ["key"],
      },
      _meta: { endpoint: "http://127.0.0.1:9/large" },
    });
  }
  return {
    manifestVersion: 1,
    routes: [
      {
        routeKey: "large",
        server: { name: "large-tools", title: "Large route", version: "1.0.0" },
        tools,
      },
    ],
  };
}

/**
 * Starts mcp-local on a manifest of `count` tools at /mcp/large. Resolves to `{ url, names,
 * stop }`, `names` the tools in list order.
 */
export async function startLargeRoute(count = 10_000) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "mcp-large-"));
  const manifestPath = path.join(dir, "large.json");
  await writeFile(manifestPath, JSON.stringify(largeManifest(count)));
  const gateway = await startGateway({
    args: ["--no-sample-tool-service"],
    env: {
      MCP_REGISTRY_SOURCE: `file:${manifestPath}`,
      MCP_ENDPOINT_PATH: "/mcp/large",
    },
  });
  return {
    url: gateway.url,
    names: Array.from({ length: count }, (_, i) => largeToolName(i)),
    async stop() {
      await gateway.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
