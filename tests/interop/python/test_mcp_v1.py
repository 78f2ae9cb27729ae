"""The official Python SDK `mcp` 1.x (`streamable_http_client` + `ClientSession`) against the real
mcp-local binary (CONTRACT L1, L2, L3, H1, T1, X2, X5, X6, U1; structuredContent and MCP-native
results). Run in the venv of requirements-mcp1.txt. The SDK's HTTP exchanges are recorded by an
httpx event hook on the real client it uses."""

from __future__ import annotations

import base64
import importlib.metadata
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def connect(
    url: str, exchanges: list[tuple[str, int]]
) -> AsyncIterator[tuple[ClientSession, types.InitializeResult]]:
    """An initialized `ClientSession` and its `initialize` result; `exchanges` collects
    (method, status) of each HTTP exchange."""

    async def record(response: httpx.Response) -> None:
        exchanges.append((response.request.method, response.status_code))

    async with httpx.AsyncClient(timeout=30, event_hooks={"response": [record]}) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, _):
            async with ClientSession(read, write) as session:
                yield session, await session.initialize()


async def eventually(predicate, what: str) -> None:
    with anyio.fail_after(10):
        while not predicate():
            await anyio.sleep(0.02)


def test_the_installed_sdk_is_mcp_1x() -> None:
    assert importlib.metadata.version("mcp").startswith("1.")


async def test_initialize_answers_2025_11_25_with_the_routes_server_info_l1_l2(gateways) -> None:
    exchanges: list[tuple[str, int]] = []
    async with connect(gateways.sample_url, exchanges) as (session, result):
        assert result.protocolVersion == "2025-11-25"
        assert result.serverInfo.name == "core-tools"
        assert result.serverInfo.title == "Core tools"
        assert result.capabilities.tools is not None
        assert result.capabilities.tools.listChanged is False
        assert await session.send_ping() is not None
    assert exchanges[0] == ("POST", 200)
    assert ("POST", 202) in exchanges, "notifications/initialized is accepted with 202 (L3)"


async def test_the_get_probe_and_the_closing_delete_get_405_h1(gateways) -> None:
    exchanges: list[tuple[str, int]] = []
    async with connect(gateways.sample_url, exchanges) as (session, _):
        await eventually(lambda: any(m == "GET" for m, _ in exchanges), "the GET probe")
        await session.list_tools()
    assert ("GET", 405) in exchanges
    assert ("DELETE", 405) in exchanges
    assert all(status in (200, 202, 405) for _, status in exchanges), exchanges


async def test_list_tools_shows_the_sample_tools_public_fields_only_t1(gateways) -> None:
    async with connect(gateways.sample_url, []) as (session, _):
        result = await session.list_tools()
    assert [t.name for t in result.tools] == ["search_documents", "lookup_glossary", "create_ticket"]
    assert result.nextCursor is None
    assert all(t.meta is None for t in result.tools)


async def test_call_tool_returns_compact_json_text_with_search_time_x5(gateways) -> None:
    async with connect(gateways.sample_url, []) as (session, _):
        result = await session.call_tool("search_documents", {"query": "휴가", "limit": 1})
    assert result.isError is False
    [block] = result.content
    assert block.type == "text"
    assert isinstance(block.meta["searchTime"], int)
    documents = json.loads(block.text)
    assert documents[0]["id"] == "DOC-1001"
    assert block.text == json.dumps(documents, ensure_ascii=False, separators=(",", ":"))


async def test_a_tool_service_failure_is_an_is_error_result_x6(gateways) -> None:
    async with connect(gateways.sample_url, []) as (session, _):
        result = await session.call_tool("lookup_glossary", {"term": "nope"})
    assert result.isError is True
    assert result.content[0].text == "Tool Service returned HTTP 404: term 'nope' is not in the glossary"


async def test_invalid_arguments_raise_mcp_error_32602_x2(gateways) -> None:
    async with connect(gateways.sample_url, []) as (session, _):
        with pytest.raises(McpError) as raised:
            await session.call_tool("create_ticket", {"title": "VPN"})
    assert raised.value.error.code == -32602
    assert raised.value.error.message == "Invalid params: 'priority' is required"


async def test_structured_content_passes_the_sdks_output_schema_validation(gateways) -> None:
    async with connect(gateways.interop_url, []) as (session, _):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert tools["word_stats"].outputSchema["required"] == ["words", "characters"]
        result = await session.call_tool("word_stats", {"text": "one two three"})
    assert result.isError is False
    assert result.structuredContent == {"words": 3, "characters": 13}
    assert json.loads(result.content[0].text) == result.structuredContent


async def test_mcp_native_blocks_arrive_unchanged_with_search_time_on_the_first(gateways) -> None:
    async with connect(gateways.interop_url, []) as (session, _):
        mixed = await session.call_tool("test_multiple_content_types", {})
        error = await session.call_tool("test_error_handling", {})
        broken = await session.call_tool("broken_image", {})
    assert [b.type for b in mixed.content] == ["text", "image", "resource"]
    assert isinstance(mixed.content[0].meta["searchTime"], int)
    assert base64.b64decode(mixed.content[1].data)[1:4] == b"PNG"
    assert str(mixed.content[2].resource.uri) == "test://mixed-content-resource"
    assert error.isError is True
    assert error.content[0].text == "This tool intentionally returns an error for testing"
    assert broken.isError is True
    assert broken.content[0].text == (
        "Tool Service answer is not a valid MCP tool result at /content/0/mimeType: "
        "'mimeType' is required"
    )


async def test_each_exchange_is_one_usage_event_u1(gateways) -> None:
    before = len(gateways.usage_events("sample"))
    exchanges: list[tuple[str, int]] = []
    async with connect(gateways.sample_url, exchanges) as (session, _):
        await session.call_tool("lookup_glossary", {"term": "SLA"})
    # mcp-local writes a serving thread's usage lines when it goes idle, just after the
    # answers: wait for this session's call itself, not for a count that an earlier test's late
    # line could fill.
    events = gateways.wait_for_usage_events(
        "sample",
        lambda e: len(e) - before >= len(exchanges)
        and any(x.get("tool") == "lookup_glossary" for x in e[before:]),
        "the usage events",
    )[before:]
    call = next(e for e in events if e.get("method") == "tools/call")
    assert call["tool"] == "lookup_glossary"
    assert call["outcome"] == "ok"


async def test_list_tools_pages_through_a_10000_tool_route_t2(gateways) -> None:
    exchanges: list[tuple[str, int]] = []
    async with connect(gateways.large_url, exchanges) as (session, _):
        listed: list[str] = []
        cursor = None
        pages = 0
        while True:
            params = None if cursor is None else types.PaginatedRequestParams(cursor=cursor)
            result = await session.list_tools(params=params)
            listed.extend(tool.name for tool in result.tools)
            pages += 1
            cursor = result.nextCursor
            if cursor is None:
                break
    assert pages >= 2, pages
    assert listed == gateways.large_names()
