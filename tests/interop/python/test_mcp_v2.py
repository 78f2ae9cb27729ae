"""The official Python SDK `mcp` 2.x `Client` against the real mcp-local binary, which serves the
modern era (MCP 2026-07-28) beside the legacy one (2025-11-25) on the same URL (CONTRACT N1, N2,
N3, N4, N7, L1, T1, X2, X5, X6, U1; structuredContent and MCP-native results).

In its default auto mode the client probes `server/discover` at 2026-07-28 (its version in the
`MCP-Protocol-Version` header and in `params._meta["io.modelcontextprotocol/protocolVersion"]`)
and, answered, stays modern: every later request carries that `_meta` envelope and the
`MCP-Protocol-Version`, `Mcp-Method` (and for tools/call `Mcp-Name`) headers, and it never sends
`initialize`. `mode="legacy"` forces the `initialize` handshake. Run in the venv of
requirements-mcp2.txt. The SDK's HTTP exchanges are recorded by an httpx2 event hook on the real
client it uses, and each connection sends its own `x-request-id`, so that its usage events are
told apart from those of other tests."""

from __future__ import annotations

import base64
import importlib.metadata
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"
SAMPLE_TOOLS = ["search_documents", "lookup_glossary", "create_ticket"]


@dataclass
class Exchange:
    """One HTTP exchange of the SDK: the request (headers with lower-case names, the JSON body
    sent) and the answer (status, the JSON body when it was `application/json`)."""

    method: str
    status: int
    headers: dict[str, str]
    request: Any
    response: Any

    @property
    def rpc_method(self) -> str | None:
        return self.request.get("method") if isinstance(self.request, dict) else None


@dataclass
class Connection:
    """A connected `Client`, the `x-request-id` of all its requests and its HTTP exchanges."""

    client: Client
    request_id: str
    exchanges: list[Exchange] = field(default_factory=list)

    def exchange(self, rpc_method: str, index: int = 0) -> Exchange:
        return [e for e in self.exchanges if e.rpc_method == rpc_method][index]

    def rpc_methods(self) -> list[str | None]:
        return [e.rpc_method for e in self.exchanges]


@asynccontextmanager
async def connect(url: str, mode: str = "auto") -> AsyncIterator[Connection]:
    """A `Client` in `mode` (auto by default) over the SDK's own streamable HTTP transport, on an
    httpx2 client that records every exchange and sends one `x-request-id` (CONTRACT C2)."""
    request_id = f"py-mcp2-{uuid.uuid4().hex}"
    exchanges: list[Exchange] = []

    async def record(response: httpx2.Response) -> None:
        request = response.request
        sent = json.loads(request.content) if request.content else None
        answered = None
        if response.headers.get("content-type", "").startswith("application/json"):
            answered = json.loads(await response.aread())
        headers = {name.lower(): value for name, value in request.headers.items()}
        exchanges.append(Exchange(request.method, response.status_code, headers, sent, answered))

    async with httpx2.AsyncClient(
        headers={"x-request-id": request_id}, timeout=30, event_hooks={"response": [record]}
    ) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode) as client:
            connection = Connection(client, request_id, exchanges)
            yield connection


def usage_events_of(gateways, gateway: str, connection: Connection) -> list[dict]:
    """The usage events of `connection`'s requests, once there is one for each of its exchanges
    (CONTRACT U1). mcp-local writes a serving thread's usage lines when it goes idle, just after
    the answers, so this waits for them."""

    def mine(events: list[dict]) -> list[dict]:
        return [e for e in events if e.get("x_request_id") == connection.request_id]

    return mine(
        gateways.wait_for_usage_events(
            gateway,
            lambda events: len(mine(events)) >= len(connection.exchanges),
            f"the {len(connection.exchanges)} usage events of {connection.request_id}",
        )
    )


def brief(events: list[dict]) -> list[tuple]:
    """The fields of usage events that these tests read, for assertion messages."""
    fields = ("method", "status", "outcome", "era", "protocol_version")
    return [tuple(e.get(name) for name in fields) for e in events]


def without_meta(result: dict) -> dict:
    return {key: value for key, value in result.items() if key != "_meta"}


def test_the_installed_sdk_is_mcp_2x() -> None:
    assert importlib.metadata.version("mcp").startswith("2.")


async def test_a_client_on_the_bare_url_negotiates_2026_07_28_in_auto_mode_n1_n3(gateways) -> None:
    async with Client(gateways.sample_url) as client:
        assert client.protocol_version == MODERN
        assert client.session.discover_result is not None
        assert client.session.initialize_result is None
        assert client.session.discover_result.supported_versions == [MODERN]
        assert client.server_info is not None, "the discover result's _meta serverInfo (N4)"
        assert client.server_info.name == "core-tools"
        assert client.server_capabilities.tools is not None
        assert client.server_capabilities.tools.list_changed is False
        tools = await client.list_tools()
    assert [t.name for t in tools.tools] == SAMPLE_TOOLS


async def test_auto_mode_discovers_and_never_sends_initialize_n1_n3_n7(gateways) -> None:
    async with connect(gateways.sample_url) as connection:
        client = connection.client
        assert client.protocol_version == MODERN
        assert client.session.initialize_result is None
        await client.list_tools()
    assert connection.rpc_methods() == ["server/discover", "tools/list"]
    assert [(e.method, e.status) for e in connection.exchanges] == [("POST", 200)] * 2
    probe = connection.exchange("server/discover")
    assert probe.headers["mcp-protocol-version"] == MODERN
    assert probe.headers["mcp-method"] == "server/discover"
    assert probe.request["params"]["_meta"][PROTOCOL_VERSION_META] == MODERN
    discovered = probe.response["result"]
    assert without_meta(discovered) == {
        "resultType": "complete",
        "supportedVersions": [MODERN],
        "capabilities": {"tools": {"listChanged": False}},
        "ttlMs": 300000,
        "cacheScope": "public",
    }
    assert discovered["_meta"][SERVER_INFO_META]["name"] == "core-tools"
    assert discovered["_meta"][SERVER_INFO_META]["version"] == "1.0.0"

    events = usage_events_of(gateways, "sample", connection)
    methods = sorted(e.get("method") for e in events)
    assert methods == ["server/discover", "tools/list"], brief(events)
    for event in events:
        assert event.get("era") == "modern", brief([event])
        assert event.get("protocol_version") == MODERN, brief([event])
        assert event["outcome"] == "ok", brief([event])
        assert event["status"] == 200, brief([event])


async def test_a_pinned_2026_07_28_client_is_served_without_discover_or_initialize_n1(
    gateways,
) -> None:
    async with connect(gateways.sample_url, mode=MODERN) as connection:
        tools = await connection.client.list_tools()
        result = await connection.client.call_tool("lookup_glossary", {"term": "SLA"})
    assert [t.name for t in tools.tools] == SAMPLE_TOOLS
    assert result.is_error is False
    assert connection.rpc_methods() == ["tools/list", "tools/call"]
    assert all(e.status == 200 for e in connection.exchanges), connection.exchanges
    events = usage_events_of(gateways, "sample", connection)
    assert sorted(e.get("method") for e in events) == ["tools/call", "tools/list"], brief(events)
    assert all(e.get("era") == "modern" for e in events), brief(events)


async def test_modern_results_carry_result_type_server_info_and_cache_hints_n2_n4(gateways) -> None:
    async with connect(gateways.sample_url) as connection:
        assert connection.client.protocol_version == MODERN
        await connection.client.list_tools()
        await connection.client.call_tool("lookup_glossary", {"term": "SLA"})
    discovered = connection.exchange("server/discover").response["result"]
    listing = connection.exchange("tools/list")
    call = connection.exchange("tools/call")
    assert call.headers["mcp-method"] == "tools/call"
    assert call.headers["mcp-name"] == "lookup_glossary"
    assert call.request["params"]["_meta"][PROTOCOL_VERSION_META] == MODERN
    assert listing.status == call.status == 200
    listed = listing.response["result"]
    called = call.response["result"]
    assert [t["name"] for t in listed["tools"]] == SAMPLE_TOOLS
    for result in (listed, called):
        assert result["resultType"] == "complete", result
        assert result["_meta"][SERVER_INFO_META] == discovered["_meta"][SERVER_INFO_META], result
    assert listed["ttlMs"] == discovered["ttlMs"]
    assert listed["cacheScope"] == discovered["cacheScope"]
    assert called["isError"] is False
    events = usage_events_of(gateways, "sample", connection)
    call_event = next(e for e in events if e.get("method") == "tools/call")
    assert call_event["tool"] == "lookup_glossary"
    assert call_event.get("era") == "modern", brief([call_event])
    assert call_event.get("protocol_version") == MODERN, brief([call_event])


async def test_call_tool_returns_compact_json_text_with_search_time_x5(gateways) -> None:
    async with connect(gateways.sample_url) as connection:
        client = connection.client
        assert client.protocol_version == MODERN
        result = await client.call_tool("search_documents", {"query": "휴가", "limit": 1})
    assert result.is_error is False
    [block] = result.content
    assert block.type == "text"
    assert isinstance(block.meta["searchTime"], int)
    documents = json.loads(block.text)
    assert documents[0]["id"] == "DOC-1001"
    assert block.text == json.dumps(documents, ensure_ascii=False, separators=(",", ":"))


async def test_a_tool_service_failure_is_an_is_error_result_x6(gateways) -> None:
    async with connect(gateways.sample_url) as connection:
        assert connection.client.protocol_version == MODERN
        result = await connection.client.call_tool("lookup_glossary", {"term": "nope"})
    assert result.is_error is True
    assert result.content[0].text == "Tool Service returned HTTP 404: term 'nope' is not in the glossary"
    assert connection.exchange("tools/call").response["result"]["resultType"] == "complete"
    events = usage_events_of(gateways, "sample", connection)
    call = next(e for e in events if e.get("method") == "tools/call")
    assert call["outcome"] == "tool_error", brief([call])
    assert call.get("era") == "modern", brief([call])


async def test_invalid_arguments_raise_mcp_error_32602_x2(gateways) -> None:
    async with connect(gateways.sample_url) as connection:
        assert connection.client.protocol_version == MODERN
        with pytest.raises(MCPError) as raised:
            await connection.client.call_tool("create_ticket", {"title": "VPN"})
    assert raised.value.code == -32602
    assert raised.value.message == "Invalid params: 'priority' is required"
    events = usage_events_of(gateways, "sample", connection)
    call = next(e for e in events if e.get("method") == "tools/call")
    assert call["outcome"] == "rpc_error", brief([call])
    assert call["code"] == -32602, brief([call])
    assert call.get("era") == "modern", brief([call])


async def test_structured_content_passes_the_sdks_output_schema_validation(gateways) -> None:
    async with connect(gateways.interop_url) as connection:
        client = connection.client
        assert client.protocol_version == MODERN
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["word_stats"].output_schema["required"] == ["words", "characters"]
        # list_tools armed the SDK's outputSchema validator; call_tool raises on a mismatch.
        result = await client.call_tool("word_stats", {"text": "one two three"})
    assert result.is_error is False
    assert result.structured_content == {"words": 3, "characters": 13}
    assert json.loads(result.content[0].text) == result.structured_content
    assert connection.exchange("tools/call").response["result"]["resultType"] == "complete"


async def test_mcp_native_blocks_arrive_unchanged_with_search_time_on_the_first(gateways) -> None:
    async with connect(gateways.interop_url) as connection:
        client = connection.client
        assert client.protocol_version == MODERN
        image = await client.call_tool("test_image_content", {})
        resource = await client.call_tool("test_embedded_resource", {})
        mixed = await client.call_tool("test_multiple_content_types", {})
        error = await client.call_tool("test_error_handling", {})
        broken = await client.call_tool("broken_image", {})
    assert image.content[0].type == "image"
    assert image.content[0].mime_type == "image/png"
    assert base64.b64decode(image.content[0].data)[1:4] == b"PNG"
    assert isinstance(image.content[0].meta["searchTime"], int)
    assert resource.content[0].resource.text == "This is an embedded resource content."
    assert [b.type for b in mixed.content] == ["text", "image", "resource"]
    assert isinstance(mixed.content[0].meta["searchTime"], int)
    assert base64.b64decode(mixed.content[1].data)[1:4] == b"PNG"
    assert str(mixed.content[2].resource.uri) == "test://mixed-content-resource"
    assert error.is_error is True
    assert error.content[0].text == "This tool intentionally returns an error for testing"
    assert broken.is_error is True
    assert broken.content[0].text == (
        "Tool Service answer is not a valid MCP tool result at /content/0/mimeType: "
        "'mimeType' is required"
    )


async def test_legacy_mode_initializes_2025_11_25_on_the_same_url_l1_n1_n7(gateways) -> None:
    async with connect(gateways.sample_url, mode="legacy") as connection:
        client = connection.client
        assert client.protocol_version == LEGACY
        assert client.session.initialize_result is not None
        assert client.session.discover_result is None
        assert client.server_info.name == "core-tools"
        tools = await client.list_tools()
    assert [t.name for t in tools.tools] == SAMPLE_TOOLS
    handshake = connection.exchanges[0]
    assert handshake.rpc_method == "initialize"
    assert handshake.response["result"]["protocolVersion"] == LEGACY
    assert "resultType" not in handshake.response["result"]
    listed = connection.exchange("tools/list").response["result"]
    assert "resultType" not in listed and "ttlMs" not in listed, listed
    assert SERVER_INFO_META not in (listed.get("_meta") or {}), listed
    assert "server/discover" not in connection.rpc_methods()
    events = usage_events_of(gateways, "sample", connection)
    # The era is the one of each JSON-RPC message (N1); the SDK's GET probe and closing DELETE
    # (405, H1) carry none.
    messages = [e for e in events if e.get("method") is not None]
    posted = [e.rpc_method for e in connection.exchanges if e.method == "POST"]
    assert sorted(e["method"] for e in messages) == sorted(posted), brief(events)
    assert sorted(posted) == ["initialize", "notifications/initialized", "tools/list"]
    assert all(e.get("era") == "legacy" for e in messages), brief(events)
    listing = next(e for e in messages if e["method"] == "tools/list")
    assert listing.get("protocol_version") == LEGACY, brief(events)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_list_tools_pages_through_a_10000_tool_route_t2(gateways, mode) -> None:
    async with connect(gateways.large_url, mode=mode) as connection:
        listed: list[str] = []
        cursor = None
        while True:
            result = await connection.client.list_tools(cursor=cursor)
            listed.extend(tool.name for tool in result.tools)
            cursor = result.next_cursor
            if cursor is None:
                break
        pages = [e for e in connection.exchanges if e.rpc_method == "tools/list"]
        expected_era = MODERN if mode == "auto" else LEGACY
        assert connection.client.protocol_version == expected_era
    assert len(pages) >= 2, len(pages)
    assert listed == gateways.large_names()
    for before, page in zip(pages, pages[1:]):
        assert page.request["params"]["cursor"] == before.response["result"]["nextCursor"]
