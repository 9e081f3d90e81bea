"""DashScopeChatModel driving the real dashscope SDK (native protocol) against the fake server."""

from __future__ import annotations

import pytest

from meta_tools.exceptions import ModelError
from meta_tools.llm import AssistantTurn, ChatRequest, Message, ToolCall, Usage
from meta_tools.llm.base import GenerationOptions
from tests.fakes.llm_server import (
    DASHSCOPE_PATH,
    FakeLLMServer,
    Reply,
    dashscope_error,
    dashscope_text_reply,
    dashscope_tool_reply,
    wire_tool_call,
)
from tests.llm.chat_requests import ADD_TOOL, ADD_TOOL_WIRE, ask
from tests.llm.providers import DASHSCOPE

pytestmark = pytest.mark.anyio

KEY = DASHSCOPE.key


async def test_request_body_is_native_with_tool_calls_tool_results_and_tools(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.enqueue(Reply(body=dashscope_text_reply("3", usage=(20, 2))))
    request = ChatRequest(
        messages=[
            Message(role="system", content="Be brief."),
            Message(role="user", content="1+2?"),
            Message(
                role="assistant",
                tool_calls=[ToolCall(id="call_1", name="calc_add", arguments={"a": 1, "b": 2})],
            ),
            Message(role="tool", tool_call_id="call_1", name="calc_add", content="3"),
        ],
        tools=[ADD_TOOL],
    )
    async with DASHSCOPE.make_model(llm_server) as model:
        turn = await model.complete(request)

    assert turn == AssistantTurn(text="3", usage=Usage(prompt_tokens=20, completion_tokens=2))
    [seen] = llm_server.requests
    assert seen.route == "dashscope"
    assert seen.path == DASHSCOPE_PATH
    # The key must reach the server (the SDK drops a client-level key in some setups).
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.body == {
        "model": "qwen-test",
        "input": {
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "1+2?"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "calc_add", "arguments": '{"a": 1, "b": 2}'},
                        }
                    ],
                },
                {"role": "tool", "content": "3", "tool_call_id": "call_1", "name": "calc_add"},
            ]
        },
        "parameters": {"result_format": "message", "tools": [ADD_TOOL_WIRE], "tool_choice": "auto"},
    }


async def test_tool_choice_is_left_out_when_no_tools_are_offered(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.enqueue(Reply(body=dashscope_text_reply("hello")))
    async with DASHSCOPE.make_model(llm_server) as model:
        turn = await model.complete(ask("hi", tools=False))
    assert turn.text == "hello"
    assert llm_server.requests[0].body["parameters"] == {"result_format": "message"}


async def test_malformed_tool_call_arguments_are_kept_as_the_raw_string(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.enqueue(
        Reply(body=dashscope_tool_reply(wire_tool_call("call_1", "calc_add", '{"a": 1,')))
    )
    async with DASHSCOPE.make_model(llm_server) as model:
        turn = await model.complete(ask("1+2?"))
    assert turn.tool_calls == [ToolCall(id="call_1", name="calc_add", arguments='{"a": 1,')]


async def test_a_throttling_code_inside_an_http_200_is_retried(llm_server: FakeLLMServer) -> None:
    llm_server.enqueue(
        Reply(body=dashscope_error("Throttling.RateQuota", "quota")),
        Reply(body=dashscope_text_reply("ok")),
    )
    async with DASHSCOPE.make_model(llm_server) as model:
        turn = await model.complete(ask("hi"))
    assert turn.text == "ok"
    assert llm_server.request_count == 2


@pytest.mark.parametrize(
    "reply",
    [
        Reply(body="<html>bad gateway</html>"),
        Reply(body="{not json", headers={"content-type": "application/json"}),
    ],
    ids=["text", "broken-json"],
)
async def test_a_reply_that_is_not_json_is_a_model_error(
    llm_server: FakeLLMServer, reply: Reply
) -> None:
    llm_server.enqueue(reply)
    async with DASHSCOPE.make_model(llm_server) as model:
        with pytest.raises(ModelError, match="not retried"):
            await model.complete(ask("hi"))
    assert llm_server.request_count == 1


async def test_generation_options_are_sent_and_extra_body_goes_to_parameters(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.enqueue(Reply(body=dashscope_text_reply("ok")))
    options = GenerationOptions(max_tokens=100, temperature=0.2, seed=3, extra_body={"top_k": 5})
    async with DASHSCOPE.make_model(llm_server, options=options) as model:
        await model.complete(ask("hi"))
    parameters = llm_server.requests[0].body["parameters"]
    picked = {k: parameters.get(k) for k in ("max_tokens", "temperature", "seed", "top_k")}
    assert picked == {"max_tokens": 100, "temperature": 0.2, "seed": 3, "top_k": 5}
