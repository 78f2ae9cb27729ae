#!/usr/bin/env python3
"""Cold start of the gateway at AWS Lambda CPU shares, one or more builds side by side.

A Lambda function gets CPU in proportion to its memory: 1 vCPU at 1,769 MB, 0.578 at 1,024 MB,
0.145 at 256 MB. This script runs `mcp-local` (release builds, given with `--binary LABEL=PATH`)
under cgroup v1 CPU quotas that give it those shares, and measures the time from the exec of
the gateway (already in its group) to its first answered `tools/list` (median of `--repeats`
starts; see `start_and_list` for why the clock starts at the exec), on the baked sample
manifest and on generated manifests of 1,000 and 10,000 tools whose input schemas differ from
tool to tool. The builds are interleaved: every round starts each build once per case, in an
order that rotates from round to round. After each first answer it reads the process's resident
memory.

At 1 vCPU it then measures what a tool's first `tools/call` costs over a later one: on the
1,000-tool manifest, after the first `tools/list`, 50 different tools are called once each with
invalid arguments (`{}` for a tool with a required property: the gateway compiles or fetches the
tool's validator, validates and answers -32602 without a Tool Service), then the same 50 again,
over one keep-alive connection.

Prints two Markdown tables, the machine, the load average before and after and the commit of each
build; writes an SVG chart (start time against manifest size, one line per CPU share and build).
Needs root and cgroup v1's cpu controller at /sys/fs/cgroup/cpu; the one group it creates,
mcp-bench-<pid>, is removed at the end. Traffic goes to 127.0.0.1 only. Not part of CI.

    python3 infra/bench/cold_start.py \\
        --binary before=/tmp/wt-before/target/release/mcp-local \\
        --binary after=target/release/mcp-local --repeats 9 --json /tmp/cold-start.json
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import (  # noqa: E402  (run.py has no side effects on import)
    BENCH,
    LIST_BODY,
    PROTOCOL_VERSION,
    ROOT,
    free_port,
    load_average,
    machine,
    median,
)

CGROUP_CPU = Path("/sys/fs/cgroup/cpu")
PERIOD_US = 100_000
# (label, cpu.cfs_quota_us per PERIOD_US; None: no quota). Lambda: 1 vCPU at 1,769 MB, and CPU
# in proportion to memory below that (1,024 / 1,769 = 0.5788, 256 / 1,769 = 0.1447).
SHARES: list[tuple[str, int | None]] = [
    ("unlimited", None),
    ("1,769 MB", 100_000),
    ("1,024 MB", 57_880),
    ("256 MB", 14_470),
]
CALL_SHARE = "1,769 MB"
MANIFESTS = ["sample", "1,000", "10,000"]  # baked sample, then generated manifests (tools)
CALL_TOOLS = 50
# Runs in the CPU group: says it is ready, waits for a line, then execs the gateway ($0 "$@").
LAUNCHER = 'printf r; read -r _; exec "$0" "$@" </dev/null >/dev/null 2>&1'
START_TIMEOUT_S = 180.0

LIST_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json",
    "mcp-protocol-version": PROTOCOL_VERSION,
}


def log(message: str) -> None:
    print(f"cold-start: {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Manifests whose tools differ: names, descriptions and input schemas drawn from the tool index
# (random.Random(index) is deterministic across runs and Python versions).

VERBS = ["get", "list", "search", "create", "update", "delete", "sync", "export", "import",
         "archive", "approve", "assign", "summarize", "validate", "lookup", "schedule", "cancel",
         "notify", "compute", "merge", "reconcile", "forecast", "tag", "transfer"]
READ_VERBS = {"get", "list", "search", "export", "summarize", "validate", "lookup", "compute",
              "forecast"}
NOUNS = ["invoice", "customer", "order", "ticket", "employee", "contract", "shipment", "asset",
         "payment", "report", "document", "meeting", "project", "vendor", "expense", "incident",
         "account", "policy", "device", "campaign", "lead", "timesheet", "budget", "license",
         "repository", "warehouse", "course", "claim", "subscription", "room"]
PROPERTY_NAMES = [
    "query", "limit", "offset", "cursor", "status", "owner", "region", "currency", "amount",
    "startDate", "endDate", "priority", "tags", "labels", "notes", "includeArchived", "sortBy",
    "sortOrder", "pageSize", "locale", "timezone", "email", "phone", "reason", "category",
    "dueDate", "quantity", "unitPrice", "discount", "threshold", "dryRun", "format", "fields",
    "assignee", "team", "projectId", "customerId", "orderId", "version", "channel", "language",
    "score", "ratio", "maxResults", "comment", "title", "summary", "severity", "source",
    "target", "filters", "options", "location", "lineItems", "recipients", "window", "metadata",
    "contact", "range", "approver", "costCenter", "department", "reference", "attachments",
]
ENUM_POOLS = [
    ["open", "pending", "in_progress", "resolved", "closed", "cancelled"],
    ["low", "medium", "high", "critical"],
    ["EUR", "USD", "GBP", "JPY", "CHF", "SEK"],
    ["eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-northeast-1"],
    ["asc", "desc"],
    ["json", "csv", "pdf", "xlsx", "html"],
    ["email", "sms", "push", "slack", "teams"],
    ["HR", "IT", "Finance", "Legal", "Sales", "Operations"],
    ["draft", "submitted", "approved", "rejected"],
    ["daily", "weekly", "monthly", "quarterly", "yearly"],
]
FORMATS = ["date", "date-time", "email", "uri", "uuid"]
PATTERNS = [
    "^[A-Z]{2}-[0-9]{4,8}$",
    "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    "^[A-Z]{3}$",
    "^\\+?[0-9]{7,15}$",
    "^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}$",
    "^(INV|PO|SO)-[0-9]{6}$",
]
DEFS = {
    "money": {"type": "object", "properties": {
        "amount": {"type": "number", "minimum": 0},
        "currency": {"type": "string", "enum": ENUM_POOLS[2]}},
        "required": ["amount", "currency"], "additionalProperties": False},
    "period": {"type": "object", "properties": {
        "from": {"type": "string", "format": "date"},
        "to": {"type": "string", "format": "date"}},
        "required": ["from"]},
    "contact": {"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 200},
        "email": {"type": "string", "format": "email"},
        "phone": {"type": "string", "maxLength": 32}},
        "required": ["name"]},
    "address": {"type": "object", "properties": {
        "street": {"type": "string"}, "city": {"type": "string"},
        "postalCode": {"type": "string", "maxLength": 12},
        "country": {"type": "string", "minLength": 2, "maxLength": 2}},
        "required": ["city", "country"], "additionalProperties": False},
}
REF_PROPERTY = {"money": "total", "period": "period", "contact": "requester",
                "address": "shippingAddress"}


def has_pattern(index: int) -> bool:
    """About 5% of the tools have a `pattern` (compiled at load by the current gateway)."""
    return index % 20 == 7


def has_ref(index: int) -> bool:
    """About 2% have a local `$ref` into `$defs` (never the same tools as `has_pattern`)."""
    return index % 50 == 13


def scalar_schema(rng: random.Random, name: str) -> dict:
    kind = rng.choices(["string", "integer", "number", "boolean", "enum"],
                       weights=[34, 20, 9, 11, 16])[0]
    schema: dict = {}
    if rng.random() < 0.6:
        tail = rng.choice(["", " (optional)", "; see the docs"])
        schema["description"] = f"The {name} to use{tail}."
    if kind == "string":
        schema["type"] = "string"
        if rng.random() < 0.5:
            schema["minLength"] = rng.randint(1, 3)
        schema["maxLength"] = rng.choice([16, 32, 64, 128, 256, 500, 1000, 4000])
        if rng.random() < 0.2:
            schema["format"] = rng.choice(FORMATS)
    elif kind == "integer":
        schema["type"] = "integer"
        low = rng.choice([0, 1, -100, -1000])
        schema["minimum"] = low
        schema["maximum"] = low + rng.choice([10, 50, 100, 500, 10_000])
        if rng.random() < 0.3:
            schema["default"] = low + 1
    elif kind == "number":
        schema["type"] = "number"
        if rng.random() < 0.5:
            schema["exclusiveMinimum"] = 0
        else:
            schema["minimum"] = rng.choice([0, -1, -90])
        schema["maximum"] = rng.choice([1, 90, 100, 1e6])
        if rng.random() < 0.3:
            schema["multipleOf"] = rng.choice([0.01, 0.5, 5])
    elif kind == "boolean":
        schema["type"] = "boolean"
        schema["default"] = rng.random() < 0.5
    else:
        pool = rng.choice(ENUM_POOLS)
        schema["type"] = "string"
        schema["enum"] = rng.sample(pool, rng.randint(2, len(pool)))
    return schema


def object_schema(rng: random.Random, depth: int) -> dict:
    names = rng.sample(PROPERTY_NAMES, rng.randint(2, 4))
    properties = {n: property_schema(rng, n, depth + 1) for n in names}
    schema = {"type": "object", "properties": properties}
    if rng.random() < 0.6:
        schema["required"] = names[: rng.randint(1, len(names) - 1)]
    if rng.random() < 0.5:
        schema["additionalProperties"] = False
    return schema


def property_schema(rng: random.Random, name: str, depth: int) -> dict:
    kinds = ["scalar", "array", "object", "array_of_objects"] if depth < 2 else ["scalar", "array"]
    weights = [74, 14, 8, 4] if depth < 2 else [85, 15]
    kind = rng.choices(kinds, weights=weights)[0]
    if kind == "scalar":
        return scalar_schema(rng, name)
    if kind == "array":
        schema = {"type": "array", "items": scalar_schema(rng, name),
                  "maxItems": rng.choice([5, 10, 20, 50, 100])}
        if rng.random() < 0.4:
            schema["minItems"] = 1
        if rng.random() < 0.3:
            schema["uniqueItems"] = True
        return schema
    if kind == "object":
        return object_schema(rng, depth)
    return {"type": "array", "items": object_schema(rng, depth),
            "maxItems": rng.choice([10, 50, 200])}


def input_schema(index: int) -> dict:
    rng = random.Random(index)
    names = rng.sample(PROPERTY_NAMES, rng.randint(3, 8))
    properties = {n: property_schema(rng, n, 0) for n in names}
    schema: dict = {"type": "object", "properties": properties}
    if has_pattern(index):
        strings = [n for n, p in properties.items()
                   if p.get("type") == "string" and "enum" not in p]
        target = strings[0] if strings else "reference"
        if target not in properties and len(properties) == 8:
            properties.popitem()
        properties[target] = {"type": "string", "pattern": rng.choice(PATTERNS),
                              "description": f"The {target}, in its canonical form."}
    if has_ref(index):
        kind = rng.choice(sorted(DEFS))
        if len(properties) == 8:
            properties.popitem()
        schema["$defs"] = {kind: DEFS[kind]}
        properties[REF_PROPERTY[kind]] = {"$ref": f"#/$defs/{kind}"}
    if index % 10 != 9:  # 90% of the tools require something
        names = list(properties)
        schema["required"] = sorted(rng.sample(names, rng.randint(1, min(3, len(names)))),
                                    key=names.index)
    if rng.random() < 0.6:
        schema["additionalProperties"] = False
    return schema


def tool_name(index: int) -> str:
    rng = random.Random(-1 - index)
    return f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}_{index:05}"


def generated_manifest(tools: int) -> dict:
    entries = []
    for i in range(tools):
        name = tool_name(i)
        verb, noun, _ = name.split("_")
        rng = random.Random(10_000_000 + i)
        entries.append({
            "name": name,
            "title": f"{verb.capitalize()} {noun}",
            "description": rng.choice([
                f"{verb.capitalize()} one {noun} by its identifier.",
                f"{verb.capitalize()} {noun}s matching the given filters; newest first.",
                f"{verb.capitalize()} a {noun} in the {rng.choice(ENUM_POOLS[7])} system of "
                "record.",
                f"Ask the {noun} service to {verb} records; answers within a few seconds.",
            ]),
            "inputSchema": input_schema(i),
            "annotations": {"readOnlyHint": verb in READ_VERBS},
            "_meta": {"version": f"1.{i % 7}.0",
                      "endpoint": f"http://127.0.0.1:9/tools/{name}", "timeoutMs": 5000},
        })
    return {
        "manifestVersion": 1,
        "routes": [{"routeKey": "core",
                    "server": {"name": "bench-gateway", "title": "Bench", "version": "1.0.0"},
                    "tools": entries}],
    }


def call_tools(manifest_doc: dict) -> list[str]:
    """CALL_TOOLS tools spread over the manifest, each with a required property and neither a
    `pattern` nor a `$ref` (so that the current gateway compiles them on first use)."""
    tools = manifest_doc["routes"][0]["tools"]
    candidates = [i for i, t in enumerate(tools) if t["inputSchema"].get("required")
                  and not has_pattern(i) and not has_ref(i)]
    step = len(candidates) / CALL_TOOLS
    return [tools[candidates[int(k * step)]]["name"] for k in range(CALL_TOOLS)]


def sample_tool_count() -> int:
    """Tools the baked sample's `tools/list` shows: its distinct names with an active version."""
    doc = json.loads((ROOT / "manifests/sample.json").read_text())
    tools = next(r for r in doc["routes"] if r["routeKey"] == "core")["tools"]
    return len({t["name"] for t in tools if t.get("_meta", {}).get("active", True)})


# ---------------------------------------------------------------------------------------------
# The CPU group


class CpuGroup:
    """One cgroup v1 cpu group, mcp-bench-<pid>, whose quota the runs set in turn."""

    def __init__(self) -> None:
        if not (CGROUP_CPU / "cpu.cfs_quota_us").exists():
            raise SystemExit(f"cold-start: no cgroup v1 cpu controller at {CGROUP_CPU}")
        self.path = CGROUP_CPU / f"mcp-bench-{os.getpid()}"
        self.path.mkdir()
        self.procs = str(self.path / "cgroup.procs")
        self.quota: int | None = None
        self.set_quota(None)

    def set_quota(self, quota_us: int | None) -> None:
        (self.path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (self.path / "cpu.cfs_quota_us").write_text(str(-1 if quota_us is None else quota_us))
        got = int((self.path / "cpu.cfs_quota_us").read_text())
        if got != (-1 if quota_us is None else quota_us):
            raise SystemExit(f"cold-start: {self.path} quota is {got}, not {quota_us}")
        self.quota = quota_us

    def enter(self) -> None:
        """Runs in the child between fork and exec: moves it into the group."""
        fd = os.open(self.procs, os.O_WRONLY)
        try:
            os.write(fd, str(os.getpid()).encode())
        finally:
            os.close(fd)

    def holds(self, pid: int) -> bool:
        name = "/" + self.path.name
        for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
            _, controllers, where = line.split(":", 2)
            if "cpu" in controllers.split(","):
                return where == name
        return False

    def remove(self) -> None:
        for _ in range(100):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.05)  # a process just killed may still be listed
        log(f"could not remove {self.path}: {(self.path / 'cgroup.procs').read_text()!r}")


# ---------------------------------------------------------------------------------------------
# Starting and asking


class _Answer:
    """What http.client.HTTPResponse needs of a socket, over bytes already read."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def makefile(self, *_args, **_kwargs) -> io.BytesIO:
        return io.BytesIO(self.data)


def parse_answer(data: bytes) -> tuple[int, bytes]:
    response = http.client.HTTPResponse(_Answer(data))  # type: ignore[arg-type]
    response.begin()
    return response.status, response.read()


def rss_and_threads(pid: int) -> tuple[float, int]:
    """Resident memory (MiB) and thread count of `pid`, from /proc/<pid>/status."""
    rss, threads = float("nan"), 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024
        elif line.startswith("Threads:"):
            threads = int(line.split()[1])
    return rss, threads


@dataclass
class Started:
    proc: subprocess.Popen
    port: int
    ms: float
    rss_mib: float
    threads: int
    # The CPU time the process had used when it was told to exec `binary`, ms.
    cpu_before_ms: float = 0.0

    def kill_for_cpu_ms(self) -> float:
        """Ends the process with SIGKILL (no shutdown work) and returns the CPU time it used,
        user and system, all its threads, in ms, from the launcher's go to the kill: the
        kernel's precise run time (`wait4`'s rusage) less what the process (the forked child,
        its move into the group, the launcher shell) had used before the go."""
        if self.proc.returncode is not None:
            raise SystemExit(f"cold-start: pid {self.proc.pid} was already reaped")
        self.proc.kill()
        _pid, status, usage = os.wait4(self.proc.pid, 0)
        self.proc.returncode = -signal.SIGKILL if os.WIFSIGNALED(status) else status
        return (usage.ru_utime + usage.ru_stime) * 1000 - self.cpu_before_ms

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def cpu_ms_so_far(pid: int) -> float:
    """The CPU time a single-threaded process has used so far, ms: the first field of
    `/proc/<pid>/schedstat` (its run time in ns, exact, where `/proc/<pid>/stat` counts ticks).
    """
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e6


def start_and_ask(binary: Path, case: dict, group: CpuGroup,
                  body: str) -> tuple[Started, int, bytes]:
    """Starts `binary` in `group` and POSTs `body` to /mcp/core until it answers; the process
    stays up. Returns it with the answer's status and body.

    The clock starts when `binary` is exec'd, in the group already: a small shell enters the
    group between fork and exec (`preexec_fn`), says it is ready, waits for a line on its
    stdin and then execs `binary`. Moving a process into a cgroup takes this kernel 10-15 ms
    of wall time (the cgroup core waits for an RCU grace period), and forking this Python
    process costs more the larger it is; neither is part of a Lambda start, so both happen
    before the clock starts. The shell's own start-up is also before it, followed by a pause
    of one CFS period, so that the quota the shell used is refilled when `binary` starts.

    The client tries to connect every 0.2 ms (from outside the group, so it never takes the
    server's quota); `mcp-local` binds its port before it loads the registry, so the first
    try usually connects and the request waits for the load."""
    port = free_port()
    request = (
        f"POST /mcp/core HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n"
        + "".join(f"{k}: {v}\r\n" for k, v in LIST_HEADERS.items())
        + f"content-length: {len(body.encode())}\r\nconnection: close\r\n\r\n{body}"
    ).encode()
    proc = subprocess.Popen(["/bin/sh", "-c", LAUNCHER, str(binary), "--listen",
                             f"127.0.0.1:{port}", *case["args"]],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env={**os.environ, **case["env"]},
                            preexec_fn=group.enter)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        if proc.stdout.read(1) != b"r":
            raise SystemExit(f"cold-start: the launcher of {binary} did not start")
        proc.stdout.close()
        time.sleep(PERIOD_US / 1e6)
        cpu_before_ms = cpu_ms_so_far(proc.pid)
        started = time.perf_counter()
        proc.stdin.write(b"go\n")
        proc.stdin.close()
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"cold-start: {binary} exited with {proc.returncode}")
            if time.perf_counter() - started > START_TIMEOUT_S:
                raise SystemExit(f"cold-start: {binary} did not answer in {START_TIMEOUT_S} s")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=START_TIMEOUT_S) as s:
                    s.sendall(request)
                    chunks = []
                    while chunk := s.recv(1 << 20):
                        chunks.append(chunk)
            except OSError:
                time.sleep(0.0002)
                continue
            ms = (time.perf_counter() - started) * 1000
            break
        rss, threads = rss_and_threads(proc.pid)
        if not group.holds(proc.pid):
            raise SystemExit(f"cold-start: pid {proc.pid} is not in {group.path}")
        status, answer = parse_answer(b"".join(chunks))
        return Started(proc, port, ms, rss, threads, cpu_before_ms), status, answer
    except BaseException:
        Started(proc, port, 0, 0, 0).stop()
        raise


def start_and_list(binary: Path, case: dict, group: CpuGroup, expected: int) -> Started:
    """Starts `binary` in `group` and sends `tools/list` until it answers ([`start_and_ask`]);
    checks that the answer lists `expected` tools (or is a first page of them)."""
    started, status, body = start_and_ask(binary, case, group, LIST_BODY)
    try:
        if status != 200:
            raise SystemExit(f"cold-start: tools/list answered {status}: {body[:300]!r}")
        result = json.loads(body)["result"]
        # A list over MCP_MAX_RESPONSE_BYTES (5 MiB) comes in pages (CONTRACT T2): the first
        # page, with a nextCursor, is the first answer.
        paged = bool(result.get("nextCursor")) and 0 < len(result["tools"]) < expected
        if (len(result["tools"]) != expected and not paged) or len(body) > 5 * 1024 * 1024:
            raise SystemExit(f"cold-start: tools/list listed {len(result['tools'])} tools "
                             f"(expected {expected}), nextCursor {result.get('nextCursor')!r}")
        return started
    except BaseException:
        started.stop()
        raise


def first_and_later_calls(started: Started, names: list[str]) -> tuple[list[float], list[float]]:
    """Each tool of `names` called twice with `{}`, all first calls before the later ones, over
    one keep-alive connection; the milliseconds of each call."""
    headers = {**LIST_HEADERS, "connection": "keep-alive"}
    connection = http.client.HTTPConnection("127.0.0.1", started.port, timeout=60)
    connection.connect()
    try:
        rounds: list[list[float]] = [[], []]
        for times in rounds:
            for i, name in enumerate(names):
                body = json.dumps({"jsonrpc": "2.0", "id": i + 2, "method": "tools/call",
                                   "params": {"name": name, "arguments": {}}},
                                  separators=(",", ":")).encode()
                t0 = time.perf_counter()
                connection.request("POST", "/mcp/core", body=body, headers=headers)
                response = connection.getresponse()
                text = response.read()
                times.append((time.perf_counter() - t0) * 1000)
                answer = json.loads(text) if response.status == 200 else {}
                if answer.get("error", {}).get("code") != -32602:
                    raise SystemExit(f"cold-start: tools/call {name} with {{}} answered "
                                     f"{response.status}: {text[:300]!r}")
        return rounds[0], rounds[1]
    finally:
        connection.close()


# ---------------------------------------------------------------------------------------------
# Reporting


def commit_label(binary: Path) -> str:
    """The commit of the work tree the binary was built in, `+dirty` when it has changes."""
    def git(*args: str) -> str:
        r = subprocess.run(["git", "-C", str(binary.parent), *args], capture_output=True,
                           text=True)
        return r.stdout.strip() if r.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD")
    if not commit:
        return "unknown commit"
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return commit + (" +uncommitted changes" if dirty else "")


def fmt_ms(value: float) -> str:
    if value != value:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def solid_label(labels: list[str]) -> str:
    return "after" if "after" in labels else labels[-1]


def nice_ticks(low: float, high: float) -> list[float]:
    ticks = []
    decade = 10 ** int(f"{low:e}".split("e")[1])
    while decade <= high * 10:
        for m in (1, 2, 5):
            if low <= m * decade <= high:
                ticks.append(m * decade)
        decade *= 10
    return ticks


def write_svg(path: Path, medians: dict, labels: list[str], title_note: str,
              sample_tools: int) -> None:
    """Start time (log scale) against manifest size (categorical): a line per CPU share, solid
    for the `after` build (or the last one), dashed for the others."""
    import math

    width, height = 820, 500
    left, right, top, bottom = 80, 190, 70, 70
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for v in medians.values() if v == v and v > 0]
    low = 10 ** math.floor(math.log10(min(values)))
    high = 10 ** math.ceil(math.log10(max(values)))
    if high / low < 100:
        high = low * 100

    def x(i: int) -> float:
        return left + plot_w * (0.1 + 0.8 * i / (len(MANIFESTS) - 1))

    def y(v: float) -> float:
        return top + plot_h * (1 - (math.log10(v) - math.log10(low))
                               / (math.log10(high) - math.log10(low)))

    colors = {"unlimited": "#1b7837", "1,769 MB": "#2166ac", "1,024 MB": "#e08214",
              "256 MB": "#b2182b"}
    dashes = ["6 4", "2 3", "10 3 2 3"]
    solid = solid_label(labels)
    others = [lab for lab in labels if lab != solid]
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" '
        f'font-size="13">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{width / 2}" y="28" text-anchor="middle" font-size="17" font-weight="bold">'
        f'mcp-local cold start at Lambda CPU shares</text>',
        f'<text x="{width / 2}" y="48" text-anchor="middle" font-size="12" fill="#555">'
        f'{escape(title_note)}</text>',
    ]
    for tick in nice_ticks(low, high):
        ty = y(tick)
        out.append(f'<line x1="{left}" y1="{ty:.1f}" x2="{left + plot_w}" y2="{ty:.1f}" '
                   f'stroke="#e3e3e3"/>')
        out.append(f'<text x="{left - 8}" y="{ty + 4:.1f}" text-anchor="end">'
                   f'{tick:,.0f}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" '
               f'stroke="#888"/>')
    names = {"sample": f"baked sample ({sample_tools} tools)", "1,000": "1,000 tools",
             "10,000": "10,000 tools"}
    for i, m in enumerate(MANIFESTS):
        out.append(f'<line x1="{x(i):.1f}" y1="{top + plot_h}" x2="{x(i):.1f}" '
                   f'y2="{top + plot_h + 5}" stroke="#888"/>')
        out.append(f'<text x="{x(i):.1f}" y="{top + plot_h + 20}" text-anchor="middle">'
                   f'{names[m]}</text>')
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 18}" text-anchor="middle">'
               f'manifest size</text>')
    out.append(f'<text transform="translate(22 {top + plot_h / 2}) rotate(-90)" '
               f'text-anchor="middle">exec to first tools/list answer, ms (median, log scale)'
               f'</text>')
    end_labels: list[tuple[float, float, str, str]] = []  # (y, x, text, color)
    for label in [*others, solid]:
        dash = "" if label == solid else f' stroke-dasharray="{dashes[others.index(label) % 3]}"'
        for share, _ in SHARES:
            present = [(i, medians[(m, label, share)]) for i, m in enumerate(MANIFESTS)
                       if medians.get((m, label, share), float("nan")) > 0]
            points = [(x(i), y(v)) for i, v in present]
            color = colors[share]
            width_px = 2.5 if label == solid else 1.6
            out.append(f'<polyline fill="none" stroke="{color}" stroke-width="{width_px}"{dash} '
                       f'points="{" ".join(f"{px:.1f},{py:.1f}" for px, py in points)}"/>')
            for px, py in points:
                if label == solid:
                    out.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3.5" fill="{color}"/>')
                else:
                    out.append(f'<rect x="{px - 3:.1f}" y="{py - 3:.1f}" width="6" height="6" '
                               f'fill="#fff" stroke="{color}" stroke-width="1.5"/>')
            if label == solid and points:
                end_labels.append((points[-1][1], points[-1][0], fmt_ms(present[-1][1]), color))
    # The `after` values at each line's end, pushed apart so that none overlap.
    end_labels.sort()
    placed: list[float] = []
    for ly_, lx_, text, color in end_labels:
        ly_ = max(ly_, placed[-1] + 13) if placed else ly_
        placed.append(ly_)
        out.append(f'<text x="{lx_ + 8:.1f}" y="{ly_ + 4:.1f}" font-size="11" '
                   f'fill="{color}">{text}</text>')
    lx, ly = left + plot_w + 58, top + 8
    out.append(f'<text x="{lx}" y="{ly}" font-weight="bold">CPU share</text>')
    for k, (share, quota) in enumerate(SHARES):
        yy = ly + 22 + 30 * k
        vcpu = "no quota" if quota is None else f"{quota / PERIOD_US:.3g} vCPU"
        out.append(f'<line x1="{lx}" y1="{yy - 4}" x2="{lx + 24}" y2="{yy - 4}" '
                   f'stroke="{colors[share]}" stroke-width="3"/>')
        out.append(f'<text x="{lx + 30}" y="{yy}">{share}</text>')
        out.append(f'<text x="{lx + 30}" y="{yy + 12}" font-size="10" fill="#555">{vcpu}</text>')
    yy = ly + 22 + 30 * len(SHARES) + 14
    out.append(f'<text x="{lx}" y="{yy}" font-weight="bold">build</text>')
    for k, label in enumerate([solid, *others]):
        by = yy + 20 + 18 * k
        dash = "" if label == solid else f' stroke-dasharray="{dashes[others.index(label) % 3]}"'
        out.append(f'<line x1="{lx}" y1="{by - 4}" x2="{lx + 24}" y2="{by - 4}" stroke="#333" '
                   f'stroke-width="{2.5 if label == solid else 1.6}"{dash}/>')
        out.append(f'<text x="{lx + 30}" y="{by}">{escape(label)}</text>')
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ---------------------------------------------------------------------------------------------
# The run


@dataclass
class Cell:
    times: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)
    threads: list[int] = field(default_factory=list)


def parse_binaries(values: list[str]) -> dict[str, Path]:
    binaries: dict[str, Path] = {}
    for value in values:
        label, sep, path = value.partition("=")
        if not sep or not label or not path:
            raise SystemExit(f"cold-start: --binary wants LABEL=PATH, not {value!r}")
        binary = Path(path).resolve()
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"cold-start: {binary} is not an executable")
        if label in binaries:
            raise SystemExit(f"cold-start: label {label!r} given twice")
        binaries[label] = binary
    return binaries


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", action="append", required=True, metavar="LABEL=PATH",
                        help="an mcp-local build to measure (repeatable; labels 'before' and "
                             "'after' draw dashed and solid lines)")
    parser.add_argument("--repeats", type=int, default=9, help="starts per cell (default 9)")
    parser.add_argument("--slow-repeats", type=int, default=None,
                        help="starts of the 10,000-tool manifest at 256 MB (default --repeats)")
    parser.add_argument("--call-runs", type=int, default=3,
                        help="processes per build for the first-call figures (default 3)")
    parser.add_argument("--tool-search", choices=["add", "only"],
                        help="give the generated manifests' route this toolSearch mode "
                             "(CONTRACT S1); the list then starts with search_tools")
    parser.add_argument("--svg", type=Path, default=BENCH / "cold-start.svg")
    parser.add_argument("--json", type=Path, help="also write every measurement to this file")
    args = parser.parse_args()
    binaries = parse_binaries(args.binary)
    labels = list(binaries)
    slow_repeats = args.repeats if args.slow_repeats is None else args.slow_repeats

    # Leave through `finally` (and remove the group) on SIGTERM as on Ctrl-C.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    t_start = time.monotonic()
    load_before = load_average()
    commits = {label: commit_label(path) for label, path in binaries.items()}
    workdir = Path(tempfile.mkdtemp(prefix="mcp-cold-start-"))
    log(f"work dir {workdir}; load average {load_before}")

    docs: dict[str, dict] = {}
    cases = {"sample": {"env": {"MCP_PROFILE": "prod", "MCP_REGISTRY_SOURCE": "baked:sample"},
                        "args": ["--sample-tool-service", "127.0.0.1:0"],
                        "tools": sample_tool_count()}}
    for m in MANIFESTS[1:]:
        count = int(m.replace(",", ""))
        docs[m] = generated_manifest(count)
        listed = count
        if args.tool_search:
            docs[m]["routes"][0]["toolSearch"] = {"mode": args.tool_search}
            listed = count + 1 if args.tool_search == "add" else 1
        file = workdir / f"manifest-{count}.json"
        file.write_text(json.dumps(docs[m], separators=(",", ":")))
        cases[m] = {"env": {"MCP_PROFILE": "prod", "MCP_REGISTRY_SOURCE": f"file:{file}"},
                    "args": ["--no-sample-tool-service"], "tools": listed}
        schemas = {json.dumps(t["inputSchema"], sort_keys=True)
                   for t in docs[m]["routes"][0]["tools"]}
        log(f"{m}-tool manifest: {file.stat().st_size / 1e6:.1f} MB, {len(schemas)} distinct "
            f"input schemas")
        if m == "1,000":
            call_names = call_tools(docs[m])
        del docs[m], schemas  # a smaller Python process forks faster

    cells: dict[tuple[str, str, str], Cell] = {}
    calls: dict[str, dict[str, list[float]]] = {lab: {"first": [], "later": []} for lab in labels}
    group = CpuGroup()
    log(f"cgroup {group.path}")
    try:
        for r in range(args.repeats):
            order = labels[r % len(labels):] + labels[:r % len(labels)]
            log(f"round {r + 1}/{args.repeats}, order {', '.join(order)}, load average "
                f"{load_average()}")
            for share, quota in SHARES:
                group.set_quota(quota)
                for m in MANIFESTS:
                    if (m, share) == ("10,000", "256 MB") and r >= slow_repeats:
                        continue
                    for label in order:
                        s = start_and_list(binaries[label], cases[m], group, cases[m]["tools"])
                        s.stop()
                        cell = cells.setdefault((m, label, share), Cell())
                        cell.times.append(s.ms)
                        cell.rss.append(s.rss_mib)
                        cell.threads.append(s.threads)
        log(f"first and later tools/call at {CALL_SHARE}")
        group.set_quota(dict(SHARES)[CALL_SHARE])
        for r in range(args.call_runs):
            order = labels[r % len(labels):] + labels[:r % len(labels)]
            for label in order:
                s = start_and_list(binaries[label], cases["1,000"], group, cases["1,000"]["tools"])
                try:
                    first, later = first_and_later_calls(s, call_names)
                finally:
                    s.stop()
                calls[label]["first"] += first
                calls[label]["later"] += later
    finally:
        group.remove()
        shutil.rmtree(workdir, ignore_errors=True)
    load_after = load_average()
    elapsed_s = time.monotonic() - t_start

    medians = {key: median(cell.times) for key, cell in cells.items()}
    lines = [
        f"Start (exec of the gateway, already in its CPU group) to first answered `tools/list`, "
        f"ms (median of {args.repeats} starts"
        + (f"; {slow_repeats} for 10,000 tools at 256 MB" if slow_repeats != args.repeats else "")
        + "); RSS after the first answer at no quota.",
        "",
        "| manifest | build | unlimited | 1,769 MB (1 vCPU) | 1,024 MB (0.58) | 256 MB (0.145) "
        "| RSS MiB |",
        "|---|---|--:|--:|--:|--:|--:|",
    ]
    names_md = {"sample": "baked sample", "1,000": "1,000 tools", "10,000": "10,000 tools"}
    for m in MANIFESTS:
        for label in labels:
            row = [fmt_ms(medians.get((m, label, share), float("nan"))) for share, _ in SHARES]
            rss = median(cells[(m, label, "unlimited")].rss)
            lines.append(f"| {names_md[m]} | {label} | " + " | ".join(row) + f" | {rss:.1f} |")
    lines += [
        "",
        f"`tools/call` with invalid arguments (`{{}}`, answered -32602) at {CALL_SHARE} (1 vCPU), "
        f"1,000-tool manifest: {CALL_TOOLS} different tools called once each, then again, over "
        f"one keep-alive connection, in {args.call_runs} process(es) per build; p50 in ms.",
        "",
        "| build | first call p50 | later call p50 | first minus later |",
        "|---|--:|--:|--:|",
    ]
    for label in labels:
        first, later = median(calls[label]["first"]), median(calls[label]["later"])
        lines.append(f"| {label} | {first:.3f} | {later:.3f} | {first - later:+.3f} |")
    lines += [
        "",
        f"Machine: {machine()}. Load average (1, 5, 15 min) {load_before} before, "
        f"{load_after} after; the run took {elapsed_s / 60:.1f} min.",
        "Process threads after the first answer (1,000 tools; `mcp-local` runs one serving "
        "thread per CPU the process may use, quota included): "
        + ", ".join(f"{share} {max(cells[('1,000', labels[-1], share)].threads)}"
                    for share, _ in SHARES) + ".",
        "Builds: " + "; ".join(f"{label} = `{binaries[label]}` at {commits[label]} "
                               f"({binaries[label].stat().st_size / 1e6:.1f} MB)"
                               for label in labels) + ".",
    ]
    print("\n".join(lines))

    note = (f"median of {args.repeats} starts; "
            + ", ".join(f"{lab} {commits[lab].split()[0]}" for lab in labels)
            + f"; {machine().split(',')[0]}")
    write_svg(args.svg, medians, labels, note, cases["sample"]["tools"])
    log(f"wrote {args.svg}")
    if args.json:
        args.json.write_text(json.dumps({
            "machine": machine(), "load_before": load_before, "load_after": load_after,
            "elapsed_s": elapsed_s, "repeats": args.repeats, "slow_repeats": slow_repeats,
            "period_us": PERIOD_US, "shares": [{"label": s, "quota_us": q} for s, q in SHARES],
            "binaries": {lab: {"path": str(p), "commit": commits[lab]}
                         for lab, p in binaries.items()},
            "starts": [{"manifest": m, "binary": lab, "share": share, "ms": c.times,
                        "rss_mib": c.rss, "threads": c.threads,
                        "median_ms": median(c.times)}
                       for (m, lab, share), c in cells.items()],
            "calls": {lab: {**v, "first_p50_ms": median(v["first"]),
                            "later_p50_ms": median(v["later"])} for lab, v in calls.items()},
            "call_tools": call_names,
        }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
