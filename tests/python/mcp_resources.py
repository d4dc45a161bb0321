"""Drive a running medulla owner's resources and prompts with the official Python MCP SDK.

Usage: mcp_resources.py <mcp url> <project x root> <project y root>

x and y are bootstrapped brains. The script writes a claim into each and one doctrine
claim into the medulla, then, as a session routed to x:
- lists resources and templates, reads x's claim, the medulla's claim and the north
  digest, and tries to read y's claim (never listed, never readable from x);
- lists the prompts and gets north, recall and debrief;
- hears notifications/resources/list_changed after a write to x and not after one to y,
  and notifications/resources/updated for a subscribed claim;
- on a 2026-07-28 connection (no session), hears the same through subscriptions/listen.
Prints one JSON object of observations; exits non-zero on any failure.
"""

import asyncio
import json
import sys

import anyio
from mcp import ClientSession, Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

AGENT = {"Medulla-Agent": "claude:orchestrator"}


def content(result):
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def prompt_view(result):
    out = []
    for m in result.messages:
        c = m.content
        if c.type == "resource":
            out.append({"resource": c.resource.uri, "mime": c.resource.mime_type, "label": json.loads(c.resource.text)["label"]})
        else:
            out.append({"text": c.text})
    return out


async def write(url, root, label, text, tier=None):
    """One call from its own session: a write the watched session did not make."""
    args = {"label": label, "text": text}
    if tier:
        args["tier"] = tier
    async with create_mcp_http_client(headers={"Medulla-Caller-Root": root, **AGENT}) as http:
        async with streamable_http_client(url, http_client=http) as (read, write_):
            async with ClientSession(read, write_) as s:
                await s.initialize()
                r = await s.call_tool("memorize", args)
                assert not r.is_error, content(r)


async def next_notification(inbox, kinds, timeout=10):
    with anyio.fail_after(timeout):
        while True:
            n = await inbox.receive()
            if isinstance(n, kinds):
                return n


async def session_mode(url, x, y):
    send, inbox = anyio.create_memory_object_stream(100)
    seen = []

    async def on_message(message):
        if isinstance(message, (types.ResourceListChangedNotification, types.ResourceUpdatedNotification)):
            seen.append(message.method)
            await send.send(message)

    headers = {"Medulla-Caller-Root": x, **AGENT}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write_):
            async with ClientSession(read, write_, message_handler=on_message) as s:
                init = await s.initialize()
                caps = init.capabilities
                listed = await s.list_resources()
                templates = await s.list_resource_templates()
                mine = await s.read_resource("medulla://brain/x-deploy")
                doctrine = await s.read_resource("medulla://medulla/py-doctrine")
                north = await s.read_resource("medulla://north")
                try:
                    await s.read_resource("medulla://brain/y-secret")
                    other = "read"
                except Exception as e:  # the SDK raises the JSON-RPC error
                    other = {"error": str(e), "code": getattr(getattr(e, "error", None), "code", None)}
                prompts = await s.list_prompts()
                p_north = await s.get_prompt("north", {"task": "how do we deploy"})
                p_recall = await s.get_prompt("recall", {"topic": "deploy"})
                p_debrief = await s.get_prompt("debrief", {"task": "deploy"})
                try:
                    await s.get_prompt("north", {})
                    missing_task = "answered"
                except Exception as e:
                    missing_task = str(e)

                # Notifications: the first write to x after the session landed on it is
                # heard; a write to y is not this session's; the next write to x is.
                await s.subscribe_resource("medulla://brain/x-deploy")
                await write(url, x, "x first", "the first claim written after the session landed")
                await next_notification(inbox, types.ResourceListChangedNotification)
                await write(url, y, "y other", "written to y while x watches")
                await write(url, x, "x new", "a new claim in x")
                await next_notification(inbox, types.ResourceListChangedNotification)
                after_x = list(seen)
                await write(url, x, "x deploy", "deploy with the green-blue script, revised")
                updated = await next_notification(inbox, types.ResourceUpdatedNotification)
                return {
                    "capabilities": {
                        "resources": caps.resources.model_dump(by_alias=True, exclude_none=True) if caps.resources else None,
                        "prompts": caps.prompts is not None,
                    },
                    "resources": [r.uri for r in listed.resources],
                    "names_described": all(r.name and r.description for r in listed.resources),
                    "templates": sorted(t.uri_template for t in templates.resource_templates),
                    "mine": {"uri": mine.contents[0].uri, "mime": mine.contents[0].mime_type, "row": json.loads(mine.contents[0].text)},
                    "doctrine": json.loads(doctrine.contents[0].text),
                    "north": {"mime": north.contents[0].mime_type, "text": north.contents[0].text},
                    "other": other,
                    "prompts": {p.name: {"described": bool(p.description), "args": [(a.name, bool(a.required)) for a in (p.arguments or [])]} for p in prompts.prompts},
                    "north_prompt": prompt_view(p_north),
                    "recall_prompt": prompt_view(p_recall),
                    "debrief_prompt": prompt_view(p_debrief),
                    "missing_task": missing_task,
                    "after_x": after_x,
                    "updated": updated.params.uri,
                }


async def listen_mode(url, x):
    """2026-07-28: no session; changes arrive on a subscriptions/listen stream."""
    headers = {"Medulla-Caller-Root": x, **AGENT}
    async with create_mcp_http_client(headers=headers) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            listed = await client.list_resources()
            async with client.listen(resources_list_changed=True, resource_subscriptions=["medulla://brain/x-deploy"]) as sub:
                await write(url, x, "x deploy", "deploy with the green-blue script, third take")
                events = []
                with anyio.fail_after(10):
                    async for ev in sub:
                        events.append(type(ev).__name__ + (":" + ev.uri if hasattr(ev, "uri") else ""))
                        if len(events) >= 2:
                            break
            return {
                "protocol": client.protocol_version,
                "resources": [r.uri for r in listed.resources],
                "events": sorted(events),
            }


async def main():
    url, x, y = sys.argv[1:4]
    await write(url, x, "x deploy", "deploy with the blue-green script")
    await write(url, y, "y secret", "y's private claim")
    await write(url, x, "py doctrine", "doctrine every project follows", tier="medulla")
    out = {"session": await session_mode(url, x, y), "listen": await listen_mode(url, x)}
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
