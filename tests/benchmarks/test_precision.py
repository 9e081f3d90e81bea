"""Precision, completion and where the LLM calls went, from small fixed records (no model)."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.e2e_sides import (
    Asked,
    CountingModel,
    ask_flat,
    attempts_of,
    judge_calls,
    llm_call_place,
    tool_use,
)
from benchmarks.pool import pool, with_gold
from meta_tools import tool
from meta_tools.llm import AssistantTurn, ScriptedModel, ToolCall

pytestmark = pytest.mark.anyio


def test_a_first_call_to_a_gold_tool_that_ran_is_right_and_other_tools_are_wrong() -> None:
    attempts = [("v3", True), ("weather", True), ("v2", False), ("v3", True)]

    assert judge_calls({"v3", "rates"}, attempts) == {
        "first_call_right": True,
        "tool_calls": 4,
        "wrong_calls": 2,
        "all_gold_ran": False,
    }


def test_a_gold_tool_refused_first_is_no_right_first_call_but_no_wrong_tool() -> None:
    attempts = [("v3", False), ("v3", True), ("rates", True)]

    assert judge_calls({"v3", "rates"}, attempts) == {
        "first_call_right": False,
        "tool_calls": 3,
        "wrong_calls": 0,
        "all_gold_ran": True,
    }


def test_no_call_at_all_is_neither_right_nor_complete() -> None:
    assert judge_calls({"v3"}, []) == {
        "first_call_right": False,
        "tool_calls": 0,
        "wrong_calls": 0,
        "all_gold_ran": False,
    }


def test_rows_stored_before_attempts_are_read_from_their_call_texts() -> None:
    row = {"calls": ['v2({"a": 1})', 'v3({"a": 1})'], "ran": ["v3"]}

    assert attempts_of(row) == [("v2", False), ("v3", True)]


def row(side: str, gold: list[str], attempts: list[list[Any]], **extra: Any) -> dict[str, Any]:
    return {"task": "q", "side": side, "gold": gold, "attempts": attempts} | extra


def test_tool_use_averages_over_the_rows_that_name_their_gold() -> None:
    rows = [
        row("h", ["a"], [["a", True]], llm_calls_by={"main/first": 1, "category/first": 1}),
        row(
            "h",
            ["a", "b"],
            [["c", True], ["a", True], ["b", True]],
            llm_calls_by={"main/first": 1, "main/nudge": 2, "category/first": 2},
        ),
        {"task": "old", "side": "h", "calls": [], "ran": []},  # no gold: not judged
    ]

    assert tool_use(rows) == {
        "judged": 2,
        "first_call_right": 0.5,
        "wrong_calls": 0.5,
        "tool_calls": 2.0,
        "all_gold_ran": 1.0,
        "llm_calls_by": {"category/first": 1.5, "main/first": 1.0, "main/nudge": 1.0},
    }


def asked(offered: set[str], system: str, last: str, replied: bool) -> Asked:
    return Asked(frozenset(offered), system, last, replied)


def test_llm_calls_are_placed_by_who_was_asked_and_in_which_round() -> None:
    calls = [
        asked({"finance", "any_category"}, "main", "user", False),  # the main agent's first
        asked({"convert_v2", "convert_v3"}, "cat", "user", False),  # the category's first
        asked({"convert_v2", "convert_v3"}, "cat", "tool", True),  # after its tool ran
        asked({"convert_v2", "convert_v3"}, "cat", "user", True),  # a note: nudge
        asked({"finance", "any_category"}, "main", "tool", True),  # the answer round
        asked(set(), "main", "user", True),  # no tools, the main agent's prompt: a nudge
    ]

    assert llm_call_place(calls, {"finance", "any_category"}) == {
        "category/after_results": 1,
        "category/first": 1,
        "category/nudge": 1,
        "main/after_results": 1,
        "main/first": 1,
        "main/nudge": 1,
    }
    assert llm_call_place(calls[:2]) == {"agent/first": 2}


def test_pool_fills_the_gold_of_older_rows_and_judges_them() -> None:
    older = {"task": "q1", "side": "retrieval", "correct": True, "right_tool": True,
             "error": None, "llm_calls": 3, "prompt_tokens": 10, "completion_tokens": 1,
             "recovered_calls": 0, "wall_s": 1.0, "calls": ["x()", "a()"], "ran": ["x", "a"]}  # fmt: skip

    assert with_gold([older], {"q1": ["a"], "q2": ["b"]}) == 1
    pooled = pool([("v1", {"runs": [older]})])

    side = pooled["sides"]["retrieval"]
    assert (side["first_call_right"], side["wrong_calls"], side["tool_calls"]) == (0.0, 1.0, 2.0)
    assert side["all_gold_ran"] == 1.0


@tool
def convert_v3(amount: float) -> str:
    """Convert currency with live rates."""
    return "92.4"


async def test_the_flat_side_records_each_call_and_where_its_llm_calls_went() -> None:
    model = ScriptedModel(
        [
            AssistantTurn(tool_calls=[ToolCall(id="1", name="convert_v3", arguments={})]),
            AssistantTurn(
                tool_calls=[ToolCall(id="2", name="convert_v3", arguments={"amount": 5})]
            ),
            AssistantTurn(text="5 USD is 92.4 EUR."),
        ]
    )

    run = await ask_flat(CountingModel(model), [convert_v3], "Convert 5 USD")

    assert run.attempts == [("convert_v3", False), ("convert_v3", True)]
    assert run.llm_calls_by == {"agent/after_results": 2, "agent/first": 1}
    assert judge_calls({"convert_v3"}, run.attempts)["first_call_right"] is False


async def test_the_flat_side_runs_only_the_guards_that_serve_a_flat_agent() -> None:
    """Under `small` it reads calls written as text to offered tools (`text_calls`) and
    nudges a call it cannot read (`unread_call`), as the retrieval baseline has always
    done; a call written to a name it was not offered is not read as one (only the main
    agent routes such names), and a round that repeats a call is not cut short."""
    from meta_tools.guards import Guards

    again = ToolCall(id="3", name="convert_v3", arguments={"amount": 5})
    model = ScriptedModel(
        [
            AssistantTurn(text='{"name": "convert_v2", "arguments": {"amount": 5}}'),
            AssistantTurn(text='{"name": "convert_v3", "arguments": {"amount": 5}}'),
            AssistantTurn(tool_calls=[again]),
            AssistantTurn(tool_calls=[again.model_copy(update={"id": "4"})]),
            AssistantTurn(text="5 USD is 92.4 EUR."),
        ]
    )

    run = await ask_flat(
        CountingModel(model), [convert_v3], "Convert 5 USD", guards=Guards("small")
    )

    model.assert_complete()
    assert run.attempts == [("convert_v3", True)] * 3
    assert run.answer == "5 USD is 92.4 EUR."
    assert run.llm_calls_by["agent/nudge"] == 1  # the note for convert_v2, no other
