// Starting the real `mcp-local` binary (path in MCP_LOCAL_BIN) on loopback for the interop tests.
//
// `startGateway` runs one instance and reads its endpoint from the line it prints; `startInterop`
// runs the two the tests use: the README's sample route (`/mcp/core`, baked sample manifest and
// in-process sample Tool Service) and the `interop` route (`/mcp/interop`, a manifest file whose
// tools call the interop Tool Service of ./tool-service.mjs).

import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";

import { manifest, startToolService } from "./tool-service.mjs";

const STARTUP_TIMEOUT_MS = 30_000;

function binary() {
  const bin = process.env.MCP_LOCAL_BIN;
  if (!bin) {
    throw new Error("MCP_LOCAL_BIN must name the mcp-local binary (tests/run.sh sets it)");
  }
  return bin;
}

/** A free loopback port (another process may take it before it is used; callers retry). */
export async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts `mcp-local --listen <listen> --log-json <args…>` with `env` on top of an environment
 * without MCP_* variables. Resolves to `{ url, logs, usageEvents, stop }` once it serves. With
 * `logFile`, every log line is also appended to that file.
 */
export async function startGateway({ env = {}, args = [], listen = "127.0.0.1:0", logFile } = {}) {
  const childEnv = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("MCP_")),
  );
  Object.assign(childEnv, env);
  const child = spawn(binary(), ["--listen", listen, "--log-json", ...args], {
    env: childEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs = [];
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    logs.push(line);
    if (logFile) appendFileSync(logFile, `${line}\n`);
  });
  const stderr = [];
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`mcp-local did not start in time:\n${stderr.join("\n")}`));
    }, STARTUP_TIMEOUT_MS);
    readline.createInterface({ input: child.stderr }).on("line", (line) => {
      stderr.push(line);
      const match = /^mcp-local: MCP endpoint (http:\/\/\S+)/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`mcp-local exited with ${code}:\n${stderr.join("\n")}`));
    });
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  return {
    url,
    logs,
    /** The usage events logged so far (CONTRACT U1). */
    usageEvents() {
      return logs
        .map((line) => {
          try {
            return JSON.parse(line);
          } catch {
            return null;
          }
        })
        .filter((event) => event?.target === "mcp_gateway::usage");
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}

/**
 * Starts the interop Tool Service and both gateways. The interop gateway listens on a port known
 * beforehand so that its own origin can be allowed (CONTRACT H5), as a browser-facing local
 * server must accept its loopback origin. With `logDir`, the gateways' log lines also go to
 * `sample.log` and `interop.log` there; `jsonSchemaFixture` is passed to the interop manifest
 * (`manifest` of ./tool-service.mjs).
 */
export async function startInterop({ logDir, jsonSchemaFixture } = {}) {
  const logFile = (name) => (logDir ? path.join(logDir, `${name}.log`) : undefined);
  const toolService = await startToolService();
  const dir = await mkdtemp(path.join(os.tmpdir(), "mcp-interop-"));
  const manifestPath = path.join(dir, "interop.json");
  await writeFile(
    manifestPath,
    JSON.stringify(manifest(toolService.origin, { jsonSchemaFixture }), null, 2),
  );
  const started = [];
  const stop = async () => {
    await Promise.all(started.map((g) => g.stop()));
    await toolService.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    started.push(
      await startGateway({
        args: ["--sample-tool-service", "127.0.0.1:0"],
        logFile: logFile("sample"),
      }),
    );
    let interop;
    for (let attempt = 1; !interop; attempt += 1) {
      const port = await freePort();
      try {
        interop = await startGateway({
          listen: `127.0.0.1:${port}`,
          args: ["--no-sample-tool-service"],
          logFile: logFile("interop"),
          env: {
            MCP_PROFILE: "prod",
            MCP_REGISTRY_SOURCE: `file:${manifestPath}`,
            MCP_ENDPOINT_PATH: "/mcp/interop",
            MCP_ALLOWED_ORIGINS: `http://127.0.0.1:${port},http://localhost:${port}`,
          },
        });
      } catch (error) {
        if (attempt >= 3) throw error;
      }
    }
    started.push(interop);
    return {
      sample: started[0],
      interop,
      sampleUrl: started[0].url,
      interopUrl: interop.url,
      toolService,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
