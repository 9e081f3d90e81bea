"""What both SDK-backed models must do alike, each driving its real SDK against the fake server.

Wire formats differ (see test_openai.py and test_dashscope.py); retries, timeouts,
keys, tool-call round trips and closing do not, so each test runs for both.
"""

from __future__ import annotations

import socket

import anyio
import pytest

from meta_tools.exceptions import ClosedError, ModelError
from meta_tools.llm import (
    AssistantTurn,
    Message,
    ToolCall,
    Usage,
)
from meta_tools.llm.retry import RetryPolicy, call_with_retries, connection_failure
from tests.fakes.llm_server import FakeLLMServer, Reply, wire_tool_call
from tests.llm.chat_requests import ask
from tests.llm.providers import DASHSCOPE, OPENAI, Provider

pytestmark = pytest.mark.anyio


@pytest.fixture(params=[OPENAI, DASHSCOPE], ids=["openai", "dashscope"])
def provider(request: pytest.FixtureRequest) -> Provider:
    found: Provider = request.param
    return found


async def test_two_round_tool_conversation_sends_the_call_and_its_result_back(
    llm_server: FakeLLMServer, provider: Provider
) -> None:
    llm_server.enqueue(
        Reply(body=provider.tool_reply(wire_tool_call("call_7", "calc_add", {"a": 1, "b": 2}))),
        Reply(body=provider.text_reply("1 + 2 = 3")),
    )
    async with provider.make_model(llm_server) as model:
        first = await model.complete(ask("1+2?"))
        assert first == AssistantTurn(
            text=provider.blank,
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
    assert provider.messages(llm_server.requests[1].body)[2:] == [
        {
            "role": "assistant",
            "content": provider.blank,
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


async def test_a_429_with_retry_after_is_retried_and_then_succeeds(
    llm_server: FakeLLMServer, provider: Provider
) -> None:
    llm_server.enqueue(
        Reply(
            status=429,
            body=provider.error("Throttling", "slow down"),
            headers={"Retry-After": "0"},
        ),
        Reply(body=provider.text_reply("ok")),
    )
    # A long backoff proves that Retry-After: 0 replaced it.
    async with provider.make_model(llm_server, backoff_s=30.0) as model:
        with anyio.fail_after(5):
            turn = await model.complete(ask("hi"))
    assert turn.text == "ok"
    assert llm_server.request_count == 2


async def test_server_errors_exhaust_the_retries_into_a_model_error_without_the_key(
    llm_server: FakeLLMServer, provider: Provider
) -> None:
    llm_server.respond_with(
        Reply(status=500, body=provider.error("InternalError", f"boom (echo: {provider.key})"))
    )
    async with provider.make_model(llm_server, max_retries=3) as model:
        with pytest.raises(ModelError) as caught:
            await model.complete(ask("hi"))
    assert llm_server.request_count == 4
    message = str(caught.value)
    assert provider.base_url(llm_server) in message
    assert f"{provider.model_name!r}" in message
    assert "after 4 attempts" in message
    assert provider.error_detail(500, "InternalError") in message
    assert provider.key not in message
    assert provider.key not in repr(model)


async def test_a_hanging_server_is_retried_once_then_called_too_slow(
    llm_server: FakeLLMServer, provider: Provider
) -> None:
    llm_server.respond_with(Reply(body=provider.text_reply("late"), delay=30))
    async with provider.make_model(llm_server, timeout=0.2, max_retries=3) as model:
        with (
            anyio.fail_after(5),
            pytest.raises(
                ModelError,
                match=r"within 0\.2 s in 2 attempts: the model is too slow for this timeout",
            ),
        ):
            await model.complete(ask("hi"))
    assert llm_server.request_count == 2


async def test_a_client_error_is_not_retried(llm_server: FakeLLMServer, provider: Provider) -> None:
    llm_server.respond_with(Reply(status=400, body=provider.error("InvalidParameter", "bad tools")))
    async with provider.make_model(llm_server) as model:
        with pytest.raises(ModelError, match=r"not retried.*HTTP 400.*bad tools"):
            await model.complete(ask("hi"))
    assert llm_server.request_count == 1


async def test_a_reply_without_choices_is_a_model_error_and_not_retried(
    llm_server: FakeLLMServer, provider: Provider
) -> None:
    llm_server.enqueue(Reply(body=provider.no_choices))
    async with provider.make_model(llm_server) as model:
        with pytest.raises(ModelError, match="returned no choices"):
            await model.complete(ask("hi"))
    assert llm_server.request_count == 1


async def test_a_refused_connection_on_this_machine_is_not_retried_and_names_the_port(
    provider: Provider,
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}{provider.api_path}"
    model = provider.model_class(
        provider.model_name, base_url=base_url, api_key=provider.key, backoff_s=0.01
    )
    async with model:
        with pytest.raises(ModelError) as caught:
            await model.complete(ask("hi"))
    assert str(caught.value).endswith(
        f"failed (not retried): connection refused; is a server listening on 127.0.0.1:{port}?"
    )


async def test_a_connection_failure_elsewhere_is_retried_and_asks_for_a_listening_server() -> None:
    attempts = 0

    async def attempt() -> None:
        nonlocal attempts
        attempts += 1
        try:
            raise ConnectionRefusedError(111, "Connect call failed")
        except ConnectionRefusedError as refused:
            raise RuntimeError("Connection error.") from refused

    with pytest.raises(ModelError) as caught:
        await call_with_retries(
            attempt,
            classify=connection_failure,
            policy=RetryPolicy(max_retries=2, backoff_s=0.0),
            endpoint="https://models.example.com/v1",
            model="m",
        )
    assert attempts == 3
    assert str(caught.value) == (
        "model 'm' at 'https://models.example.com/v1' failed after 3 attempts; last error:"
        " connection refused; is a server listening on models.example.com:443?"
    )


@pytest.mark.parametrize("custom_env", [False, True], ids=["default-env", "custom-env"])
def test_a_missing_key_names_the_environment_variable(
    monkeypatch: pytest.MonkeyPatch, provider: Provider, custom_env: bool
) -> None:
    env = "MY_LLM_KEY" if custom_env else provider.key_env
    monkeypatch.delenv(env, raising=False)
    options = {"api_key_env": env} if custom_env else {}
    with pytest.raises(ModelError, match=f"'{env}'"):
        provider.model_class(provider.model_name, **options)


async def test_aclose_twice_is_harmless_and_a_closed_model_refuses_requests(
    llm_server: FakeLLMServer, provider: Provider
) -> None:
    model = provider.make_model(llm_server)
    await model.aclose()
    await model.aclose()
    with pytest.raises(ClosedError, match="was closed"):
        await model.complete(ask("hi"))
    assert llm_server.request_count == 0
