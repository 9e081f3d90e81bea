"""An unknown category name is a JSON-RPC -32602 error from protocol 2025-11-25 on, and a
tool result with isError before it; both keep the "did you mean" words (issue 58 item 7)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, MCPError

from meta_tools.config import MetaToolsConfig
from meta_tools.llm import ScriptedModel
from meta_tools.router.manager import MetaManager
from meta_tools.serve.server import build_server, serve
from tests.mcp.conftest import no_leaks  # noqa: F401
from tests.servers.router import shout

pytestmark = pytest.mark.anyio

TASK = {"objective": "Shout it", "exact_input": "hi"}
TOKEN = "unknown-category-token"
REFUSED = (
    "unknown category 'txet'; did you mean 'text'? the categories are: 'text' (Text),"
    " 'other' (Other)"
)


def router() -> MetaManager:
    config = MetaToolsConfig.from_data(
        {
            "Text": {"description": "Shout texts.", "tools": ["shout"]},
            "Other": {"description": "Nothing much.", "tools": ["shout"]},
        }
    )
    return MetaManager.from_config(config, tools=[shout], model=ScriptedModel([]))


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
async def test_an_unknown_category_is_an_invalid_params_error_that_says_did_you_mean(
    mode: str, version: str
) -> None:
    async with router() as meta, Client(build_server(meta), mode=mode) as client:
        assert client.protocol_version == version
        with pytest.raises(MCPError) as refused:
            await client.call_tool("txet", TASK)
        # bad arguments stay tool results: the model can correct them
        missing = await client.call_tool("text", {"objective": "x"})
    assert (refused.value.code, refused.value.message) == (-32602, REFUSED)
    assert missing.is_error is True


@asynccontextmanager
async def served(meta: MetaManager) -> AsyncIterator[str]:
    async with anyio.create_task_group() as group:
        url = await group.start(partial(serve, meta, transport="http", port=0, token=TOKEN))
        try:
            yield url
        finally:
            group.cancel_scope.cancel()


class RawSession:
    """JSON-RPC over streamable HTTP, by hand: a host that speaks an older protocol version."""

    def __init__(self, http: httpx2.AsyncClient, url: str) -> None:
        self.http, self.url = http, url
        self.headers = {
            "Authorization": f"Bearer {TOKEN}",
            "Accept": "application/json, text/event-stream",
        }

    async def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        response = await self.http.post(self.url, json=message, headers=self.headers)
        response.raise_for_status()
        if "mcp-session-id" in response.headers:
            self.headers["Mcp-Session-Id"] = response.headers["mcp-session-id"]
        if "id" not in message:
            return None
        lines = response.text.splitlines()
        if response.headers["content-type"].startswith("application/json"):
            lines = [f"data: {response.text}"]
        answers = [json.loads(line[len("data:") :]) for line in lines if line.startswith("data:")]
        return next(a for a in answers if a.get("id") == message["id"])


async def test_before_2025_11_25_an_unknown_category_is_a_tool_result_the_model_reads() -> None:
    async with served(router()) as url, httpx2.AsyncClient(timeout=30) as http:
        session = RawSession(http, url)
        hello = await session.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "older-host", "version": "1"},
                },
            }
        )
        assert hello is not None and hello["result"]["protocolVersion"] == "2025-06-18"
        session.headers["MCP-Protocol-Version"] = "2025-06-18"
        await session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        answer = await session.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "txet", "arguments": TASK},
            }
        )
    assert answer is not None and "error" not in answer
    assert answer["result"]["isError"] is True
    assert answer["result"]["content"] == [{"type": "text", "text": REFUSED}]
