"""`chat`, `serve` and `list` say which model they talk to and which guard profile it got."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_app import CATEGORIES, TOOLS_MODULE
from tests.cli.test_first_hour import cli, write
from tests.cli.test_first_hour_third import chat
from tests.fakes.llm_server import (
    FakeLLMServer,
    Reply,
    openai_text_reply,
    openai_tool_reply,
    wire_tool_call,
)

SMALL_NAME = "qwen2.5-coder-1.5b"
# How the 1.5B writes a category call: as text, in a fence, not through tool_calls.
TEXT_CALL = (
    '```json\n{"name": "math", "arguments": {"objective": "Add 2 and 3",'
    ' "exact_input": "2 3"}}\n```'
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "cli_sample_tools.py").write_text(TOOLS_MODULE)
    write(tmp_path, {"python_tools": ["cli_sample_tools.py"], **CATEGORIES})
    return tmp_path


def script_a_text_call(server: FakeLLMServer) -> None:
    """Two model calls: the small profile hands the short result up, unrestated."""
    server.enqueue(
        Reply(body=openai_text_reply(TEXT_CALL)),
        Reply(body=openai_tool_reply(wire_tool_call("call_c1", "add", {"a": 2, "b": 3}))),
    )


def test_chat_on_an_unnamed_local_model_names_the_served_one_and_reads_its_text_calls(
    folder: Path, llm_server: FakeLLMServer
) -> None:
    llm_server.models = [SMALL_NAME]
    script_a_text_call(llm_server)
    done = chat(folder, stdin="What is 2 + 3?\n", OPENAI_BASE_URL=llm_server.openai_base_url)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == [
        f"Friday and the categories use the OpenAI-compatible model '{SMALL_NAME}' (as its"
        f" server reports) at {llm_server.openai_base_url} (timeout 300 s, for a model on"
        " this machine).",
        f"Guard profile 'small' ({SMALL_NAME}: 1.5B parameters).",
    ]
    # The call written as text ran, and the user got an answer, not the JSON.
    assert any("✓ add(a=2, b=3)" in line for line in lines)
    assert "Friday> Math: add: 5" in lines
    assert [r.body["model"] for r in llm_server.requests] == [SMALL_NAME] * 2


def test_chat_says_once_at_its_default_log_level_that_a_text_call_went_unread(
    folder: Path, llm_server: FakeLLMServer
) -> None:
    model = {"provider": "openai", "name": "my-model", "base_url": llm_server.openai_base_url}
    write(folder, {"model": model, "python_tools": ["cli_sample_tools.py"], **CATEGORIES})
    llm_server.enqueue(Reply(body=openai_text_reply(TEXT_CALL)))
    llm_server.enqueue(Reply(body=openai_text_reply(TEXT_CALL)))
    done = chat(folder, stdin="What is 2 + 3?\nAnd 4 + 4?\n")
    assert done.returncode == 0, done.stderr
    assert "Guard profile 'capable' (my-model: nothing known says it is small)." in done.stdout
    # A capable profile passes the reply through as it came ...
    assert done.stdout.count("Friday> ```json") == 2
    # ... and the user is told why, once, with what to do.
    assert done.stderr.count("the model wrote a tool call as text") == 1
    assert '"guards": {"profile": "small"}' in done.stderr


def test_list_shows_the_profile_the_configured_model_calls_for(folder: Path) -> None:
    model = {"provider": "openai", "name": "llama3.1:8b", "base_url": "http://127.0.0.1:9/v1"}
    write(folder, {"model": model, "python_tools": ["cli_sample_tools.py"], **CATEGORIES})
    shown = cli(folder, "list")
    assert shown.returncode == 0, shown.stderr
    assert "Guard profile 'small': llama3.1:8b: 8B parameters" in shown.stdout
    listing = json.loads(cli(folder, "list", "--json").stdout)
    assert listing["guards"] == {"profile": "small", "reason": "llama3.1:8b: 8B parameters"}
