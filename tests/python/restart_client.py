"""One session of the official Python MCP SDK across an owner restart.

Usage: restart_client.py <mcp url> <project root>

Seeks, prints `seeked` and waits for a line on stdin (the test restarts the owner
meanwhile, on the same address), then seeks again in the same session. Prints one JSON
object: the slugs found before and after, or the error the second seek raised.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def slugs(result):
    body = result.structured_content
    if body is None:
        body = json.loads(result.content[0].text)
    return [r["slug"] for r in body.get("results", [])]


async def main(url, root):
    headers = {"Medulla-Caller-Root": root, "Medulla-Agent": "claude:maker"}
    out = {}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                out["before"] = slugs(await session.call_tool("seek", {"query": "release"}))
                print("seeked", flush=True)
                await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
                try:
                    out["after"] = slugs(await session.call_tool("seek", {"query": "release"}))
                except Exception as e:  # what the SDK raises is the observation
                    out["error"] = f"{type(e).__name__}: {e}"
    print(json.dumps(out), flush=True)


asyncio.run(main(sys.argv[1], sys.argv[2]))
