"""OpenAI's function-tool shape, for its client and for callers of `MetaManager.openai_tools`.

Apart from `llm.openai` so that building the shape does not load the openai SDK.
DashScope's native protocol takes the same shape.
"""

from __future__ import annotations

from typing import Any

from .types import ToolDefinition

__all__ = ["openai_tool"]


def openai_tool(definition: ToolDefinition) -> dict[str, Any]:
    """`definition` as an OpenAI function tool: ``{"type": "function", "function": {...}}``."""
    return {
        "type": "function",
        "function": {
            "name": definition.name,
            "description": definition.description,
            "parameters": definition.parameters,
        },
    }
