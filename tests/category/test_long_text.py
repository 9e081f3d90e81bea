"""Long tasks: refused past the limit, and read off the event loop below it."""

from __future__ import annotations

import threading

import pytest

from meta_tools import tool
from meta_tools.category.manager import CategoryManager
from meta_tools.exceptions import ToolArgumentsError
from meta_tools.guards import calls as calls_stage
from meta_tools.llm import AssistantTurn, ScriptedModel, ToolCall
from meta_tools.router.manager import MAX_ARGUMENT_CHARS, MetaManager
from meta_tools.support.off_loop import INLINE_CHARS, by_size
from tests.guard_profiles import SMALL_EVERY_TURN

pytestmark = pytest.mark.anyio


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def texts(model: ScriptedModel) -> MetaManager:
    """A router over one category under the small-model guards (they read the task)."""
    category = CategoryManager("Text", "Changes case.", [shout], model, guards=SMALL_EVERY_TURN)
    return MetaManager([category])


async def test_work_on_more_than_a_few_thousand_characters_runs_in_a_worker_thread() -> None:
    here = threading.get_ident()
    assert await by_size(INLINE_CHARS, threading.get_ident) == here
    assert await by_size(INLINE_CHARS + 1, threading.get_ident) != here


async def test_a_long_task_is_checked_for_made_up_values_off_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    threads: list[int] = []
    screen = calls_stage.guessed_calls

    def recording(*args: object) -> object:
        threads.append(threading.get_ident())
        return screen(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(calls_stage, "guessed_calls", recording)
    call = AssistantTurn(tool_calls=[ToolCall(name="shout", arguments={"text": "hey"})])
    for objective in ("Shout hey", "Shout hey. " + "Loud words. " * INLINE_CHARS):
        model = ScriptedModel([call, AssistantTurn(text="HEY")])
        async with texts(model) as meta:
            result = await meta.call_tool("text", {"objective": objective, "exact_input": "hey"})
        assert (result.status, result.summary) == ("success", "HEY")
    here = threading.get_ident()
    assert threads[0] == here and threads[1] != here


@pytest.mark.parametrize("key", ["objective", "exact_input"])
async def test_a_task_longer_than_the_limit_is_refused_before_any_model_call(key: str) -> None:
    model = ScriptedModel([])
    arguments = {"objective": "Shout it", "exact_input": "hey"}
    async with texts(model) as meta:
        at_limit = meta.check_call("text", arguments | {key: "a" * MAX_ARGUMENT_CHARS})
        assert at_limit.category.slug == "text"
        with pytest.raises(ToolArgumentsError, match=rf"'{key}' has 100,001 characters"):
            await meta.call_tool("text", arguments | {key: "a" * (MAX_ARGUMENT_CHARS + 1)})
    assert model.requests == []
