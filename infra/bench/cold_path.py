#!/usr/bin/env python3
"""The cold path: a cold instance's first answer to each kind of request, at Lambda CPU shares.

For each generated manifest (1,000 and 10,000 tools, cold_start.py's), with the route's
`toolSearch` off and in mode `add` (CONTRACT S1), and at the CPU shares of a 1,769 MB and a
256 MB function (cgroup v1 CFS quotas), this starts the release `mcp-local` and times exec to
the first answer of one request:

- `tools/list`: the first page of the list;
- `tools/call`: a tool with no required property called with `{}`, its endpoint a small Tool
  Service of this script (outside the group) that answers `[{"ok": true}]`; the gateway
  compiles the tool's validator, validates, forwards and maps the answer;
- `search_tools` (search on only): a query in English, the first search of the instance.

Starts are interleaved: each round starts every cell once, in an order that rotates. The
first table gives the median of `--repeats` starts per cell and the resident memory after the
first answer; the second the median CPU time each start used (user and system, all threads,
from exec to a SIGKILL right after the answer: `wait4`'s rusage), which moves much less with
the share's periods than the wall time does. Needs root and cgroup v1's cpu controller (as cold_start.py); traffic goes to 127.0.0.1
only. Not part of CI.

    python3 infra/bench/cold_path.py --binary target/release/mcp-local --repeats 5

With `--source s3`, the gateway reads each manifest as a function does in production: S3
`GetObject` (CONTRACT R2), from moto's S3 server started by this script on loopback
(`moto_server` on PATH or in the repository's `.venv/bin`, as `tests/pip-install.sh
tests/requirements.txt` installs it; the server runs outside the measured group, as the Tool
Service does). The default, `--source file`, reads a file.

With `--baseline OLD`, an earlier build is started beside it in every round (each cell's two
starts back to back), and the table gives both: a before/after on a machine whose speed drifts
from minute to minute, as a shared virtual machine's does.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cold_start import (  # noqa: E402  (no side effects on import)
    SHARES,
    CpuGroup,
    commit_label,
    generated_manifest,
    log,
    start_and_ask,
)
from run import LIST_BODY, load_average, machine, median  # noqa: E402

COLD_SHARES = [s for s in SHARES if s[0] in ("1,769 MB", "256 MB")]
TOOL_COUNTS = [1_000, 10_000]
SEARCH_QUERY = "create a support ticket for a customer"


class ToolService(http.server.BaseHTTPRequestHandler):
    """Answers every POST with the same JSON array, after reading the body."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = b'[{"ok":true}]'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args) -> None:
        pass


def rpc(method: str, params: dict | None = None) -> str:
    message = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message, separators=(",", ":"))


def check(first: str, status: int, body: bytes) -> None:
    """The answer is the one this request should get, not an error."""
    if status != 200:
        raise SystemExit(f"cold-path: {first} answered {status}: {body[:300]!r}")
    result = json.loads(body).get("result")
    if result is None:
        raise SystemExit(f"cold-path: {first} answered {body[:300]!r}")
    if first == "tools/list" and not result.get("tools"):
        raise SystemExit(f"cold-path: tools/list listed nothing: {body[:300]!r}")
    if first == "tools/call" and (result.get("isError") or "ok" not in json.dumps(result)):
        raise SystemExit(f"cold-path: tools/call answered {body[:300]!r}")
    if first == "search_tools" and not result.get("structuredContent", {}).get("tools"):
        raise SystemExit(f"cold-path: search_tools found nothing: {body[:300]!r}")


class S3Server:
    """moto's S3 server on a free loopback port, with one bucket the manifests are put in."""

    BUCKET = "manifests"

    def __init__(self) -> None:
        repo_venv = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "moto_server"
        command = shutil.which("moto_server") or (str(repo_venv) if repo_venv.exists() else None)
        if command is None:
            raise SystemExit("cold-path: --source s3 needs moto_server (tests/pip-install.sh "
                             "tests/requirements.txt installs it into .venv)")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{port}"
        self.process = subprocess.Popen([command, "-H", "127.0.0.1", "-p", str(port)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                self._put(f"/{self.BUCKET}", b"")
                break
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.process.kill()
                    raise SystemExit("cold-path: moto_server did not start") from None
                time.sleep(0.2)

    def _put(self, path: str, body: bytes) -> None:
        # moto checks no signature but routes a request to S3 by its credential scope.
        scope = "Credential=cold-path/20260101/us-east-1/s3/aws4_request"
        request = urllib.request.Request(self.endpoint + path, data=body, method="PUT", headers={
            "authorization": f"AWS4-HMAC-SHA256 {scope}, SignedHeaders=host, Signature=0",
            "content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()

    def put(self, key: str, body: bytes) -> str:
        """Stores `body` under `key`; returns the gateway's `MCP_REGISTRY_SOURCE` for it."""
        self._put(f"/{self.BUCKET}/{key}", body)
        return f"s3://{self.BUCKET}/{key}"

    def env(self) -> dict[str, str]:
        """What the gateway needs to reach this server (any credentials: moto checks none)."""
        return {"AWS_ENDPOINT_URL_S3": self.endpoint, "AWS_ACCESS_KEY_ID": "cold-path",
                "AWS_SECRET_ACCESS_KEY": "cold-path", "AWS_REGION": "us-east-1"}

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", type=Path, required=True, help="a release mcp-local")
    parser.add_argument("--repeats", type=int, default=5, help="starts per cell (default 5)")
    parser.add_argument("--baseline", type=Path,
                        help="an earlier release mcp-local, started beside --binary in every "
                             "round (each cell's two starts back to back, their order "
                             "alternating), for a before/after table on a machine whose speed "
                             "drifts")
    parser.add_argument("--json", type=Path, help="also write every measurement to this file")
    parser.add_argument("--source", choices=("file", "s3"), default="file",
                        help="where the gateway reads its manifest: a file (default) or S3 "
                             "GetObject from a moto server this script starts")
    args = parser.parse_args()
    s3 = S3Server() if args.source == "s3" else None

    service = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ToolService)
    threading.Thread(target=service.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{service.server_address[1]}/tools"
    load_before = load_average()
    workdir = Path(tempfile.mkdtemp(prefix="mcp-cold-path-"))

    cells: list[tuple[int, str, str, str, dict, str]] = []
    for count in TOOL_COUNTS:
        doc = generated_manifest(count)
        tools = doc["routes"][0]["tools"]
        for tool in tools:
            tool["_meta"]["endpoint"] = f"{endpoint}/{tool['name']}"
        # A tool without required properties (every tenth), `{}` is valid for it.
        callee = next(t["name"] for t in tools if not t["inputSchema"].get("required"))
        for search in ("off", "add"):
            if search == "add":
                doc["routes"][0]["toolSearch"] = {"mode": "add"}
            text = json.dumps(doc, separators=(",", ":"))
            if s3 is not None:
                env = {**s3.env(), "MCP_PROFILE": "prod",
                       "MCP_REGISTRY_SOURCE": s3.put(f"manifest-{count}-{search}.json",
                                                     text.encode())}
            else:
                file = workdir / f"manifest-{count}-{search}.json"
                file.write_text(text)
                env = {"MCP_PROFILE": "prod", "MCP_REGISTRY_SOURCE": f"file:{file}"}
            case = {"env": env, "args": ["--no-sample-tool-service"]}
            firsts = {
                "tools/list": LIST_BODY,
                "tools/call": rpc("tools/call", {"name": callee, "arguments": {}}),
            }
            if search == "add":
                firsts["search_tools"] = rpc("tools/call", {
                    "name": "search_tools", "arguments": {"query": SEARCH_QUERY}})
            for share, _quota in COLD_SHARES:
                for first, body in firsts.items():
                    cells.append((count, search, share, first, case, body))
        del doc, tools

    quotas = dict(COLD_SHARES)
    binaries = [args.binary] + ([args.baseline] if args.baseline else [])
    times = {(i, b): [] for i in range(len(cells)) for b in range(len(binaries))}
    rss = {(i, b): [] for i in range(len(cells)) for b in range(len(binaries))}
    cpu = {(i, b): [] for i in range(len(cells)) for b in range(len(binaries))}
    group = CpuGroup()
    t_start = time.monotonic()
    try:
        for r in range(args.repeats):
            log(f"round {r + 1}/{args.repeats}, load average {load_average()}")
            shift = r % len(cells)
            for n, i in enumerate(list(range(shift, len(cells))) + list(range(shift))):
                count, search, share, first, case, body = cells[i]
                group.set_quota(quotas[share])
                order = list(range(len(binaries)))
                if (r + n) % 2:
                    order.reverse()
                for b in order:
                    started, status, answer = start_and_ask(binaries[b], case, group, body)
                    try:
                        check(first, status, answer)
                    finally:
                        cpu_ms = started.kill_for_cpu_ms()
                    times[(i, b)].append(started.ms)
                    cpu[(i, b)].append(cpu_ms)
                    rss[(i, b)].append(started.rss_mib)
    finally:
        group.remove()
        service.shutdown()
        if s3 is not None:
            s3.stop()

    labels = " against ".join(commit_label(b) for b in binaries)
    print(f"\nmachine: {machine()}; commit {labels}; manifests from {args.source}; load average "
          f"{load_before} before, {load_average()} after; {time.monotonic() - t_start:.0f} s; "
          f"median of {args.repeats} starts, ms (RSS MiB after the first answer)\n")
    columns = [(share, b) for share, _ in COLD_SHARES for b in range(len(binaries))]
    def head(share: str, b: int) -> str:
        if not args.baseline:
            return share
        return f"{share} {'before' if b else 'after'}"

    heads = [head(share, b) for share, b in columns]

    def table(cell_of) -> None:
        print("| tools | toolSearch | first request | " + " | ".join(heads) + " |")
        print("|--:|---|---|" + "--:|" * len(columns))
        rows: dict[tuple[int, str, str], dict[tuple[str, int], str]] = {}
        for i, (count, search, share, first, _case, _body) in enumerate(cells):
            for b in range(len(binaries)):
                rows.setdefault((count, search, first), {})[(share, b)] = cell_of(i, b)
        for (count, search, first), by_column in rows.items():
            print(f"| {count:,} | {search} | `{first}` | "
                  + " | ".join(by_column.get(c, "") for c in columns) + " |")

    table(lambda i, b: f"{median(times[(i, b)]):.1f} ({median(rss[(i, b)]):.1f})")
    print(f"\nCPU time of the same starts, user and system, ms (median of {args.repeats})\n")
    table(lambda i, b: f"{median(cpu[(i, b)]):.1f}")
    if args.json:
        args.json.write_text(json.dumps([
            {"binary": str(binaries[b]), "tools": c[0], "toolSearch": c[1], "share": c[2],
             "first": c[3], "ms": times[(i, b)], "rss_mib": rss[(i, b)],
             "cpu_ms": cpu[(i, b)]}
            for i, c in enumerate(cells) for b in range(len(binaries))], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
