#!/usr/bin/env python3
"""Load benchmark of the MCP gateway against the direct call, an nginx hop and three MCP SDK peers.

On one machine, in one run: first measures the cold start of the gateway (binary sizes, process
start to the first answered `initialize`) on the idle machine; then starts a fast local Tool
Service (a fixed small JSON answer), an nginx reverse proxy in front of it (proxy_pass with
upstream keep-alive), the gateway (`mcp-local` release build) and three stateless JSON-response
MCP servers whose one tool POSTs to the same Tool Service (TypeScript SDK, Python SDK, rmcp). Then measures every contender with oha at fixed
connection counts and fixed request counts, round after round, the contenders interleaved in each
round so that a change in machine load hits all of them alike. Prints one table: requests/s, p50,
p99, resident memory after the run, and ratios to the direct call, to the nginx hop and to each
peer, followed by the cold-start figures; run as root, these include the start at the CPU share
of 256 MB, 1,024 MB and 1,769 MB Lambda functions (`cold_start.py`, which also draws
`cold-start.svg`).

Traffic goes to 127.0.0.1 only; every run is bounded by its request count. Not part of CI.

    python3 infra/bench/run.py            # the full run (a few minutes)
    python3 infra/bench/run.py --smoke    # tiny request counts, to check the set-up

Needs: cargo, oha (`cargo install oha --version 1.16.0 --locked` if it is missing), Debian's nginx, Node 20 + npm, Python 3.11. Installs the peers' locked dependencies
under infra/bench/peers/.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent.parent
PEERS = BENCH / "peers"
OHA_VERSION = "1.16.0"
PROTOCOL_VERSION = "2025-11-25"

# The one tool every MCP contender serves; the gateway's manifest gives it this inputSchema and
# the peers declare the same shape in their SDK's own way (zod, pydantic, schemars).
INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 500},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        "filters": {
            "type": "object",
            "properties": {
                "department": {"type": "string", "enum": ["HR", "IT", "Finance", "Legal"]},
                "updatedAfter": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
            },
            "additionalProperties": False,
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}
ARGUMENTS = {"query": "remote work", "limit": 5, "filters": {"department": "HR", "tags": ["policy"]}}
CALL_BODY = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
     "params": {"name": "search_documents", "arguments": ARGUMENTS}},
    separators=(",", ":"),
)
LIST_BODY = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
MODERN_VERSION = "2026-07-28"
# The same call at MCP 2026-07-28 (CONTRACT N): one request, no handshake, the envelope in
# params._meta and the mirrored headers.
MODERN_CALL_BODY = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
     "params": {"name": "search_documents", "arguments": ARGUMENTS,
                "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
                          "io.modelcontextprotocol/clientCapabilities": {}}}},
    separators=(",", ":"),
)
MODERN_METHOD = "tools/call (2026-07-28)"
# A Lambda function tool (CONTRACT M4, X10): the sample function functions/sample-lambda-tool
# under `cargo lambda watch`, which the gateway invokes through the Lambda Invoke API at
# `AWS_ENDPOINT_URL_LAMBDA`, here the bench relay (lambda_relay.py) in front of the emulator.
LAMBDA_METHOD = "tools/call (Lambda tool)"
LAMBDA_FUNCTION = "sample-lambda-tool"
LAMBDA_ARN = f"arn:aws:lambda:us-east-1:123456789012:function:{LAMBDA_FUNCTION}"
LAMBDA_TOOL = {
    "name": "lookup_glossary",
    "title": "Look up a glossary term",
    "description": "The definition of a company glossary term, in Korean or English.",
    "inputSchema": {"type": "object",
                    "properties": {"term": {"type": "string", "minLength": 1},
                                   "language": {"type": "string", "enum": ["ko", "en"]}},
                    "required": ["term"], "additionalProperties": False},
    "annotations": {"readOnlyHint": True},
    "_meta": {"version": "1.0.0", "endpoint": LAMBDA_ARN, "timeoutMs": 5000},
}
LAMBDA_CALL_BODY = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
     "params": {"name": "lookup_glossary", "arguments": {"term": "SLA", "language": "en"}}},
    separators=(",", ":"),
)
LAMBDA_ENV = {
    "AWS_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
    "AWS_EC2_METADATA_DISABLED": "true",
}
INITIALIZE_BODY = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"}}},
    separators=(",", ":"),
)
MCP_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": PROTOCOL_VERSION,
}
MODERN_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": MODERN_VERSION,
    "mcp-method": "tools/call",
    "mcp-name": "search_documents",
}


def log(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    log(" ".join(cmd))
    return subprocess.run(cmd, check=True, **kwargs)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def manifest(tool_service: str, tools: int = 1) -> dict:
    """A single-route manifest: `search_documents` (the benchmark's tool) and `tools - 1` more."""
    entries = []
    for i in range(tools):
        entries.append({
            "name": "search_documents" if i == 0 else f"tool_{i:04}",
            "title": "Search documents" if i == 0 else f"Tool {i}",
            "description": "Full-text search over the document store; best matches first.",
            "inputSchema": INPUT_SCHEMA,
            "annotations": {"readOnlyHint": True},
            "_meta": {"version": "1.0.0", "endpoint": tool_service, "timeoutMs": 5000},
        })
    return {
        "manifestVersion": 1,
        "routes": [{"routeKey": "core",
                    "server": {"name": "bench-gateway", "title": "Bench", "version": "1.0.0"},
                    "tools": entries}],
    }


# ---------------------------------------------------------------------------------------------
# Building and installing


def cargo_target_dir() -> Path:
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))


def ensure_oha() -> str:
    oha = shutil.which("oha")
    if oha is None:
        run(["cargo", "install", "oha", "--version", OHA_VERSION, "--locked"])
        oha = shutil.which("oha") or str(Path.home() / ".cargo/bin/oha")
    return oha


def cargo_lambda() -> str:
    """`cargo-lambda` from $CARGO_LAMBDA, the repository's .venv (tests/run.sh fills it) or PATH."""
    found = (os.environ.get("CARGO_LAMBDA")
             or (str(ROOT / ".venv/bin/cargo-lambda")
                 if (ROOT / ".venv/bin/cargo-lambda").exists() else None)
             or shutil.which("cargo-lambda"))
    if found is None:
        raise SystemExit("bench: cargo-lambda is missing: run ./tests/run.sh, which installs it "
                         "in .venv, or set CARGO_LAMBDA")
    return found


def ensure_nginx() -> str:
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if nginx is None:
        run(["apt-get", "update", "-qq"])
        run(["apt-get", "install", "-y", "-qq", "nginx"])
        nginx = "/usr/sbin/nginx"
    return nginx


def build(skip: bool) -> dict[str, Path]:
    """Release builds of the gateway binaries and the bench servers; the peers' dependencies."""
    target = cargo_target_dir()
    bench_target = target / "bench-servers"
    if not skip:
        run(["cargo", "build", "--release", "--locked", "-p", "mcp-local", "-p", "mcp-core",
             "-p", "mcp-router"], cwd=ROOT)
        run(["cargo", "build", "--release", "--locked"], cwd=BENCH / "servers",
            env={**os.environ, "CARGO_TARGET_DIR": str(bench_target)})
        ts = PEERS / "typescript"
        if not (ts / "node_modules").exists():
            run(["npm", "ci", "--no-audit", "--no-fund"], cwd=ts)
        py = PEERS / "python"
        if not (py / ".venv").exists():
            run([sys.executable, "-m", "venv", str(py / ".venv")])
            run([str(py / ".venv/bin/pip"), "install", "-q", "-r", str(py / "requirements.txt")])
    return {
        "mcp-local": target / "release/mcp-local",
        "mcp-core": target / "release/mcp-core",
        "mcp-router": target / "release/mcp-router",
        "tool-service": bench_target / "release/tool-service",
        "rmcp-peer": bench_target / "release/rmcp-peer",
    }


# ---------------------------------------------------------------------------------------------
# Processes


def tree_rss_kib(pid: int) -> int:
    """Resident memory of `pid` and all its descendants, in KiB."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


@dataclass
class Server:
    name: str
    proc: subprocess.Popen
    port: int

    def rss_mib(self) -> float:
        return tree_rss_kib(self.proc.pid) / 1024

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@dataclass
class Group(Server):
    """A server started in a process group of its own, stopped with all its descendants
    (`cargo lambda watch` and the functions it starts)."""

    def stop(self) -> None:
        if self.proc.poll() is None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(self.proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.proc.wait(timeout=5)
                    break
                except subprocess.TimeoutExpired:
                    continue


def start_lambda(workdir: Path, release: bool) -> tuple[list[Server], str]:
    """The bench relay and `cargo lambda watch` serving the sample function through it; returns
    them and the relay's URL (the gateway's `AWS_ENDPOINT_URL_LAMBDA`). The first invocation
    builds the function: waited for here, before anything is measured."""
    import http.client

    from lambda_relay import write_runner

    relay_port, watch_port = free_port(), free_port()
    relay = start("lambda-relay", [sys.executable, str(BENCH / "lambda_relay.py"), "--port",
                                   str(relay_port), "--emulator-port", str(watch_port)],
                  relay_port, workdir)
    variable, runner = write_runner(workdir, relay_port)
    env_file = workdir / "functions.env"
    env_file.write_text("RUST_LOG=warn\n")
    cmd = [cargo_lambda(), "lambda", "watch", "--ignore-changes", "--invoke-address",
           "127.0.0.1", "--invoke-port", str(watch_port), "--env-file", str(env_file)]
    if release:
        cmd.append("--release")
    log(" ".join(cmd))
    out = open(workdir / "cargo-lambda-watch.log", "wb")
    env = {name: value for name, value in os.environ.items() if not name.startswith("MCP_")}
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
                            env={**env, variable: str(runner)}, start_new_session=True)
    watch = Group("cargo-lambda-watch", proc, watch_port)
    try:
        wait_for_port(watch_port, proc, "cargo lambda watch", timeout_s=120)
        log(f"first invocation of {LAMBDA_FUNCTION} (builds it)")
        connection = http.client.HTTPConnection("127.0.0.1", relay_port, timeout=1800)
        context = base64.b64encode(json.dumps(
            {"custom": {"mcpToolName": "list_glossary_terms"}}).encode()).decode()
        connection.request("POST", f"/2015-03-31/functions/{LAMBDA_FUNCTION}/invocations",
                           body=b"{}", headers={"X-Amz-Client-Context": context})
        response = connection.getresponse()
        answer = response.read().decode("utf-8", "replace")
        connection.close()
        if response.status != 200 or "SLA" not in answer:
            raise SystemExit(f"bench: {LAMBDA_FUNCTION} answered {response.status}: "
                             f"{answer[:300]}")
    except BaseException:
        watch.stop()
        relay.stop()
        raise
    return [relay, watch], f"http://127.0.0.1:{relay_port}"


def wait_for_port(port: int, proc: subprocess.Popen, name: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"bench: {name} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise SystemExit(f"bench: {name} did not listen on {port} within {timeout_s} s")


def start(name: str, cmd: list[str], port: int, workdir: Path, env: dict | None = None,
          cwd: Path | None = None) -> Server:
    out = open(workdir / f"{name}.log", "wb")
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd,
                            env={**os.environ, **(env or {})})
    wait_for_port(port, proc, name)
    return Server(name, proc, port)


def nginx_conf(workdir: Path, port: int, upstream_port: int) -> Path:
    conf = workdir / "nginx.conf"
    conf.write_text(f"""
worker_processes auto;
daemon off;
pid {workdir}/nginx.pid;
error_log {workdir}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {workdir}/nginx-body;
    proxy_temp_path {workdir}/nginx-proxy;
    fastcgi_temp_path {workdir}/nginx-fastcgi;
    uwsgi_temp_path {workdir}/nginx-uwsgi;
    scgi_temp_path {workdir}/nginx-scgi;
    upstream tool_service {{
        server 127.0.0.1:{upstream_port};
        keepalive 64;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://tool_service;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }}
    }}
}}
""")
    return conf


def post(port: int, path: str, body: str, headers: dict[str, str]) -> tuple[int, str]:
    """One HTTP/1.1 POST on a fresh connection; returns the status and the body."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", path, body=body.encode(), headers=headers)
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


# ---------------------------------------------------------------------------------------------
# Measuring


@dataclass
class Scenario:
    contender: str
    method: str
    connections: int
    port: int
    path: str
    body: str
    headers: dict[str, str]
    requests: int
    server: str
    runs: list[dict] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.contender, self.method, self.connections)


def oha_run(oha: str, s: Scenario, requests: int) -> dict:
    cmd = [oha, "--no-tui", "--output-format", "json", "-n", str(requests),
           "-c", str(s.connections), "-m", "POST", "-d", s.body]
    for name, value in s.headers.items():
        cmd += ["-H", f"{name}: {value}"]
    cmd.append(f"http://127.0.0.1:{s.port}{s.path}")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    statuses = report.get("statusCodeDistribution", {})
    errors = report.get("errorDistribution", {})
    ok = statuses.get("200", 0)
    if ok != requests or errors:
        raise SystemExit(f"bench: {s.key}: {ok}/{requests} answered 200; "
                         f"statuses {statuses}, errors {errors}")
    percentiles = report["latencyPercentiles"]
    return {
        "rps": report["summary"]["requestsPerSec"],
        "p50_ms": percentiles["p50"] * 1000,
        "p99_ms": percentiles["p99"] * 1000,
    }


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def summarize(s: Scenario) -> dict:
    return {
        "rps": median([r["rps"] for r in s.runs]),
        "p50_ms": median([r["p50_ms"] for r in s.runs]),
        "p99_ms": median([r["p99_ms"] for r in s.runs]),
    }


# ---------------------------------------------------------------------------------------------
# Cold start


def first_answer_ms(binary: Path, env: dict[str, str], args: list[str], port: int) -> float:
    """Milliseconds from spawning `binary` to the first answered `initialize` on `port`."""
    request = (
        f"POST /mcp/core HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
        f"accept: application/json, text/event-stream\r\ncontent-length: {len(INITIALIZE_BODY)}\r\n"
        f"connection: close\r\n\r\n{INITIALIZE_BODY}"
    ).encode()
    started = time.perf_counter()
    proc = subprocess.Popen([str(binary), "--listen", f"127.0.0.1:{port}", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, **env})
    try:
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"bench: {binary.name} exited with {proc.returncode}")
            if time.perf_counter() - started > 30:
                raise SystemExit(f"bench: {binary.name} did not answer within 30 s")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                    s.sendall(request)
                    answer = b""
                    while chunk := s.recv(65536):
                        answer += chunk
            except OSError:
                time.sleep(0.0002)
                continue
            elapsed = (time.perf_counter() - started) * 1000
            if not answer.startswith(b"HTTP/1.1 200") or b'"protocolVersion"' not in answer:
                raise SystemExit(f"bench: unexpected initialize answer {answer[:200]!r}")
            return elapsed
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait()


def cold_start(binaries: dict[str, Path], workdir: Path, repeats: int) -> list[tuple[str, str]]:
    rows = []
    for name in ("mcp-local", "mcp-core", "mcp-router"):
        path = binaries[name]
        if path.exists():
            size = path.stat().st_size
            stripped = subprocess.run(["file", "-b", str(path)], capture_output=True,
                                      text=True).stdout
            what = "stripped" if "not stripped" not in stripped else "NOT stripped"
            rows.append((f"`{name}` release binary ({what})", f"{size / 1_000_000:.1f} MB"))
    big = workdir / "manifest-1000.json"
    big.write_text(json.dumps(manifest("http://127.0.0.1:9/tools/search", 1000)))
    cases = [
        ("baked sample", {"MCP_REGISTRY_SOURCE": "baked:sample", "MCP_PROFILE": "prod"},
         ["--sample-tool-service", "127.0.0.1:0"]),
        ("1,000-tool manifest file", {"MCP_REGISTRY_SOURCE": f"file:{big}", "MCP_PROFILE": "prod"},
         ["--no-sample-tool-service"]),
    ]
    for label, env, args in cases:
        times = [first_answer_ms(binaries["mcp-local"], env, args, free_port())
                 for _ in range(repeats)]
        rows.append((f"start to first `initialize` answer, {label} "
                     f"(median / max of {repeats})",
                     f"{median(times):.1f} / {max(times):.1f} ms"))
    # The 1,000-tool manifest must really be served.
    port = free_port()
    proc = subprocess.Popen([str(binaries["mcp-local"]), "--listen", f"127.0.0.1:{port}",
                             "--no-sample-tool-service"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                            env={**os.environ, **cases[1][1]})
    try:
        wait_for_port(port, proc, "mcp-local")
        status, text = post(port, "/mcp/core", LIST_BODY, MCP_HEADERS)
        tools = len(json.loads(text)["result"]["tools"])
        if status != 200 or tools != 1000:
            raise SystemExit(f"bench: 1,000-tool manifest served {tools} tools ({status})")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait()
    return rows


def cold_start_at_cpu_shares(binary: Path, smoke: bool) -> str:
    """Start to first `tools/list` answer under the CPU share of a 256 MB, 1,024 MB and 1,769 MB
    function, with the baked sample and generated 1,000- and 10,000-tool manifests, resident
    memory after the start, and a tool's first call against a later one: `cold_start.py` on
    this build (cgroup v1 CPU quotas; needs root), which also writes the chart
    `cold-start.svg`. Its tables, or why they are missing."""
    if os.geteuid() != 0 or not Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").exists():
        return "(No cold start at CPU shares: it needs root and cgroup v1's cpu controller.)"
    repeats = ["--repeats", "1", "--call-runs", "1"] if smoke else ["--repeats", "9"]
    done = subprocess.run([sys.executable, str(BENCH / "cold_start.py"), "--binary",
                           f"this build={binary}", *repeats], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench: cold_start.py failed:\n{done.stderr[-2000:]}")
    return done.stdout.strip()


# ---------------------------------------------------------------------------------------------
# The run


def machine() -> str:
    cpu = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{cpu}, {os.cpu_count()} cores, {mem_gib:.0f} GiB, Linux {platform.release()}"


def versions(oha: str, nginx: str, lambda_cli: str) -> str:
    def out(cmd: list[str]) -> str:
        r = subprocess.run(cmd, capture_output=True, text=True)
        return (r.stdout + r.stderr).strip().splitlines()[0]

    node = out(["node", "--version"])
    ts = json.loads((PEERS / "typescript/package.json").read_text())["dependencies"][
        "@modelcontextprotocol/sdk"]
    py = next(line for line in (PEERS / "python/requirements.txt").read_text().splitlines()
              if line.startswith("mcp=="))
    rmcp = next(line for line in (BENCH / "servers/Cargo.toml").read_text().splitlines()
                if line.startswith("rmcp"))
    rmcp_version = rmcp.split('"=')[1].split('"')[0]
    return (f"{out([oha, '--version'])}, {out([nginx, '-v']).replace('nginx version: ', '')}, "
            f"Node {node} + @modelcontextprotocol/sdk {ts}, Python {platform.python_version()} + "
            f"{py.replace('==', ' ')}, rmcp {rmcp_version}, "
            f"{out([lambda_cli, 'lambda', '--version'])}")


def fmt_ratio(value: float, reference: float | None) -> str:
    if reference is None or reference != reference or reference == 0:
        return ""
    return f"{value / reference:.2f}x"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny request counts, one round")
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds (default 5)")
    parser.add_argument("--skip-build", action="store_true", help="use the binaries as built")
    parser.add_argument("--json", type=Path, help="also write every run as JSON to this file")
    args = parser.parse_args()

    rounds = 1 if args.smoke else args.rounds
    # Request counts per oha run: (one connection, 32 connections) by speed class.
    counts = {
        "fast": (100, 400) if args.smoke else (5_000, 40_000),
        "node": (20, 100) if args.smoke else (1_000, 4_000),
        "python": (20, 100) if args.smoke else (500, 1_500),
        "lambda": (20, 100) if args.smoke else (500, 1_500),
    }

    oha = ensure_oha()
    nginx = ensure_nginx()
    lambda_cli = cargo_lambda()
    binaries = build(args.skip_build)
    workdir = Path(tempfile.mkdtemp(prefix="mcp-bench-"))
    load_before = load_average()
    log(f"work dir {workdir}; load average {load_before}")

    # Cold start first, on the idle machine: right after the load runs, the kernel is still
    # taking back the memory the stopped peers freed, and every start measured then is slower
    # (a 1,000-tool start 27-30 ms there against 20-21 ms a minute later, same binary).
    log("cold start")
    cold = cold_start(binaries, workdir, 3 if args.smoke else 15)
    shares = cold_start_at_cpu_shares(binaries["mcp-local"], args.smoke)

    servers: list[Server] = []
    try:
        tool_port = free_port()
        servers.append(start("tool-service",
                             [str(binaries["tool-service"]), f"127.0.0.1:{tool_port}"],
                             tool_port, workdir))
        tool_url = f"http://127.0.0.1:{tool_port}/tools/search_documents"

        nginx_port = free_port()
        servers.append(start("nginx", [nginx, "-p", str(workdir), "-e",
                                       str(workdir / "nginx-error.log"), "-c",
                                       str(nginx_conf(workdir, nginx_port, tool_port))],
                             nginx_port, workdir))

        lambda_servers, lambda_endpoint = start_lambda(workdir, release=True)
        servers.extend(lambda_servers)

        gateway_port = free_port()
        (workdir / "manifest.json").write_text(json.dumps(manifest(tool_url)))
        servers.append(start(
            "gateway",
            [str(binaries["mcp-local"]), "--listen", f"127.0.0.1:{gateway_port}",
             "--no-sample-tool-service", "--log-json"],
            gateway_port, workdir,
            env={"MCP_REGISTRY_SOURCE": f"file:{workdir / 'manifest.json'}",
                 "MCP_PROFILE": "prod", "RUST_LOG": "info"}))
        # The same gateway build, configured alike, serving the one Lambda tool (its own
        # process, so that the other gateway's tools/list stays one tool like the peers').
        lambda_gateway_port = free_port()
        lambda_manifest = manifest(tool_url)
        lambda_manifest["routes"][0]["tools"] = [LAMBDA_TOOL]
        (workdir / "manifest-lambda.json").write_text(json.dumps(lambda_manifest))
        servers.append(start(
            "gateway-lambda",
            [str(binaries["mcp-local"]), "--listen", f"127.0.0.1:{lambda_gateway_port}",
             "--no-sample-tool-service", "--log-json"],
            lambda_gateway_port, workdir,
            env={"MCP_REGISTRY_SOURCE": f"file:{workdir / 'manifest-lambda.json'}",
                 "MCP_PROFILE": "prod", "RUST_LOG": "info",
                 "AWS_ENDPOINT_URL_LAMBDA": lambda_endpoint, **LAMBDA_ENV}))
        # The usage log (one JSON line per request) stays on, as on Lambda; it goes to a file.

        ts_port, py_port, rmcp_port = free_port(), free_port(), free_port()
        servers.append(start("typescript-sdk", ["node", "server.mjs", str(ts_port), tool_url],
                             ts_port, workdir, cwd=PEERS / "typescript"))
        servers.append(start("python-sdk", [str(PEERS / "python/.venv/bin/python"), "server.py",
                                            str(py_port), tool_url],
                             py_port, workdir, cwd=PEERS / "python"))
        servers.append(start("rmcp", [str(binaries["rmcp-peer"]), f"127.0.0.1:{rmcp_port}",
                                      tool_url], rmcp_port, workdir))
        by_name = {s.name: s for s in servers}

        plain = {"content-type": "application/json"}
        args_body = json.dumps(ARGUMENTS, separators=(",", ":"))
        endpoints = {  # contender: (port, path, speed class)
            "gateway": (gateway_port, "/mcp/core", "fast"),
            "rmcp": (rmcp_port, "/mcp", "fast"),
            "typescript-sdk": (ts_port, "/mcp", "node"),
            "python-sdk": (py_port, "/mcp", "python"),
        }

        # Every MCP contender must answer tools/call with the Tool Service's document.
        status, text = post(lambda_gateway_port, "/mcp/core", LAMBDA_CALL_BODY, MCP_HEADERS)
        if (status != 200 or '"isError":false' not in text
                or "Service level agreement" not in text):
            raise SystemExit(f"bench: gateway Lambda tools/call answered {status}: {text[:300]}")
        for name, (port, path, _) in endpoints.items():
            status, text = post(port, path, CALL_BODY, MCP_HEADERS)
            if status != 200 or "Remote work policy" not in text or '"isError":true' in text:
                raise SystemExit(f"bench: {name} tools/call answered {status}: {text[:300]}")
            status, text = post(port, path, LIST_BODY, MCP_HEADERS)
            if status != 200 or "search_documents" not in text:
                raise SystemExit(f"bench: {name} tools/list answered {status}: {text[:300]}")
        status, text = post(gateway_port, "/mcp/core", MODERN_CALL_BODY, MODERN_HEADERS)
        if status != 200 or "Remote work policy" not in text or '"resultType":"complete"' not in text:
            raise SystemExit(f"bench: gateway modern tools/call answered {status}: {text[:300]}")
        for name, port in (("direct", tool_port), ("nginx", nginx_port)):
            status, text = post(port, "/tools/search_documents", args_body, plain)
            if status != 200 or "Remote work policy" not in text:
                raise SystemExit(f"bench: {name} answered {status}: {text[:300]}")

        scenarios: list[Scenario] = []
        for connections, index in ((1, 0), (32, 1)):
            n = counts["fast"][index]
            scenarios.append(Scenario("direct", "POST (no MCP)", connections, tool_port,
                                      "/tools/search_documents", args_body, plain, n,
                                      "tool-service"))
            scenarios.append(Scenario("nginx hop", "POST (no MCP)", connections, nginx_port,
                                      "/tools/search_documents", args_body, plain, n, "nginx"))
            for name, (port, path, speed) in endpoints.items():
                m = counts[speed][index]
                scenarios.append(Scenario(name, "tools/call", connections, port, path,
                                          CALL_BODY, MCP_HEADERS, m, name))
                if name == "gateway":
                    scenarios.append(Scenario(name, MODERN_METHOD, connections, port, path,
                                              MODERN_CALL_BODY, MODERN_HEADERS, m, name))
                    scenarios.append(Scenario(name, LAMBDA_METHOD, connections,
                                              lambda_gateway_port, path, LAMBDA_CALL_BODY,
                                              MCP_HEADERS, counts["lambda"][index],
                                              "gateway-lambda"))
                if connections == 32:
                    scenarios.append(Scenario(name, "tools/list", connections, port, path,
                                              LIST_BODY, MCP_HEADERS, m, name))

        log("warm-up")
        for s in scenarios:
            oha_run(oha, s, max(s.connections * 4, s.requests // 10))
        for r in range(rounds):
            log(f"round {r + 1}/{rounds}, load average {load_average()}")
            for s in scenarios:
                s.runs.append(oha_run(oha, s, s.requests))
        load_after = load_average()
        rss = {s.name: s.rss_mib() for s in servers}
    finally:
        for s in reversed(servers):
            s.stop()

    # The table.
    summary = {s.key: summarize(s) for s in scenarios}

    def ref(contender: str, method: str, connections: int) -> float | None:
        found = summary.get((contender, method, connections))
        return found["rps"] if found else None

    peers = ["typescript-sdk", "python-sdk", "rmcp"]
    lines = [
        "| contender | method | conns | req/s | p50 ms | p99 ms | RSS MiB | vs direct | vs nginx "
        "| vs TypeScript | vs Python | vs rmcp |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for s in scenarios:
        m = summary[s.key]
        c = s.connections
        peer_refs = [
            fmt_ratio(m["rps"], ref(p, s.method, c)) if p != s.contender
            and s.method.startswith("tools/") else ""
            for p in peers
        ]
        lines.append(
            f"| {s.contender} | {s.method} | {c} | {m['rps']:,.0f} | {m['p50_ms']:.3f} | "
            f"{m['p99_ms']:.3f} | {rss[s.server]:.1f} | "
            f"{fmt_ratio(m['rps'], ref('direct', 'POST (no MCP)', c))} | "
            f"{fmt_ratio(m['rps'], ref('nginx hop', 'POST (no MCP)', c))} | "
            + " | ".join(peer_refs) + " |"
        )
    direct_p50 = summary[("direct", "POST (no MCP)", 1)]["p50_ms"]
    gateway_p50 = summary[("gateway", "tools/call", 1)]["p50_ms"]
    modern_p50 = summary[("gateway", MODERN_METHOD, 1)]["p50_ms"]
    lambda_p50 = summary[("gateway", LAMBDA_METHOD, 1)]["p50_ms"]
    lines += ["", f"Gateway tools/call p50 over the direct call at one connection: "
                  f"+{gateway_p50 - direct_p50:.3f} ms (2026-07-28: "
                  f"+{modern_p50 - direct_p50:.3f} ms). 2026-07-28 tools/call against "
                  f"2025-11-25 at 32 connections: "
                  f"{fmt_ratio(ref('gateway', MODERN_METHOD, 32), ref('gateway', 'tools/call', 32))}.",
              "", f"The Lambda tool row invokes `{LAMBDA_FUNCTION}` (release build) through the "
                  f"Lambda Invoke API: gateway → bench relay (Python) → `cargo lambda watch` "
                  f"(one function instance) → the function; it measures that whole chain, not "
                  f"AWS Lambda. p50 at one connection: {lambda_p50:.3f} ms."]
    lines += ["", "| cold start | figure |", "|---|---|"]
    lines += [f"| {label} | {value} |" for label, value in cold]
    lines += ["", shares]
    lines += [
        "",
        f"Machine: {machine()}. Load average (1, 5, 15 min) {load_before} before, "
        f"{load_after} after the load runs.",
        f"Runs: {rounds} round(s), contenders interleaved in each, medians shown; requests per "
        f"run at 1/32 connections: Rust, nginx and direct {counts['fast'][0]:,}/"
        f"{counts['fast'][1]:,}, TypeScript {counts['node'][0]:,}/{counts['node'][1]:,}, "
        f"Python {counts['python'][0]:,}/{counts['python'][1]:,}, Lambda tool "
        f"{counts['lambda'][0]:,}/{counts['lambda'][1]:,}.",
        f"Versions: {versions(oha, nginx, lambda_cli)}.",
    ]
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(
            {"scenarios": [{"contender": s.contender, "method": s.method,
                            "connections": s.connections, "requests": s.requests,
                            "runs": s.runs, "median": summary[s.key]} for s in scenarios],
             "rss_mib": rss, "cold_start": cold, "cold_start_at_cpu_shares": shares,
             "load_before": load_before,
             "load_after": load_after, "machine": machine()}, indent=2))
    shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
