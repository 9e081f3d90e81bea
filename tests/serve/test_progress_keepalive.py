"""A served call on a slow model keeps a host that resets its timeout on progress waiting."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import anyio
import httpx2
import mcp_types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from meta_tools import tool
from meta_tools.config import MetaToolsConfig
from meta_tools.router.manager import MetaManager
from meta_tools.serve.server import serve
from tests.fakes.llm_server import (
    FakeLLMServer,
    Reply,
    openai_text_reply,
    openai_tool_reply,
    wire_tool_call,
)

pytestmark = pytest.mark.anyio

TASK = {"objective": "Shout it", "exact_input": "hi"}
HOST_TIMEOUT_S = 1.0
MODEL_THINKS_S = 1.6  # each of the two model calls: together three host timeouts
EVERY_S = 0.1


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


class ResettingHost:
    """A host's request timeout that starts again on every progress notification.

    What the MCP Inspector does with "Reset Timeout on Progress" on, and what a
    host that asks for progress may do.
    """

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.messages: list[str] = []
        self.arrivals: list[float] = []
        self._scope = anyio.CancelScope()

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.messages.append(message or "")
        self.arrivals.append(anyio.current_time())
        self._scope.deadline = anyio.current_time() + self.timeout_s

    async def call(self, client: Client, name: str) -> mcp_types.CallToolResult:
        """The result, or AssertionError when the host's timeout ran out first."""
        started = anyio.current_time()
        with anyio.CancelScope(deadline=started + self.timeout_s) as self._scope:
            return await client.call_tool(name, TASK, progress_callback=self.on_progress)
        waited = anyio.current_time() - started
        raise AssertionError(f"the host gave up after {waited:.1f} s; heard {self.messages}")


def slow_router(llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> MetaManager:
    monkeypatch.setenv("SLOW_MODEL_KEY", "sk-test")
    config = MetaToolsConfig.from_data(
        {
            "model": {
                "provider": "openai",
                "name": "slow-local-model",
                "base_url": llm_server.openai_base_url,
                "api_key_env": "SLOW_MODEL_KEY",
                "max_retries": 0,
            },
            "Text": {"description": "Shout texts.", "tools": ["shout"]},
        }
    )
    llm_server.enqueue(
        Reply(
            body=openai_tool_reply(wire_tool_call("c1", "shout", {"text": "hi"})),
            delay=MODEL_THINKS_S,
        ),
        Reply(body=openai_text_reply("Shouted: HI"), delay=MODEL_THINKS_S),
    )
    return MetaManager.from_config(config, tools=[shout])


@asynccontextmanager
async def served_client(
    meta: MetaManager, every_s: float, mode: str = "auto"
) -> AsyncIterator[Client]:
    async with anyio.create_task_group() as group:
        serving = partial(serve, meta, transport="http", port=0, progress_every_s=every_s)
        url = await group.start(serving)
        try:
            async with (
                httpx2.AsyncClient(timeout=30) as http,
                Client(streamable_http_client(url, http_client=http), mode=mode) as client,
            ):
                yield client
        finally:
            group.cancel_scope.cancel()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_host_that_resets_its_timeout_on_progress_gets_a_result_slower_than_its_timeout(
    mode: str, llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = ResettingHost(HOST_TIMEOUT_S)
    async with served_client(slow_router(llm_server, monkeypatch), EVERY_S, mode) as client:
        started = anyio.current_time()
        result = await host.call(client, "text")
        took = anyio.current_time() - started
    assert result.is_error is False
    assert (result.structured_content or {})["summary"] == "Shouted: HI"
    assert took > 2 * HOST_TIMEOUT_S
    kept_alive = [m for m in host.messages if re.fullmatch(r"Text: still working \(\d+ s\)", m)]
    assert len(kept_alive) >= 2 * MODEL_THINKS_S / HOST_TIMEOUT_S  # while the model thought
    assert host.messages[-1] == "Text: finished (success)"
    gaps = [
        later - earlier for earlier, later in zip(host.arrivals, host.arrivals[1:], strict=False)
    ]
    assert max(gaps) < HOST_TIMEOUT_S / 2


async def test_without_the_keepalive_the_same_host_gives_up_on_the_slow_model(
    llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = ResettingHost(HOST_TIMEOUT_S)
    async with served_client(slow_router(llm_server, monkeypatch), every_s=60.0) as client:
        with pytest.raises(AssertionError, match="the host gave up after 1"):
            await host.call(client, "text")
