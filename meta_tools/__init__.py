"""meta-tools: a hierarchical tool router for LLM agents."""

from .tools import BaseTool, FunctionTool, ToolContext, ToolOutcome, ToolPack, ToolParameter, tool

__all__ = [
    "BaseTool",
    "FunctionTool",
    "ToolContext",
    "ToolOutcome",
    "ToolPack",
    "ToolParameter",
    "tool",
]
