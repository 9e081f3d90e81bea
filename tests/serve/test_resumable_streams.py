"""Resumable response streams of `serve --transport http`, over real HTTP on 127.0.0.1.

A host that drops its stream during a slow category call and comes back with
`Last-Event-ID` gets the call's result; one that does not come back has its
call cancelled after the grace; a resumption that cannot be served is refused
in words. With the events in the process and in a real Redis.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import anyio
import httpx2
import pytest

from meta_tools import tool
from meta_tools.category.manager import CategoryManager
from meta_tools.config import MetaToolsConfig, ResumeConfig
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from meta_tools.serve.server import serve

pytestmark = pytest.mark.anyio

VERSION = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
CALL = {"objective": "wait", "exact_input": "until released"}


@dataclass
class Slow:
    """A `work` category whose one tool waits until the test releases it."""

    started: anyio.Event = field(default_factory=anyio.Event)
    release: anyio.Event = field(default_factory=anyio.Event)
    cancelled: anyio.Event = field(default_factory=anyio.Event)

    def tool(self) -> Any:
        @tool
        async def slow() -> str:
            """Wait until released."""
            self.started.set()
            try:
                await self.release.wait()
            except BaseException:
                self.cancelled.set()
                raise
            return "released"

        return slow

    @staticmethod
    def model() -> ScriptedModel:
        def answer(request: ChatRequest) -> AssistantTurn:
            if len(request.messages) > 2:
                return AssistantTurn(text="the slow tool said: released")
            return AssistantTurn(tool_calls=[ToolCall(name="slow", arguments={})])

        return ScriptedModel.from_function(answer)

    def router(self) -> MetaManager:
        category = CategoryManager("Work", "Waits.", [self.tool()], self.model())
        return MetaManager([category])

    def router_on(self, redis_url: str, **resume: Any) -> MetaManager:
        config = MetaToolsConfig.model_validate(
            {
                "memory": {"redis_url": redis_url},
                "serve": {"resume": resume},
                "Work": {"description": "Waits.", "tools": ["slow"]},
            }
        )
        return MetaManager.from_config(config, tools=[self.tool()], model=self.model())


@dataclass(frozen=True)
class Event:
    """One server-sent event as it came over the wire."""

    id: str | None
    retry: int | None
    data: str

    def message(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.data)
        return loaded


async def events(response: httpx2.Response) -> AsyncIterator[Event]:
    """The server-sent events of a streaming response, one at a time."""
    fields: dict[str, str] = {}
    data: list[str] = []
    async for line in response.aiter_lines():
        if line:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                data.append(value)
            elif name in ("id", "retry"):
                fields[name] = value
            continue
        if data or fields:
            retry = fields.get("retry")
            yield Event(fields.get("id"), int(retry) if retry else None, "\n".join(data))
        fields, data = {}, []


class Host:
    """A 2025-11-25 MCP host speaking plain HTTP, so that it can drop a stream and resume it."""

    def __init__(self, client: httpx2.AsyncClient, url: str, version: str = VERSION) -> None:
        self.client = client
        self.url = url
        self.version = version
        self.session = ""

    def headers(self, **extra: str) -> dict[str, str]:
        headers = {"accept": ACCEPT, "mcp-protocol-version": self.version, **extra}
        if self.session:
            headers["mcp-session-id"] = self.session
        return headers

    async def open(self) -> None:
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": self.version,
                "capabilities": {},
                "clientInfo": {"name": "resuming-host", "version": "1"},
            },
        }
        answer = await self.client.post(self.url, json=hello, headers=self.headers())
        assert answer.status_code == 200, answer.text
        self.session = answer.headers["mcp-session-id"]
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (
            await self.client.post(self.url, json=done, headers=self.headers())
        ).status_code == 202

    def call(self, request_id: int) -> Any:
        body = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "work", "arguments": CALL},
        }
        return self.client.stream("POST", self.url, json=body, headers=self.headers())

    def resume(self, last_event_id: str, *, session: str | None = None) -> Any:
        headers = self.headers(**{"last-event-id": last_event_id})
        if session is not None:
            headers["mcp-session-id"] = session
        return self.client.stream("GET", self.url, headers=headers)


@asynccontextmanager
async def served(meta: MetaManager, version: str = VERSION, **options: Any) -> AsyncIterator[Host]:
    async with anyio.create_task_group() as group:
        url = await group.start(partial(serve, meta, transport="http", port=0, **options))
        async with httpx2.AsyncClient(timeout=30) as client:
            host = Host(client, url, version)
            await host.open()
            yield host
        group.cancel_scope.cancel()


async def priming_then_drop(host: Host, slow: Slow, request_id: int) -> Event:
    """Start the slow call, read its priming event, wait until the tool runs, then drop the stream."""
    async with host.call(request_id) as response:
        assert response.status_code == 200
        first = await anext(events(response))
        with anyio.fail_after(10):
            await slow.started.wait()
    return first  # leaving the block closed the connection mid-call


async def result_after(response: httpx2.Response, request_id: int) -> dict[str, Any]:
    async for event in events(response):
        if event.data and event.message().get("id") == request_id:
            return event.message()
    raise AssertionError("the resumed stream ended without the call's result")


async def test_a_host_that_drops_its_stream_mid_call_and_resumes_gets_the_result() -> None:
    slow = Slow()
    async with served(slow.router(), resume=ResumeConfig(retry_ms=250)) as host:
        priming = await priming_then_drop(host, slow, 7)
        assert priming.id and priming.retry == 250 and priming.data == ""
        async with host.resume(priming.id) as resumed:
            assert resumed.status_code == 200
            slow.release.set()
            with anyio.fail_after(10):
                answer = await result_after(resumed, 7)
    assert not slow.cancelled.is_set()
    result = answer["result"]["structuredContent"]
    assert (result["status"], result["summary"]) == ("success", "the slow tool said: released")


async def test_a_resumption_takes_the_stream_over_from_a_connection_the_server_still_holds() -> (
    None
):
    # A half-open connection: the host gave up on it, the server has not noticed yet.
    slow = Slow()
    async with served(slow.router()) as host, host.call(11) as stale:
        priming = await anext(events(stale))
        with anyio.fail_after(10):
            await slow.started.wait()
        assert priming.id
        async with host.resume(priming.id) as resumed:
            slow.release.set()
            with anyio.fail_after(10):
                answer = await result_after(resumed, 11)
    assert answer["result"]["structuredContent"]["status"] == "success"


async def test_a_result_that_came_while_the_host_was_away_is_replayed_with_its_event_id() -> None:
    slow = Slow()
    async with served(slow.router(), resume=ResumeConfig(grace_s=60)) as host:
        priming = await priming_then_drop(host, slow, 3)
        slow.release.set()  # the call ends with nobody listening
        assert priming.id
        async with host.resume(priming.id) as resumed:
            with anyio.fail_after(10):
                first = await anext(events(resumed))
    assert first.message()["id"] == 3 and first.id and first.id != priming.id
    assert first.message()["result"]["structuredContent"]["status"] == "success"


async def test_a_host_that_does_not_come_back_within_the_grace_has_its_call_cancelled() -> None:
    slow = Slow()
    async with served(slow.router(), resume=ResumeConfig(grace_s=0.2)) as host:
        priming = await priming_then_drop(host, slow, 4)
        with anyio.fail_after(10):
            await slow.cancelled.wait()
        assert priming.id
        async with host.resume(priming.id) as late:  # the cancellation's answer was kept
            with anyio.fail_after(10):
                answer = await result_after(late, 4)
    assert answer["result"]["isError"] is True
    assert (
        answer["result"]["content"][0]["text"] == "the client disconnected; the call was cancelled"
    )


async def test_a_resumption_from_an_event_that_is_not_kept_is_refused_in_words() -> None:
    slow = Slow()
    async with served(slow.router(), resume=ResumeConfig(max_events=2)) as host:
        async with host.resume("99.1") as unknown:
            body = json.loads(await unknown.aread())
        slow.release.set()
    assert unknown.status_code == 410
    assert body["error"]["message"] == (
        "the events after Last-Event-ID '99.1' are not kept for this session: a stream's last 2"
        " events are kept for 300 s after its last one, 1024 streams at most (serve.resume);"
        " call the tool again"
    )


async def test_an_event_id_of_one_session_resumes_nothing_in_another() -> None:
    slow = Slow()
    async with served(slow.router()) as host:
        priming = await priming_then_drop(host, slow, 5)
        other = Host(host.client, host.url)
        await other.open()
        assert priming.id
        async with other.resume(priming.id) as stolen:
            await stolen.aread()
        slow.release.set()
    assert stolen.status_code == 410


async def test_a_host_on_an_older_protocol_gets_no_priming_event_and_a_drop_cancels_its_call() -> (
    None
):
    slow = Slow()
    async with served(slow.router(), "2025-06-18") as host:
        async with host.call(6):
            with anyio.fail_after(10):
                await slow.started.wait()
        with anyio.fail_after(10):
            await slow.cancelled.wait()  # no grace: it could not have resumed
        async with host.call(8) as second:
            slow.release.set()
            first = await anext(events(second))
    assert first.retry is None and first.message()["id"] == 8  # the result, not a priming event


async def test_without_resumption_a_drop_cancels_the_call_and_no_priming_event_is_sent() -> None:
    slow = Slow()
    async with served(slow.router(), resume=ResumeConfig(enabled=False)) as host:
        async with host.call(6) as response:
            with anyio.fail_after(10):
                await slow.started.wait()
        with anyio.fail_after(10):
            await slow.cancelled.wait()
        async with host.call(8) as second:
            slow.release.set()
            first = await anext(events(second))
    assert first.id is None and first.message()["id"] == 8
    assert response.status_code == 200


# -- with the events in Redis, and two replicas --------------------------------------------


async def test_with_redis_a_host_that_drops_its_stream_and_resumes_gets_the_result(
    redis_url: str,
) -> None:
    slow = Slow()
    async with served(slow.router_on(redis_url, retry_ms=500)) as host:
        priming = await priming_then_drop(host, slow, 9)
        assert priming.id and priming.retry == 500
        async with host.resume(priming.id) as resumed:
            assert resumed.status_code == 200
            slow.release.set()
            with anyio.fail_after(10):
                answer = await result_after(resumed, 9)
    assert answer["result"]["structuredContent"]["summary"] == "the slow tool said: released"


async def test_a_resumption_that_reaches_another_replica_is_refused_in_words(
    redis_url: str,
) -> None:
    slow, other = Slow(), Slow()
    async with (
        served(slow.router_on(redis_url), replica="replica0") as first,
        served(other.router_on(redis_url), replica="replica1") as second,
    ):
        priming = await priming_then_drop(first, slow, 2)
        assert first.session.startswith("replica0.") and priming.id
        async with second.resume(priming.id, session=first.session) as misrouted:
            body = json.loads(await misrouted.aread())
        async with first.resume(priming.id) as resumed:  # the right replica still serves it
            slow.release.set()
            with anyio.fail_after(10):
                answer = await result_after(resumed, 2)
    assert misrouted.status_code == 404
    assert body["error"]["message"] == (
        "this stream's session was opened by replica 'replica0', not by this one; a session"
        " lives in the replica that opened it, so a resumption (GET with Last-Event-ID) must"
        " reach that replica: route requests by the replica name that starts the"
        " Mcp-Session-Id (see the deploy guide). If that replica is gone, its calls are lost:"
        " open a new session and call the tool again"
    )
    assert answer["result"]["structuredContent"]["status"] == "success"
