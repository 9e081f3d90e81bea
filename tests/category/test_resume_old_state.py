"""A run suspended by the router before the one round loop (commit 3531772, the last
release before it) goes on under today's loop: its state, guard counts included, reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from meta_tools import tool
from meta_tools.category.manager import CategoryManager
from meta_tools.category.suspend import SuspendedRun
from meta_tools.llm import AssistantTurn, ScriptedModel

pytestmark = pytest.mark.anyio

STATE = Path(__file__).resolve().parent.parent / "data" / "suspended_run_3531772.json"
UNREADABLE = AssistantTurn(text='<tool_call>{"name": "shout", "arguments": {"text": </tool_call>')


@tool
def shout(text: str) -> str:
    """Shout a text back in capitals."""
    return text.upper()


def text_category(model: ScriptedModel) -> CategoryManager:
    return CategoryManager("Text", "Text tools.", [shout], model, guards="small")


async def test_a_run_suspended_before_the_round_loop_resumes_and_finishes() -> None:
    point = SuspendedRun.model_validate_json(STATE.read_text(encoding="utf-8"))
    assert point.state.guarded["unread_call"] == 1  # it was nudged once before it stopped
    call = AssistantTurn(text='{"name": "shout", "arguments": {"text": "hi"}}')
    result = await text_category(ScriptedModel([call])).run("", "", resume=point)
    assert (result.status, result.summary) == ("success", "shout: HI")
    assert [e.tool for e in result.executions] == ["shout"]


async def test_the_guard_counts_it_carries_still_bound_its_notes() -> None:
    """`unread_call` may nudge twice a run: once before the suspension, so once after."""
    point = SuspendedRun.model_validate_json(STATE.read_text(encoding="utf-8"))
    model = ScriptedModel([UNREADABLE, UNREADABLE])
    result = await text_category(model).run("", "", resume=point)
    model.assert_complete()
    assert result.status == "no_suitable_tool" and result.executions == []
    assert point.state.guarded["unread_call"] == 2
