"""Level 1: concrete tools (Python functions, MCP server tools, built-ins)."""

from .base import BaseTool, ToolContext, ToolParameter
from .function import FunctionTool, tool
from .pack import ToolOutcome, ToolPack

__all__ = [
    "BaseTool",
    "FunctionTool",
    "ToolContext",
    "ToolOutcome",
    "ToolPack",
    "ToolParameter",
    "tool",
]
