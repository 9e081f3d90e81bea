"""The model layer: provider-neutral chat types, the `ChatModel` protocol and its clients.

The SDK-backed clients are imported on first use, so that `import meta_tools`
(and every demo or server subprocess) does not pay for loading openai and dashscope.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .base import ChatModel, GenerationOptions
from .recovery import calls_in_text
from .scripted import ScriptedModel
from .types import AssistantTurn, ChatRequest, Message, ToolCall, ToolDefinition, Usage

if TYPE_CHECKING:
    from .dashscope import DashScopeChatModel
    from .openai import OpenAIChatModel

__all__ = [
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

_LAZY = {"DashScopeChatModel": ".dashscope", "OpenAIChatModel": ".openai"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
