"""Drive `medulla bridge` with the official Python MCP SDK's stdio client.

Usage: stdio_client.py <medulla binary> <owner url> <working directory>

The SDK launches the bridge as a subprocess in the given working directory; the bridge
forwards to the owner with that directory as the caller root. Prints one JSON object.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main():
    binary, url, cwd = sys.argv[1:4]
    env = dict(os.environ, MEDULLA_URL=url)
    env.pop("MEDULLA_BRAIN", None)
    params = StdioServerParameters(command=binary, args=["bridge"], env=env, cwd=cwd)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            mem = await session.call_tool("memorize", {"label": "via stdio sdk", "text": "the stdio bridge forwards this", "agent_id": "claude:maker"})
            seek = await session.call_tool("seek", {"query": "stdio bridge"})
            resources = await session.list_resources()
            claim = await session.read_resource("medulla://brain/via-stdio-sdk")
            prompt = await session.get_prompt("recall", {"topic": "stdio bridge"})
            print(json.dumps({
                "resources": [r.uri for r in resources.resources],
                "claim_label": json.loads(claim.contents[0].text)["label"],
                "prompt_resources": [m.content.resource.uri for m in prompt.messages if m.content.type == "resource"],
                "server_name": init.server_info.name,
                "tools": len(tools.tools),
                "memorize": mem.structured_content,
                "seek_labels": [r["label"] for r in seek.structured_content["results"]],
            }))


if __name__ == "__main__":
    asyncio.run(main())
