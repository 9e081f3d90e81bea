"""The request both SDK-backed model tests send: a short chat offering one `calc_add` tool."""

from __future__ import annotations

from typing import Any

from meta_tools.llm import ChatRequest, Message, ToolDefinition

__all__ = ["ADD_TOOL", "ADD_TOOL_WIRE", "ask"]

ADD_TOOL = ToolDefinition(
    name="calc_add",
    description="Add two integers",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)

ADD_TOOL_WIRE: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "calc_add",
        "description": "Add two integers",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
}
"""`ADD_TOOL` as OpenAI and DashScope want it sent."""


def ask(text: str, *, tools: bool = True) -> ChatRequest:
    """A system line and `text` from the user, offering `ADD_TOOL` unless `tools` is False."""
    return ChatRequest(
        messages=[Message(role="system", content="Be brief."), Message(role="user", content=text)],
        tools=[ADD_TOOL] if tools else [],
    )
