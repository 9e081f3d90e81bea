"""MCP server tools: a source per server (connection, listing, reconnects) and a tool per remote tool."""

from .connection import McpToolSource
from .tool import McpServerTool

__all__ = ["McpServerTool", "McpToolSource"]
