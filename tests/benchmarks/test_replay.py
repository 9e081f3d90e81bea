"""The replay file of the real-model benchmarks: a request asked before gets its reply
from the file, a new one is asked and kept, and calls written as text are read on
each replay by the code of the run."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from benchmarks.models import build_model, replay_stats
from benchmarks.replay import ReplayModel, request_key
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall, ToolDefinition
from meta_tools.llm.types import Message
from tests.fakes.llm_server import FakeLLMServer, Reply, openai_text_reply

pytestmark = pytest.mark.anyio

OPTIONS = {"model": "qwen", "max_tokens": 400, "temperature": 0.0}
ADD = ToolDefinition(name="add", description="Add two numbers.")


def ask(text: str) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=text)], tools=[ADD])


def after_a_call(call_id: str) -> ChatRequest:
    """A request holding a call and its result, the call named by `call_id`."""
    call = ToolCall(id=call_id, name="add", arguments={"a": 2, "b": 3})
    return ChatRequest(
        messages=[
            Message(role="user", content="2 + 3?"),
            Message(role="assistant", content="", tool_calls=[call]),
            Message(role="tool", tool_call_id=call_id, name="add", content="5"),
        ],
        tools=[ADD],
    )


async def test_a_request_asked_before_is_answered_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "replies.jsonl"
    first = ReplayModel(
        ScriptedModel([AssistantTurn(text="5"), AssistantTurn(text="7")]), path, options=OPTIONS
    )
    assert (await first.complete(ask("2 + 3?"))).text == "5"
    assert (await first.complete(ask("3 + 4?"))).text == "7"
    assert first.stats == {"file": "replies.jsonl", "replayed": 0, "asked": 2}
    assert len(path.read_text().splitlines()) == 2

    # A second run: the scripted model has no step left, so any request asked fails.
    again = ReplayModel(ScriptedModel([AssistantTurn(text="new")]), path, options=OPTIONS)
    assert (await again.complete(ask("3 + 4?"))).text == "7"
    assert (await again.complete(ask("2 + 3?"))).text == "5"
    assert (await again.complete(ask("4 + 4?"))).text == "new"  # not asked before
    assert again.stats == {"file": "replies.jsonl", "replayed": 2, "asked": 1}


def test_call_ids_do_not_change_the_key_but_the_options_do() -> None:
    # A server makes new call ids each run: the rest of the conversation is the same.
    assert request_key(after_a_call("call_abc"), OPTIONS) == request_key(
        after_a_call("chatcmpl-9x"), OPTIONS
    )
    warmer = OPTIONS | {"temperature": 0.7}
    assert request_key(after_a_call("call_abc"), warmer) != request_key(
        after_a_call("call_abc"), OPTIONS
    )
    assert request_key(ask("2 + 3?"), OPTIONS) != request_key(ask("2 + 4?"), OPTIONS)


def _args(server: FakeLLMServer, replay: Path) -> argparse.Namespace:
    return argparse.Namespace(
        model="qwen2.5-coder-1.5b",
        base_url=server.openai_base_url,
        api_key_env=None,
        timeout=30.0,
        max_tokens=400,
        temperature=0.0,
        log=None,
        replay=replay,
    )


async def test_a_replayed_reply_is_read_for_calls_written_as_text_by_the_run_s_code(
    tmp_path: Path, llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused")
    written = json.dumps({"name": "add", "arguments": {"a": 2, "b": 3}})
    llm_server.enqueue(Reply(body=openai_text_reply(written)))
    path = tmp_path / "replies.jsonl"
    request = ask("2 + 3?")

    for run in range(2):  # the second run replays: the server has no reply left
        model = build_model(_args(llm_server, path), recover_text_calls=True)
        try:
            turn = await model.complete(request)
        finally:
            await model.aclose()  # type: ignore[attr-defined]  # closes the SDK client inside
        assert [(c.name, c.arguments) for c in turn.tool_calls] == [("add", {"a": 2, "b": 3})]
        assert replay_stats(model) == {"file": "replies.jsonl", "replayed": run, "asked": 1 - run}
    assert len(llm_server.requests) == 1
    # What was kept is the client's turn before reading: the text, not the call.
    (kept,) = [json.loads(line)["reply"] for line in path.read_text().splitlines()]
    assert kept["text"] == written and kept["tool_calls"] == []
