"""Bench peer: a stateless MCP server on the official Python SDK (MCPServer, the SDK's
streamable HTTP transport with stateless_http=True and json_response=True). Its one tool POSTs
the arguments to the bench Tool Service and returns the answer as text.

Usage: python server.py PORT TOOL_SERVICE_URL
"""

import sys
from typing import Annotated, Literal

import httpx2
from pydantic import BaseModel, ConfigDict, Field

from mcp.server.mcpserver import MCPServer

PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 3200
TOOL_SERVICE = sys.argv[2] if len(sys.argv) > 2 else "http://127.0.0.1:3001/tools/search_documents"

mcp = MCPServer("bench-python-peer", version="1.0.0", log_level="WARNING")
client = httpx2.AsyncClient(timeout=10.0)


class Filters(BaseModel):
    model_config = ConfigDict(extra="forbid")
    department: Literal["HR", "IT", "Finance", "Legal"] | None = None
    updatedAfter: str | None = None
    tags: Annotated[list[str], Field(max_length=10)] | None = None


@mcp.tool(description="Full-text search over the document store.", structured_output=False)
async def search_documents(
    query: Annotated[str, Field(min_length=1, max_length=500)],
    limit: Annotated[int, Field(ge=1, le=50)] | None = None,
    filters: Filters | None = None,
) -> str:
    arguments = {"query": query}
    if limit is not None:
        arguments["limit"] = limit
    if filters is not None:
        arguments["filters"] = filters.model_dump(exclude_none=True)
    answer = await client.post(TOOL_SERVICE, json=arguments)
    answer.raise_for_status()
    return answer.text


if __name__ == "__main__":
    mcp.run("streamable-http", host="127.0.0.1", port=PORT, stateless_http=True, json_response=True)
