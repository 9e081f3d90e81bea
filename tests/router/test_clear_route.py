"""Guard `clear_route`: the one category the ranking offers for a conversation's first
message runs with it before a small main agent's model is asked."""

from __future__ import annotations

import pytest

from meta_tools.agent import MainAgent
from meta_tools.category.task import read_task
from meta_tools.guards import Guards
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.router.manager import ANY_CATEGORY
from tests.router.test_routing import (
    asks_any_category_for_the_league,
    category_named,
    has_results,
    league_tables,
    offered,
    world,
)

pytestmark = pytest.mark.anyio

PARCEL = "Where is my parcel CA107? Track it please."


def tracking(question: str | None = None) -> ScriptedModel:
    """Categories whose model tracks the parcel (or asks `question` back), then answers."""

    def reply(request: ChatRequest) -> AssistantTurn:
        if has_results(request):
            return AssistantTurn(text="CA107 is out for delivery.")
        if question is not None:
            call = ToolCall(
                name="request_input", arguments={"missing": ["email"], "question": question}
            )
            return AssistantTurn(tool_calls=[call])
        call = ToolCall(name="track_parcel", arguments={"tracking_number": "CA107"})
        return AssistantTurn(tool_calls=[call])

    return ScriptedModel.from_function(reply)


def test_only_a_category_offered_alone_whose_tools_the_words_reach_is_clear() -> None:
    meta = world(ScriptedModel([]), max_categories=2, min_score_ratio=0.9)
    assert meta.clear_category(PARCEL) == "parcels"
    assert meta.clear_category("Sing me a song about whales") is None  # no tool's words
    close = world(ScriptedModel([]), max_categories=2, min_score_ratio=0.0)
    assert close.clear_category(PARCEL) is None  # a rival is offered beside it
    every = world(ScriptedModel([]), max_categories=5, min_score_ratio=0.9)
    assert every.clear_category(PARCEL) is None  # every category is offered: the model chooses


async def test_a_small_main_agent_is_not_asked_to_pass_a_clear_message_on() -> None:
    main, categories = ScriptedModel([]), tracking()
    meta = world(categories, max_categories=2, min_score_ratio=0.9, guards="small")
    answer = await MainAgent(main, meta).ask(PARCEL)
    assert "parcel CA107: out for delivery" in answer
    assert main.requests == []  # the results are the answer: no model call at all
    assert read_task(categories.requests[0].messages[-1].content or "") == (PARCEL, PARCEL)


async def test_a_result_that_is_no_answer_goes_to_the_model_with_the_exchange() -> None:
    main = ScriptedModel([AssistantTurn(text="Which email should I use?")])
    meta = world(tracking("Which email?"), max_categories=2, min_score_ratio=0.9, guards="small")
    assert await MainAgent(main, meta).ask(PARCEL) == "Which email should I use?"
    (asked,) = main.requests
    said, came = asked.messages[-2:]
    assert said.role == "assistant" and said.tool_calls[0].name == "parcels"
    assert came.role == "tool" and "Which email?" in (came.content or "")
    assert offered(asked.tools) == ["parcels", ANY_CATEGORY]  # it may still call others


async def test_a_later_message_and_a_close_rival_go_to_the_model_first() -> None:
    def main_reply(request: ChatRequest) -> AssistantTurn:
        if request.messages[-1].role == "tool":
            return AssistantTurn(text="Out for delivery.")
        call = {"objective": "Track a parcel", "exact_input": "CA107"}
        return AssistantTurn(tool_calls=[ToolCall(name="parcels", arguments=call)])

    main = ScriptedModel.from_function(main_reply)
    agent = MainAgent(
        main, world(tracking(), max_categories=2, min_score_ratio=0.9, guards="small")
    )
    await agent.ask(PARCEL)
    assert main.requests == []
    assert "out for delivery" in await agent.ask(PARCEL)  # the conversation's second message
    assert main.requests[0].messages[-1].content == PARCEL
    rival = world(tracking(), max_categories=2, min_score_ratio=0.0, guards="small")
    main.requests.clear()
    assert "out for delivery" in await MainAgent(main, rival).ask(PARCEL)
    assert main.requests[0].messages[-1].content == PARCEL


async def test_a_capable_main_agent_chooses_even_where_the_ranking_offers_one() -> None:
    """A capable model offered parcels alone may read the message otherwise: its call stands."""
    main = ScriptedModel.from_function(asks_any_category_for_the_league)
    category_model = ScriptedModel.from_function(league_tables)
    meta = world(category_model, max_categories=2, min_score_ratio=0.9, guards="capable")
    assert meta.clear_category(PARCEL) == "parcels"
    assert await MainAgent(main, meta).ask(PARCEL) == "Arsenal are first."
    assert main.requests[0].messages[-1].content == PARCEL  # asked first
    assert {category_named(r) for r in category_model.requests} == {"Football"}
    without = Guards("small", disable=["clear_route"])
    main.requests.clear()
    meta = world(category_model, max_categories=2, min_score_ratio=0.9, guards=without)
    assert "Arsenal first" in await MainAgent(main, meta).ask(PARCEL)
    assert main.requests[0].messages[-1].content == PARCEL
