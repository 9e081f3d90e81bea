"""The model layer: provider-neutral chat types, the `ChatModel` protocol and its clients."""

from .base import ChatModel
from .dashscope import DashScopeChatModel
from .openai import OpenAIChatModel
from .scripted import ScriptedModel
from .types import AssistantTurn, ChatRequest, Message, ToolCall, Usage

__all__ = [
    "AssistantTurn",
    "ChatModel",
    "ChatRequest",
    "DashScopeChatModel",
    "Message",
    "OpenAIChatModel",
    "ScriptedModel",
    "ToolCall",
    "Usage",
]
