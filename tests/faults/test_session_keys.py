"""Category memory is keyed only by identities the server checked: a 2026-07-28 request's
`Mcp-Session-Id` is ignored, and a client-chosen `_meta` key is namespaced per client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from meta_tools import tool
from meta_tools.category.manager import CategoryManager
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from meta_tools.serve.server import SESSION_META_KEY, serve

pytestmark = pytest.mark.anyio


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def served() -> tuple[ScriptedModel, MetaManager]:
    def answer(request: ChatRequest) -> AssistantTurn:
        if request.messages[-1].role == "user" and request.messages[-1] is request.messages[1]:
            return AssistantTurn(tool_calls=[ToolCall(name="shout", arguments={"text": "x"})])
        return AssistantTurn(text="done")

    model = ScriptedModel.from_function(answer)
    return model, MetaManager([CategoryManager("Text", "Shout texts.", [shout], model)])


@asynccontextmanager
async def client(
    url: str, mode: str, headers: dict[str, str] | None = None, seen: list[str] | None = None
) -> AsyncIterator[Client]:
    async def remember(response: httpx2.Response) -> None:
        if seen is not None and "mcp-session-id" in response.headers:
            seen.append(response.headers["mcp-session-id"])

    hooks = {"response": [remember]}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30, event_hooks=hooks) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as found,
    ):
        yield found


def tasks_seen(model: ScriptedModel, objective: str) -> str:
    """The task message of the first request of the run with `objective`."""
    (found,) = [
        r.messages[1].content
        for r in model.requests
        if len(r.messages) == 2 and f"Objective: {objective}\n" in r.messages[1].content
    ]
    return found


async def call(session: Client, objective: str, meta: dict[str, str] | None = None) -> None:
    answer = await session.call_tool(
        "text", {"objective": objective, "exact_input": "x"}, meta=meta
    )
    assert answer.is_error is False


async def test_two_modern_clients_with_the_same_made_up_session_id_share_no_memory() -> None:
    model, meta = served()
    forged = {"mcp-session-id": "shared-made-up-id"}
    async with anyio.create_task_group() as group:
        url = await group.start(partial(serve, meta, transport="http", port=0))
        async with client(url, "auto", forged) as first:
            await call(first, "first client's secret plan")
        async with client(url, "auto", forged) as second:
            await call(second, "second task")
        group.cancel_scope.cancel()
    assert "secret plan" not in tasks_seen(model, "second task")


async def test_a_modern_call_with_a_legacy_sessions_id_cannot_read_its_memory() -> None:
    model, meta = served()
    ids: list[str] = []
    async with anyio.create_task_group() as group:
        url = await group.start(partial(serve, meta, transport="http", port=0))
        async with client(url, "legacy", seen=ids) as legacy:
            await call(legacy, "legacy secret objective")
            await call(legacy, "legacy again")  # the legacy session itself remembers
            async with client(url, "auto", {"mcp-session-id": ids[0]}) as modern:
                await call(modern, "modern task")
        group.cancel_scope.cancel()
    assert "legacy secret objective" in tasks_seen(model, "legacy again")
    assert "legacy secret objective" not in tasks_seen(model, "modern task")


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_two_clients_both_saying_main_do_not_share_memory(mode: str) -> None:
    """A legacy session keeps its `_meta` memory; a 2026-07-28 client without a token has
    no identity the server checked (an address is none), so it has no memory at all."""
    model, meta = served()
    main = {SESSION_META_KEY: "main"}
    async with anyio.create_task_group() as group:
        url = await group.start(partial(serve, meta, transport="http", port=0))
        async with client(url, mode) as alice, client(url, mode) as bob:
            await call(alice, "alice private plan", main)
            await call(alice, "alice again", main)
            await call(bob, "bob task", main)
        group.cancel_scope.cancel()
    remembered = "alice private plan" in tasks_seen(model, "alice again")
    assert remembered is (mode == "legacy")
    assert "alice private plan" not in tasks_seen(model, "bob task")


async def test_holders_of_the_token_keep_their_meta_memory_over_2026_07_28() -> None:
    model, meta = served()
    token = "session-keys-token"
    auth = {"Authorization": f"Bearer {token}"}
    async with anyio.create_task_group() as group:
        url = await group.start(partial(serve, meta, transport="http", port=0, token=token))
        async with client(url, "auto", auth) as first:
            await call(first, "the plan", {SESSION_META_KEY: "main"})
        async with client(url, "auto", auth) as second:  # a new connection, the same holder
            await call(second, "the plan again", {SESSION_META_KEY: "main"})
            await call(second, "another session", {SESSION_META_KEY: "other"})
        group.cancel_scope.cancel()
    assert "- the plan → done\n" in tasks_seen(model, "the plan again")
    assert "the plan" not in tasks_seen(model, "another session")
