"""An address names no client: forwarded headers are believed only from configured proxies,
and no memory is found by a client address, forged or bound again."""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncIterator, Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from typing import Any

import anyio
import anyio.abc
import httpcore2
import httpx2
import pytest
from httpcore2._backends.anyio import AnyIOStream
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from meta_tools import tool
from meta_tools.config import MetaToolsConfig
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from meta_tools.serve.server import SESSION_META_KEY, serve

pytestmark = pytest.mark.anyio

MAIN = {SESSION_META_KEY: "main"}
TOKEN = "addresses-test-token"


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def scripted() -> ScriptedModel:
    def answer(request: ChatRequest) -> AssistantTurn:
        if request.messages[-1] is request.messages[1]:
            return AssistantTurn(tool_calls=[ToolCall(name="shout", arguments={"text": "x"})])
        return AssistantTurn(text="done")

    return ScriptedModel.from_function(answer)


def router(model: ScriptedModel, **sections: Any) -> MetaManager:
    config = MetaToolsConfig.from_data(
        {"Text": {"description": "Shout texts.", "tools": ["shout"]}, **sections}
    )
    return MetaManager.from_config(config, tools=[shout], model=model)


def task_of(model: ScriptedModel, objective: str) -> str:
    """The task message (past runs included) of the run with `objective`."""
    (found,) = [
        r.messages[1].content
        for r in model.requests
        if len(r.messages) == 2 and f"Objective: {objective}\n" in r.messages[1].content
    ]
    return found


class _FromPort(httpcore2.AsyncNetworkBackend):
    """Connects from one chosen local port (which other sockets may share, as a client that
    binds it again would)."""

    def __init__(self, port: int) -> None:
        self.port = port

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        sock.setblocking(False)
        sock.connect_ex((host, port))
        await anyio.wait_writable(sock)
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
        return AnyIOStream(await anyio.abc.SocketStream.from_socket(sock))

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)


class FromPort(httpx2.AsyncHTTPTransport):
    """An HTTP transport with one connection, from local port `port`."""

    def __init__(self, port: int) -> None:
        super().__init__()
        # httpx2 takes no network backend: its pool is replaced by one that has ours.
        self._pool = httpcore2.AsyncConnectionPool(
            network_backend=_FromPort(port), max_connections=1
        )


@asynccontextmanager
async def mcp_client(
    url: str,
    *,
    headers: dict[str, str] | None = None,
    transport: httpx2.AsyncBaseTransport | None = None,
    ports: list[int] | None = None,
) -> AsyncIterator[Client]:
    """A 2026-07-28 client; the local port of each response's connection goes to `ports`."""

    async def local_port(response: httpx2.Response) -> None:
        stream = response.extensions.get("network_stream")
        if ports is not None and stream is not None:
            ports.append(stream.get_extra_info("client_addr")[1])

    async with (
        httpx2.AsyncClient(
            headers=headers,
            timeout=30,
            transport=transport,
            event_hooks={"response": [local_port]},
        ) as http,
        Client(streamable_http_client(url, http_client=http)) as found,
    ):
        yield found


async def call(client: Client, objective: str) -> None:
    task = {"objective": objective, "exact_input": "x"}
    result = await client.call_tool("text", task, meta=MAIN)
    assert result.is_error is False, result.content


@pytest.mark.parametrize("proxies", [[], ["127.0.0.1"]])
async def test_forwarded_headers_are_believed_only_from_configured_proxies(
    proxies: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    """No `trusted_proxies`: a local process is no proxy, its X-Forwarded-For is not read."""
    meta = router(scripted(), serve={"trusted_proxies": proxies})
    with caplog.at_level(logging.WARNING, logger="meta_tools.server"):
        async with anyio.create_task_group() as group:
            url = await group.start(partial(serve, meta, transport="http", port=0, token=TOKEN))
            async with httpx2.AsyncClient(timeout=30) as http:
                refused = await http.post(
                    url, json={}, headers={"X-Forwarded-For": "203.0.113.9:4711"}
                )
            group.cancel_scope.cancel()
    assert refused.status_code == 401
    named = "203.0.113.9" if proxies else "127.0.0.1"
    refusals = [
        r.getMessage() for r in caplog.records if "without the right token" in r.getMessage()
    ]
    assert refusals == [f"refused a request without the right token from {named}"]


async def test_a_forged_forwarded_address_does_not_reach_another_clients_memory() -> None:
    """Mallory writes alice's address and source port in X-Forwarded-For, and her `_meta` key."""
    model = scripted()
    meta = router(model)
    alice_ports: list[int] = []
    async with anyio.create_task_group() as group:
        url = await group.start(partial(serve, meta, transport="http", port=0))
        async with mcp_client(url, ports=alice_ports) as alice:
            await call(alice, "alice private plan")
            forged = {"X-Forwarded-For": f"127.0.0.1:{alice_ports[-1]}"}
            async with mcp_client(url, headers=forged) as mallory:
                await call(mallory, "mallory task")
        group.cancel_scope.cancel()
    assert "alice private plan" not in task_of(model, "mallory task")


@asynccontextmanager
async def two_replicas(
    backend: str, redis_url: str | None
) -> AsyncIterator[tuple[ScriptedModel, list[str]]]:
    """Two served routers sharing memory: one router served twice, or two on one Redis."""
    model = scripted()
    if backend == "process":
        shared = router(model)
        routers = [shared, shared]
    else:
        memory = {"memory": {"redis_url": redis_url, "ttl_s": 600}}
        routers = [router(model, **memory), router(model, **memory)]
    async with AsyncExitStack() as stack:
        group = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(group.cancel_scope.cancel)
        urls = [await group.start(partial(serve, r, transport="http", port=0)) for r in routers]
        yield model, urls


@pytest.mark.parametrize("backend", ["process", "redis"])
async def test_a_client_on_a_port_another_client_used_does_not_inherit_its_memory(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """Alice calls replica 1 from port P; later mallory binds P and calls replica 2."""
    redis_url = request.getfixturevalue("redis_url") if backend == "redis" else None
    seen: list[int] = []
    async with two_replicas(backend, redis_url) as (model, (first, second)):
        # Chosen once the replicas listen: a port freed before they start may become theirs.
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        async with mcp_client(first, transport=FromPort(port), ports=seen) as alice:
            await call(alice, "alice private plan")
        async with mcp_client(second, transport=FromPort(port), ports=seen) as mallory:
            await call(mallory, "mallory task")
    assert set(seen) == {port}  # the same source address, on each replica
    assert "alice private plan" not in task_of(model, "mallory task")
