"""OpenAIChatModel driving the real openai SDK against the fake server over a socket."""

from __future__ import annotations

from typing import Any

import pytest

from meta_tools.exceptions import ModelError
from meta_tools.llm import AssistantTurn, ChatRequest, Message, OpenAIChatModel, ToolCall, Usage
from meta_tools.llm.base import GenerationOptions
from tests.fakes.llm_server import (
    FakeLLMServer,
    Reply,
    openai_text_reply,
    openai_tool_reply,
    wire_tool_call,
)
from tests.llm.chat_requests import ADD_TOOL, ADD_TOOL_WIRE, ask
from tests.llm.providers import OPENAI

pytestmark = pytest.mark.anyio

KEY = OPENAI.key


async def test_request_body_carries_tool_calls_tool_results_and_tools(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.enqueue(Reply(body=openai_text_reply("3", usage=(12, 1))))
    request = ChatRequest(
        messages=[
            Message(role="system", content="Be brief."),
            Message(role="user", content="1+2? and 2+2?", name="alice"),
            Message(
                role="assistant",
                tool_calls=[
                    ToolCall(id="call_1", name="calc_add", arguments={"a": 1, "b": 2}),
                    ToolCall(id="call_2", name="calc_add", arguments='{"a": 2, "b":'),
                ],
            ),
            Message(role="tool", tool_call_id="call_1", content="3"),
            Message(role="tool", tool_call_id="call_2", content="error: bad JSON"),
        ],
        tools=[ADD_TOOL],
    )
    async with OPENAI.make_model(llm_server) as model:
        turn = await model.complete(request)

    assert turn == AssistantTurn(text="3", usage=Usage(prompt_tokens=12, completion_tokens=1))
    [seen] = llm_server.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.body == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "1+2? and 2+2?", "name": "alice"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "calc_add", "arguments": '{"a": 1, "b": 2}'},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "calc_add", "arguments": '{"a": 2, "b":'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "3"},
            {"role": "tool", "tool_call_id": "call_2", "content": "error: bad JSON"},
        ],
        "tools": [ADD_TOOL_WIRE],
        "tool_choice": "auto",
    }


async def test_tool_choice_is_left_out_when_no_tools_are_offered(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.enqueue(Reply(body=openai_text_reply("hello")))
    async with OPENAI.make_model(llm_server) as model:
        turn = await model.complete(ask("hi", tools=False))
    assert turn.text == "hello"
    assert llm_server.requests[0].body == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hi"},
        ],
    }


async def calls_read_back(server: FakeLLMServer, *calls: dict[str, Any]) -> AssistantTurn:
    """The turn the OpenAI client reads from a reply of `calls` (wire shape)."""
    server.enqueue(Reply(body=openai_tool_reply(*calls)))
    async with OPENAI.make_model(server) as model:
        return await model.complete(ask("1+2?"))


async def test_malformed_tool_call_arguments_are_kept_as_the_raw_string(
    llm_server: FakeLLMServer,
) -> None:
    turn = await calls_read_back(
        llm_server,
        wire_tool_call("call_1", "calc_add", '{"a": 1, "b": '),
        wire_tool_call("call_2", "calc_add", "[1, 2]"),
        wire_tool_call("call_3", "list_all", ""),
    )
    assert turn.tool_calls == [
        ToolCall(id="call_1", name="calc_add", arguments='{"a": 1, "b": '),
        ToolCall(id="call_2", name="calc_add", arguments="[1, 2]"),
        ToolCall(id="call_3", name="list_all", arguments={}),
    ]


async def test_calls_of_one_reply_with_the_same_or_no_id_get_ids_of_their_own(
    llm_server: FakeLLMServer,
) -> None:
    """Some servers number calls per reply or leave ids empty; results go back by id."""
    turn = await calls_read_back(
        llm_server,
        wire_tool_call("call_0", "calc_add", '{"a": 1, "b": 2}'),
        wire_tool_call("call_0", "calc_add", '{"a": 2, "b": 2}'),
        wire_tool_call("", "list_all", "{}"),
    )
    ids = [call.id for call in turn.tool_calls]
    assert ids[0] == "call_0" and len(set(ids)) == 3 and all(ids)
    assert [call.arguments for call in turn.tool_calls][:2] == [{"a": 1, "b": 2}, {"a": 2, "b": 2}]


@pytest.mark.parametrize(
    "reply",
    [
        Reply(body="<html>bad gateway</html>"),
        Reply(body="{not json", headers={"content-type": "application/json"}),
    ],
    ids=["text", "broken-json"],
)
async def test_a_reply_that_is_not_a_chat_completion_is_a_model_error(
    llm_server: FakeLLMServer, reply: Reply
) -> None:
    llm_server.enqueue(reply)
    async with OPENAI.make_model(llm_server) as model:
        with pytest.raises(ModelError, match="gpt-test"):
            await model.complete(ask("hi"))
    assert llm_server.request_count == 1


async def test_the_key_is_read_from_the_environment(
    llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_LLM_KEY", "sk-from-env")
    llm_server.enqueue(Reply(body=openai_text_reply("ok")))
    model = OpenAIChatModel("m", base_url=llm_server.openai_base_url, api_key_env="MY_LLM_KEY")
    async with model:
        await model.complete(ask("hi"))
    assert llm_server.requests[0].headers["authorization"] == "Bearer sk-from-env"


async def test_generation_options_are_sent_with_every_request(llm_server: FakeLLMServer) -> None:
    llm_server.enqueue(Reply(body=openai_text_reply("ok")))
    options = GenerationOptions(
        max_tokens=200, temperature=0.0, top_p=0.9, seed=7, extra_body={"cache_prompt": True}
    )
    async with OPENAI.make_model(llm_server, options=options) as model:
        await model.complete(ask("hi"))
    body = llm_server.requests[0].body
    picked = {
        k: body.get(k) for k in ("max_tokens", "temperature", "top_p", "seed", "cache_prompt")
    }
    assert picked == {
        "max_tokens": 200,
        "temperature": 0.0,
        "top_p": 0.9,
        "seed": 7,
        "cache_prompt": True,
    }


async def test_unset_generation_options_are_left_to_the_server(llm_server: FakeLLMServer) -> None:
    llm_server.enqueue(Reply(body=openai_text_reply("ok")))
    async with OPENAI.make_model(llm_server) as model:
        await model.complete(ask("hi"))
    body = llm_server.requests[0].body
    assert not {"max_tokens", "temperature", "top_p", "seed"} & set(body)


async def test_a_call_written_as_text_comes_back_as_a_call_unless_recovery_is_off(
    llm_server: FakeLLMServer,
) -> None:
    text = '```json\n{"name": "calc_add", "arguments": {"a": 1, "b": 2}}\n```'
    llm_server.enqueue(Reply(body=openai_text_reply(text)), Reply(body=openai_text_reply(text)))
    async with OPENAI.make_model(llm_server, recover_text_calls=True) as model:
        turn = await model.complete(ask("1+2?"))
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("calc_add", {"a": 1, "b": 2})]
    assert (turn.text, turn.recovered) == (None, 1)
    async with OPENAI.make_model(llm_server, recover_text_calls=False) as model:
        turn = await model.complete(ask("1+2?"))
    assert (turn.text, turn.tool_calls, turn.recovered) == (text, [], 0)
