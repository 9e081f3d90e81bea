"""The served router declares `tools.listChanged` exactly where a reload announces it
(issue 58 item 4): in memory, over stdio and over streamable HTTP, in both protocol eras."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

import anyio
import httpx2
import mcp_types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from meta_tools.config import MetaToolsConfig
from meta_tools.llm import ScriptedModel
from meta_tools.router.manager import MetaManager
from meta_tools.serve.server import build_server, serve
from tests.mcp.conftest import ROOT, no_leaks  # noqa: F401
from tests.servers.router import shout

pytestmark = pytest.mark.anyio

TOKEN = "capabilities-token"
BEFORE = {"Text": {"description": "Shout texts.", "tools": ["shout"]}}
AFTER = {"Loud Text": {"description": "Shout texts loudly.", "tools": ["shout"]}}
ERAS = {"auto": "2026-07-28", "legacy": "2025-11-25"}

Reload = Callable[[], Awaitable[None]]
OnMessage = Callable[[object], Awaitable[None]]
Connected = tuple[Client, Reload]


def router() -> MetaManager:
    return MetaManager.from_config(
        MetaToolsConfig.from_data(BEFORE), tools=[shout], model=ScriptedModel([])
    )


@asynccontextmanager
async def in_memory(mode: str, on_message: OnMessage, _: Path) -> AsyncIterator[Connected]:
    meta = router()

    async def reload() -> None:
        await meta.reload(MetaToolsConfig.from_data(AFTER))

    async with meta, Client(build_server(meta), mode=mode, message_handler=on_message) as client:
        yield client, reload


@asynccontextmanager
async def over_stdio(mode: str, on_message: OnMessage, tmp_path: Path) -> AsyncIterator[Connected]:
    path = tmp_path / "Meta_tool_config.json"
    path.write_text(json.dumps(BEFORE))
    command = StdioServerParameters(
        command=sys.executable, args=["-m", "tests.servers.reloading_router", str(path)], cwd=ROOT
    )

    async def reload() -> None:  # the server watches its config file
        path.write_text(json.dumps(AFTER))

    async with Client(command, mode=mode, message_handler=on_message) as client:
        yield client, reload


@asynccontextmanager
async def over_http(mode: str, on_message: OnMessage, _: Path) -> AsyncIterator[Connected]:
    meta = router()

    async def reload() -> None:
        await meta.reload(MetaToolsConfig.from_data(AFTER))

    async with anyio.create_task_group() as group:
        url = await group.start(partial(serve, meta, transport="http", port=0, token=TOKEN))
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode=mode, message_handler=on_message) as client:
                yield client, reload
        group.cancel_scope.cancel()


TRANSPORTS = {"memory": in_memory, "stdio": over_stdio, "http": over_http}


@pytest.mark.parametrize("mode", list(ERAS))
@pytest.mark.parametrize("transport", list(TRANSPORTS))
async def test_the_router_declares_list_changed_and_a_reload_announces_it(
    transport: str, mode: str, tmp_path: Path
) -> None:
    notified = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            notified.set()

    async with TRANSPORTS[transport](mode, on_message, tmp_path) as (client, reload):
        assert client.protocol_version == ERAS[mode]
        declared = client.server_capabilities.model_dump(
            by_alias=True, mode="json", exclude_none=True
        )
        # exactly the tools, whose list is announced when it changes; nothing unserved
        assert declared == {"tools": {"listChanged": True}}
        assert [t.name for t in (await client.list_tools()).tools] == ["text"]
        with anyio.fail_after(20):
            if mode == "legacy":  # a notification on the session
                await reload()
                await notified.wait()
            else:  # an event on the client's subscriptions/listen stream
                async with client.listen(tools_list_changed=True) as subscription:
                    await reload()
                    await subscription.__anext__()
        assert [t.name for t in (await client.list_tools()).tools] == ["loud_text"]
