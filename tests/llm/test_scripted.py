"""ScriptedModel: replays turns, records requests, says when the script is used up."""

from __future__ import annotations

import pytest

from meta_tools.exceptions import ModelError, ScriptExhaustedError
from meta_tools.llm import AssistantTurn, ChatRequest, Message, ScriptedModel, ToolCall

pytestmark = pytest.mark.anyio


def say(text: str) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=text)])


async def test_steps_are_returned_in_order_and_requests_recorded() -> None:
    first = AssistantTurn(tool_calls=[ToolCall(id="c1", name="calc_add", arguments={"a": 1})])
    second = AssistantTurn(text="done")
    model = ScriptedModel([first, second])
    one, two = say("one"), say("two")

    assert await model.complete(one) is first
    assert model.remaining == 1
    assert await model.complete(two) is second
    assert model.remaining == 0
    assert model.requests == [one, two]
    assert model.requests[0] is one
    model.assert_complete()


async def test_a_callable_step_answers_from_the_request() -> None:
    model = ScriptedModel(
        [lambda request: AssistantTurn(text=f"echo: {request.messages[-1].content}")]
    )
    turn = await model.complete(say("hello"))
    assert turn == AssistantTurn(text="echo: hello")


async def test_calling_past_the_end_raises_script_exhausted() -> None:
    model = ScriptedModel([AssistantTurn(text="only")])
    await model.complete(say("first"))
    with pytest.raises(ScriptExhaustedError) as caught:
        await model.complete(say("second"))
    assert str(caught.value) == (
        "ScriptedModel was called 2 time(s) but its script has 1 step(s): add a step for"
        " this request; the last message was user 'second'"
    )
    assert isinstance(caught.value, ModelError)
    assert len(model.requests) == 2


async def test_assert_complete_fails_while_steps_remain() -> None:
    model = ScriptedModel([AssistantTurn(text="a"), AssistantTurn(text="b")])
    await model.complete(say("x"))
    with pytest.raises(AssertionError, match="1 unused step"):
        model.assert_complete()


async def test_from_function_answers_forever() -> None:
    model = ScriptedModel.from_function(
        lambda request: AssistantTurn(text=str(len(request.messages)))
    )
    for _ in range(100):
        assert (await model.complete(say("x"))).text == "1"
    assert len(model.requests) == 100
    assert model.remaining == 0
    model.assert_complete()


def test_the_script_is_copied_so_later_changes_do_not_leak_in() -> None:
    steps = [AssistantTurn(text="a")]
    model = ScriptedModel(steps)
    steps.append(AssistantTurn(text="b"))
    assert model.remaining == 1
