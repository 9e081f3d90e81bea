"""A level-1 server that asks during a call: the user (elicitation), a model (sampling), progress."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp_types
import pytest
from mcp import StdioServerParameters

from meta_tools.config import MetaToolsConfig
from meta_tools.exceptions import ToolExecutionError
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from meta_tools.tools.mcp.asks import ElicitationRequest, SamplingRequest, reporting_to
from meta_tools.tools.mcp.connection import McpToolSource
from meta_tools.tools.mcp.model_sampling import ModelSampling, to_chat_request
from tests.mcp.conftest import ROOT
from tests.servers import asking

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["auto", "legacy"])


class Answers:
    """An elicitation handler that answers from a fixed result and records every request."""

    def __init__(self, result: mcp_types.ElicitResult | mcp_types.ErrorData) -> None:
        self.result = result
        self.requests: list[ElicitationRequest] = []

    async def __call__(
        self, request: ElicitationRequest
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        self.requests.append(request)
        return self.result


def asking_stdio() -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "tests.servers.asking"], cwd=ROOT
    )


async def call(source: McpToolSource, tool: str, arguments: dict[str, Any]) -> Any:
    async with source:
        found = source.get_tool(tool) if source.listed else None
        if found is None:
            await source.connect()
            found = source.get_tool(tool)
        assert found is not None
        return await found.call(arguments)


@MODES
async def test_an_accepted_answer_reaches_the_server_with_the_schemas_defaults_filled_in(
    mode: str,
) -> None:
    answers = Answers(mcp_types.ElicitResult(action="accept", content={"people": 4}))
    source = McpToolSource("asking", asking.build(), mode=mode, elicitation=answers)  # type: ignore[arg-type]
    result = await call(source, "book_table", {"city": "Lyon"})
    assert result == {"result": "booked in Lyon for 4 at 19:00"}
    (request,) = answers.requests
    assert (request.server, request.tool) == ("asking", "book_table")
    assert request.params.message == "How many people, and when, for the table in Lyon?"


@MODES
async def test_a_declined_answer_reaches_the_server_as_declined(mode: str) -> None:
    answers = Answers(mcp_types.ElicitResult(action="decline"))
    source = McpToolSource("asking", asking.build(), mode=mode, elicitation=answers)  # type: ignore[arg-type]
    assert await call(source, "book_table", {"city": "Lyon"}) == {
        "result": "not booked: the user answered decline"
    }


@MODES
async def test_an_accepted_empty_form_gets_every_default_of_the_requested_schema(mode: str) -> None:
    answers = Answers(mcp_types.ElicitResult(action="accept", content={}))
    source = McpToolSource("asking", asking.build(), mode=mode, elicitation=answers)  # type: ignore[arg-type]
    result = await call(source, "profile", {})
    assert result == {
        "name": "John Doe",
        "age": 30,
        "score": 95.5,
        "status": "active",
        "verified": True,
    }


@MODES
async def test_a_handler_that_refuses_gives_the_model_the_question_and_the_reason(
    mode: str,
) -> None:
    refusal = mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message="the user is away")
    source = McpToolSource("asking", asking.build(), mode=mode, elicitation=Answers(refusal))  # type: ignore[arg-type]
    with pytest.raises(ToolExecutionError) as failed:
        await call(source, "book_table", {"city": "Lyon"})
    assert (
        "MCP server 'asking' asked for input from the user ('How many people, and when, for the"
        " table in Lyon?'); meta-tools declined: the user is away"
    ) in str(failed.value)


@MODES
async def test_without_a_handler_elicitation_is_not_declared_and_the_call_fails_in_words(
    mode: str,
) -> None:
    source = McpToolSource("asking", asking.build(), mode=mode)  # type: ignore[arg-type]
    with pytest.raises(ToolExecutionError) as failed:
        await call(source, "book_table", {"city": "Lyon"})
    assert str(failed.value) == (
        "MCP server 'asking' answered the call to 'book_table' with an error (-32021): Client did"
        " not declare the form elicitation capability required by resolver"
        " 'tests.servers.asking:ask_party'"
    )


async def test_a_stdio_server_gets_its_answer_and_progress_lines_go_to_the_calls_sink() -> None:
    lines: list[tuple[str, str, str]] = []

    async def sink(server: str, tool: str, line: str) -> None:
        lines.append((server, tool, line))

    answers = Answers(
        mcp_types.ElicitResult(action="accept", content={"people": 2, "time": "20:30"})
    )
    source = McpToolSource("asking", asking_stdio(), elicitation=answers, mode="legacy")
    async with source:
        await source.connect()
        booking = source.get_tool("book_table")
        counting = source.get_tool("count")
        assert booking is not None and counting is not None
        assert await booking.call({"city": "Oslo"}) == {"result": "booked in Oslo for 2 at 20:30"}
        with reporting_to(sink):
            assert await counting.call({"steps": 2}) == {"result": "counted to 2"}
    assert lines == [("asking", "count", "1/2 step 1"), ("asking", "count", "2/2 step 2")]


@MODES
async def test_a_sampling_request_is_answered_by_the_sampling_handler(mode: str) -> None:
    asked: list[SamplingRequest] = []

    async def sampling(request: SamplingRequest) -> mcp_types.CreateMessageResult:
        asked.append(request)
        return mcp_types.CreateMessageResult(
            role="assistant", model="test", content=mcp_types.TextContent(text="blue")
        )

    source = McpToolSource("asking", asking.build(), mode=mode, sampling=sampling)  # type: ignore[arg-type]
    assert await call(source, "one_word", {"topic": "sky"}) == {"result": "blue"}
    assert [(r.server, r.tool) for r in asked] == [("asking", "one_word")]


async def test_a_router_from_a_config_passes_its_servers_questions_to_the_handler_it_was_given() -> (
    None
):
    def answer(request: ChatRequest) -> AssistantTurn:
        if len(request.messages) == 2:
            return AssistantTurn(
                tool_calls=[ToolCall(name="book_table", arguments={"city": "Rome"})]
            )
        return AssistantTurn(text="Booked.")

    config = MetaToolsConfig.from_data(
        {
            "Dining": {"description": "Tables.", "tools": ["book_table"]},
            "mcp_servers": {
                "asking": {
                    "transport": "stdio",
                    "command": "python",
                    "args": ["-m", "tests.servers.asking"],
                    "cwd": str(ROOT),
                }
            },
        },
        source="test.json",
    )
    answers = Answers(mcp_types.ElicitResult(action="accept", content={"people": 3}))
    model = ScriptedModel.from_function(answer)
    async with MetaManager.from_config(config, model=model, elicitation=answers) as meta:
        result = await meta.call_tool("Dining", {"objective": "Book", "exact_input": "Rome"})
    assert (result.status, result.summary) == ("success", "Booked.")
    assert [e.result for e in result.executions] == ['{"result": "booked in Rome for 3 at 19:00"}']
    assert [(r.server, r.tool) for r in answers.requests] == [("asking", "book_table")]


@MODES
async def test_a_log_line_of_the_server_during_a_call_goes_to_the_calls_progress_sink(
    mode: str,
) -> None:
    lines: list[tuple[str, str, str]] = []

    async def sink(server: str, tool: str, line: str) -> None:
        lines.append((server, tool, line))

    source = McpToolSource("asking", asking.build(), mode=mode)  # type: ignore[arg-type]
    with reporting_to(sink):
        assert await call(source, "noisy", {}) == {"result": "warm"}
    assert lines == [("asking", "noisy", "info: warming up")]


async def test_a_question_on_a_legacy_session_with_two_calls_running_is_declined_in_words() -> None:
    answers = Answers(mcp_types.ElicitResult(action="accept", content={"people": 1}))
    # over stdio, a legacy session's question arrives apart from the call that asked
    source = McpToolSource("asking", asking_stdio(), mode="legacy", elicitation=answers)
    async with source, anyio.create_task_group() as group:
        await source.connect()
        hold, release, book = (source.get_tool(n) for n in ("hold", "release", "book_table"))
        assert hold is not None and release is not None and book is not None
        group.start_soon(hold.call, {})
        await anyio.wait_all_tasks_blocked()
        with pytest.raises(ToolExecutionError) as failed:
            await book.call({"city": "Lyon"})
        await release.call({})
    assert answers.requests == []
    assert (
        "meta-tools declined: 2 calls to it were running at once and its connection (protocol"
        " 2025-11-25) does not say which one asked"
    ) in str(failed.value)


@MODES
async def test_a_servers_sampling_request_can_be_answered_by_one_of_our_models(mode: str) -> None:
    model = ScriptedModel([AssistantTurn(text="cerulean")])
    source = McpToolSource("asking", asking.build(), mode=mode, sampling=ModelSampling(model))  # type: ignore[arg-type]
    assert await call(source, "one_word", {"topic": "sky"}) == {"result": "cerulean"}
    (asked,) = model.requests
    assert [(m.role, m.content) for m in asked.messages] == [("user", "One word about sky")]


async def test_a_sampling_conversation_with_tool_uses_becomes_the_same_chat() -> None:
    params = mcp_types.CreateMessageRequestParams(
        system_prompt="Pick a tool.",
        max_tokens=64,
        messages=[
            mcp_types.SamplingMessage(role="user", content=mcp_types.TextContent(text="17+25?")),
            mcp_types.SamplingMessage(
                role="assistant",
                content=[mcp_types.ToolUseContent(id="c1", name="add", input={"a": 17, "b": 25})],
            ),
            mcp_types.SamplingMessage(
                role="user",
                content=[
                    mcp_types.ToolResultContent(
                        tool_use_id="c1", content=[mcp_types.TextContent(text="42")]
                    )
                ],
            ),
        ],
        tools=[mcp_types.Tool(name="add", description="Add", input_schema={"type": "object"})],
    )
    chat = to_chat_request(params)
    assert [m.model_dump(exclude_none=True) for m in chat.messages] == [
        {"role": "system", "content": "Pick a tool.", "tool_calls": []},
        {"role": "user", "content": "17+25?", "tool_calls": []},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "name": "add", "arguments": {"a": 17, "b": 25}}],
        },
        {"role": "tool", "content": "42", "tool_calls": [], "tool_call_id": "c1"},
    ]
    assert [(t.name, t.description, t.parameters) for t in chat.tools] == [
        ("add", "Add", {"type": "object"})
    ]
