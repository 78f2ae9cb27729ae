// Inbound authentication with personal access tokens (MCP_AUTH=token) as the official TypeScript
// SDK client (@modelcontextprotocol/sdk 1.x, Streamable HTTP) and plain HTTP see it. The real
// mcp-local binary serves the sample route and checks `Authorization: Bearer mcpat_…` against a
// DynamoDB delegation table on moto's DynamoDB-protocol server (MOTO_SERVER, default the repo's
// .venv/bin/moto_server); the real mcp-admin CLI (MCP_ADMIN_BIN) makes the table and issues and
// revokes the tokens.

import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { freePort, startGateway } from "../lib/gateway.mjs";

const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const MOTO_STARTUP_TIMEOUT_MS = 60_000;
const UNAUTHORIZED_MESSAGE = "a valid bearer token for this MCP endpoint is required";
const CHALLENGE = 'Bearer realm="mcp"';
const INVALID_TOKEN_CHALLENGE = 'Bearer realm="mcp", error="invalid_token"';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ERROR_PREFIX = "Streamable HTTP error: Error POSTing to endpoint: ";

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "gateway-interop-auth", version: "1.0.0" },
  },
};

function adminBinary() {
  const bin = process.env.MCP_ADMIN_BIN;
  if (!bin) {
    throw new Error("MCP_ADMIN_BIN must name the mcp-admin binary (tests/interop/run.sh sets it)");
  }
  return bin;
}

function motoBinary() {
  const bin = process.env.MOTO_SERVER ?? path.join(REPO_ROOT, ".venv/bin/moto_server");
  if (!existsSync(bin)) {
    throw new Error(
      `moto_server not found at ${bin}: run tests/run.sh (it installs moto[server] into .venv) or set MOTO_SERVER`,
    );
  }
  return bin;
}

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`. */
function canConnect(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/**
 * Starts `moto_server -H 127.0.0.1 -p <free port>` and resolves to `{ url, stop }` once it
 * accepts connections. The process is also killed when this test process exits.
 */
async function startMoto() {
  const bin = motoBinary();
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const child = spawn(bin, ["-H", "127.0.0.1", "-p", String(port)], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    const stderr = [];
    child.stderr.on("data", (chunk) => {
      stderr.push(chunk);
      if (stderr.length > 200) stderr.shift();
    });
    let ended = null;
    const endedPromise = new Promise((resolve) => {
      child.once("exit", (code, signal) => resolve((ended = `exited with ${code ?? signal}`)));
      child.once("error", (error) => resolve((ended = `failed to start: ${error.message}`)));
    });
    const killOnExit = () => child.kill("SIGKILL");
    process.once("exit", killOnExit);
    const stop = async () => {
      process.removeListener("exit", killOnExit);
      if (ended === null && child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
        await endedPromise;
        clearTimeout(timer);
      }
    };
    const deadline = Date.now() + MOTO_STARTUP_TIMEOUT_MS;
    let listening = false;
    while (!listening && ended === null && Date.now() < deadline) {
      listening = await canConnect(port);
      if (!listening) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (listening && ended === null) {
      return { url: `http://127.0.0.1:${port}`, stop };
    }
    await stop();
    const why = ended ?? `did not listen on 127.0.0.1:${port} within ${MOTO_STARTUP_TIMEOUT_MS} ms`;
    if (attempt >= 3) {
      throw new Error(`moto_server ${why}:\n${Buffer.concat(stderr).toString()}`);
    }
  }
}

/** The AWS environment that points the SDK of mcp-admin and mcp-local at moto. */
function awsEnv(motoUrl) {
  return {
    AWS_ENDPOINT_URL_DYNAMODB: motoUrl,
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
    AWS_REGION: "us-east-1",
  };
}

let moto;
let table;
let adminEnv;
const gateways = [];
let gateway;
let limitedGateway;
let token;

/** Runs `mcp-admin --table <table> <args…>` against moto; resolves to its stdout. */
async function admin(...args) {
  try {
    const { stdout } = await promisify(execFile)(adminBinary(), ["--table", table, ...args], {
      env: adminEnv,
      timeout: 60_000,
    });
    return stdout;
  } catch (error) {
    throw new Error(`mcp-admin ${args.join(" ")} failed: ${error.message}\n${error.stderr ?? ""}`);
  }
}

/** A new personal access token for route `core`: `{ delegationId, token, … }`. */
async function createToken() {
  const issued = JSON.parse(await admin("token", "create", "--route", "core", "--json"));
  assert.deepEqual(issued.routes, ["core"]);
  assert.match(issued.token, /^mcpat_/);
  assert.match(issued.delegationId, UUID);
  return issued;
}

async function stopAll() {
  await Promise.all(gateways.splice(0).map((g) => g.stop()));
  await moto?.stop();
}

before(async () => {
  try {
    moto = await startMoto();
    table = `mcp-interop-auth-${randomUUID()}`;
    adminEnv = Object.fromEntries(
      Object.entries(process.env).filter(
        ([name]) => !name.startsWith("MCP_") && !name.startsWith("AWS_"),
      ),
    );
    Object.assign(adminEnv, awsEnv(moto.url));
    await admin("table", "create");
    token = await createToken();
    const sampleGateway = (rateLimit) =>
      startGateway({
        args: ["--sample-tool-service", "127.0.0.1:0"],
        env: {
          ...awsEnv(moto.url),
          MCP_AUTH: "token",
          MCP_AUTH_TABLE: table,
          MCP_RATE_LIMIT: rateLimit,
        },
      });
    gateway = await sampleGateway("1000/60");
    gateways.push(gateway);
    limitedGateway = await sampleGateway("2/60");
    gateways.push(limitedGateway);
  } catch (error) {
    await stopAll();
    throw error;
  }
});

after(async () => {
  await stopAll();
});

/** An SDK client on `url` (not yet connected) whose HTTP exchanges are recorded. */
function sdkClient(url, bearer) {
  const exchanges = [];
  const recordingFetch = async (input, init = {}) => {
    const response = await fetch(input, init);
    exchanges.push({
      method: init.method ?? "GET",
      authorization: new Headers(init.headers).get("authorization"),
      status: response.status,
    });
    return response;
  };
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: recordingFetch,
    ...(bearer ? { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } } : {}),
  });
  const client = new Client({ name: "gateway-interop-auth", version: "1.0.0" });
  return { client, transport, exchanges };
}

/** POSTs `initialize` to `url`, with `Authorization: Bearer <bearer>` when given. */
async function postInitialize(url, bearer) {
  const headers = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
  };
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  const response = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify(INITIALIZE),
  });
  return { response, text: await response.text() };
}

/** Asserts the gateway's 401 answer with exactly `challenge`. */
function assertUnauthorized({ response, text }, challenge) {
  assert.equal(response.status, 401, text);
  assert.equal(response.headers.get("www-authenticate"), challenge);
  assert.equal(response.headers.get("content-type"), "application/json");
  const guid = response.headers.get("guid");
  assert.match(guid, UUID);
  assert.deepEqual(JSON.parse(text), {
    error: "unauthorized",
    message: UNAUTHORIZED_MESSAGE,
    guid,
  });
}

/** Asserts that `error` is the SDK's StreamableHTTPError for the gateway's 401 answer. */
function assertSdkUnauthorized(error) {
  assert.ok(error instanceof StreamableHTTPError, `${error?.stack ?? error}`);
  assert.equal(error.code, 401);
  assert.ok(error.message.startsWith(ERROR_PREFIX), error.message);
  const body = JSON.parse(error.message.slice(ERROR_PREFIX.length));
  assert.equal(body.error, "unauthorized");
  assert.equal(body.message, UNAUTHORIZED_MESSAGE);
  assert.match(body.guid, UUID);
  return true;
}

async function eventually(predicate, what) {
  const deadline = Date.now() + 10_000;
  while (!predicate()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("TypeScript SDK client with a personal access token (MCP_AUTH=token)", () => {
  test("with the token it connects, lists the tools and calls one", async () => {
    const { client, transport, exchanges } = sdkClient(gateway.url, token.token);
    await client.connect(transport);
    assert.deepEqual(client.getServerVersion(), {
      name: "core-tools",
      title: "Core tools",
      version: "1.0.0",
    });
    assert.equal(transport.protocolVersion, "2025-11-25");
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
    const documents = JSON.parse(result.content[0].text);
    assert.equal(documents.length, 1);
    assert.equal(documents[0].id, "DOC-2001");
    assert.equal(Number.isInteger(result.content[0]._meta.searchTime), true);
    // The GET probe carries the token too, so it passes authentication and gets the 405 (H1).
    await eventually(() => exchanges.some((e) => e.method === "GET"), "the GET probe");
    await client.close();
    assert.equal(exchanges.find((e) => e.method === "GET").status, 405);
    for (const exchange of exchanges) {
      assert.equal(exchange.authorization, `Bearer ${token.token}`, JSON.stringify(exchange));
    }
    assert.deepEqual(
      exchanges.filter((e) => e.method === "POST").map((e) => e.status),
      [200, 202, 200, 200],
    );
  });

  test("without the token connect rejects with the SDK's HTTP error carrying the 401", async () => {
    const { client, transport, exchanges } = sdkClient(gateway.url);
    await assert.rejects(client.connect(transport), assertSdkUnauthorized);
    assert.deepEqual(
      exchanges.map((e) => [e.method, e.status, e.authorization]),
      [["POST", 401, null]],
    );
    assert.equal(transport.sessionId, undefined);
  });

  test("over plain HTTP the 401 has the JSON body and the Bearer realm challenge", async () => {
    assertUnauthorized(await postInitialize(gateway.url), CHALLENGE);
    // Authentication runs before the method check: an unauthenticated GET is a 401, not a 405.
    const get = await fetch(gateway.url, { headers: { Accept: "text/event-stream" } });
    assertUnauthorized({ response: get, text: await get.text() }, CHALLENGE);
    // A token the table does not know is an invalid token.
    const unknown = `mcpat_${"A".repeat(token.token.length - "mcpat_".length)}`;
    assertUnauthorized(await postInitialize(gateway.url, unknown), INVALID_TOKEN_CHALLENGE);
    // A different scheme is no bearer token.
    const basic = await fetch(gateway.url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        Authorization: `Basic ${Buffer.from("user:pass").toString("base64")}`,
      },
      body: JSON.stringify(INITIALIZE),
    });
    assert.equal(basic.status, 401);
    assert.equal((await basic.json()).error, "unauthorized");
  });

  test("after mcp-admin token revoke the same token gets 401 invalid_token", async () => {
    const revoked = await createToken();
    const { client, transport } = sdkClient(gateway.url, revoked.token);
    await client.connect(transport);
    await client.listTools();
    assert.equal((await postInitialize(gateway.url, revoked.token)).response.status, 200);

    await admin("token", "revoke", revoked.delegationId);

    // The connected client's next request fails with the 401 …
    await assert.rejects(client.listTools(), assertSdkUnauthorized);
    await client.close();
    // … which carries the invalid_token challenge.
    assertUnauthorized(await postInitialize(gateway.url, revoked.token), INVALID_TOKEN_CHALLENGE);
    // A new client cannot connect with it either.
    const again = sdkClient(gateway.url, revoked.token);
    await assert.rejects(again.client.connect(again.transport), assertSdkUnauthorized);
    // Other delegations are untouched.
    assert.equal((await postInitialize(gateway.url, token.token)).response.status, 200);
    // Revoking an unknown delegation is refused (exit code 1).
    await assert.rejects(admin("token", "revoke", randomUUID()), /failed/);
  });
});

describe("request limit (MCP_RATE_LIMIT=2/60)", () => {
  test("the third request of a window is 429 with Retry-After", async () => {
    const limited = await createToken();
    // Windows start at multiples of 60 epoch seconds; keep the three requests in one window.
    const nowS = () => Math.floor(Date.now() / 1000);
    const windowEndOf = (s) => s - (s % 60) + 60;
    const left = windowEndOf(nowS()) - nowS();
    if (left < 5) await new Promise((resolve) => setTimeout(resolve, (left + 1) * 1000));
    const windowEnd = windowEndOf(nowS());
    const first = await postInitialize(limitedGateway.url, limited.token);
    const second = await postInitialize(limitedGateway.url, limited.token);
    const third = await postInitialize(limitedGateway.url, limited.token);
    assert.equal(first.response.status, 200, first.text);
    assert.equal(second.response.status, 200, second.text);
    assert.equal(third.response.status, 429, third.text);
    const retryAfter = Number(third.response.headers.get("retry-after"));
    assert.equal(Number.isInteger(retryAfter), true, third.response.headers.get("retry-after"));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    const untilWindowEnd = windowEnd - nowS();
    assert.ok(retryAfter <= untilWindowEnd + 1, `${retryAfter} > ${untilWindowEnd} + 1`);
    assert.equal(third.response.headers.get("content-type"), "application/json");
    assert.deepEqual(JSON.parse(third.text), {
      error: "rate_limited",
      message: `request limit reached; retry after ${retryAfter} s`,
      retryAfter,
      guid: third.response.headers.get("guid"),
    });
    // The SDK client with the same token is refused with the 429 as well.
    const { client, transport } = sdkClient(limitedGateway.url, limited.token);
    await assert.rejects(client.connect(transport), (error) => {
      assert.ok(error instanceof StreamableHTTPError, `${error}`);
      assert.equal(error.code, 429);
      assert.equal(JSON.parse(error.message.slice(ERROR_PREFIX.length)).error, "rate_limited");
      return true;
    });
    assert.equal(nowS() < windowEnd, true, "the requests above fell into one window");
    // The limit is per delegation: a fresh token still gets through on the same gateway.
    const other = await createToken();
    assert.equal((await postInitialize(limitedGateway.url, other.token)).response.status, 200);
  });
});
