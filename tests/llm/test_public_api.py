"""The public surface of `meta_tools.llm`."""

from __future__ import annotations

import meta_tools.llm as llm
from meta_tools.llm import ChatModel, DashScopeChatModel, OpenAIChatModel, ScriptedModel


def test_all_is_pinned_and_sorted() -> None:
    assert llm.__all__ == [
        "AssistantTurn",
        "ChatModel",
        "ChatRequest",
        "DashScopeChatModel",
        "GenerationOptions",
        "Message",
        "OpenAIChatModel",
        "ScriptedModel",
        "ToolCall",
        "ToolDefinition",
        "Usage",
        "calls_in_text",
    ]


def test_every_model_satisfies_the_chat_model_protocol() -> None:
    models = [
        ScriptedModel([]),
        OpenAIChatModel("m", api_key="k", base_url="http://127.0.0.1:9/v1"),
        DashScopeChatModel("m", api_key="k", base_url="http://127.0.0.1:9/api/v1"),
    ]
    for model in models:
        assert isinstance(model, ChatModel)
    assert not isinstance(object(), ChatModel)
