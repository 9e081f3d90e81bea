"""A tool that raises a `BaseException` (KeyboardInterrupt, a custom one, a fake CancelledError)
gets an error result; the service keeps serving. Only the run's own cancellation propagates."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any, ClassVar

import anyio
import pytest
from mcp import Client

from meta_tools import tool
from meta_tools.category.manager import CategoryManager
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from meta_tools.serve.server import serve
from meta_tools.tools.base import BaseTool, ToolContext, ToolParameter
from tests.faults.test_serve_faults import worker_router

pytestmark = pytest.mark.anyio


class Custom(BaseException):
    """Not an Exception: escapes every `except Exception`."""


RAISED: dict[str, type[BaseException]] = {
    "interrupt": KeyboardInterrupt,
    "custom": Custom,
    "cancelled": asyncio.CancelledError,
    "generator_exit": GeneratorExit,
    "exit": SystemExit,
}


@tool
def raise_sync(kind: str) -> str:
    """Raise the named BaseException in a worker thread."""
    raise RAISED[kind]("from a sync tool")


@tool
async def raise_async(kind: str) -> str:
    """Raise the named BaseException in the event loop."""
    raise RAISED[kind]("from an async tool")


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def router() -> MetaManager:
    def answer(request: ChatRequest) -> AssistantTurn:
        if len(request.messages) > 2:
            return AssistantTurn(text=request.messages[-2].content)
        name, _, kind = request.messages[1].content.split("Exact input: ", 1)[1].partition(" ")
        arguments: dict[str, Any] = {"a": 1, "b": 2} if name == "add" else {"kind": kind}
        return AssistantTurn(tool_calls=[ToolCall(name=name, arguments=arguments)])

    model = ScriptedModel.from_function(answer)
    category = CategoryManager("Work", "Misbehaves.", [raise_sync, raise_async, add], model)
    return MetaManager([category])


@pytest.mark.parametrize("kind", list(RAISED))
@pytest.mark.parametrize("name", ["raise_sync", "raise_async"])
async def test_a_base_exception_from_a_tool_is_an_error_result(name: str, kind: str) -> None:
    meta = router()
    result = await meta.call_tool("work", {"objective": "raise", "exact_input": f"{name} {kind}"})
    (execution,) = result.executions
    assert (execution.ok, execution.error) == (
        False,
        f"{RAISED[kind].__name__}: from {'an async' if name == 'raise_async' else 'a sync'} tool",
    )
    assert result.status == "failed"  # the run ends normally; its only call did not work


async def test_the_service_keeps_serving_every_client_after_tools_raise_base_exceptions() -> None:
    meta = router()
    async with anyio.create_task_group() as group:
        url = await group.start(partial(serve, meta, transport="http", port=0))
        async with Client(url) as client:
            for kind in RAISED:
                for name in ("raise_sync", "raise_async"):
                    arguments = {"objective": "raise", "exact_input": f"{name} {kind}"}
                    answer = await client.call_tool("work", arguments)
                    assert answer.structured_content is not None
                    assert answer.structured_content["executions"][0]["ok"] is False
        async with Client(url) as fresh:  # a new client too
            answer = await fresh.call_tool("work", {"objective": "add", "exact_input": "add 1 2"})
        group.cancel_scope.cancel()
    assert answer.structured_content is not None
    assert answer.structured_content["executions"][0]["result"] == "3"


async def test_cancelling_the_run_still_cancels_a_running_tool() -> None:
    _, meta, started, cancelled = worker_router(tool_timeout_s=30)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(meta.call_tool, "work", {"objective": "wait", "exact_input": "now"})
            await started.wait()
            group.cancel_scope.cancel()
    assert cancelled.is_set()


class Hostile:
    """A result whose every way of being shown raises a BaseException."""

    def __repr__(self) -> str:
        raise Custom("repr")

    def __str__(self) -> str:
        raise KeyboardInterrupt("str")


class OwnCall(BaseTool):
    """A tool that overrides `call` itself (as wrappers do) and lets a BaseException out."""

    name = "own_call"
    description = "Overrides call."
    args: ClassVar[dict[str, ToolParameter]] = {}

    async def call(self, arguments: Any, *, context: ToolContext | None = None) -> Any:
        raise Custom("from an overridden call")


async def test_a_result_that_raises_when_shown_and_a_tool_overriding_call_are_reported() -> None:
    @tool
    def hostile() -> list[Hostile]:
        """Return something that cannot be shown."""
        return [Hostile()]

    model = ScriptedModel(
        [
            AssistantTurn(
                tool_calls=[
                    ToolCall(name="hostile", arguments={}),
                    ToolCall(name="own_call", arguments={}),
                ]
            ),
            AssistantTurn(text="done"),
        ]
    )
    category = CategoryManager("Work", "Misbehaves.", [hostile, OwnCall()], model)
    result = await category.run("show", "it")
    shown, raised = result.executions
    assert (shown.ok, shown.result) == (True, '["<Hostile object (repr failed: Custom)>"]')
    assert (raised.ok, raised.error) == (False, "Custom: from an overridden call")
    assert result.status == "success"
