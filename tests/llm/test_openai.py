"""OpenAIChatModel driving the real openai SDK against the fake server over a socket."""

from __future__ import annotations

import socket
from typing import Any

import anyio
import pytest

from meta_tools.exceptions import ClosedError, ModelError
from meta_tools.llm import AssistantTurn, ChatRequest, Message, OpenAIChatModel, ToolCall, Usage
from tests.fakes.llm_server import (
    FakeLLMServer,
    Reply,
    openai_error,
    openai_text_reply,
    openai_tool_reply,
    wire_tool_call,
)
from tests.llm.chat_requests import ADD_TOOL, ask

pytestmark = pytest.mark.anyio

KEY = "sk-test-secret-0123456789"


def make_model(server: FakeLLMServer, **options: Any) -> OpenAIChatModel:
    settings: dict[str, Any] = {"api_key": KEY, "backoff_s": 0.01, "max_retries": 2}
    settings.update(options)
    return OpenAIChatModel("gpt-test", base_url=server.openai_base_url, **settings)


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
    async with make_model(llm_server) as model:
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
        "tools": [ADD_TOOL],
        "tool_choice": "auto",
    }


async def test_tool_choice_is_left_out_when_no_tools_are_offered(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.enqueue(Reply(body=openai_text_reply("hello")))
    async with make_model(llm_server) as model:
        turn = await model.complete(ask("hi", tools=False))
    assert turn.text == "hello"
    assert llm_server.requests[0].body == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hi"},
        ],
    }


async def test_two_round_tool_conversation_sends_the_call_and_its_result_back(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.enqueue(
        Reply(body=openai_tool_reply(wire_tool_call("call_7", "calc_add", {"a": 1, "b": 2}))),
        Reply(body=openai_text_reply("1 + 2 = 3")),
    )
    async with make_model(llm_server) as model:
        first = await model.complete(ask("1+2?"))
        assert first == AssistantTurn(
            text=None,
            tool_calls=[ToolCall(id="call_7", name="calc_add", arguments={"a": 1, "b": 2})],
            usage=Usage(prompt_tokens=10, completion_tokens=5),
        )
        follow_up = ask("1+2?")
        follow_up.messages += [
            first.as_message(),
            Message(role="tool", tool_call_id="call_7", content="3"),
        ]
        second = await model.complete(follow_up)

    assert second.text == "1 + 2 = 3"
    assert second.tool_calls == []
    assert llm_server.requests[1].body["messages"][2:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_7",
                    "type": "function",
                    "function": {"name": "calc_add", "arguments": '{"a": 1, "b": 2}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_7", "content": "3"},
    ]


async def test_malformed_tool_call_arguments_are_kept_as_the_raw_string(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.enqueue(
        Reply(
            body=openai_tool_reply(
                wire_tool_call("call_1", "calc_add", '{"a": 1, "b": '),
                wire_tool_call("call_2", "calc_add", "[1, 2]"),
                wire_tool_call("call_3", "list_all", ""),
            )
        )
    )
    async with make_model(llm_server) as model:
        turn = await model.complete(ask("1+2?"))
    assert turn.tool_calls == [
        ToolCall(id="call_1", name="calc_add", arguments='{"a": 1, "b": '),
        ToolCall(id="call_2", name="calc_add", arguments="[1, 2]"),
        ToolCall(id="call_3", name="list_all", arguments={}),
    ]


async def test_a_429_with_retry_after_is_retried_and_then_succeeds(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.enqueue(
        Reply(status=429, body=openai_error("slow down"), headers={"Retry-After": "0"}),
        Reply(body=openai_text_reply("ok")),
    )
    # A long backoff proves that Retry-After: 0 replaced it.
    async with make_model(llm_server, backoff_s=30.0) as model:
        with anyio.fail_after(5):
            turn = await model.complete(ask("hi"))
    assert turn.text == "ok"
    assert llm_server.request_count == 2


async def test_server_errors_exhaust_the_retries_into_a_model_error_without_the_key(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.respond_with(Reply(status=500, body=openai_error(f"boom (echo: {KEY})")))
    async with make_model(llm_server, max_retries=3) as model:
        with pytest.raises(ModelError) as caught:
            await model.complete(ask("hi"))
    assert llm_server.request_count == 4
    message = str(caught.value)
    assert llm_server.openai_base_url in message
    assert "'gpt-test'" in message
    assert "after 4 attempts" in message
    assert "HTTP 500" in message
    assert KEY not in message
    assert KEY not in repr(model)


async def test_a_hanging_server_times_out_is_retried_then_raises(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.respond_with(Reply(body=openai_text_reply("late"), delay=30))
    async with make_model(llm_server, timeout=0.2, max_retries=1) as model:
        with anyio.fail_after(5), pytest.raises(ModelError, match="timed out"):
            await model.complete(ask("hi"))
    assert llm_server.request_count == 2


async def test_a_client_error_is_not_retried(llm_server: FakeLLMServer) -> None:
    llm_server.respond_with(Reply(status=400, body=openai_error("bad tools", error_type="x")))
    async with make_model(llm_server) as model:
        with pytest.raises(ModelError, match=r"not retried.*HTTP 400.*bad tools"):
            await model.complete(ask("hi"))
    assert llm_server.request_count == 1


async def test_a_reply_without_choices_is_a_model_error_and_not_retried(
    llm_server: FakeLLMServer,
) -> None:
    body = openai_text_reply("x")
    body["choices"] = []
    llm_server.enqueue(Reply(body=body))
    async with make_model(llm_server) as model:
        with pytest.raises(ModelError, match="returned no choices"):
            await model.complete(ask("hi"))
    assert llm_server.request_count == 1


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
    async with make_model(llm_server) as model:
        with pytest.raises(ModelError, match="gpt-test"):
            await model.complete(ask("hi"))
    assert llm_server.request_count == 1


async def test_a_refused_connection_is_retried_then_raises() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    model = OpenAIChatModel("gpt-test", base_url=base_url, api_key=KEY, backoff_s=0.01)
    async with model:
        with pytest.raises(ModelError, match="after 4 attempts; last error: connection error"):
            await model.complete(ask("hi"))


def test_a_missing_key_names_the_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MY_LLM_KEY", raising=False)
    with pytest.raises(ModelError, match="'MY_LLM_KEY'"):
        OpenAIChatModel("gpt-test", api_key_env="MY_LLM_KEY")


async def test_the_key_is_read_from_the_environment(
    llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_LLM_KEY", "sk-from-env")
    llm_server.enqueue(Reply(body=openai_text_reply("ok")))
    model = OpenAIChatModel("m", base_url=llm_server.openai_base_url, api_key_env="MY_LLM_KEY")
    async with model:
        await model.complete(ask("hi"))
    assert llm_server.requests[0].headers["authorization"] == "Bearer sk-from-env"


async def test_aclose_twice_is_harmless_and_a_closed_model_refuses_requests(
    llm_server: FakeLLMServer,
) -> None:
    model = make_model(llm_server)
    await model.aclose()
    await model.aclose()
    with pytest.raises(ClosedError, match="was closed"):
        await model.complete(ask("hi"))
    assert llm_server.request_count == 0
