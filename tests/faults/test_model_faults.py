"""Fault matrix, model side: HTTP errors and timeouts (the real OpenAIChatModel against the
fake server over a socket) and odd turns (malformed arguments, unknown tools, empty replies,
`request_input` mid-loop).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from meta_tools import tool
from meta_tools.category.manager import CategoryManager
from meta_tools.guards import Guards
from meta_tools.llm import AssistantTurn, ChatRequest, OpenAIChatModel, ScriptedModel, ToolCall
from tests.fakes.llm_server import (
    FakeLLMServer,
    RecordedRequest,
    Reply,
    openai_error,
    openai_text_reply,
    openai_tool_reply,
    wire_tool_call,
)

pytestmark = pytest.mark.anyio

#: An empty reply is asked again under the small-model guards (guard `empty_reply`).
SMALL = Guards("small")
EMPTY_NOTE = SMALL.text("empty_reply")
MAX_NUDGES = SMALL.budgets["empty_reply"]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def category(model: Any, **options: Any) -> CategoryManager:
    return CategoryManager("Math", "Arithmetic.", [add], model, **options)


def fenced(tool_name: str, ok: bool, body: str) -> str:
    status = "ok" if ok else "error"
    return f'<tool_result tool="{tool_name}" status="{status}">\n{body}\n</tool_result>'


def wire_told(request: RecordedRequest) -> list[dict[str, Any]]:
    """The tool messages of one request as they went over the wire."""
    return [m for m in request.body["messages"] if m["role"] == "tool"]


def fault_model(llm_server: FakeLLMServer, *, timeout: float = 5.0) -> OpenAIChatModel:
    """The real OpenAI client against the fake server: 2 quick retries, a known key."""
    return OpenAIChatModel(
        "gpt-test",
        base_url=llm_server.openai_base_url,
        api_key="sk-fault-key-0123456789",
        backoff_s=0.01,
        max_retries=2,
        timeout=timeout,
    )


@pytest.fixture
async def openai_model(llm_server: FakeLLMServer) -> AsyncIterator[OpenAIChatModel]:
    async with fault_model(llm_server) as model:
        yield model


# -- through the real OpenAIChatModel ------------------------------------------------------


async def test_a_429_then_200_is_retried_and_the_run_succeeds(
    llm_server: FakeLLMServer, openai_model: OpenAIChatModel
) -> None:
    llm_server.enqueue(
        Reply(status=429, body=openai_error("slow down", error_type="rate_limit")),
        Reply(body=openai_tool_reply(wire_tool_call("call_1", "add", {"a": 2, "b": 3}))),
        Reply(body=openai_text_reply("2 + 3 = 5")),
    )
    result = await category(openai_model).run("Add", "2 and 3")
    assert (result.status, result.summary, result.usage.llm_calls) == ("success", "2 + 3 = 5", 2)
    assert [(e.tool, e.arguments, e.result) for e in result.executions] == [
        ("add", {"a": 2, "b": 3}, "5")
    ]
    first, retry, second = llm_server.requests
    assert retry.body == first.body  # the same request, sent again
    assert wire_told(second) == [
        {"role": "tool", "tool_call_id": "call_1", "content": fenced("add", True, "5")}
    ]


async def test_a_model_that_keeps_answering_500_fails_the_run_with_the_cause(
    llm_server: FakeLLMServer, openai_model: OpenAIChatModel
) -> None:
    llm_server.respond_with(Reply(status=500, body=openai_error("overloaded")))
    result = await category(openai_model).run("Add", "2 and 3")
    assert result.status == "failed"
    assert result.summary == (
        f"The category's model failed: model 'gpt-test' at '{llm_server.openai_base_url}/'"
        " failed after 3 attempts; last error: HTTP 500: overloaded. No tool was run."
    )
    assert (result.executions, result.usage.llm_calls) == ([], 0)
    assert len(llm_server.requests) == 3
    assert "sk-fault-key" not in result.to_json()


async def test_a_model_that_times_out_twice_fails_the_run_as_too_slow(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.respond_with(Reply(body=openai_text_reply("too late"), delay=30))
    async with fault_model(llm_server, timeout=0.2) as model:
        with anyio.fail_after(10):
            result = await category(model).run("Add", "2 and 3")
    assert result.status == "failed"
    assert result.summary == (
        f"The category's model failed: model 'gpt-test' at '{llm_server.openai_base_url}/'"
        " did not answer within 0.2 s in 2 attempts: the model is too slow for this timeout;"
        " raise the timeout (model.timeout_s) or cap the reply (model.max_tokens). No tool was run."
    )
    assert len(llm_server.requests) == 2


async def test_a_500_after_a_tool_round_keeps_what_was_done(
    llm_server: FakeLLMServer, openai_model: OpenAIChatModel
) -> None:
    llm_server.enqueue(
        Reply(body=openai_tool_reply(wire_tool_call("call_1", "add", {"a": 1, "b": 1})))
    )
    llm_server.respond_with(Reply(status=503, body=openai_error("maintenance")))
    result = await category(openai_model).run("Add", "1 and 1")
    assert result.status == "failed"
    assert result.summary.endswith("HTTP 503: maintenance. Tool calls so far: add: ok")
    assert [e.result for e in result.executions] == ["2"]


async def test_malformed_json_arguments_are_answered_and_the_model_corrects_them(
    llm_server: FakeLLMServer, openai_model: OpenAIChatModel
) -> None:
    llm_server.enqueue(
        Reply(body=openai_tool_reply(wire_tool_call("call_1", "add", '{"a": 2, "b":'))),
        Reply(body=openai_tool_reply(wire_tool_call("call_2", "add", {"a": 2, "b": 2}))),
        Reply(body=openai_text_reply("4")),
    )
    result = await category(openai_model).run("Add", "2 and 2")
    error = (
        "invalid arguments for tool 'add': arguments are not valid JSON "
        "(Expecting value at char 13); send an object"
    )
    assert (result.status, result.summary) == ("success", "4")
    assert [(e.arguments, e.ok, e.error) for e in result.executions] == [
        ('{"a": 2, "b":', False, error),
        ({"a": 2, "b": 2}, True, None),
    ]
    second = llm_server.requests[1].body["messages"]
    # The broken call goes back verbatim, answered by the error under its id.
    assert second[2]["tool_calls"][0]["function"]["arguments"] == '{"a": 2, "b":'
    assert second[3] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": fenced("add", False, error),
    }
    tools_offered = [t["function"]["name"] for t in llm_server.requests[2].body["tools"]]
    assert tools_offered[0] == "add"  # a bad call does not withdraw the tool


@pytest.mark.parametrize(
    ("body", "status", "summary"),
    [
        (
            {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []},
            "failed",
            "returned no choices (response id 'x')",
        ),
        ("", "failed", "did not answer with a chat completion"),
        (openai_text_reply(""), "no_suitable_tool", "No tool was selected."),
    ],
)
async def test_an_empty_reply_over_the_wire_ends_the_run_cleanly(
    llm_server: FakeLLMServer,
    openai_model: OpenAIChatModel,
    body: Any,
    status: str,
    summary: str,
) -> None:
    # An empty completion is asked again (`MAX_NUDGES` times) before it counts.
    llm_server.enqueue(*[Reply(body=body)] * (1 + MAX_NUDGES))
    result = await category(openai_model, guards=SMALL).run("Add", "2 and 3")
    assert result.status == status
    assert summary in result.summary
    assert result.executions == []
    asked = 1 + MAX_NUDGES if status == "no_suitable_tool" else 1
    assert len(llm_server.requests) == asked
    if asked > 1:
        assert llm_server.requests[1].body["messages"][-1] == {
            "role": "user",
            "content": EMPTY_NOTE,
        }


# -- odd turns (scripted) ------------------------------------------------------------------


def calls(*items: tuple[str, dict[str, Any] | str]) -> AssistantTurn:
    return AssistantTurn(
        tool_calls=[ToolCall(id=f"call_{i}", name=n, arguments=a) for i, (n, a) in enumerate(items)]
    )


def told(request: ChatRequest) -> list[str]:
    return [m.content for m in request.messages if m.role == "tool"]


async def test_an_unknown_tool_is_answered_with_the_available_ones_and_withdraws_nothing() -> None:
    model = ScriptedModel(
        [
            calls(("addition", {"a": 1, "b": 2})),
            calls(("addition", {"a": 1, "b": 2})),
            calls(("add", {"a": 1, "b": 2})),
            AssistantTurn(text="3"),
        ]
    )
    result = await category(model).run("Add", "1 and 2")
    error = "unknown tool 'addition'. Did you mean 'add'? Available tools: add"
    assert (result.status, result.summary) == ("success", "3")
    assert [(e.tool, e.error) for e in result.executions] == [
        ("addition", error),
        ("addition", error),
        ("add", None),
    ]
    assert told(model.requests[1]) == [fenced("addition", False, error)]
    assert model.requests[2].tools[0].name == "add"


async def test_an_empty_reply_before_any_tool_is_no_suitable_tool() -> None:
    """Asked again `MAX_NUDGES` times first; still empty, nothing was selected."""
    model = ScriptedModel([AssistantTurn()] * (1 + MAX_NUDGES))
    result = await category(model, guards=SMALL).run("Add", "1 and 2")
    assert len(model.requests) == 1 + MAX_NUDGES
    assert (result.status, result.summary, result.executions) == (
        "no_suitable_tool",
        "No tool was selected.",
        [],
    )


async def test_an_empty_reply_after_a_tool_round_reports_what_was_found() -> None:
    model = ScriptedModel([calls(("add", {"a": 1, "b": 2})), AssistantTurn(text="  ")])
    result = await category(model).run("Add", "1 and 2")
    assert (result.status, result.summary) == ("success", "add: 3")


async def test_request_input_mid_loop_stops_with_the_question_and_keeps_the_work_done() -> None:
    model = ScriptedModel(
        [
            calls(("add", {"a": 1, "b": 2})),
            calls(
                ("add", {"a": 3, "b": 4}),
                ("request_input", {"missing": ["the third number"], "question": "Add 3 to what?"}),
            ),
        ]
    )
    result = await category(model).run("Add three numbers", "1, 2 and ...")
    assert (result.status, result.summary, result.missing, result.question) == (
        "insufficient_input",
        "Add 3 to what?",
        ["the third number"],
        "Add 3 to what?",
    )
    # The call that came with request_input was not run; the first round's result is kept.
    assert [(e.tool, e.arguments, e.result) for e in result.executions] == [
        ("add", {"a": 1, "b": 2}, "3")
    ]
    assert told(model.requests[1]) == [fenced("add", True, "3")]
    model.assert_complete()


async def test_request_input_with_arguments_that_are_not_json_still_asks() -> None:
    model = ScriptedModel([calls(("request_input", "which numbers?"))])
    result = await category(model).run("Add", "")
    assert (result.status, result.question, result.missing) == (
        "insufficient_input",
        "which numbers?",
        [],
    )
