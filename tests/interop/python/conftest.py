"""Fixtures of the Python client interop tests: the real mcp-local gateways and the interop Tool
Service, started by ../lib/serve.mjs (Node) for the whole session, with their log lines in files
so that tests can read the usage events (CONTRACT U1)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SERVE = Path(__file__).resolve().parent.parent / "lib" / "serve.mjs"
STARTUP_TIMEOUT_S = 60


@dataclass
class Gateways:
    """The running gateways: URLs of the sample and interop routes and of the route of
    `large_count` tools `tool_00000`, … (../lib/large-route.mjs, CONTRACT T2), and the log files."""

    sample_url: str
    interop_url: str
    log_dir: Path
    large_url: str
    large_count: int

    def large_names(self) -> list[str]:
        """The large route's tools, in list order."""
        return [f"tool_{i:05d}" for i in range(self.large_count)]

    def usage_events(self, gateway: str) -> list[dict]:
        """The usage events the `sample` or `interop` gateway has logged so far."""
        path = self.log_dir / f"{gateway}.log"
        events = []
        for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if event.get("target") == "mcp_gateway::usage":
                events.append(event)
        return events

    def wait_for_usage_events(self, gateway: str, predicate, what: str) -> list[dict]:
        """Waits up to 10 s until `predicate(events)` holds; returns the events."""
        deadline = time.monotonic() + 10
        while True:
            events = self.usage_events(gateway)
            if predicate(events):
                return events
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}: {events}")
            time.sleep(0.02)


@pytest.fixture(scope="session")
def gateways(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateways]:
    log_dir = tmp_path_factory.mktemp("gateway-logs")
    process = subprocess.Popen(
        ["node", str(SERVE), "--log-dir", str(log_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"serve.mjs exited with {process.wait(STARTUP_TIMEOUT_S)}")
        urls = json.loads(line)
        yield Gateways(
            urls["sampleUrl"], urls["interopUrl"], log_dir, urls["largeUrl"], urls["largeCount"]
        )
    finally:
        if process.stdin:
            process.stdin.close()
        try:
            process.wait(STARTUP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.terminate()
            process.wait(STARTUP_TIMEOUT_S)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
