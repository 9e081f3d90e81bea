"""ToolPack: unique names, lookup, and concurrent batches where one failure stops nothing."""

import threading
import time

import anyio
import pytest

from meta_tools import ToolPack, tool
from meta_tools.exceptions import ToolDefinitionError, ToolNotFoundError
from meta_tools.llm.types import ToolCall

pytestmark = pytest.mark.anyio


@tool
async def nap(seconds: float) -> str:
    """Sleep, then say so."""
    await anyio.sleep(seconds)
    return f"slept {seconds}"


@tool
def blocking_nap(seconds: float) -> str:
    """Sleep in a blocking way."""
    time.sleep(seconds)
    return threading.current_thread().name


@tool
def fail(reason: str) -> None:
    """Always fails."""
    raise ValueError(reason)


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ToolDefinitionError, match="'nap' is used twice"):
        ToolPack([nap, nap])


def test_unknown_tool_names_close_matches_and_lists_the_tools() -> None:
    pack = ToolPack([nap, fail])
    with pytest.raises(ToolNotFoundError) as caught:
        pack.get_tool("nao")
    assert str(caught.value) == "unknown tool 'nao'. Did you mean 'nap'? Available tools: nap, fail"


async def test_three_one_second_tools_finish_in_about_one_second() -> None:
    pack = ToolPack([nap, blocking_nap])
    calls = [
        ToolCall(name="nap", arguments={"seconds": 1}),
        ToolCall(name="blocking_nap", arguments={"seconds": 1}),
        ToolCall(name="nap", arguments={"seconds": 1}),
    ]
    started = time.perf_counter()
    outcomes = await pack.call_tools(calls)
    elapsed = time.perf_counter() - started
    assert elapsed < 2.0
    assert [o.ok for o in outcomes] == [True, True, True]
    assert outcomes[1].value != threading.current_thread().name  # ran in a worker thread


async def test_batch_keeps_order_and_reports_each_failure_kind() -> None:
    pack = ToolPack([nap, fail])
    calls = [
        ToolCall(id="1", name="nap", arguments={"seconds": 5}),
        ToolCall(id="2", name="fail", arguments={"reason": "no route"}),
        ToolCall(id="3", name="missing", arguments={}),
        ToolCall(id="4", name="nap", arguments={"seconds": "soon"}),
        ToolCall(id="5", name="nap", arguments={"seconds": 0}),
    ]
    outcomes = await pack.call_tools(calls, timeout=0.2)
    assert [o.call.id for o in outcomes] == ["1", "2", "3", "4", "5"]
    kinds = [o.error.kind if o.error else "ok" for o in outcomes]
    assert kinds == ["timeout", "raised", "unknown_tool", "invalid_arguments", "ok"]
    assert str(outcomes[0].error) == "tool 'nap' did not finish within 0.2 s"
    assert str(outcomes[1].error) == "ValueError: no route"
    assert outcomes[4].value == "slept 0.0"  # coerced to the declared float
