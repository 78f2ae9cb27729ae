"""The official Python SDK `mcp` 2.x `Client` in its default auto mode against the real
mcp-local binary (CONTRACT H4, L1, L3, T1, X2, X5, X6; structuredContent and MCP-native results).
Auto mode first probes `server/discover` with a newer protocol version; the gateway's HTTP 400
(H4) must make it fall back to `initialize`. Run in the venv of requirements-mcp2.txt."""

from __future__ import annotations

import base64
import importlib.metadata
import json

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.anyio


def test_the_installed_sdk_is_mcp_2x() -> None:
    assert importlib.metadata.version("mcp").startswith("2.")


async def test_auto_mode_falls_back_to_initialize_after_the_400_for_its_newer_version_h4(
    gateways,
) -> None:
    before = len(gateways.usage_events("sample"))
    async with Client(gateways.sample_url) as client:
        assert client.protocol_version == "2025-11-25"
        assert client.session.discover_result is None
        assert client.session.initialize_result is not None
        assert client.server_info.name == "core-tools"
        tools = await client.list_tools()
    assert [t.name for t in tools.tools] == ["search_documents", "lookup_glossary", "create_ticket"]
    events = gateways.wait_for_usage_events(
        "sample",
        lambda e: any(x.get("method") == "tools/list" for x in e[before:]),
        "the tools/list usage event",
    )[before:]
    probe = next(e for e in events if e.get("method") == "server/discover")
    handshake = next(e for e in events if e.get("method") == "initialize")
    assert probe["status"] == 400, probe
    assert handshake["outcome"] == "ok", handshake
    assert events.index(probe) < events.index(handshake), events


async def test_call_tool_returns_compact_json_text_with_search_time_x5(gateways) -> None:
    async with Client(gateways.sample_url) as client:
        result = await client.call_tool("search_documents", {"query": "VPN", "limit": 1})
    assert result.is_error is False
    [block] = result.content
    assert isinstance(block.meta["searchTime"], int)
    assert json.loads(block.text)[0]["id"] == "DOC-2001"


async def test_a_tool_service_failure_is_an_is_error_result_x6(gateways) -> None:
    async with Client(gateways.sample_url) as client:
        result = await client.call_tool("lookup_glossary", {"term": "nope"})
    assert result.is_error is True
    assert result.content[0].text == "Tool Service returned HTTP 404: term 'nope' is not in the glossary"


async def test_invalid_arguments_raise_mcp_error_32602_x2(gateways) -> None:
    async with Client(gateways.sample_url) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("create_ticket", {"title": "VPN"})
    assert raised.value.code == -32602
    assert raised.value.message == "Invalid params: 'priority' is required"


async def test_structured_content_and_mcp_native_blocks_reach_the_client(gateways) -> None:
    async with Client(gateways.interop_url) as client:
        await client.list_tools()
        stats = await client.call_tool("word_stats", {"text": "a b"})
        image = await client.call_tool("test_image_content", {})
        resource = await client.call_tool("test_embedded_resource", {})
    assert stats.is_error is False
    assert stats.structured_content == {"words": 2, "characters": 3}
    assert image.content[0].type == "image"
    assert image.content[0].mime_type == "image/png"
    assert base64.b64decode(image.content[0].data)[1:4] == b"PNG"
    assert isinstance(image.content[0].meta["searchTime"], int)
    assert resource.content[0].resource.text == "This is an embedded resource content."
