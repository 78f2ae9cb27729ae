#!/usr/bin/env python3
"""What Cedar policies cost through the gateway's HTTP server: a warm call and a cold start.

Two measurements of CONTRACT Z's cost, each against the same route without `authorization`:

- **Warm call** (`--rounds`): the release `mcp-local` serving run.py's one-tool route
  (`search_documents` and 19 more tools, endpoint the bench `tool-service`), once without
  policies and once with 50 (permits per group and tool, two forbids on `search_documents`'s
  arguments, a kill switch), both processes up at once. oha sends `--requests` `tools/call`s
  over one connection to each, the two interleaved round after round; the table gives the
  median over rounds of oha's p50 and p99 and the difference.
- **Cold start** (`--repeats`, needs root and cgroup v1's cpu controller as cold_start.py):
  cold_start.py's generated 1,000-tool manifest without policies and with 100 (one permit per
  group over ten tools, an admin permit, forbids on arguments of eight tools, two kill
  switches, a permit for the anonymous caller over 20 tools), at the CPU shares of a 1,769 MB
  and a 256 MB function: exec to the first answer of `initialize` (the load) and of
  `tools/list` (the load and the filtering of 1,000 tools by partial evaluation, CONTRACT
  Z4). The policies load twice: as written (strict validation against the generated schema
  at load) and as `mcp-manifest policy embed` writes them (`validated`, CONTRACT Z11: no
  validation at load).

Traffic goes to 127.0.0.1 only; every run is bounded by its request count. Not part of CI.

    cargo build --release -p mcp-local
    (cd infra/bench/servers && CARGO_TARGET_DIR=../../../target/bench-servers cargo build --release)
    cargo build --release -p mcp-manifest
    python3 infra/bench/authorization.py --binary target/release/mcp-local
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cold_start import SHARES, CpuGroup, commit_label, generated_manifest, log  # noqa: E402
from cold_start import start_and_ask  # noqa: E402
from run import (  # noqa: E402  (no side effects on import)
    CALL_BODY,
    INITIALIZE_BODY,
    LIST_BODY,
    MCP_HEADERS,
    Scenario,
    cargo_target_dir,
    ensure_oha,
    free_port,
    load_average,
    machine,
    manifest,
    median,
    oha_run,
    start,
)

COLD_SHARES = [s for s in SHARES if s[0] in ("1,769 MB", "256 MB")]


def fifty_policies() -> str:
    """The warm route's 50 policies: `search_documents` permitted to everyone but forbidden for
    the Legal department's documents and for more than 40 results, 46 permits per group and
    tool on the other tools, a kill switch on one of them."""
    lines = [
        '@id("search") permit(principal, action == Gateway::Action::"search_documents", resource);',
        '@id("no-legal") @reason("Legal documents are not searched through agents")\n'
        'forbid(principal, action == Gateway::Action::"search_documents", resource) when '
        '{ context.input has filters && context.input.filters has department && '
        'context.input.filters.department == "Legal" };',
        '@id("page-size") forbid(principal, action == Gateway::Action::"search_documents", '
        'resource) when { context.input has limit && context.input.limit > 40 };',
        '@id("kill-3") forbid(principal, action == Gateway::Action::"tool_0003", resource);',
    ]
    for i in range(46):
        tool = 1 + i % 19
        lines.append(f'@id("p{i}") permit(principal, action == Gateway::Action::"tool_{tool:04}", '
                     f'resource) when {{ principal.groups.contains("g{i}") }};')
    return "\n".join(lines)


def warm_manifest(tool_url: str, policies: str | None) -> dict:
    doc = manifest(tool_url, tools=20)
    if policies is not None:
        doc["routes"][0]["authorization"] = {"mode": "enforce", "policies": policies}
    return doc


def literal(schema: dict) -> str | None:
    """A Cedar comparison a forbid can make on a property of this schema, or None."""
    kind = schema.get("type")
    if kind == "integer":
        return f"> {schema.get('maximum', 0) - 1}"
    if kind == "boolean":
        return "== true"
    if kind == "string" and "enum" in schema:
        return f'== "{schema["enum"][0]}"'
    return None


def hundred_policies(doc: dict) -> str:
    """The cold route's 100 policies over its 1,000 tools (see the module's text)."""
    tools = doc["routes"][0]["tools"]
    names = [t["name"] for t in tools]

    def actions(chunk: list[str]) -> str:
        return ", ".join(f'Gateway::Action::"{n}"' for n in chunk)

    lines = ['@id("admins") permit(principal, action in Gateway::Action::"call_tool", resource) '
             'when { principal.groups.contains("admin") };',
             f'@id("anonymous") permit(principal == Gateway::Caller::"anonymous", action in '
             f'[{actions(names[:20])}], resource);']
    for g in range(88):
        chunk = names[(g * 10) % len(names):(g * 10) % len(names) + 10]
        lines.append(f'@id("team-{g}") permit(principal, action in [{actions(chunk)}], resource) '
                     f'when {{ principal.groups.contains("team-{g}") }};')
    forbids = 0
    for tool in tools:
        if forbids == 8:
            break
        for prop, schema in tool["inputSchema"]["properties"].items():
            test = literal(schema)
            if test is None:
                continue
            lines.append(f'@id("limit-{forbids}") forbid(principal, action == Gateway::Action::'
                         f'"{tool["name"]}", resource) when {{ context.input has {prop} && '
                         f'context.input.{prop} {test} }};')
            forbids += 1
            break
    for k, name in enumerate(names[-2:]):
        lines.append(f'@id("kill-{k}") forbid(principal, action == Gateway::Action::"{name}", '
                     'resource);')
    assert len(lines) == 100, len(lines)
    return "\n".join(lines)


def warm(binary: Path, tool_service: Path, rounds: int, requests: int, workdir: Path) -> None:
    oha = ensure_oha()
    servers = []
    try:
        tool_port = free_port()
        servers.append(start("tool-service", [str(tool_service), f"127.0.0.1:{tool_port}"],
                             tool_port, workdir))
        tool_url = f"http://127.0.0.1:{tool_port}/tools/search_documents"
        scenarios = []
        for label, policies in (("without policies", None), ("50 policies", fifty_policies())):
            port = free_port()
            file = workdir / f"manifest-{len(scenarios)}.json"
            file.write_text(json.dumps(warm_manifest(tool_url, policies)))
            servers.append(start(
                f"gateway-{len(scenarios)}",
                [str(binary), "--listen", f"127.0.0.1:{port}", "--no-sample-tool-service",
                 "--log-json"],
                port, workdir,
                env={"MCP_REGISTRY_SOURCE": f"file:{file}", "MCP_PROFILE": "prod",
                     "RUST_LOG": "info"}))
            scenarios.append(Scenario(label, "tools/call", 1, port, "/mcp/core", CALL_BODY,
                                      MCP_HEADERS, requests, label))
        for s in scenarios:  # warm-up, and a check that the call is allowed
            oha_run(oha, s, min(requests, 500))
        for r in range(rounds):
            log(f"warm round {r + 1}/{rounds}, load average {load_average()}")
            for s in scenarios if r % 2 == 0 else reversed(scenarios):
                s.runs.append(oha_run(oha, s, requests))
    finally:
        for s in reversed(servers):
            s.stop()
    base, policed = (
        {k: median([run[k] for run in s.runs]) for k in ("p50_ms", "p99_ms", "rps")}
        for s in scenarios)
    print(f"\nwarm tools/call through mcp-local, 1 connection, {requests} requests x {rounds} "
          "rounds, median of rounds\n")
    print("| route | p50 ms | p99 ms | requests/s |")
    print("|---|--:|--:|--:|")
    for s, m in zip(scenarios, (base, policed)):
        print(f"| {s.contender} | {m['p50_ms']:.3f} | {m['p99_ms']:.3f} | {m['rps']:,.0f} |")
    print(f"| difference | {policed['p50_ms'] - base['p50_ms']:+.3f} | "
          f"{policed['p99_ms'] - base['p99_ms']:+.3f} | |")


def cold(binary: Path, manifest_tool: Path, repeats: int, workdir: Path) -> None:
    doc = generated_manifest(1_000)
    policies = hundred_policies(doc)
    cells = []
    for label in ("without policies", "100 policies", "100 policies, embedded"):
        file = workdir / f"cold-{len(cells)}.json"
        if label != "without policies":
            doc["routes"][0]["authorization"] = {"mode": "enforce", "policies": policies}
        file.write_text(json.dumps(doc, separators=(",", ":")))
        if label.endswith("embedded"):
            # One line, as the other two are written: the start reads the same layout.
            subprocess.run([str(manifest_tool), "policy", "embed", str(file), "--output",
                            str(file), "--compact"], check=True)
            if "validated" not in file.read_text():
                raise SystemExit("authorization: policy embed wrote no digest")
        case = {"env": {"MCP_PROFILE": "prod", "MCP_REGISTRY_SOURCE": f"file:{file}"},
                "args": ["--no-sample-tool-service"]}
        for share, quota in COLD_SHARES:
            for first, body in (("initialize", INITIALIZE_BODY), ("tools/list", LIST_BODY)):
                cells.append((label, share, quota, first, case, body))
    times: dict[int, list[float]] = {i: [] for i in range(len(cells))}
    listed: dict[int, int] = {}
    group = CpuGroup()
    try:
        for r in range(repeats):
            log(f"cold round {r + 1}/{repeats}, load average {load_average()}")
            shift = r % len(cells)
            for i in list(range(shift, len(cells))) + list(range(shift)):
                label, share, quota, first, case, body = cells[i]
                group.set_quota(quota)
                started, status, answer = start_and_ask(binary, case, group, body)
                started.stop()
                if status != 200 or "result" not in json.loads(answer):
                    raise SystemExit(f"authorization: {first} answered {status}: {answer[:300]!r}")
                if first == "tools/list":
                    listed[i] = len(json.loads(answer)["result"]["tools"])
                times[i].append(started.ms)
    finally:
        group.remove()
    print(f"\ncold start, 1,000 generated tools, exec to the first answer, median of {repeats} "
          "starts, ms\n")
    print("| first request | route | 1,769 MB | 256 MB | tools listed |")
    print("|---|---|--:|--:|--:|")
    rows: dict[tuple[str, str], dict[str, float]] = {}
    counts: dict[tuple[str, str], int] = {}
    for i, (label, share, _q, first, _c, _b) in enumerate(cells):
        rows.setdefault((first, label), {})[share] = median(times[i])
        if i in listed:
            counts[(first, label)] = listed[i]
    for (first, label), by_share in rows.items():
        print(f"| `{first}` | {label} | {by_share['1,769 MB']:.1f} | {by_share['256 MB']:.1f} | "
              f"{counts.get((first, label), '')} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", type=Path, required=True, help="a release mcp-local")
    parser.add_argument("--tool-service", type=Path,
                        default=cargo_target_dir() / "bench-servers/release/tool-service",
                        help="the bench servers' tool-service (run.py builds it)")
    parser.add_argument("--manifest-tool", type=Path,
                        default=cargo_target_dir() / "release/mcp-manifest",
                        help="mcp-manifest, for `policy embed` (default: the release build)")
    parser.add_argument("--rounds", type=int, default=7, help="warm rounds (default 7)")
    parser.add_argument("--requests", type=int, default=5_000,
                        help="tools/call per warm round and route (default 5,000)")
    parser.add_argument("--repeats", type=int, default=7, help="starts per cold cell (default 7)")
    parser.add_argument("--skip-warm", action="store_true")
    parser.add_argument("--skip-cold", action="store_true")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="mcp-authz-bench-"))
    print(f"machine: {machine()}; commit {commit_label(args.binary)}; "
          f"load average {load_average()}; {time.strftime('%Y-%m-%d')}")
    if not args.skip_warm:
        warm(args.binary, args.tool_service, args.rounds, args.requests, workdir)
    if not args.skip_cold:
        if os.geteuid() != 0:
            raise SystemExit("authorization: the cold start needs root (cgroup CPU quotas)")
        cold(args.binary, args.manifest_tool, args.repeats, workdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
