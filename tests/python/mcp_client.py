"""Drive a running medulla owner with the official Python MCP SDK.

Usage: mcp_client.py <mcp url> <project x root> <project y root>

Connects twice: the low-level `streamable_http_client` + `ClientSession`, and the
high-level auto-mode `Client` (which probes server/discover and falls back to the
initialize handshake). Each sends a Medulla-Caller-Root header, lists tools, memorizes
and seeks. Prints one JSON object of observations; exits non-zero on any failure.
"""

import asyncio
import json
import sys

from mcp import ClientSession, Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def content(result):
    if result.structured_content is not None:
        return result.structured_content
    text = result.content[0].text
    if result.is_error:
        # A refusal: `code: message`, then the typed error as JSON.
        return json.loads(text.split("\n", 1)[1])
    return json.loads(text)


def labels(seek):
    return [r["label"] for r in seek.get("results", [])]


async def low_level(url, x, y):
    headers = {"Medulla-Caller-Root": y, "Medulla-Agent": "claude:maker"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                tools = await session.list_tools()
                mem = await session.call_tool(
                    "memorize", {"label": "py low level", "text": "written by the python sdk from y", "agent_id": "claude:maker"}
                )
                seek = await session.call_tool("seek", {"query": "python sdk"})
                return {
                    "server_name": init.server_info.name,
                    "tools": sorted(t.name for t in tools.tools),
                    "memorize": content(mem),
                    "memorize_is_error": bool(mem.is_error),
                    "seek_labels": labels(content(seek)),
                }


async def auto_mode(url, x):
    headers = {"Medulla-Caller-Root": x, "Medulla-Agent": "claude:maker"}
    async with create_mcp_http_client(headers=headers) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            tools = await client.list_tools()
            mem = await client.call_tool(
                "memorize", {"label": "py auto mode", "text": "written by the python sdk from x", "agent_id": "claude:maker"}
            )
            seek = await client.call_tool("seek", {"query": "python sdk"})
            refused = await client.call_tool("memorize", {"label": "bad", "text": "", "agent_id": "claude:maker"})
            return {
                "tools": sorted(t.name for t in tools.tools),
                "memorize": content(mem),
                "seek_labels": labels(content(seek)),
                "refused_is_error": bool(refused.is_error),
                "refused": content(refused),
            }


async def by_roots(url, x):
    """No caller-root header at all: the client declares MCP roots, and its first root
    routes it (SPEC section 3)."""
    import pathlib
    from mcp import types

    async def list_roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=pathlib.Path(x).as_uri(), name="x")])

    headers = {"Medulla-Agent": "claude:maker"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, list_roots_callback=list_roots) as session:
                await session.initialize()
                mem = await session.call_tool(
                    "memorize", {"label": "py by roots", "text": "routed by the client's declared root"}
                )
                return {"memorize": content(mem), "memorize_is_error": bool(mem.is_error)}


async def main():
    url, x, y = sys.argv[1:4]
    out = {
        "low_level": await low_level(url, x, y),
        "auto": await auto_mode(url, x),
        "roots": await by_roots(url, x),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
