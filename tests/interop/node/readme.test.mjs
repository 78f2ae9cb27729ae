// The README's "Works with" table and the Inspector commands of docs/clients.md name the client
// versions that the interop tests really install (package-lock.json, python/requirements-mcp*.txt,
// rmcp's pin), so the table cannot drift from what is tested.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, test } from "node:test";

const here = (relative) => new URL(relative, import.meta.url);

async function installedVersion(name) {
  const manifest = JSON.parse(await readFile(here(`../node_modules/${name}/package.json`), "utf8"));
  return manifest.version;
}

async function pinnedPythonVersion(requirements) {
  const text = await readFile(here(`../python/${requirements}`), "utf8");
  const match = /^mcp==(\S+)/m.exec(text);
  assert.ok(match, `mcp is pinned in ${requirements}`);
  return match[1];
}

/** The exact rmcp version the rmcp interop test pins (functions/mcp-local/Cargo.toml). */
async function pinnedRmcpVersion() {
  const text = await readFile(here("../../../functions/mcp-local/Cargo.toml"), "utf8");
  const match = /^rmcp = \{ version = "=(\S+)"/m.exec(text);
  assert.ok(match, "rmcp is pinned exactly in functions/mcp-local/Cargo.toml");
  return match[1];
}

/** The rows of the README's "Works with" table: [client cell, version cell]. */
async function worksWith() {
  const readme = await readFile(here("../../../README.md"), "utf8");
  const start = readme.indexOf("## Works with");
  assert.ok(start >= 0, "the README has a Works with section");
  const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
  return section
    .split("\n")
    .filter((line) => line.startsWith("| ") && !line.startsWith("| client"))
    .map((line) => line.split("|").map((cell) => cell.trim()).slice(1, 3));
}

function versionOf(rows, clientPart) {
  const row = rows.find(([client]) => client.includes(clientPart));
  assert.ok(row, `a Works with row for ${clientPart}`);
  return row[1];
}

describe("README Works with table", () => {
  test("names the versions of the clients the interop tests install", async () => {
    const rows = await worksWith();
    assert.equal(
      versionOf(rows, "@modelcontextprotocol/sdk"),
      await installedVersion("@modelcontextprotocol/sdk"),
    );
    assert.equal(
      versionOf(rows, "`ClientSession`"),
      await pinnedPythonVersion("requirements-mcp1.txt"),
    );
    assert.equal(
      versionOf(rows, "(`Client`)"),
      await pinnedPythonVersion("requirements-mcp2.txt"),
    );
    assert.equal(
      versionOf(rows, "@modelcontextprotocol/client"),
      await installedVersion("@modelcontextprotocol/client"),
    );
    assert.equal(versionOf(rows, "`rmcp`"), await pinnedRmcpVersion());
    assert.equal(
      versionOf(rows, "MCP Inspector"),
      `${await installedVersion("@modelcontextprotocol/inspector")} and ${await installedVersion("inspector-2")}`,
    );
    assert.equal(
      versionOf(rows, "(`server --suite all`)"),
      await installedVersion("@modelcontextprotocol/conformance"),
    );
    assert.equal(
      versionOf(rows, "(`server --requirements 2026-07-28`)"),
      await installedVersion("conformance-2"),
    );
  });

  test("the Inspector commands of docs/clients.md use the tested Inspector versions", async () => {
    const guide = await readFile(here("../../../docs/clients.md"), "utf8");
    const used = new Set(
      [...guide.matchAll(/@modelcontextprotocol\/inspector@(\S+)/g)].map((m) => m[1]),
    );
    assert.deepEqual(
      [...used].sort(),
      [
        await installedVersion("@modelcontextprotocol/inspector"),
        await installedVersion("inspector-2"),
      ].sort(),
    );
  });
});
