"""DashScopeChatModel driving the real dashscope SDK (native protocol) against the fake server."""

from __future__ import annotations

import socket
from typing import Any

import anyio
import pytest

from meta_tools.exceptions import ClosedError, ModelError
from meta_tools.llm import AssistantTurn, ChatRequest, DashScopeChatModel, Message, ToolCall, Usage
from tests.fakes.llm_server import (
    DASHSCOPE_PATH,
    FakeLLMServer,
    Reply,
    dashscope_error,
    dashscope_text_reply,
    dashscope_tool_reply,
    wire_tool_call,
)
from tests.llm.chat_requests import ADD_TOOL, ask

pytestmark = pytest.mark.anyio

KEY = "sk-ds-secret-9876543210"


def make_model(server: FakeLLMServer, **options: Any) -> DashScopeChatModel:
    settings: dict[str, Any] = {"api_key": KEY, "backoff_s": 0.01, "max_retries": 2}
    settings.update(options)
    return DashScopeChatModel("qwen-test", base_url=server.dashscope_base_url, **settings)


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
    async with make_model(llm_server) as model:
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
        "parameters": {"result_format": "message", "tools": [ADD_TOOL], "tool_choice": "auto"},
    }


async def test_tool_choice_is_left_out_when_no_tools_are_offered(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.enqueue(Reply(body=dashscope_text_reply("hello")))
    async with make_model(llm_server) as model:
        turn = await model.complete(ask("hi", tools=False))
    assert turn.text == "hello"
    assert llm_server.requests[0].body["parameters"] == {"result_format": "message"}


async def test_two_round_tool_conversation_sends_the_call_and_its_result_back(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.enqueue(
        Reply(body=dashscope_tool_reply(wire_tool_call("call_7", "calc_add", {"a": 1, "b": 2}))),
        Reply(body=dashscope_text_reply("1 + 2 = 3")),
    )
    async with make_model(llm_server) as model:
        first = await model.complete(ask("1+2?"))
        assert first == AssistantTurn(
            text="",
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
    assert llm_server.requests[1].body["input"]["messages"][2:] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_7",
                    "type": "function",
                    "function": {"name": "calc_add", "arguments": '{"a": 1, "b": 2}'},
                }
            ],
        },
        {"role": "tool", "content": "3", "tool_call_id": "call_7"},
    ]


async def test_malformed_tool_call_arguments_are_kept_as_the_raw_string(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.enqueue(
        Reply(body=dashscope_tool_reply(wire_tool_call("call_1", "calc_add", '{"a": 1,')))
    )
    async with make_model(llm_server) as model:
        turn = await model.complete(ask("1+2?"))
    assert turn.tool_calls == [ToolCall(id="call_1", name="calc_add", arguments='{"a": 1,')]


async def test_a_429_with_retry_after_is_retried_and_then_succeeds(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.enqueue(
        Reply(
            status=429,
            body=dashscope_error("Throttling", "slow down"),
            headers={"Retry-After": "0"},
        ),
        Reply(body=dashscope_text_reply("ok")),
    )
    async with make_model(llm_server, backoff_s=30.0) as model:
        with anyio.fail_after(5):
            turn = await model.complete(ask("hi"))
    assert turn.text == "ok"
    assert llm_server.request_count == 2


async def test_a_throttling_code_inside_an_http_200_is_retried(llm_server: FakeLLMServer) -> None:
    llm_server.enqueue(
        Reply(body=dashscope_error("Throttling.RateQuota", "quota")),
        Reply(body=dashscope_text_reply("ok")),
    )
    async with make_model(llm_server) as model:
        turn = await model.complete(ask("hi"))
    assert turn.text == "ok"
    assert llm_server.request_count == 2


async def test_server_errors_exhaust_the_retries_into_a_model_error_without_the_key(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.respond_with(
        Reply(status=500, body=dashscope_error("InternalError", f"boom (echo: {KEY})"))
    )
    async with make_model(llm_server, max_retries=3) as model:
        with pytest.raises(ModelError) as caught:
            await model.complete(ask("hi"))
    assert llm_server.request_count == 4
    message = str(caught.value)
    assert llm_server.dashscope_base_url in message
    assert "'qwen-test'" in message
    assert "after 4 attempts" in message
    assert "HTTP 500 [InternalError]" in message
    assert KEY not in message
    assert KEY not in repr(model)


async def test_a_hanging_server_times_out_is_retried_then_raises(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.respond_with(Reply(body=dashscope_text_reply("late"), delay=30))
    async with make_model(llm_server, timeout=0.2, max_retries=1) as model:
        with anyio.fail_after(5), pytest.raises(ModelError, match="timed out"):
            await model.complete(ask("hi"))
    assert llm_server.request_count == 2


async def test_a_client_error_is_not_retried(llm_server: FakeLLMServer) -> None:
    llm_server.respond_with(
        Reply(status=400, body=dashscope_error("InvalidParameter", "bad tools"))
    )
    async with make_model(llm_server) as model:
        with pytest.raises(ModelError, match=r"not retried.*HTTP 400.*bad tools"):
            await model.complete(ask("hi"))
    assert llm_server.request_count == 1


async def test_a_reply_without_choices_is_a_model_error_and_not_retried(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.enqueue(Reply(body={"request_id": "r1", "output": {"choices": []}}))
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
async def test_a_reply_that_is_not_json_is_a_model_error(
    llm_server: FakeLLMServer, reply: Reply
) -> None:
    llm_server.enqueue(reply)
    async with make_model(llm_server) as model:
        with pytest.raises(ModelError, match="not retried"):
            await model.complete(ask("hi"))
    assert llm_server.request_count == 1


async def test_a_refused_connection_is_retried_then_raises() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = DashScopeChatModel(
        "qwen-test", base_url=f"http://127.0.0.1:{port}/api/v1", api_key=KEY, backoff_s=0.01
    )
    async with model:
        with pytest.raises(ModelError, match="after 4 attempts; last error: connection error"):
            await model.complete(ask("hi"))


def test_a_missing_key_names_the_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DASHSCOPE_API_KEY", raising=False)
    with pytest.raises(ModelError, match="'DASHSCOPE_API_KEY'"):
        DashScopeChatModel("qwen-test")


async def test_aclose_twice_is_harmless_and_a_closed_model_refuses_requests(
    llm_server: FakeLLMServer,
) -> None:
    model = make_model(llm_server)
    await model.aclose()
    await model.aclose()
    with pytest.raises(ClosedError, match="was closed"):
        await model.complete(ask("hi"))
    assert llm_server.request_count == 0
