#!/usr/bin/env python3
"""tools/call through mcp-local with span export off and on (CONTRACT O5), measured with oha.

One connection, the baked sample manifest and its sample Tool Service, a caller traceparent on
every request (so every request is sampled and exported when export is on). "on" sends spans
with OTLP/HTTP to tests/support/otlp_collector.py, a receiver that decodes every export with the
official opentelemetry-proto classes. Rounds alternate off and on; the table gives each mode's
median p50 and p99 over the rounds, and the collector's span count shows the spans arrived.

Usage: python3 infra/bench/trace_export.py [--binary PATH] [--requests N] [--rounds R]
Needs: a release mcp-local (`cargo build --release -p mcp-local`, default
target/release/mcp-local or $CARGO_TARGET_DIR/release/mcp-local), oha, and the repository's
.venv with opentelemetry-proto (tests/pip-install.sh tests/requirements.txt).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import free_port, wait_for_port  # noqa: E402 - the load bench's own helpers
BODY = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "tools/call",
    "params": {"name": "search_documents", "arguments": {"query": "휴가", "limit": 1}},
})
HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
    "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
}


def oha(port: int, requests: int) -> dict:
    cmd = ["oha", "--no-tui", "--output-format", "json", "-n", str(requests), "-c", "1",
           "-m", "POST", "-d", BODY]
    for name, value in HEADERS.items():
        cmd += ["-H", f"{name}: {value}"]
    cmd.append(f"http://127.0.0.1:{port}/mcp/core")
    report = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    ok = report.get("statusCodeDistribution", {}).get("200", 0)
    if ok != requests:
        raise SystemExit(f"only {ok}/{requests} answered 200: {report.get('errorDistribution')}")
    p = report["latencyPercentiles"]
    return {"p50_ms": p["p50"] * 1000, "p99_ms": p["p99"] * 1000,
            "rps": report["summary"]["requestsPerSec"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    parser.add_argument("--binary", type=Path, default=target / "release" / "mcp-local")
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    python = ROOT / ".venv" / "bin" / "python"
    collector = subprocess.Popen(
        [str(python), str(ROOT / "tests/support/otlp_collector.py")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    collector_url = f"http://127.0.0.1:{collector.stdout.readline().strip()}"
    results = {"off": [], "on": []}
    try:
        for _ in range(args.rounds):
            for mode in ("off", "on"):
                env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
                if mode == "on":
                    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector_url
                port = free_port()
                proc = subprocess.Popen(
                    [str(args.binary), "--listen", f"127.0.0.1:{port}",
                     "--sample-tool-service", "127.0.0.1:0"],
                    env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                try:
                    wait_for_port(port, proc, "mcp-local")
                    oha(port, 500)  # warm-up: connections, the first spans
                    results[mode].append(oha(port, args.requests))
                finally:
                    proc.terminate()
                    proc.wait()
        time.sleep(1)
        with urllib.request.urlopen(f"{collector_url}/__exports") as response:
            exports = json.load(response)
        with urllib.request.urlopen(f"{collector_url}/__spans") as response:
            spans = len(json.load(response))
    finally:
        collector.stdin.close()
        collector.wait()
    print(f"tools/call, 1 connection, {args.requests} requests x {args.rounds} rounds")
    print("| export | p50 ms | p99 ms | req/s |")
    print("|---|---|---|---|")
    for mode, rows in results.items():
        p50 = statistics.median(r["p50_ms"] for r in rows)
        p99 = statistics.median(r["p99_ms"] for r in rows)
        rps = statistics.median(r["rps"] for r in rows)
        print(f"| {mode} | {p50:.3f} | {p99:.3f} | {rps:,.0f} |")
    off = statistics.median(r["p50_ms"] for r in results["off"])
    on = statistics.median(r["p50_ms"] for r in results["on"])
    print(f"p50 on - off: {on - off:+.3f} ms; collector: {exports['requests']} exports, "
          f"{exports['unparsed']} unparsed, {spans} spans")
    if spans == 0:
        sys.exit("no span reached the collector")


if __name__ == "__main__":
    main()
